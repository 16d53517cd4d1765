//go:build unix

package main

import "github.com/google/renameio/v2"

// newPendingOutput opens the file an export writes instead of path: beside
// it, synced and renamed into place by CloseAtomicallyReplace. A file that
// exists keeps its permissions; a new one gets 0666 less the umask.
func newPendingOutput(path string) (pendingOutput, error) {
	return renameio.NewPendingFile(path, renameio.WithPermissions(0o666), renameio.WithExistingPermissions())
}
