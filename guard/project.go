package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
)

// ProjectDir is the project whose .claude/settings.json --project names:
// the current directory. ok is false when its .claude folder is the store
// itself (the current directory is the home): its settings are the
// store's. It refuses a .claude that is a symbolic link or no folder.
func ProjectDir() (dir string, ok bool, err error) {
	if dir, err = os.Getwd(); err != nil {
		return "", false, fmt.Errorf("--project: the current directory: %v", err)
	}
	claude := filepath.Join(dir, ".claude")
	if root, err := store.Resolve(""); err == nil && sameFolder(root, claude) {
		return dir, false, nil
	}
	if err := changeset.ProjectFolderOK(claude); err != nil {
		return "", false, fmt.Errorf("--project: %v", err)
	}
	return dir, true, nil
}

// sameFolder reports whether a and b are one folder on disk.
func sameFolder(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// ReadSettings reads the settings file at path; exists is false when there
// is none. A symbolic link is refused: the new file would replace the
// link, and its target would keep the old bytes.
func ReadSettings(path string) (raw []byte, exists bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("settings %s: %v", path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		dest, _ := os.Readlink(path)
		return nil, false, fmt.Errorf("settings %s is a symbolic link to %s: cfix does not rewrite a link (the new file would replace it); put the file in place of the link, or add the hooks to its target by hand", path, dest)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("settings %s is not a regular file", path)
	}
	raw, err = rfile.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("settings %s: %v", path, err)
	}
	return raw, true, nil
}
