//go:build !unix

package changeset

import (
	"errors"
	"os"
)

// statRoom: the platform does not say.
func statRoom(dir string) (fsRoom, error) { return fsRoom{}, errors.New("unknown") }

// checkHandles: the platform does not say.
func checkHandles(root string) error { return nil }

// allocated is the size of the file fi describes: the platform does not
// say how many blocks it takes.
func allocated(fi os.FileInfo) int64 { return fi.Size() }
