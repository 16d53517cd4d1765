package changeset

import (
	"io/fs"
	"syscall"
	"time"
)

// identity returns the device, inode and change time of a file, or false
// when the platform does not say.
func identity(fi fs.FileInfo) (dev, ino uint64, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return st.Dev, st.Ino, time.Unix(st.Ctim.Sec, st.Ctim.Nsec).UTC(), true
}

// links returns the number of names a file has, or false when the
// platform does not say.
func links(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
