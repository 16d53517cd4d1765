package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ProjectLink is a project folder that is a symbolic link: people move a
// big project's history to another disk and link it back. cfix reads
// through it; Claude Code's /resume picker does not list the sessions
// behind one (anthropics/claude-code#60965), though `claude --resume ID`
// finds them.
type ProjectLink struct {
	Folder string // the project folder's name
	Path   string // projects/<folder>: the link itself
	Dest   string // what the link says (os.Readlink)
	// Real is the directory the link resolves to, "" when it resolves to
	// none (Err says why).
	Real string
	// Outside reports that the link leads out of the store: planners never
	// write through it.
	Outside bool
	Err     error
}

// linkOf describes the link projects/<folder>.
func linkOf(root, folder string) ProjectLink {
	path := filepath.Join(ProjectsDir(root), folder)
	pl := ProjectLink{Folder: folder, Path: path}
	dest, err := os.Readlink(path)
	if err != nil {
		pl.Err = err
		return pl
	}
	pl.Dest = dest
	abs := dest
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(filepath.Dir(path), dest)
	}
	real, err := filepath.EvalSymlinks(path)
	switch {
	case err != nil:
		pl.Err = fmt.Errorf("symbolic link to %s, which cannot be read: %w", dest, unwrapPath(err))
	default:
		if fi, serr := os.Stat(real); serr != nil || !fi.IsDir() {
			pl.Err = fmt.Errorf("symbolic link to %s, which is not a directory", dest)
		} else {
			pl.Real = real
			abs = real
		}
	}
	pl.Outside = !Within(RealPath(root), abs)
	return pl
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// RealPath returns path with every symbolic link resolved, or path made
// clean when it cannot be resolved.
func RealPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// Within reports whether path is dir or lies under it (whole path
// components: /a/foo is not within /a/f). Both must be clean and absolute.
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// LinkOf returns the link among l.Links of a project folder, if it is one.
func (l *Layout) LinkOf(folder string) (ProjectLink, bool) {
	for _, pl := range l.Links {
		if pl.Folder == folder {
			return pl, true
		}
	}
	return ProjectLink{}, false
}
