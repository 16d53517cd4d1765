//go:build unix

package outfile

import "github.com/google/renameio/v2"

// newPending opens the file a command writes instead of path: beside
// it, synced and renamed into place by CloseAtomicallyReplace. A file that
// exists keeps its permissions; a new one gets 0666 less the umask.
func newPending(path string) (File, error) {
	return renameio.NewPendingFile(path, renameio.WithPermissions(0o666), renameio.WithExistingPermissions())
}
