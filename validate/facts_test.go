package validate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// fact is the store of testdata/facts/name, which the real client of its
// name's version wrote.
func fact(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "facts", name, ".claude")
}

// copyFact copies the store of testdata/facts/name into a folder of the
// test's and returns its root.
func copyFact(t *testing.T, name string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", fact(name), root).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return root
}

// replaceIn replaces the first old of the file at path with new; the
// test stops when the file lacks old (what names it).
func replaceIn(t *testing.T, path, old, new, what string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatal(what + " is not in the fact store")
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// withCode is the findings of rep with code.
func withCode(rep *validate.Report, code validate.Code) []validate.Finding {
	var got []validate.Finding
	for _, f := range rep.Findings {
		if f.Code == code {
			got = append(got, f)
		}
	}
	return got
}
