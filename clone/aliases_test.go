package clone_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/store"
)

// aliasStore copies testdata/facts/session-aliases-2.1.223 (2.1.223's
// /add-dir /tmp/shapes/hi/b in a session of /tmp/shapes/hi/a) and writes
// its alias line as the client would have for the copy: the path of the
// copy's folder of a.
func aliasStore(t *testing.T) (root, aliases string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "facts", "session-aliases-2.1.223", ".claude")
	root = filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	aliases = filepath.Join(root, "projects", "-tmp-shapes-hi-b", store.AliasesFile)
	raw, err := os.ReadFile(aliases)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != "/tmp/shapes/hi/.claude/projects/-tmp-shapes-hi-a\n" {
		t.Fatalf("the recorded alias file holds %q", raw)
	}
	// A line of another store's folder of the same name, and a line that
	// names no folder: both stay.
	data := "/elsewhere/.claude/projects/-tmp-shapes-hi-a\nnot a folder\n" + filepath.Join(root, "projects", "-tmp-shapes-hi-a") + "\n"
	if err := os.WriteFile(aliases, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, old, old); return nil })
	return root, aliases
}

// TestMoveProjectCarriesAliases: moving /tmp/shapes/hi/a rewrites the line
// of b's .session-aliases naming a's folder to a's new folder (claude -c in
// b continued a's session through it, measured with 2.1.223), and leaves
// the lines naming other folders.
func TestMoveProjectCarriesAliases(t *testing.T) {
	root, aliases := aliasStore(t)
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/tmp/shapes/hi/a", New: "/tmp/shapes/hi/a2", Config: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, op := range pp.ChangeSet.Ops {
		if op.Path == aliases {
			found = true
			if !strings.Contains(op.Reason, "-tmp-shapes-hi-a → -tmp-shapes-hi-a2") {
				t.Errorf("reason %q", op.Reason)
			}
		}
	}
	if !found {
		t.Fatalf("no op on %s: %+v", aliases, pp.ChangeSet.Ops)
	}
	apply(t, pp.ChangeSet)
	got, err := os.ReadFile(aliases)
	if err != nil {
		t.Fatal(err)
	}
	want := "/elsewhere/.claude/projects/-tmp-shapes-hi-a\nnot a folder\n" + filepath.Join(root, "projects", "-tmp-shapes-hi-a2") + "\n"
	if string(got) != want {
		t.Errorf("alias file after the move:\n%q\nwant\n%q", got, want)
	}
	lines, err := store.AliasLines(aliases)
	if err != nil || len(lines) != 3 {
		t.Errorf("AliasLines: %q, %v", lines, err)
	}
	if _, err := os.Stat(filepath.Join(root, "projects", "-tmp-shapes-hi-a2", "83736f2e-f7a4-475e-a98e-17fd3b30700f.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestMoveProjectAliasInside: the alias file of a moved folder moves as it
// is.
func TestMoveProjectAliasInside(t *testing.T) {
	root, aliases := aliasStore(t)
	before, _ := os.ReadFile(aliases)
	// b gets a session of its own so that it moves.
	a := filepath.Join(root, "projects", "-tmp-shapes-hi-a", "83736f2e-f7a4-475e-a98e-17fd3b30700f.jsonl")
	raw, _ := os.ReadFile(a)
	b := filepath.Join(root, "projects", "-tmp-shapes-hi-b", "83736f2e-f7a4-475e-a98e-17fd3b30700e.jsonl")
	os.WriteFile(b, []byte(strings.ReplaceAll(strings.ReplaceAll(string(raw), "/tmp/shapes/hi/a", "/tmp/shapes/hi/b"), "83736f2e-f7a4-475e-a98e-17fd3b30700f", "83736f2e-f7a4-475e-a98e-17fd3b30700e")), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(b, old, old)
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/tmp/shapes/hi/b", New: "/tmp/shapes/hi/b2", Config: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, pp.ChangeSet)
	got, err := os.ReadFile(filepath.Join(root, "projects", "-tmp-shapes-hi-b2", store.AliasesFile))
	if err != nil || string(got) != string(before) {
		t.Errorf("moved alias file: %q, %v; want %q", got, err, before)
	}
}
