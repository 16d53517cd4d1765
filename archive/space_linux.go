package archive

import "syscall"

func fsSpace(path string) (dev uint64, free int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	var s syscall.Stat_t
	if err := syscall.Stat(path, &s); err != nil {
		return 0, 0, err
	}
	return uint64(s.Dev), int64(st.Bavail) * int64(st.Bsize), nil
}
