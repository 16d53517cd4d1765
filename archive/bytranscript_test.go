package archive

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestByTranscript: a session whose transcript is older than the limit
// but whose subagent was written since is left by --older-than (its last
// activity is recent) and taken with ByTranscript, as Claude Code's
// cleanup deletes the transcript by its own time.
func TestByTranscript(t *testing.T) {
	const id = "69cf842f-abb5-4cd6-96f2-4b11749a235b"
	root := copyStore(t, filepath.Join("..", "testdata", "corpus", "2.1.30", ".claude"))
	now := time.Now()
	old, recent := now.Add(-60*24*time.Hour), now.Add(-10*24*time.Hour)
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(root, "projects", "-home-dev-work-alpha", id, "subagents", "agent-a818dba.jsonl")
	if err := os.Chtimes(agent, recent, recent); err != nil {
		t.Fatal(err)
	}
	picked := func(by bool) bool {
		p, err := Archive(Options{Root: root, Dir: t.TempDir(), OlderThan: 30 * 24 * time.Hour, ByTranscript: by, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range p.Archives {
			ids = append(ids, a.Session)
		}
		if len(ids) == 0 {
			t.Fatalf("ByTranscript %v: nothing picked", by)
		}
		return slices.Contains(ids, id)
	}
	if picked(false) {
		t.Errorf("--older-than 30d took %s, whose subagent was written 10 days ago", id)
	}
	if !picked(true) {
		t.Errorf("--older-than 30d --by-transcript left %s, whose transcript is 60 days old", id)
	}
}
