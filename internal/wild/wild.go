// Package wild gives tests the skeletons of real stores in testdata/wild:
// stores people committed to public repositories, with their text
// replaced (see testdata/wild/README.md), and the hand verdicts on the
// findings an earlier cfix gave on them.
package wild

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// Dir returns testdata/wild.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "wild")
}

// Stores lists the names of the wild stores (the Claude Code versions
// that wrote each).
func Stores(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(Dir())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no wild store in testdata/wild")
	}
	return out
}

// AllRoots returns the .claude folders of every store the tests read,
// to read only: the corpus stores (testdata/corpus), then the wild ones,
// each in name order.
func AllRoots(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{filepath.Join(Dir(), "..", "corpus"), Dir()} {
		m, err := filepath.Glob(filepath.Join(dir, "*", ".claude"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

// Root returns the .claude folder of a wild store, to read only.
func Root(name string) string { return filepath.Join(Dir(), name, ".claude") }

// Copy copies the .claude folder of a wild store into a temp dir, with
// its mtimes, and returns the copy.
func Copy(t testing.TB, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", Root(name), dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", name, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return dst
}

// Verdict is the hand verdict on one error finding an earlier cfix gave.
type Verdict struct {
	Store   string `json:"store"`
	File    string `json:"file"` // relative to the project folder
	Line    int    `json:"line"`
	Code    string `json:"code"`
	Class   string `json:"class"`
	Verdict string `json:"verdict"` // false, real or unknown
}

// Verdicts reads testdata/wild/verdicts.json.
func Verdicts(t testing.TB) []Verdict {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v []Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("verdicts.json: %v", err)
	}
	return v
}
