//go:build !linux

package store

import (
	"os"
	"path/filepath"
)

// statIn sets the identity of f (see File.Identify) from a stat of name,
// an entry of the open folder dir, through symbolic links.
func statIn(dir *os.File, name string, f *File) error {
	fi, err := os.Stat(filepath.Join(dir.Name(), name))
	if err != nil {
		return err
	}
	f.Identify(fi)
	return nil
}

// openDir opens the folder dir to read.
func openDir(dir string) (*os.File, error) { return os.Open(dir) }

// sizeIn is the size of name, an entry of the open folder dir, not
// through a symbolic link.
func sizeIn(dir *os.File, name string) (int64, bool) {
	fi, err := os.Lstat(filepath.Join(dir.Name(), name))
	if err != nil {
		return 0, false
	}
	return fi.Size(), true
}
