package changeset

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/plural"
)

// Link is a symbolic link inside a store that leads out of it, such as a
// project folder moved to another disk and linked back. cfix reads
// through one, and writes nothing through it: planners leave out the
// changes that would, and apply refuses them.
//
// Below a project folder (or the folder of a session's sidecars, such as
// file-history/<id>), a link is never written through, wherever it
// leads: a session's subagents/ that is a link is not the session's own
// folder. Only the first two levels of a store (projects/<folder>) hold
// links that users make on purpose.
type Link struct {
	Path string // the link
	Dest string // where it leads: its real path, or what it says when it leads nowhere
	// Inside: the link leads into the store, from below a project folder.
	Inside bool
}

func (l Link) String() string {
	if l.Inside {
		return fmt.Sprintf("%s is a symbolic link to %s: cfix writes nothing through a link below a project folder", l.Path, l.Dest)
	}
	return fmt.Sprintf("%s is a symbolic link to %s, out of the store: cfix writes nothing through it", l.Path, l.Dest)
}

// linkFreeDepth is the depth below a store's root from which no folder on
// the way to a write may be a link (root/projects/<folder>/<here>).
const linkFreeDepth = 3

// linkGuard finds the links leading out of a store on the way to the
// paths a change set writes, looking at each folder once.
type linkGuard struct {
	root, real string
	seen       map[string]*Link // a path on the way → the link it is (nil: none)
}

func newLinkGuard(root string) *linkGuard {
	root = filepath.Clean(root)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	return &linkGuard{root: root, real: real, seen: map[string]*Link{}}
}

// OutsideLink returns the symbolic link leading out of the store at root
// that a write of path would go through: a folder on the way from root
// to path. A path outside root (a file beside the store) has none.
func OutsideLink(root, path string) (Link, bool) {
	return newLinkGuard(root).through(path, false)
}

// through looks at the folders from the store's root down to path's
// folder, and path itself when self is set (a folder written into).
func (g *linkGuard) through(path string, self bool) (Link, bool) {
	path = filepath.Clean(path)
	rel, err := filepath.Rel(g.root, path)
	if err != nil || rel == "." || !local(rel) {
		return Link{}, false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if !self {
		parts = parts[:len(parts)-1]
	}
	p := g.root
	for k, c := range parts {
		p = filepath.Join(p, c)
		l, known := g.seen[p]
		if !known {
			var gone bool
			l, gone = g.look(p, k+1 >= linkFreeDepth)
			if gone {
				return Link{}, false // nothing below exists: writes make real folders
			}
			g.seen[p] = l
		}
		if l != nil {
			return *l, true
		}
	}
	return Link{}, false
}

// look tells whether p is a symbolic link leading out of the store (with
// strict, any link), and whether p does not exist.
func (g *linkGuard) look(p string, strict bool) (l *Link, gone bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, true
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		return nil, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		dest, _ := os.Readlink(p)
		return &Link{Path: p, Dest: dest}, false
	}
	if rel, err := filepath.Rel(g.real, real); err == nil && local(rel) {
		if strict {
			return &Link{Path: p, Dest: real, Inside: true}, false
		}
		return nil, false
	}
	return &Link{Path: p, Dest: real}, false
}

// inTree returns the link a copy of the tree from into the folder dst
// would write through: a folder of dst where from has a folder (a merge
// into a folder that exists descends into it).
func (g *linkGuard) inTree(from, dst string) (Link, bool) {
	var found *Link
	filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != nil {
			return filepath.SkipAll
		}
		if !d.IsDir() || p == from {
			return nil
		}
		rel, _ := filepath.Rel(from, p)
		l, gone := g.look(filepath.Join(dst, rel), true)
		if gone {
			return filepath.SkipDir // the copy makes it, a real folder
		}
		found = l
		return nil
	})
	if found != nil {
		return *found, true
	}
	return Link{}, false
}

// local reports whether a relative path stays below its base.
func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// outside returns the link leading out of the store that op would write
// through.
func (g *linkGuard) outside(op *Op) (Link, bool) {
	switch op.Action {
	case CreateDir:
		if l, ok := g.through(op.Path, true); ok {
			return l, true
		}
		if op.From == "" || !below(g.root, filepath.Clean(op.Path)) {
			return Link{}, false
		}
		return g.inTree(op.From, op.Path)
	case Rename:
		if l, ok := g.through(op.Path, false); ok {
			return l, true
		}
		return g.through(op.To, false)
	}
	return g.through(op.Path, false)
}

// OutsideLink returns the first symbolic link leading out of the store
// that an op of the change set would write through.
func (cs *ChangeSet) OutsideLink() (Link, bool) {
	g := newLinkGuard(cs.Root)
	for i := range cs.Ops {
		if l, ok := g.outside(&cs.Ops[i]); ok {
			return l, true
		}
	}
	return Link{}, false
}

// LeaveOutside takes out of the change set the ops that would write
// through a symbolic link leading out of the store, and notes each link
// with what was left out. With wholeSessions, an op left out takes every
// op of its session with it (a session is removed whole or not at all).
// It returns the number of ops left out.
func (cs *ChangeSet) LeaveOutside(wholeSessions bool) int {
	g := newLinkGuard(cs.Root)
	out := map[int]Link{}
	sessions := map[string]Link{}
	var order []Link
	for i := range cs.Ops {
		if l, ok := g.outside(&cs.Ops[i]); ok {
			out[i] = l
			if s := cs.Ops[i].Session; wholeSessions && s != "" {
				if _, seen := sessions[s]; !seen {
					sessions[s] = l
				}
			}
		}
	}
	if len(out) == 0 {
		return 0
	}
	left := map[string][]string{} // link path → what was left out
	keep := cs.Ops[:0:0]
	for i := range cs.Ops {
		op := &cs.Ops[i]
		l, ok := out[i]
		if !ok {
			if sl, ok2 := sessions[op.Session]; ok2 && op.Session != "" {
				l, ok = sl, true
			}
		}
		if !ok {
			keep = append(keep, *op)
			continue
		}
		if _, seen := left[l.Path]; !seen {
			order = append(order, l)
		}
		left[l.Path] = append(left[l.Path], fmt.Sprintf("%s %s", op.Action, op.Path))
	}
	n := len(cs.Ops) - len(keep)
	cs.Ops = keep
	for _, l := range order {
		what := left[l.Path]
		shown := what
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(what)-3))
		}
		cs.Notes = append(cs.Notes, fmt.Sprintf("%s; %d %s left out of this plan: %s",
			l, len(what), plural.Of(len(what), "change"), strings.Join(shown, ", ")))
	}
	return n
}
