package changeset_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// undoAll plans the undo of the journal at dir and applies it.
func undoAll(t *testing.T, dir string) *changeset.ChangeSet {
	t.Helper()
	u, err := changeset.Undo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	return u
}

// present checks that each path holds its content, and that each of gone
// does not exist.
func present(t *testing.T, files map[string]string, gone ...string) {
	t.Helper()
	for p, want := range files {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
}

// TestUndoCreateDirMerge: undo of a copy merged into a folder that existed
// removes the files the copy added and the folders it made, and nothing
// that was there before; in a batch apply too.
func TestUndoCreateDirMerge(t *testing.T) {
	for _, batch := range []bool{false, true} {
		dir := storeDir(t)
		p := func(s string) string { return filepath.Join(dir, s) }
		write(t, p("src/a"), "a\n")
		write(t, p("src/sub/b"), "b\n")
		write(t, p("src/new/c"), "c\n")
		write(t, p("src/same"), "same\n")
		write(t, p("dst/keep"), "keep\n")
		write(t, p("dst/sub/keep2"), "keep2\n")
		write(t, p("dst/same"), "same\n") // the same bytes as the copy's
		src, dst := fp(t, p("src")), fp(t, p("dst"))
		cs := changeset.New(dir, "test")
		cs.Batch = batch
		cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("dst"), From: p("src"), FromExpect: &src, Merge: true, Expect: dst, Reason: "merge"})
		res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		present(t, map[string]string{p("dst/a"): "a\n", p("dst/sub/b"): "b\n", p("dst/new/c"): "c\n", p("dst/keep"): "keep\n"})
		undoAll(t, res.Journal)
		present(t, map[string]string{p("dst/keep"): "keep\n", p("dst/sub/keep2"): "keep2\n", p("dst/same"): "same\n", p("src/a"): "a\n"},
			p("dst/a"), p("dst/sub/b"), p("dst/new/c"), p("dst/new"))
		// Undone: nothing more to do.
		if u, err := changeset.Undo(res.Journal); err != nil || !u.Empty() {
			t.Errorf("batch %v: undo again: %v, %d ops", batch, err, len(u.Ops))
		}
	}
}

// TestUndoCreateDirKeepsLater: undo of a copy into a new folder removes
// what it copied; a file written into the folder since stays, and so does
// the folder that holds it.
func TestUndoCreateDirKeepsLater(t *testing.T) {
	dir := storeDir(t)
	p := func(s string) string { return filepath.Join(dir, s) }
	write(t, p("src/a"), "a\n")
	write(t, p("src/sub/b"), "b\n")
	write(t, p("src/other/c"), "c\n")
	src := fp(t, p("src"))
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("top/dst"), From: p("src"), FromExpect: &src, Reason: "copy"})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	write(t, p("top/dst/sub/later"), "later\n")
	undoAll(t, res.Journal)
	present(t, map[string]string{p("top/dst/sub/later"): "later\n"}, p("top/dst/a"), p("top/dst/sub/b"), p("top/dst/other"))
	os.Remove(p("top/dst/sub/later"))
	undoAll(t, res.Journal)
	present(t, nil, p("top"))
}

