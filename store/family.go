package store

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// Family returns the files of session id across the store: its main
// transcripts (in every project folder that has one), its subagents in both
// layouts (a flat agent-*.jsonl belongs to it when its entries' sessionId
// says so), their .meta.json sidecars and its session folders.
func Family(l *Layout, id string) *Layout {
	out := &Layout{Root: l.Root}
	folders := map[string]bool{}
	for _, f := range l.Files {
		if (f.Kind == KindSession || f.Kind == KindAgent) && f.Session == id {
			out.Files = append(out.Files, f)
			folders[f.Project] = true
		}
	}
	for _, f := range l.Files {
		if f.Kind == KindAgentFlat && folders[f.Project] && FlatAgentSession(f.Path) == id {
			out.Files = append(out.Files, f)
		}
	}
	for _, d := range l.SessionDirs {
		if d.Session == id {
			out.SessionDirs = append(out.SessionDirs, d)
		}
	}
	for _, m := range l.Metas {
		if strings.Contains(m, string(os.PathSeparator)+id+string(os.PathSeparator)) {
			out.Metas = append(out.Metas, m)
		}
	}
	for p := range folders {
		out.Projects = append(out.Projects, p)
	}
	sort.Strings(out.Projects)
	for _, pl := range l.Links {
		if folders[pl.Folder] {
			out.Links = append(out.Links, pl)
		}
	}
	return out
}

// FlatAgentSession returns the sessionId named by the first entries of a
// flat subagent transcript, or "".
func FlatAgentSession(path string) string {
	fh, err := rfile.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	r := headReaders.Get().(*bufio.Reader)
	r.Reset(fh)
	defer func() { r.Reset(nil); headReaders.Put(r) }()
	for i := 0; i < 8; i++ {
		line, err := r.ReadSlice('\n')
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &v) == nil && v.SessionID != "" {
			return v.SessionID
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// headReaders are the buffers of FlatAgentSession: a store of thousands of
// flat subagents allocated (and cleared) 64 KB for each.
var headReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// Families returns Family(l, id) for every session id of ids at once,
// reading each flat subagent's head once (Family reads them all for each
// session).
func Families(l *Layout, ids map[string]bool) map[string]*Layout {
	out := map[string]*Layout{}
	folders := map[string]map[string]bool{} // session → its project folders
	for id := range ids {
		out[id] = &Layout{Root: l.Root}
		folders[id] = map[string]bool{}
	}
	for _, f := range l.Files {
		if (f.Kind == KindSession || f.Kind == KindAgent) && ids[f.Session] {
			out[f.Session].Files = append(out[f.Session].Files, f)
			folders[f.Session][f.Project] = true
		}
	}
	for _, f := range l.Files {
		if f.Kind != KindAgentFlat {
			continue
		}
		if id := FlatAgentSession(f.Path); ids[id] && folders[id][f.Project] {
			out[id].Files = append(out[id].Files, f)
		}
	}
	for _, d := range l.SessionDirs {
		if ids[d.Session] {
			out[d.Session].SessionDirs = append(out[d.Session].SessionDirs, d)
		}
	}
	for _, m := range l.Metas {
		// <folder>/<id>/subagents/.../agent-*.meta.json
		rel, err := filepath.Rel(ProjectsDir(l.Root), m)
		if err != nil {
			continue
		}
		parts := strings.Split(rel, string(os.PathSeparator))
		if len(parts) > 2 && ids[parts[1]] {
			out[parts[1]].Metas = append(out[parts[1]].Metas, m)
		}
	}
	for id, fam := range out {
		for p := range folders[id] {
			fam.Projects = append(fam.Projects, p)
		}
		sort.Strings(fam.Projects)
		for _, pl := range l.Links {
			if folders[id][pl.Folder] {
				fam.Links = append(fam.Links, pl)
			}
		}
	}
	return out
}

// Subagents counts the subagent transcripts of each session in a project
// folder, keyed by folder and session id (FolderSession), in both layouts:
// those under the session's folder, and the flat agent-*.jsonl beside the
// sessions (<= 2.0.x) whose entries' sessionId names it (each one's head
// read once). Side runs (compaction, prompt suggestion) are left out:
// nobody resumes them.
func Subagents(l *Layout) map[string]int {
	out := map[string]int{}
	for _, f := range l.Files {
		if f.Side() {
			continue
		}
		switch f.Kind {
		case KindAgent:
			out[FolderSession(f.Project, f.Session)]++
		case KindAgentFlat:
			if id := FlatAgentSession(f.Path); id != "" {
				out[FolderSession(f.Project, id)]++
			}
		}
	}
	return out
}

// FolderSession is the key of session id in project folder folder.
func FolderSession(folder, id string) string { return folder + "/" + id }
