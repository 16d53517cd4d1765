package carry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/store"
)

// Member is one file or folder of a session family as Copy carries it,
// named by its path relative to the store (forward slashes).
type Member struct {
	Path string // absolute
	Rel  string
	Dir  bool
	What string
}

// Members lists the family of the session whose main transcript is main,
// in the store at root (l its layout), as Copy carries it: the main
// transcript, its flat subagents, its session folder (subagents with
// their .meta.json, tool-results) and its sidecars (todos/<id>-agent-*,
// file-history/<id>/, tasks/<id>/), every folder before what it holds.
// Nothing is followed through a symbolic link: a link is left out and
// named in skipped (a main transcript that is one is refused), and so is
// anything that is neither a file nor a folder.
func Members(root string, l *store.Layout, main store.File) (members []Member, skipped []string, err error) {
	if target, ok := Linked(main.Path); ok {
		return nil, nil, conflict("%s is a symbolic link to %s: cfix carries files, never what a link leads to; put the file itself in place of the link", main.Path, target)
	}
	id := main.Session
	add := func(path, what string) error {
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			skipped = append(skipped, fmt.Sprintf("%s is a symbolic link to %s: left out", path, target))
			return nil
		case !fi.IsDir() && !fi.Mode().IsRegular():
			skipped = append(skipped, fmt.Sprintf("%s is neither a file nor a folder: left out", path))
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("%s is not under the store %s", path, root)
		}
		members = append(members, Member{Path: path, Rel: filepath.ToSlash(rel), Dir: fi.IsDir(), What: what})
		if !fi.IsDir() {
			return nil
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := addTree(path, e.Name(), what, &members, &skipped, root); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(main.Path, "main transcript"); err != nil {
		return nil, nil, err
	}
	for _, f := range l.Files {
		if f.Kind == store.KindAgentFlat && f.Project == main.Project && store.FlatAgentSession(f.Path) == id {
			if err := add(f.Path, "flat subagent "+f.Agent); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := add(filepath.Join(filepath.Dir(main.Path), id), "session folder"); err != nil {
		return nil, nil, err
	}
	todos, err := os.ReadDir(filepath.Join(root, "todos"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, e := range todos {
		if name := e.Name(); strings.HasPrefix(name, id+"-agent-") && strings.HasSuffix(name, ".json") {
			if err := add(filepath.Join(root, "todos", name), "todo list"); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := add(filepath.Join(root, "file-history", id), "file-history"); err != nil {
		return nil, nil, err
	}
	if err := add(filepath.Join(root, "tasks", id), "task list"); err != nil {
		return nil, nil, err
	}
	return members, skipped, nil
}

// addTree adds dir/name and, for a folder, what it holds.
func addTree(dir, name, what string, members *[]Member, skipped *[]string, root string) error {
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		*skipped = append(*skipped, fmt.Sprintf("%s is a symbolic link to %s: left out", path, target))
		return nil
	case !fi.IsDir() && !fi.Mode().IsRegular():
		*skipped = append(*skipped, fmt.Sprintf("%s is neither a file nor a folder: left out", path))
		return nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	*members = append(*members, Member{Path: path, Rel: filepath.ToSlash(rel), Dir: fi.IsDir(), What: what})
	if !fi.IsDir() {
		return nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if err := addTree(path, e.Name(), what, members, skipped, root); err != nil {
			return err
		}
	}
	return nil
}
