package store

import (
	"os"
	"syscall"
)

// changeTime returns the status change time of a file in nanoseconds
// since 1970 (0 when unknown).
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
