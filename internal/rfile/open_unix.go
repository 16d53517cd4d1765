//go:build unix

package rfile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// NoFollow added to OpenFile's flag refuses a symbolic link.
const NoFollow = unix.O_NOFOLLOW

// openFile opens with O_NONBLOCK, so that a FIFO opens at once, refuses
// what fstat says is not a regular file, then clears O_NONBLOCK. The file
// is not registered with the runtime's poller (os.Open of a regular file
// costs four fcntl and a failing epoll_ctl on Linux for nothing).
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, flag|unix.O_CLOEXEC|unix.O_NONBLOCK, uint32(perm.Perm()))
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ENXIO {
		// A FIFO opened to write with no reader.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi.Mode())
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, notRegular(path, modeOf(uint32(st.Mode)))
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flag&^unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// modeOf is the type bits of a stat's mode as fs.FileMode.
func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeIrregular
}
