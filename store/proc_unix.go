//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processRuns reports whether a process with this pid exists.
func processRuns(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
