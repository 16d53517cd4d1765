//go:build unix

package secrets

import (
	"os"
	"syscall"
)

// openFile opens a file of the store for reading, as search opens one.
// os.Open registers each file it opens with the runtime's poller, which
// costs a regular file four fcntl and a failing epoll_ctl call on Linux,
// for nothing here. os.NewFile of a descriptor opened here asks only
// whether it is non-blocking.
func openFile(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
