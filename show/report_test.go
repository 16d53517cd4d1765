package show

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeProgress: progress entries that hang off the loaded chain are
// counted apart from the entries on other branches (forks, retries), as
// validate's chain-forks counts only messages there.
func TestResumeProgress(t *testing.T) {
	rec := func(typ, uuid, parent, ts string) string {
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":"` + parent + `","timestamp":"2026-01-01T00:00:0` + ts + `Z","version":"2.1.22","message":{"role":"user","content":"x"}}`
	}
	lines := []string{
		strings.Replace(rec("user", "u1", "", "1"), `"parentUuid":""`, `"parentUuid":null`, 1),
		rec("assistant", "a1", "u1", "2"),
		rec("progress", "p1", "a1", "3"),
		rec("progress", "p2", "p1", "4"),
		rec("user", "f1", "u1", "5"), // a fork: another answer to u1
		rec("user", "u2", "a1", "6"),
		rec("assistant", "a2", "u2", "7"),
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Read(path, true)
	if err != nil {
		t.Fatal(err)
	}
	r := resumeOf(st.chain)
	if r.Loaded != 4 || r.Branches != 1 || r.Progress != 2 {
		t.Errorf("loaded %d, %d on other branches, %d progress entries; want 4, 1, 2", r.Loaded, r.Branches, r.Progress)
	}
}
