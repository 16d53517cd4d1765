// Package outfile writes the file a command is told to write (-o FILE,
// --html FILE): beside it first, synced and renamed into place, so a failed
// run leaves no half-written FILE; a device or a FIFO named there (/dev/null,
// /dev/stdout, a pipe) is written as it is, never replaced by a file.
package outfile

import (
	"fmt"
	"io"
	"os"
)

// File is a file being written: Commit puts it in place, Cleanup removes
// what Commit did not put there (a no-op after Commit).
type File interface {
	io.Writer
	CloseAtomicallyReplace() error
	Cleanup() error
}

// Create opens path for writing. A regular file or a new one is written
// beside it and renamed over it by CloseAtomicallyReplace (an existing file
// keeps its permissions, a new one gets 0666 less the umask). A character
// device or a FIFO is opened and written in place: renaming over it would
// replace the device with a file. A directory is refused.
func Create(path string) (File, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return newPending(path)
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", path)
	case fi.Mode().IsRegular():
		return newPending(path)
	case fi.Mode()&(os.ModeCharDevice|os.ModeDevice|os.ModeNamedPipe) != 0:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &inPlace{f}, nil
	default:
		return nil, fmt.Errorf("%s: is not a file cfix can write (%s)", path, fi.Mode().Type())
	}
}

// inPlace writes a device or a FIFO directly.
type inPlace struct{ *os.File }

func (p *inPlace) CloseAtomicallyReplace() error { return p.File.Close() }

func (p *inPlace) Cleanup() error {
	p.File.Close()
	return nil
}
