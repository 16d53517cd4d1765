//go:build !unix && !windows

package changeset

import "os"

// tryLock always succeeds: the platform has no lock a dead process lets
// go (plan9, wasm); one writer at a time is up to the user there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }

// lockFlags: the platform has none; openLock checks the file it opened.
const lockFlags = 0
