package archive

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns a file's change time (zero where the platform does
// not say).
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return time.Time{}
}

// sameChange reports whether fi has the change time want (always, when
// want is zero).
func sameChange(fi fs.FileInfo, want time.Time) bool {
	return want.IsZero() || changeTime(fi).Equal(want)
}
