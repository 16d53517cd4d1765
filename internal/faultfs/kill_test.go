package faultfs_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/faultfs"
	"github.com/cfix-dev/cfix/internal/killtest"
)

// TestKillHelper is the child process of TestKillDuringUndo.
func TestKillHelper(t *testing.T) { killtest.Child(t) }

// TestKillDuringUndo kills the undo of a repair at each of its steps (the
// undo puts backups back by links and renames). Afterwards every file of
// the store is its repaired or its original version and nothing else
// lies in the store; an undo run again gives back the original.
func TestKillDuringUndo(t *testing.T) {
	dir := t.TempDir()
	setup := func() (orig, repaired map[string]string, journal string) {
		faultfs.Clear(t, dir)
		tr := repairScenario(t, dir)
		orig = faultfs.Tree(t, store(dir))
		res, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(dir)})
		if err != nil {
			t.Fatal(err)
		}
		return orig, faultfs.Tree(t, store(dir)), res.Journal
	}
	hooks := -1
	for at := 0; hooks < 0 || at < hooks; at++ {
		orig, repaired, journal := setup()
		u, err := changeset.Undo(journal)
		if err != nil {
			t.Fatal(err)
		}
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if err := u.Save(planFile); err != nil {
			t.Fatal(err)
		}
		killed, n := killtest.Apply(t, "TestKillHelper", planFile, at, journals(dir))
		if !killed {
			hooks = n
		}
		for p, now := range faultfs.Tree(t, store(dir)) {
			if strings.HasPrefix(filepath.Base(p), changeset.TempPrefix) && orig[p] == "" {
				continue // the new content of a write the kill cut short: the next writer removes it
			}
			if now != orig[p] && now != repaired[p] {
				t.Fatalf("kill at %d: %s is neither its original nor its repaired version: %s", at, p, now)
			}
		}
		// As the next writer does: the temporary files of the killed
		// undo go first.
		killedJournals, _ := filepath.Glob(filepath.Join(journals(dir), "*Z-undo-*"))
		for _, jd := range killedJournals {
			if _, err := changeset.RemoveTemps(jd); err != nil {
				t.Fatal(err)
			}
		}
		u, err = changeset.Undo(journal)
		if err != nil {
			t.Fatalf("kill at %d: undo again: %v", at, err)
		}
		if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(dir)}); err != nil {
			t.Fatalf("kill at %d: undo again: %v", at, err)
		}
		if d := faultfs.Diff(orig, faultfs.Tree(t, store(dir)), false); d != "" {
			t.Fatalf("kill at %d: after undo again the store is not as it was:\n%s", at, d)
		}
	}
	if hooks < 10 {
		t.Fatalf("only %d hook calls", hooks)
	}
	t.Logf("killed at each of %d steps", hooks)
}
