package changeset

import (
	"os"
	"path/filepath"
	"strings"
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

// TestCopyTreeWritesNoLink: the copy of a tree writes through no link it
// meets in the folder it copies into, wherever the link leads (a folder
// replaced by a link after the plan was checked), and replaces none.
func TestCopyTreeWritesNoLink(t *testing.T) {
	tmp := t.TempDir()
	src, dst, elsewhere := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst"), filepath.Join(tmp, "elsewhere")
	for _, d := range []string{filepath.Join(src, "sub"), filepath.Join(dst, "own"), elsewhere} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(src, "sub", "a"), []byte("a"), 0o600)
	os.WriteFile(filepath.Join(src, "b"), []byte("b"), 0o600)
	os.WriteFile(filepath.Join(elsewhere, "b"), []byte("theirs"), 0o600)
	os.Symlink(elsewhere, filepath.Join(dst, "sub"))
	if err := copyTree(src, dst, false, true, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dst, "sub")+" is a symbolic link") {
		t.Errorf("copy into a linked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "a")); err == nil {
		t.Error("a was written through the link")
	}
	// The file itself a link: not replaced, nothing written through it.
	os.Remove(filepath.Join(dst, "sub"))
	os.Remove(filepath.Join(dst, "b")) // the first copy's
	os.Symlink(filepath.Join(elsewhere, "b"), filepath.Join(dst, "b"))
	if err := copyTree(src, dst, false, false, nil); err == nil {
		t.Error("copy over a link: no error")
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "b")); string(b) != "theirs" {
		t.Errorf("written through the link: %q", b)
	}
	// The folder copied into a link.
	if err := copyTree(src, filepath.Join(dst, "b"), false, true, nil); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("copy into a link: %v", err)
	}
}
