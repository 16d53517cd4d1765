package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Confine tells the files of a store that lead outside it: a file that is
// a symbolic link, or lies in a folder reached through one, whose target
// is below neither the store's real path, nor its projects folder's, nor
// the real path of the project folder it lies in (a project folder that
// is a link to another disk belongs to the store). What reads the store
// for someone other than the user at a shell (the MCP server) reads no
// such file. Safe for concurrent use.
type Confine struct {
	root, pdir string
	mu         sync.Mutex
	real       map[string]string // a folder's path → its real path
}

// NewConfine returns the Confine of the store at root.
func NewConfine(root string) *Confine {
	return &Confine{root: root, pdir: ProjectsDir(root), real: map[string]string{}}
}

// realDir is RealPath of the folder dir, once per folder.
func (c *Confine) realDir(dir string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.real[dir]
	if !ok {
		r = RealPath(dir)
		c.real[dir] = r
	}
	return r
}

// Outside reports whether the file at path leads outside the store, and
// where it leads. A path that is not there leads nowhere (false).
func (c *Confine) Outside(path string) (string, bool) {
	path = filepath.Clean(path)
	fi, err := os.Lstat(path)
	if err != nil {
		return "", false
	}
	var real string
	if fi.Mode()&fs.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return "", false
		}
	} else {
		real = filepath.Join(c.realDir(filepath.Dir(path)), filepath.Base(path))
	}
	if Within(c.realDir(c.root), real) || Within(c.realDir(c.pdir), real) {
		return real, false
	}
	if Within(c.pdir, path) {
		rel, _ := filepath.Rel(c.pdir, path)
		folder, _, _ := strings.Cut(rel, string(filepath.Separator))
		if folder != "." && Within(c.realDir(filepath.Join(c.pdir, folder)), real) {
			return real, false
		}
	}
	return real, true
}

// OutsideError reports a file of the store that leads outside it.
type OutsideError struct {
	Path, Real string
}

func (e *OutsideError) Error() string {
	return e.Path + " leads outside the store (to " + e.Real + "): it is not read"
}

// Check returns an *OutsideError for the first of the layout's
// transcripts, subagent metadata and indexes that leads outside the store.
func (c *Confine) Check(l *Layout) error {
	if l == nil {
		return nil
	}
	paths := make([]string, 0, len(l.Files)+len(l.Metas)+len(l.Indexes))
	for _, f := range l.Files {
		paths = append(paths, f.Path)
	}
	paths = append(append(paths, l.Metas...), l.Indexes...)
	for _, p := range paths {
		if real, out := c.Outside(p); out {
			return &OutsideError{Path: p, Real: real}
		}
	}
	return nil
}

// Keep returns l without the transcripts that lead outside the store
// (l itself when none does).
func (c *Confine) Keep(l *Layout) *Layout {
	var drop map[string]bool
	for _, f := range l.Files {
		if _, out := c.Outside(f.Path); out {
			if drop == nil {
				drop = map[string]bool{}
			}
			drop[f.Path] = true
		}
	}
	if drop == nil {
		return l
	}
	k := *l
	k.Files = nil
	for _, f := range l.Files {
		if !drop[f.Path] {
			k.Files = append(k.Files, f)
		}
	}
	return &k
}
