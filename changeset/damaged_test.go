package changeset_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
)

// rmJournal copies the 2.1.330 corpus store, removes its session with
// subagents and its lines of a history.jsonl (cfix rm --history: a
// folder, a file and a rewrite of history.jsonl, in a batch), and returns the store, the
// journal folder, the journal and what the store held before.
func rmJournal(t *testing.T) (root, journals, dir string, before map[string]string) {
	t.Helper()
	root = damage.CopyStoreTo(t, damage.V330, t.TempDir())
	write(t, filepath.Join(root, "history.jsonl"), `{"display":"a","project":"/home/dev/work/alpha","sessionId":"140fbe06-16c3-4bec-9598-7770985558f2"}
{"display":"b","project":"/home/dev/work/beta","sessionId":"403bd9fd-3eae-47cc-818f-42838d886e03"}
{"display":"c","project":"/home/dev/work/alpha","sessionId":"140fbe06-16c3-4bec-9598-7770985558f2"}
`)
	damage.Age(t, root)
	journals = t.TempDir()
	before = readTree(t, root)
	cs, err := archive.Rm(archive.RmOptions{Root: root, Sessions: []string{"140fbe06"}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	if err != nil {
		t.Fatal(err)
	}
	return root, journals, res.Journal, before
}

// cutLog cuts the journal's log.jsonl as cut says: "empty" (truncated to
// nothing), "head" (its first line kept), "front" (its last line, the
// applied event, kept), "gone" (removed).
func cutLog(t *testing.T, dir, cut string) {
	t.Helper()
	p := filepath.Join(dir, "log.jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	switch cut {
	case "empty":
		b = nil
	case "head":
		b = []byte(lines[0])
	case "front":
		b = []byte(lines[len(lines)-1] + "\n")
	case "gone":
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// pruned reports whether journal prune, keeping nothing, would remove dir.
func pruned(t *testing.T, journals, root, dir string) bool {
	t.Helper()
	js, err := changeset.PruneJournals(journals, root, changeset.Retention{}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(js, func(j changeset.JournalInfo) bool { return j.Dir == dir })
}

// TestCutLog: the journal of an rm whose log.jsonl was cut (emptied, cut
// to its first line, to its last, or removed) still holds the backups of
// what rm removed. It is listed as damaged; the next writer does not take
// it for a killed apply (no rollback, no mark); journal prune never
// removes it, before or after its undo; and undo puts back every file
// from the backups it verifies against the plan's hashes, the store as it
// was, byte for byte. Before, undo said nothing to do and left the
// session removed, the next writer marked the journal rolled back, and
// prune removed it with the only copy of the session.
func TestCutLog(t *testing.T) {
	for _, cut := range []string{"empty", "head", "front", "gone"} {
		t.Run(cut, func(t *testing.T) {
			root, journals, dir, before := rmJournal(t)
			cutLog(t, dir, cut)
			info, err := changeset.ReadJournalInfo(dir)
			if err != nil {
				t.Fatalf("a journal whose log was cut: %v", err)
			}
			if info.Damage == "" {
				t.Errorf("a journal whose log was cut is not marked damaged: %+v", info)
			}
			// The next writer.
			l, err := changeset.LockStore(journals, root)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := changeset.Recover(changeset.ApplyOptions{JournalDir: journals, Lock: l})
			l.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := changeset.ReadJournalInfo(dir); after.State != info.State {
				t.Errorf("the next writer marked the cut journal %s (it said %q)", after.State, lines)
			}
			if info.State == "incomplete" && (len(lines) != 1 || !strings.Contains(lines[0], "not rolled back, as a killed apply would be") || !strings.Contains(lines[0], "cfix undo --apply "+dir+" --root "+root)) {
				t.Errorf("the next writer said %q of the cut journal", lines)
			}
			if pruned(t, journals, root, dir) {
				t.Error("journal prune would remove the cut journal")
			}
			u, err := changeset.Undo(dir)
			if err != nil {
				t.Fatalf("undo: %v", err)
			}
			if u.Empty() {
				t.Fatalf("undo of the cut journal has nothing to do (notes %q)", u.Notes)
			}
			if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals}); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if !maps(before, readTree(t, root)) {
				t.Error("after the undo of the cut journal the store is not as it was")
			}
			if err := changeset.MarkUndone(dir); err != nil && cut != "gone" {
				t.Fatal(err)
			}
			if pruned(t, journals, root, dir) {
				t.Error("journal prune would remove the cut journal after its undo")
			}
			t.Logf("%s: %s; undo notes %q", info.State, info.Damage, u.Notes)
		})
	}
}

// TestCutLogChangedBackup: a cut log and a backup that no longer holds
// what the plan read: undo refuses before it restores anything, naming
// the backup.
func TestCutLogChangedBackup(t *testing.T) {
	root, _, dir, _ := rmJournal(t)
	cutLog(t, dir, "empty")
	bks, _ := filepath.Glob(filepath.Join(dir, "backup", "*"))
	var file string
	for _, b := range bks {
		if fi, err := os.Lstat(b); err == nil && fi.Mode().IsRegular() {
			file = b
			break
		}
	}
	if file == "" {
		t.Fatalf("no backup that is a file in %v", bks)
	}
	if err := os.WriteFile(file, []byte("not what was backed up\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := readTree(t, root)
	_, err := changeset.Undo(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("backup", filepath.Base(file))+" does not hold what was backed up") {
		t.Fatalf("undo with a changed backup: %v", err)
	}
	if !maps(before, readTree(t, root)) {
		t.Error("the store changed")
	}
}

// TestCutLogFileChanged: a cut log, and a file the apply rewrote that
// changed since (a line appended): undo cannot tell those bytes from
// cfix's, and refuses, naming the file and the backup that holds its old
// bytes; nothing is restored.
func TestCutLogFileChanged(t *testing.T) {
	root, _, dir, _ := rmJournal(t)
	cutLog(t, dir, "empty")
	h := filepath.Join(root, "history.jsonl")
	f, err := os.OpenFile(h, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"display":"d","project":"/home/dev/work/beta","sessionId":"403bd9fd-3eae-47cc-818f-42838d886e03"}` + "\n")
	f.Close()
	before := readTree(t, root)
	_, err = changeset.Undo(dir)
	if err == nil || !strings.HasPrefix(err.Error(), h+": holds neither what the plan read nor what cfix wrote") || !strings.Contains(err.Error(), filepath.Join(dir, "backup")) {
		t.Fatalf("undo of a cut journal whose rewritten file changed since: %v", err)
	}
	if !maps(before, readTree(t, root)) {
		t.Error("the store changed")
	}
}

// TestBackupNamedNotMade: an apply names each backup in its log before it
// makes it, so a kill in between leaves a backup named and missing or half
// made, beside a file never touched. The next writer rolls such a journal
// back as any killed apply (it is not damaged), and the file stays as it
// was: a removal whose backup is missing, a cut whose backup is short.
func TestBackupNamedNotMade(t *testing.T) {
	for _, c := range []struct {
		name string
		op   func(root string) changeset.Op
		left func(bk string) // what the kill left of the backup
	}{
		{"delete, no backup", func(root string) changeset.Op {
			p := filepath.Join(root, "projects", "gone.jsonl")
			return changeset.Op{Action: changeset.Delete, Path: p, Reason: "d", Expect: fp(t, p)}
		}, func(bk string) { os.Remove(bk) }},
		{"cut, half a backup", func(root string) changeset.Op {
			p := filepath.Join(root, "projects", "torn.jsonl")
			return changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "cut", Expect: fp(t, p),
				Edits: []changeset.Edit{{Line: 2, Offset: 8, Length: 9, Count: 1}}}
		}, func(bk string) { os.Truncate(bk, 3) }},
		{"cut, no backup", func(root string) changeset.Op {
			p := filepath.Join(root, "projects", "torn.jsonl")
			return changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "cut", Expect: fp(t, p),
				Edits: []changeset.Edit{{Line: 2, Offset: 8, Length: 9, Count: 1}}}
		}, func(bk string) { os.Remove(bk) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, journals := storeDir(t), t.TempDir()
			a := filepath.Join(root, "projects", "a.jsonl")
			write(t, a, "{\"a\":1}\n")
			write(t, filepath.Join(root, "projects", "gone.jsonl"), "{\"g\":1}\n")
			write(t, filepath.Join(root, "projects", "torn.jsonl"), "{\"t\":1}\n{\"t\":2,\"\n")
			before := readTree(t, root)
			cs := changeset.New(root, "test")
			cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Reason: "r", Expect: fp(t, a), Data: []byte("{\"a\":2}\n"), HasData: true})
			cs.Add(c.op(root))
			stopApply(t, cs, journals, "backed-up", 1)
			js, _ := changeset.ListJournals(journals, root)
			if len(js) != 1 {
				t.Fatalf("journals %+v", js)
			}
			c.left(filepath.Join(js[0].Dir, "backup", "1"))
			if info, _ := changeset.ReadJournalInfo(js[0].Dir); info.Damage != "" {
				t.Errorf("a killed apply's journal is damaged: %s", info.Damage)
			}
			l, err := changeset.LockStore(journals, root)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := changeset.Recover(changeset.ApplyOptions{JournalDir: journals, Lock: l})
			l.Unlock()
			if err != nil {
				t.Fatalf("recover: %v", err)
			}
			if !maps(before, readTree(t, root)) {
				t.Errorf("after recover the store is not as before (recover said %q)", lines)
			}
			if info, _ := changeset.ReadJournalInfo(js[0].Dir); info.State != "rolled-back" {
				t.Errorf("journal %s after recover (it said %q)", info.State, lines)
			}
		})
	}
}

// TestUndoRoomKept: an apply keeps room for its undo in its journal (the
// file undo-room, allocated); its undo gives that room back before it
// writes its own journal; an apply that rolls back gives it back too.
func TestUndoRoomKept(t *testing.T) {
	root, journals, dir, _ := rmJournal(t)
	room := filepath.Join(dir, "undo-room")
	fi, err := os.Stat(room)
	if err != nil || fi.Size() < 16<<10 {
		t.Fatalf("the journal of an rm keeps no room for its undo: %v", err)
	}
	u, err := changeset.Undo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(room); !os.IsNotExist(err) {
		t.Errorf("the undo left the room kept for it (%v)", err)
	}

	a := filepath.Join(root, "projects", "a.jsonl")
	write(t, a, "a\n")
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Reason: "r", Expect: fp(t, a), Data: []byte("b\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: filepath.Join(root, "projects", "gone.jsonl"), Reason: "r", Data: []byte("b\n"), HasData: true})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("apply: %v, want a rollback", err)
	}
	if _, err := os.Stat(filepath.Join(res.Journal, "undo-room")); !os.IsNotExist(err) {
		t.Errorf("the rolled back apply kept room for an undo (%v)", err)
	}
}
