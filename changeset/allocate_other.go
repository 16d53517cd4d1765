//go:build !linux

package changeset

import "os"

// allocate gives f n bytes of blocks of its own by writing them.
func allocate(f *os.File, n int64) error { return writeZeros(f, n) }
