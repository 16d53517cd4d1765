//go:build !unix

package outfile

import (
	"os"
	"path/filepath"
)

// newPending opens the file a command writes instead of path: beside
// it, synced and renamed into place by CloseAtomicallyReplace (renameio
// has no Windows version; a rename over a file replaces it there too).
func newPending(path string) (File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &tempOutput{File: f, path: path}, nil
}

type tempOutput struct {
	*os.File
	path string
	done bool
}

func (t *tempOutput) CloseAtomicallyReplace() error {
	if err := t.Sync(); err != nil {
		return err
	}
	if err := t.File.Close(); err != nil {
		return err
	}
	if err := os.Rename(t.Name(), t.path); err != nil {
		return err
	}
	t.done = true
	return nil
}

func (t *tempOutput) Cleanup() error {
	if t.done {
		return nil
	}
	t.File.Close()
	return os.Remove(t.Name())
}
