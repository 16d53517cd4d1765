//go:build !unix

package changeset

import "io/fs"

// nlink returns 1: the platform does not say how many links a file has.
func nlink(fs.FileInfo) uint64 { return 1 }
