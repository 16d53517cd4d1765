//go:build unix

package store

import (
	"os"
	"syscall"
)

// fileID returns the device and inode of a file (0, 0 when unknown).
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
