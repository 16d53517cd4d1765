package faultfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/faultfs"
	"github.com/cfix-dev/cfix/repair"
)

// rmScenario removes the 2.1.330 store's session with subagents and its
// lines of a history.jsonl (cfix rm --history): a file, a folder and a
// rewrite.
func rmScenario(t *testing.T, mnt string) trial {
	root := damage.CopyStoreTo(t, damage.V330, mnt)
	hist := `{"display":"a","project":"/home/dev/work/alpha","sessionId":"140fbe06-16c3-4bec-9598-7770985558f2"}
{"display":"b","project":"/home/dev/work/beta","sessionId":"403bd9fd-3eae-47cc-818f-42838d886e03"}
`
	if err := os.WriteFile(filepath.Join(root, "history.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	damage.Age(t, root)
	plan := func() *changeset.ChangeSet {
		cs, err := archive.Rm(archive.RmOptions{Root: root, Sessions: []string{"140fbe06"}, History: true})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	return trial{cs: plan(), done: func() {}, retry: plan}
}

// cloneScenario clones (or, with move, moves) the 2.1.330 store's session
// with subagents to another working directory.
func cloneScenario(move bool) scenario {
	return func(t *testing.T, mnt string) trial {
		root := damage.CopyStoreTo(t, damage.V330, mnt)
		damage.Age(t, root)
		plan := func() *changeset.ChangeSet {
			opts := clone.Options{Root: root, Session: "140fbe06-16c3-4bec-9598-7770985558f2", To: "/home/dev/work/elsewhere"}
			p, err := clone.Clone(opts)
			if move {
				p, err = clone.Move(opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			return p.ChangeSet
		}
		return trial{cs: plan(), done: func() {}, retry: plan}
	}
}

// TestUndoNoRoom applies rm and archive (of every session) on a tmpfs
// holding the store, the journals and the archive folder (and clone,
// move, and a repair that rewrites files, --force, where it would cut),
// fills it to leave not one byte free, and undoes them: the undo puts every file back
// by links and renames, and writes its own journal into the room the
// apply kept for it in its journal (the file undo-room), so it needs no
// free space; the store is as it was. Before, the undo of an rm of one
// session refused with 0 B free: it wanted 70 KB (its journal's estimate
// and a margin of 64 KB). The undo of a repair that cut a torn last line
// writes that file anew (a copy, so the undo itself can be undone): with
// no room, it refuses before it writes anything, saying what it writes.
func TestUndoNoRoom(t *testing.T) {
	for _, c := range []struct {
		name  string
		sc    scenario
		force bool
	}{{"rm", rmScenario, false}, {"archive", archiveOf(damage.V330), false}, {"clone", cloneScenario(false), false}, {"move", cloneScenario(true), false}, {"repair, rewrites", repairScenario, true}} {
		t.Run(c.name, func(t *testing.T) {
			mnt := faultfs.Mount(t, 16<<20)
			tr := c.sc(t, mnt)
			before := faultfs.Tree(t, store(mnt))
			res, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(mnt), Force: c.force})
			if err != nil {
				t.Fatal(err)
			}
			tr.done()
			u, err := changeset.Undo(res.Journal)
			if err != nil {
				t.Fatal(err)
			}
			faultfs.Fill(t, mnt, 0)
			if free := faultfs.Free(t, mnt); free != 0 {
				t.Fatalf("%d bytes free after the fill", free)
			}
			ur, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(mnt)})
			if err != nil {
				t.Fatalf("undo of %s with 0 B free: %v", c.name, err)
			}
			if d := faultfs.Diff(before, faultfs.Tree(t, store(mnt)), false); d != "" {
				t.Fatalf("after undo the store is not as it was:\n%s", d)
			}
			// What the undo wrote fits in the room it was kept.
			if err := changeset.MarkUndone(res.Journal); err != nil {
				t.Fatalf("marking the journal undone with what is left: %v", err)
			}
			s := changeset.SizeOf(ur.Journal)
			t.Logf("undo of %s: %d ops, its journal %d files, %d bytes", c.name, len(u.Ops), s.Files, s.Bytes)
		})
	}
	t.Run("repair", func(t *testing.T) {
		mnt := faultfs.Mount(t, 16<<20)
		root := damage.CopyStoreTo(t, damage.V330, mnt)
		// A torn last line of 1 MB: far more than the room kept.
		f, err := os.OpenFile(damage.V330File(root), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"assistant","message":{"content":"` + strings.Repeat("x", 1<<20))
		f.Close()
		damage.Age(t, root)
		cs, err := repair.Plan(repair.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals(mnt)})
		if err != nil {
			t.Fatal(err)
		}
		u, err := changeset.Undo(res.Journal)
		if err != nil {
			t.Fatal(err)
		}
		repaired := faultfs.Tree(t, store(mnt))
		faultfs.Fill(t, mnt, 0)
		_, err = changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(mnt)})
		if err == nil || !strings.Contains(err.Error(), "the plan writes ") || !strings.HasSuffix(err.Error(), " kept for this undo in its journal; nothing was changed") {
			t.Fatalf("undo of a repair that cut a file, with 0 B free: %v, want a refusal saying what it writes", err)
		}
		if _, err := os.Stat(filepath.Join(res.Journal, "undo-room")); err != nil {
			t.Errorf("the refused undo gave up the room kept for it: %v", err)
		}
		if d := faultfs.Diff(repaired, faultfs.Tree(t, store(mnt)), false); d != "" {
			t.Fatalf("the refused undo changed the store:\n%s", d)
		}
		t.Log(err)
	})
}
