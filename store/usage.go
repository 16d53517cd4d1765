package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Kinds of bytes in a store, as Usage counts them. Under projects/: main
// transcripts, subagent transcripts (both layouts, with their .meta.json),
// persisted tool output (<id>/tool-results/), the rest of session folders
// (custom-title.json, workflows, ...) and the rest of project folders
// (sessions-index.json, memory/). Outside projects/ a folder is its own
// kind, by name with a slash (file-history/, debug/, todos/, transcripts/
// for the exports, ...); history.jsonl is one; other files at the top are
// "other files".
const (
	UsageTranscripts  = "transcripts"
	UsageSubagents    = "subagents"
	UsageToolResults  = "tool-results"
	UsageSessionDirs  = "session folders"
	UsageProjectOther = "project files"
	UsageHistory      = "history.jsonl"
	UsageOtherFiles   = "other files"
)

// UsageRow is what one kind, or one project folder, holds.
type UsageRow struct {
	Name  string // the kind, or the project folder
	Files int
	Size  int64
	// ByKind splits a project folder's bytes by kind (nil for a kind).
	ByKind map[string]int64
}

// DiskUsage is where the bytes of a store are.
type DiskUsage struct {
	Root     string
	Total    int64
	Files    int
	Kinds    []UsageRow // biggest first
	Projects []UsageRow // biggest first
}

// Usage walks the store at root (or, with folders, only those project
// folders) and adds up the sizes of its regular files by kind and by
// project folder. It reads no file, only their sizes. A project folder
// that is a symbolic link is walked through.
func Usage(root string, folders []string) (*DiskUsage, error) {
	u := &DiskUsage{Root: root}
	kinds := map[string]*UsageRow{}
	projects := map[string]*UsageRow{}
	add := func(kind, project string, size int64) {
		u.Total += size
		u.Files++
		k := kinds[kind]
		if k == nil {
			k = &UsageRow{Name: kind}
			kinds[kind] = k
		}
		k.Files++
		k.Size += size
		if project == "" {
			return
		}
		p := projects[project]
		if p == nil {
			p = &UsageRow{Name: project, ByKind: map[string]int64{}}
			projects[project] = p
		}
		p.Files++
		p.Size += size
		p.ByKind[kind] += size
	}
	walk := func(dir string, fn func(rel string, size int64)) error {
		real := dir
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			real = r
		}
		return filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == real {
					return err
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(real, path)
			fn(rel, fi.Size())
			return nil
		})
	}
	pdir := ProjectsDir(root)
	whole := folders == nil
	if whole {
		ents, err := os.ReadDir(pdir)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
				folders = append(folders, e.Name())
			}
		}
	}
	for _, folder := range folders {
		err := walk(filepath.Join(pdir, folder), func(rel string, size int64) {
			add(ProjectKind(rel), folder, size)
		})
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	if whole {
		ents, err := os.ReadDir(root)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			switch {
			case name == "projects":
			case e.IsDir():
				if err := walk(filepath.Join(root, name), func(_ string, size int64) { add(name+"/", "", size) }); err != nil {
					return nil, err
				}
			case e.Type().IsRegular():
				fi, err := e.Info()
				if err != nil {
					continue
				}
				kind := UsageOtherFiles
				if name == "history.jsonl" {
					kind = UsageHistory
				}
				add(kind, "", fi.Size())
			}
		}
	}
	for _, k := range kinds {
		u.Kinds = append(u.Kinds, *k)
	}
	for _, p := range projects {
		u.Projects = append(u.Projects, *p)
	}
	bySize := func(rs []UsageRow) {
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].Size != rs[j].Size {
				return rs[i].Size > rs[j].Size
			}
			return rs[i].Name < rs[j].Name
		})
	}
	bySize(u.Kinds)
	bySize(u.Projects)
	return u, nil
}

// ProjectKind returns the kind of a file under a project folder, from its
// path relative to the folder.
func ProjectKind(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	name := parts[len(parts)-1]
	switch {
	case len(parts) == 1 && strings.HasSuffix(name, ".jsonl") && strings.HasPrefix(name, "agent-"):
		return UsageSubagents
	case len(parts) == 1 && strings.HasSuffix(name, ".jsonl"):
		return UsageTranscripts
	case len(parts) == 1 || parts[0] == "memory":
		return UsageProjectOther
	case len(parts) >= 3 && parts[1] == "subagents" && strings.HasPrefix(name, "agent-") &&
		(strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".meta.json")):
		return UsageSubagents
	case len(parts) >= 3 && parts[1] == "tool-results":
		return UsageToolResults
	}
	return UsageSessionDirs
}
