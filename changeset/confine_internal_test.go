package changeset

import (
	"os"
	"path/filepath"
	"testing"
)

// storeDir returns a new empty store: a folder with a projects folder.
func storeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
