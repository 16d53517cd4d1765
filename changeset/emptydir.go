package changeset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// removals is what a plan removes: the paths of its Delete, DeleteDir,
// DeleteEmptyDir and Rename ops (whose source goes).
type removals struct {
	paths map[string]bool
	dirs  []string // DeleteDir: what they hold goes too
}

func (cs *ChangeSet) removals() *removals {
	r := &removals{paths: map[string]bool{}}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Delete, Rename, DeleteEmptyDir:
			r.paths[op.Path] = true
		case DeleteDir:
			r.paths[op.Path] = true
			r.dirs = append(r.dirs, op.Path)
		}
	}
	return r
}

// has reports whether path goes: removed, or held by a folder removed.
func (r *removals) has(path string) bool {
	if r.paths[path] {
		return true
	}
	for _, d := range r.dirs {
		if below(d, path) {
			return true
		}
	}
	return false
}

// leftIn lists the names of what folder dir holds that r does not remove.
func (r *removals) leftIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var left []string
	for _, e := range ents {
		if !r.paths[filepath.Join(dir, e.Name())] {
			left = append(left, e.Name())
		}
	}
	return left, nil
}

// LeftIn lists the names of what folder dir holds that the plan does not
// remove: what is left in it once the plan is applied, but for what the
// plan creates there. A folder that does not exist holds nothing.
func (cs *ChangeSet) LeftIn(dir string) ([]string, error) {
	r := cs.removals()
	if r.has(dir) {
		return nil, nil
	}
	return r.leftIn(dir)
}

// RemoveEmptied adds, after the plan's other operations, the removal of
// each of dirs (project folders, and folders below them) that the plan
// leaves empty and creates nothing in: a DeleteEmptyDir with the folder's
// mode and mtime, which undo gives it back. A folder emptied so counts as
// removed for one that holds it: the deepest go first. A symbolic link
// stays (the folder it leads to is not the store's).
func (cs *ChangeSet) RemoveEmptied(reason string, dirs ...string) error {
	projects := filepath.Join(cs.Root, "projects")
	var todo []string
	seen := map[string]bool{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		// Each folder, and those holding it up to projects/.
		for ; below(projects, d) && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			todo = append(todo, d)
		}
	}
	sort.Slice(todo, func(a, b int) bool {
		da, db := strings.Count(todo[a], string(filepath.Separator)), strings.Count(todo[b], string(filepath.Separator))
		if da != db {
			return da > db
		}
		return todo[a] < todo[b]
	})
	r := cs.removals()
	for _, d := range todo {
		fp, err := Stat(d)
		if err != nil {
			return err
		}
		if !fp.Exists || !fp.Dir || fp.Link != "" || r.has(d) || cs.createsIn(d) {
			continue
		}
		left, err := r.leftIn(d)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			continue
		}
		cs.Add(Op{Action: DeleteEmptyDir, Path: d, Expect: fp, Mode: fp.Mode, ModTime: fp.ModTime, Reason: reason})
		r.paths[d] = true
	}
	return nil
}

// createsIn reports whether the plan creates or renames something into
// folder dir (or below it).
func (cs *ChangeSet) createsIn(dir string) bool {
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Create, CreateDir, Rewrite, RestoreDir:
			if below(dir, op.Path) {
				return true
			}
		case Rename:
			if below(dir, op.To) {
				return true
			}
		}
	}
	return false
}
