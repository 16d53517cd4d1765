//go:build !unix

package store

import "os"

// processRuns reports whether a process with this pid exists: on Windows,
// FindProcess opens the process, and fails when there is none.
func processRuns(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
