// Package rfile opens the files cfix reads from a store, its caches, its
// journals and settings: regular files only. Opening a FIFO blocks until
// someone writes to it (or reads it, to write), and a device or a socket
// never ends: a FIFO named like a transcript, a settings file or a cache
// hung every command that read it. A file that is not regular is refused
// without blocking, naming it and what it is.
package rfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
)

// NotRegularError is the error of a path that is not a regular file.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	kind := "a special file"
	switch m := e.Mode; {
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	case m.IsDir():
		kind = "a directory"
	}
	return "not a regular file but " + kind
}

// ErrNotRegular matches a *NotRegularError (errors.Is).
var ErrNotRegular = errors.New("not a regular file")

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Open opens the regular file path to read (through symbolic links).
func Open(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// OpenFile is os.OpenFile of a regular file: one that is not is refused
// (an *os.PathError holding a *NotRegularError) without blocking, and so
// is an existing one when flag creates. Add NoFollow to flag to refuse a
// symbolic link (cfix's own caches, which it never writes as links).
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openFile(path, flag, perm)
}

// ReadFile is os.ReadFile of a regular file.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() < 1<<30 {
		b.Grow(int(fi.Size()) + bytes.MinRead)
	}
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

func notRegular(path string, mode fs.FileMode) error {
	return &os.PathError{Op: "open", Path: path, Err: &NotRegularError{Mode: mode}}
}
