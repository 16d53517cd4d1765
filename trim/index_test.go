package trim_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// TestForkIndexCounts: a fork has the time it was made; listed in its folder's sessions-index.json
// is listed with the messages it holds, not its source's (the wild 2.1.205
// store's indexed session forked at turn 2: index-drift, messageCount 10,
// file has 3 messages).
func TestForkIndexCounts(t *testing.T) {
	root := wild.Copy(t, "2.1.205")
	damage.Age(t, root)
	p, err := trim.Fork(trim.ForkOptions{Root: root, Session: "146a54eb-b446-4bdf-98c7-1fcd33fcdd2b", Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Second)
	if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	// A fork is a new session: it has the time it was made (its source's,
	// 2026-01-01 here, would have Claude Code's next start sweep it).
	main := filepath.Join(p.Folder, p.SessionID+".jsonl")
	if fi, err := os.Stat(main); err != nil || fi.ModTime().Before(start) {
		t.Errorf("the fork %s: %v, modified %v", main, err, fi.ModTime())
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Code == validate.IndexDrift {
			t.Errorf("%s: %s", f.Path, f.Message)
		}
	}
}
