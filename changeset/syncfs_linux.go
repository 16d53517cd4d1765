package changeset

import (
	"os"

	"golang.org/x/sys/unix"
)

// canSyncFS: syncfs(2) flushes one file system.
const canSyncFS = true

// syncFS flushes the file system holding path.
func syncFS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
