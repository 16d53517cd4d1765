package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// Kind tells what a transcript file is.
type Kind int

const (
	// KindSession is a main transcript: projects/<folder>/<session-id>.jsonl.
	KindSession Kind = iota
	// KindAgentFlat is a subagent transcript beside the sessions (<= 2.0.x):
	// projects/<folder>/agent-<id>.jsonl. Its parent is named by its entries.
	KindAgentFlat
	// KindAgent is a subagent transcript under its session (>= 2.1.2):
	// projects/<folder>/<session-id>/subagents/[...]/agent-<id>.jsonl.
	KindAgent
)

func (k Kind) String() string {
	switch k {
	case KindSession:
		return "session"
	case KindAgentFlat:
		return "subagent (flat)"
	default:
		return "subagent"
	}
}

// File is one transcript file of the store.
type File struct {
	Path    string
	Project string // project folder name
	Kind    Kind
	Session string // session id: the file name (main) or the session folder (KindAgent)
	Agent   string // agent id from the file name, for subagents
	Size    int64
	ModTime time.Time
	// Dev, Ino and CTime (the status change time, in nanoseconds) are the
	// rest of the file's identity as the scan found it, with Size and
	// ModTime (0 where the system does not tell): a listing's cache
	// (catalog) keys by them.
	Dev, Ino uint64
	CTime    int64
}

// Identify sets the identity of f (Size, ModTime, Dev, Ino, CTime) from
// what a stat of it says.
func (f *File) Identify(fi os.FileInfo) {
	f.Size, f.ModTime = fi.Size(), fi.ModTime()
	f.Dev, f.Ino = fileID(fi)
	f.CTime = changeTime(fi)
}

// Compaction reports whether the file is a compaction agent's transcript,
// whose parentUuids point into the main session by design.
func (f *File) Compaction() bool { return strings.HasPrefix(f.Agent, "acompact") }

// SessionDir is a projects/<folder>/<session-id>/ folder.
type SessionDir struct {
	Path    string
	Project string
	Session string
}

// Layout is what a scan of projects/ found.
type Layout struct {
	Root        string
	Projects    []string // project folder names, sorted
	Files       []File   // transcripts, sorted by path
	Metas       []string // subagent .meta.json paths
	SessionDirs []SessionDir
	Indexes     []string      // sessions-index.json paths
	Links       []ProjectLink // project folders that are symbolic links, read through
	// Specials are the entries of project folders named like transcripts
	// (.jsonl) that are neither a file nor a link to one (a named pipe, a
	// socket, a device, a link leading nowhere or to a folder): no
	// command reads them.
	Specials []Special

	// listed holds the entries of the folders the scan read, by path:
	// ProjectsOf sums the sizes of a folder without reading them again.
	listed map[string][]fs.DirEntry
}

// list keeps the entries of a folder the scan read.
func (l *Layout) list(dir string, ents []fs.DirEntry) {
	if l.listed == nil {
		l.listed = map[string][]fs.DirEntry{}
	}
	l.listed[dir] = ents
}

// ProjectsDir returns root/projects.
func ProjectsDir(root string) string { return filepath.Join(root, "projects") }

// Scan lists the transcripts and sidecars under root/projects. A store
// with no projects folder is empty, not an error. A project folder that is
// a symbolic link to a directory is read through (and listed in Links); one
// that leads nowhere is only listed in Links.
func Scan(root string) (*Layout, error) {
	l := &Layout{Root: root}
	pdir := ProjectsDir(root)
	ents, err := os.ReadDir(pdir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l, nil
		}
		return nil, err
	}
	// The folders are read on every core, each into a layout of its own,
	// joined in the order of their names.
	var folders []string
	var parts []*Layout
	for _, pe := range ents {
		switch {
		case pe.IsDir():
		case pe.Type()&fs.ModeSymlink != 0:
			fi, err := os.Stat(filepath.Join(pdir, pe.Name()))
			if err == nil && !fi.IsDir() {
				continue // a link to a file: no project folder
			}
			if err != nil {
				parts = append(parts, &Layout{Root: root, Links: []ProjectLink{linkOf(root, pe.Name())}})
				folders = append(folders, "")
				continue
			}
		default:
			continue
		}
		parts = append(parts, &Layout{Root: root})
		folders = append(folders, pe.Name())
	}
	errs := make([]error, len(parts))
	parallel(len(parts), func(_ *glancer, i int) {
		if folders[i] != "" {
			errs[i] = parts[i].scanProject(folders[i])
		}
	})
	for i, p := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		l.Projects = append(l.Projects, p.Projects...)
		l.Files = append(l.Files, p.Files...)
		l.Metas = append(l.Metas, p.Metas...)
		l.SessionDirs = append(l.SessionDirs, p.SessionDirs...)
		l.Indexes = append(l.Indexes, p.Indexes...)
		l.Links = append(l.Links, p.Links...)
		l.Specials = append(l.Specials, p.Specials...)
		for dir, ents := range p.listed {
			l.list(dir, ents)
		}
	}
	sort.Slice(l.Files, func(i, j int) bool { return l.Files[i].Path < l.Files[j].Path })
	return l, nil
}

// ScanProject lists one project folder.
func ScanProject(root, folder string) (*Layout, error) {
	l := &Layout{Root: root}
	if err := l.scanProject(folder); err != nil {
		return nil, err
	}
	sort.Slice(l.Files, func(i, j int) bool { return l.Files[i].Path < l.Files[j].Path })
	return l, nil
}

