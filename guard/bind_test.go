package guard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestHookActsOnItsStoreOnly: a hook's input naming a transcript under
// another folder's projects/<folder>/ (a folder that is no store of the
// guard's) makes it do nothing there: no archive of that folder's old
// transcripts, no check; it succeeds quietly (Claude Code is never
// blocked) and says why in its log. The store is the one the guard was
// installed for, else $CLAUDE_CONFIG_DIR.
func TestHookActsOnItsStoreOnly(t *testing.T) {
	mine := damage.CopyStore(t, "2.1.88")
	t.Setenv("CLAUDE_CONFIG_DIR", mine)
	other := filepath.Join(t.TempDir(), "notastore")
	folder := filepath.Join(other, "projects", "-x")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(folder, "0badf00d-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(old, []byte(`{"type":"user","uuid":"u","sessionId":"0badf00d-0000-4000-8000-000000000001"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-90 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	for _, source := range []string{"startup", "resume"} {
		archived = nil
		state := t.TempDir()
		var out bytes.Buffer
		in := input("SessionStart", source, filepath.Join(folder, "0badf00d-0000-4000-8000-000000000002.jsonl"), "0badf00d-0000-4000-8000-000000000002")
		err := Hook(state, "", "SessionStart", in, &out)
		for _, a := range archived {
			if strings.Contains(strings.Join(a, " "), other) {
				t.Errorf("%s: the hook archived in %s: cfix %v", source, other, a)
			}
		}
		if err == nil || !strings.Contains(err.Error(), other) {
			t.Errorf("%s: the hook says nothing of the transcript outside its store: %v", source, err)
		}
		if out.Len() != 0 {
			t.Errorf("%s: answered %q", source, out.String())
		}
	}
}

// TestHookRecordedStore: the store recorded at install wins over
// $CLAUDE_CONFIG_DIR: a transcript of it is checked (also named through a
// symbolic link to the store), one of the store $CLAUDE_CONFIG_DIR names
// is refused.
func TestHookRecordedStore(t *testing.T) {
	mine := damage.CopyStore(t, "2.1.88")
	path := damage.MainFile(mine)
	damage.Cycle(t, path, damage.FindLast(t, path, damage.HasBlock("tool_result")))
	theirs := damage.CopyStore(t, "2.1.88")
	t.Setenv("CLAUDE_CONFIG_DIR", theirs)
	link := filepath.Join(t.TempDir(), "store")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{mine, link} {
		var out bytes.Buffer
		if err := Hook(t.TempDir(), root, "SessionStart", input("SessionStart", "resume", path, damage.V88Session), &out); err != nil {
			t.Fatalf("--root %s: %v", root, err)
		}
		if !strings.Contains(out.String(), "chain-cycle") {
			t.Errorf("--root %s: no warning: %q", root, out.String())
		}
	}
	var out bytes.Buffer
	err := Hook(t.TempDir(), mine, "SessionStart", input("SessionStart", "resume", damage.MainFile(theirs), damage.V88Session), &out)
	if err == nil || !strings.Contains(err.Error(), "is not a transcript of the store "+mine) || out.Len() != 0 {
		t.Errorf("a transcript of $CLAUDE_CONFIG_DIR's store, with another recorded: %v %q", err, out.String())
	}
}
