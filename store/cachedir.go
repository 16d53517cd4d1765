package store

import (
	"os"
	"path/filepath"
)

// CacheDir is where cfix keeps its caches (the catalog's, the export
// indexes): $XDG_CACHE_HOME/cfix, else ~/.cache/cfix; "" when neither is
// set as an absolute path.
func CacheDir() string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := os.Getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "cfix")
}
