package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestWindowsCaseFolder: a Windows session whose cwd spells its path in
// another case than the folder it sits in (C:\Users\d1\Desktop\d3 in
// C--Users-d1-desktop-d3, as a store on NTFS holds them) is in its own
// folder: no cwd-mismatch. The wild skeleton mapped the two spellings to
// different names (d4 and d2): there the cwd is another folder's.
func TestWindowsCaseFolder(t *testing.T) {
	const rel = "C--Users-d1-d2-d3/044231e2-636f-462f-804c-3ea012294106.jsonl"
	b, err := os.ReadFile(filepath.Join(wild.Root("2.1.139-2.1.173"), "projects", rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		folder, cwd string
		mismatch    bool
	}{
		{"C--Users-d1-desktop-d3", `C:\\Users\\d1\\Desktop\\d3`, false},
		{"c--users-d1-desktop-d3", `C:\\Users\\d1\\Desktop\\d3`, false},
		{"C--Users-d1-d2-d3", `C:\\Users\\d1\\d4\\d3`, true},
	} {
		root := t.TempDir()
		path := filepath.Join(root, "projects", c.folder, filepath.Base(rel))
		os.MkdirAll(filepath.Dir(path), 0o700)
		data := strings.ReplaceAll(string(b), `"cwd":"C:\\Users\\d1\\d4\\d3"`, `"cwd":"`+c.cwd+`"`)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := validate.Run(validate.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Counts[string(validate.CWDMismatch)] > 0
		if got != c.mismatch {
			t.Errorf("cwd %s in folder %s: cwd-mismatch %v, want %v", c.cwd, c.folder, got, c.mismatch)
		}
	}
}