// TestCreateDirAppeared: a folder a plan would make that exists when it is
// applied is refused; one that appears during the apply keeps its files,
// whether the copy goes through or fails and is rolled back.
func TestCreateDirAppeared(t *testing.T) {
	dir := storeDir(t)
	p := func(s string) string { return filepath.Join(dir, s) }
	write(t, p("src/a"), "a\n")
	write(t, p("src/b"), "b\n")
	src := fp(t, p("src"))
	plan := func() *changeset.ChangeSet {
		cs := changeset.New(dir, "test")
		cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("dst"), From: p("src"), FromExpect: &src, Reason: "copy"})
		return cs
	}
	cs := plan()
	write(t, p("dst/theirs"), "theirs\n")
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "exists now") {
		t.Fatalf("err = %v", err)
	}
	os.RemoveAll(p("dst"))

	// Made after the check: the copy adds a and b beside it.
	res, err := changeset.Apply(plan(), changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "before" {
			write(t, p("dst/theirs"), "theirs\n")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	present(t, map[string]string{p("dst/a"): "a\n", p("dst/theirs"): "theirs\n"})
	undoAll(t, res.Journal)
	present(t, map[string]string{p("dst/theirs"): "theirs\n"}, p("dst/a"), p("dst/b"))
	os.RemoveAll(p("dst"))

	// A file of the copy's name made after the check: the copy fails,
	// the rollback removes only what it copied.
	_, err = changeset.Apply(plan(), changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "before" {
			write(t, p("dst/b"), "theirs b\n")
			write(t, p("dst/theirs"), "theirs\n")
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("err = %v", err)
	}
	present(t, map[string]string{p("dst/b"): "theirs b\n", p("dst/theirs"): "theirs\n"}, p("dst/a"))
	os.RemoveAll(p("dst"))

	// The same, the file made after the journal listed what the copy
	// would make: the rollback leaves it too.
	_, err = changeset.Apply(plan(), changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "listed" {
			write(t, p("dst/b"), "theirs b\n")
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("err = %v", err)
	}
	present(t, map[string]string{p("dst/b"): "theirs b\n"}, p("dst/a"))
	os.RemoveAll(p("dst"))

	// A merge skips that file, and its undo leaves it.
	write(t, p("dst/theirs"), "theirs\n")
	cs = changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("dst"), From: p("src"), FromExpect: &src, Merge: true, Expect: fp(t, p("dst")), Reason: "merge"})
	res, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "listed" {
			write(t, p("dst/b"), "theirs b\n")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	undoAll(t, res.Journal)
	present(t, map[string]string{p("dst/b"): "theirs b\n", p("dst/theirs"): "theirs\n"}, p("dst/a"))
}

// mergeApplied applies the merge of a copy of src (holding a) into dst
// (holding keep) and returns the path maker and the apply's journal.
func mergeApplied(t *testing.T) (func(string) string, string) {
	t.Helper()
	dir := storeDir(t)
	p := func(s string) string { return filepath.Join(dir, s) }
	write(t, p("src/a"), "a\n")
	write(t, p("dst/keep"), "keep\n")
	src, dst := fp(t, p("src")), fp(t, p("dst"))
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("dst"), From: p("src"), FromExpect: &src, Merge: true, Expect: dst, Reason: "merge"})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p, res.Journal
}

// rewriteLog rewrites each event of the journal's log with edit, and
// returns the length of the longest line written.
func rewriteLog(t *testing.T, journal string, edit func(e map[string]any)) int {
	t.Helper()
	log := filepath.Join(journal, "log.jsonl")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	long := 0
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		edit(e)
		nb, _ := json.Marshal(e)
		long = max(long, len(nb))
		out = append(append(out, nb...), '\n')
	}
	if err := os.WriteFile(log, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return long
}

// TestUndoCreateDirOldJournal: a journal that does not list what a copy
// made (written before it did) never has a folder that existed removed:
// undo keeps it and says so.
func TestUndoCreateDirOldJournal(t *testing.T) {
	p, journal := mergeApplied(t)
	// The log as an older apply wrote it: "creating" with no list.
	rewriteLog(t, journal, func(e map[string]any) {
		delete(e, "made")
		delete(e, "listed")
	})
	u := undoAll(t, journal)
	present(t, map[string]string{p("dst/keep"): "keep\n", p("dst/a"): "a\n"})
	if len(u.Notes) != 1 || !strings.Contains(u.Notes[0], p("dst")+": kept") {
		t.Errorf("notes %q", u.Notes)
	}
}

// TestUndoCreateDirLongList: a copy that makes more files than fit in 16
// MB of the log's line (about 200,000) is undone like any other.
func TestUndoCreateDirLongList(t *testing.T) {
	p, journal := mergeApplied(t)
	// The list as a copy of 250,000 files would have it: what it made
	// (a), then names of 80 bytes that are gone again.
	long := rewriteLog(t, journal, func(e map[string]any) {
		if made, ok := e["made"].([]any); ok {
			for i := 0; i < 250000; i++ {
				made = append(made, fmt.Sprintf("gone/%075d", i))
			}
			e["made"] = made
		}
	})
	if long <= 16<<20 {
		t.Fatalf("longest log line %d bytes: not over 16 MB", long)
	}
	undoAll(t, journal)
	present(t, map[string]string{p("dst/keep"): "keep\n"}, p("dst/a"))
}
