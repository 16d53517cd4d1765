//go:build unix

package changeset

import (
	"io/fs"
	"syscall"
)

// nlink returns the number of hard links of the file fi describes (1
// where it cannot tell).
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
