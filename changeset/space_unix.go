//go:build unix

package changeset

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// statRoom reports the room on the file system holding dir.
func statRoom(dir string) (fsRoom, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsRoom{}, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fsRoom{}, err
	}
	dev, _, _, _ := identity(fi)
	r := fsRoom{dev: dev, free: int64(st.Bavail) * int64(st.Bsize), files: -1, name: "the file system of " + dir}
	if st.Files > 0 {
		r.files = int64(st.Ffree)
	}
	return r, nil
}

// checkHandles refuses an apply the limit of open files (ulimit -n) would
// stop half-way.
func checkHandles(root string) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil // the platform does not say how many are open
	}
	open := uint64(len(ents))
	if open+handlesNeeded > lim.Cur {
		return &RefusedError{Path: root, Untouched: true, Reason: fmt.Sprintf("an apply holds up to %d files open, %d are open already and the limit is %d (ulimit -n)",
			handlesNeeded, open, lim.Cur)}
	}
	return nil
}

// allocated is the room the file fi describes takes on its file system
// (its blocks).
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
