package archive

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/killtest"
)

// TestArchiveKillHelper is the child process of TestArchiveKilled.
func TestArchiveKillHelper(t *testing.T) { killtest.Child(t) }

// TestArchiveKilled kills the (batch) apply of an archive of every session
// of a store at each of its steps. Afterwards no file is lost (each is in
// the store or in the journal's backup), and undo of the interrupted
// journal gives back the whole store, every byte, mode and mtime, and
// leaves no archive file.
func TestArchiveKilled(t *testing.T) {
	src := "../testdata/corpus/2.1.330/.claude"
	hooks := -1
	for at := 0; hooks < 0 || at < hooks; at++ {
		root := copyStore(t, src)
		before := tree(t, root)
		adir := filepath.Join(t.TempDir(), "archive")
		p, err := Archive(Options{Root: root, Dir: adir, OlderThan: time.Minute, Build: true})
		if err != nil {
			t.Fatal(err)
		}
		if !p.ChangeSet.Batch {
			t.Fatal("the archive plan is not a batch")
		}
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if err := p.ChangeSet.Save(planFile); err != nil {
			t.Fatal(err)
		}
		journals := t.TempDir()
		killed, n := killtest.Apply(t, "TestArchiveKillHelper", planFile, at, journals)
		p.Cleanup()
		if !killed {
			hooks = n
			break
		}
		dirs, _ := filepath.Glob(filepath.Join(journals, "*-archive-*"))
		if len(dirs) != 1 {
			t.Fatalf("kill at %d: %d journals", at, len(dirs))
		}
		u, err := changeset.Undo(dirs[0])
		if err != nil {
			t.Fatalf("kill at %d: undo: %v", at, err)
		}
		if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals}); err != nil {
			t.Fatalf("kill at %d: undo: %v", at, err)
		}
		requireTree(t, fmt.Sprintf("kill at %d, then undo", at), before, tree(t, root))
		if left, _ := filepath.Glob(filepath.Join(adir, "*"+Ext)); len(left) != 0 {
			t.Fatalf("kill at %d: archive files left after undo: %v", at, left)
		}
	}
	if hooks < 10 {
		t.Fatalf("only %d hook calls", hooks)
	}
	t.Logf("killed at each of %d steps", hooks)
}
