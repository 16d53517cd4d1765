package store

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// statIn sets the identity of f (see File.Identify) from a stat of name,
// an entry of the open folder dir, through symbolic links: relative to
// the folder, so the kernel does not walk its path again for each entry.
func statIn(dir *os.File, name string, f *File) error {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, 0); err != nil {
		return &os.PathError{Op: "stat", Path: filepath.Join(dir.Name(), name), Err: err}
	}
	f.Size, f.ModTime = st.Size, time.Unix(st.Mtim.Unix())
	f.Dev, f.Ino, f.CTime = uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano()
	return nil
}

// openDir opens the folder dir to read: not registered with the
// runtime's poller (a folder is never waited on), one system call less
// than os.Open.
func openDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// sizeIn is the size of name, an entry of the open folder dir, not
// through a symbolic link.
func sizeIn(dir *os.File, name string) (int64, bool) {
	var st unix.Stat_t
	if unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0, false
	}
	return st.Size, true
}