func (l *Layout) scanProject(folder string) error {
	dir := filepath.Join(ProjectsDir(l.Root), folder)
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		pl := linkOf(l.Root, folder)
		l.Links = append(l.Links, pl)
		if pl.Err != nil {
			return fmt.Errorf("project folder %s: %w", dir, pl.Err)
		}
	}
	d, ents, err := readDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	l.list(dir, ents)
	l.Projects = append(l.Projects, folder)
	for _, e := range ents {
		name := e.Name()
		path := join(dir, name)
		switch {
		case e.IsDir():
			if name == "memory" {
				continue
			}
			l.SessionDirs = append(l.SessionDirs, SessionDir{Path: path, Project: folder, Session: name})
			if err := l.scanSubagents(folder, name, filepath.Join(path, "subagents")); err != nil {
				return err
			}
		case name == "sessions-index.json":
			l.Indexes = append(l.Indexes, path)
		case strings.HasSuffix(name, ".jsonl") && (e.Type().IsRegular() || linksToFile(path, e)):
			stem := strings.TrimSuffix(name, ".jsonl")
			f := File{Path: path, Project: folder}
			if strings.HasPrefix(stem, "agent-") {
				f.Kind, f.Agent = KindAgentFlat, strings.TrimPrefix(stem, "agent-")
			} else {
				f.Kind, f.Session = KindSession, stem
			}
			if err := statIn(d, name, &f); err != nil {
				return err
			}
			l.Files = append(l.Files, f)
		case strings.HasSuffix(name, ".jsonl"):
			l.Specials = append(l.Specials, Special{Path: path, What: kindOf(path, e)})
		}
	}
	return nil
}

// Special is an entry named like a transcript that is not a file.
type Special struct {
	Path string
	What string // "a named pipe (FIFO)", "a symbolic link leading nowhere", ...
}

// kindOf says what the entry e at path is, when it is not a file.
func kindOf(path string, e fs.DirEntry) string {
	t := e.Type()
	if t&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return "a symbolic link leading nowhere"
		case fi.IsDir():
			return "a symbolic link to a folder"
		default:
			t = fi.Mode().Type()
			return "a symbolic link to " + typeName(t)
		}
	}
	return typeName(t)
}

// typeName names a file type that is not a regular file or a folder.
func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a regular file"
	}
}

func (l *Layout) scanSubagents(folder, session, dir string) error {
	d, ents, err := readDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer d.Close()
	l.list(dir, ents)
	return l.scanAgents(folder, session, dir, d, ents)
}

// scanAgents lists the subagent transcripts and metadata of the open
// folder d (at path dir, its entries ents), and of the folders in it, in
// the order of their names.
func (l *Layout) scanAgents(folder, session, dir string, d *os.File, ents []fs.DirEntry) error {
	for _, e := range ents {
		name := e.Name()
		path := join(dir, name)
		if e.IsDir() {
			sd, sents, err := readDir(path)
			if err != nil {
				return err
			}
			l.list(path, sents)
			err = l.scanAgents(folder, session, path, sd, sents)
			sd.Close()
			if err != nil {
				return err
			}
			continue
		}
		if !strings.HasPrefix(name, "agent-") {
			continue
		}
		switch {
		case strings.HasSuffix(name, ".meta.json"):
			l.Metas = append(l.Metas, path)
		case strings.HasSuffix(name, ".jsonl"):
			f := File{Path: path, Project: folder, Kind: KindAgent, Session: session,
				Agent: strings.TrimSuffix(strings.TrimPrefix(name, "agent-"), ".jsonl")}
			if err := statIn(d, name, &f); err != nil {
				return err
			}
			l.Files = append(l.Files, f)
		}
	}
	return nil
}

// join is filepath.Join of a clean folder's path and the name of an
// entry of it (never "." or ".."), without cleaning again.
func join(dir, name string) string { return dir + string(filepath.Separator) + name }

// readDir opens the folder dir and reads its entries, sorted by name
// (as os.ReadDir); the caller closes it.
func readDir(dir string) (*os.File, []fs.DirEntry, error) {
	d, err := openDir(dir)
	if err != nil {
		return nil, nil, err
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return d, ents, nil
}

// linksToFile reports whether e is a symbolic link to a regular file:
// such a transcript is checked like any other (planners leave links alone).
func linksToFile(path string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// LiveSession is a session that sessions/<pid>.json names.
type LiveSession struct {
	Path      string
	PID       int
	SessionID string
	Running   bool
	// StartedAt is when the process started ("startedAt", 2.1.x); zero
	// when the file does not say.
	StartedAt time.Time
}

// LiveSessions reads sessions/<pid>.json files and tells which processes run.
func LiveSessions(root string) ([]LiveSession, error) {
	dir := filepath.Join(root, "sessions")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []LiveSession
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if err != nil {
			continue
		}
		ls := LiveSession{Path: filepath.Join(dir, name), PID: pid}
		if b, err := rfile.ReadFile(ls.Path); err == nil {
			var v struct {
				PID       int    `json:"pid"`
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(b, &v) == nil {
				ls.SessionID = v.SessionID
				if v.PID != 0 {
					ls.PID = v.PID
				}
			}
			var at struct {
				StartedAt float64 `json:"startedAt"`
			}
			if json.Unmarshal(b, &at) == nil && at.StartedAt > 0 {
				ls.StartedAt = time.UnixMilli(int64(at.StartedAt))
			}
		}
		ls.Running = processRuns(ls.PID)
		out = append(out, ls)
	}
	return out, nil
}
