//go:build !unix

package store

import "os"

// fileID returns the device and inode of a file: unknown (0, 0) here, so
// the message cache keys by path, size and modification time.
func fileID(fi os.FileInfo) (dev, ino uint64) { return 0, 0 }
