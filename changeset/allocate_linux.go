package changeset

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f n bytes of blocks of its own (fallocate), else writes
// them.
func allocate(f *os.File, n int64) error {
	if unix.Fallocate(int(f.Fd()), 0, 0, n) == nil {
		return nil
	}
	return writeZeros(f, n)
}
