//go:build !unix

package rfile

import "os"

// NoFollow added to OpenFile's flag refuses a symbolic link (nothing
// here: the system has no such flag).
const NoFollow = 0

// openFile opens, then refuses what is not a regular file.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	return f, nil
}
