//go:build !linux

package changeset

import (
	"io/fs"
	"time"
)

// identity reports false: without a change time that no program can set,
// apply always hashes a file again to know it is unchanged.
func identity(fs.FileInfo) (dev, ino uint64, ctime time.Time, ok bool) {
	return 0, 0, time.Time{}, false
}

// links reports false: a file is cut in place only where its link count
// is known to be 1.
func links(fs.FileInfo) (uint64, bool) { return 0, false }
