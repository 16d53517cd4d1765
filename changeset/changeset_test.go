package changeset_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/changeset"
)

var old = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// storeDir returns a new empty store: a folder with a projects folder.
func storeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func write(t *testing.T, p, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
}

func fp(t *testing.T, p string) changeset.Fingerprint {
	t.Helper()
	f, err := changeset.FingerprintOf(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEveryAction applies a change set with each action, checks the
// result, then undoes it and checks everything is as before.
func TestEveryAction(t *testing.T) {
	dir := storeDir(t)
	p := func(s string) string { return filepath.Join(dir, s) }
	write(t, p("rewrite.jsonl"), "a\nb\nc\n")
	write(t, p("data.json"), "{}\n")
	write(t, p("delete.txt"), "gone\n")
	write(t, p("rename.txt"), "moved\n")
	write(t, p("tree/x"), "x\n")
	write(t, p("tree/sub/y"), "y\n")
	write(t, p("src/z"), "z\n")

	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p("rewrite.jsonl"), Reason: "edit", Expect: fp(t, p("rewrite.jsonl")),
		Edits: []changeset.Edit{{Line: 2, Offset: 2, Length: 2, Count: 1, New: []byte("B1\nB2\n")}, {Line: 4, Offset: 6, New: []byte("d\n")}}})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p("data.json"), Reason: "data", Expect: fp(t, p("data.json")), Data: []byte("{\"a\":1}\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Create, Path: p("new/created.txt"), Reason: "create", Data: []byte("new\n"), HasData: true, ModTime: old})
	cs.Add(changeset.Op{Action: changeset.Delete, Path: p("delete.txt"), Reason: "delete", Expect: fp(t, p("delete.txt"))})
	cs.Add(changeset.Op{Action: changeset.Rename, Path: p("rename.txt"), To: p("moved/rename.txt"), Reason: "rename", Expect: fp(t, p("rename.txt"))})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: p("tree"), Reason: "delete dir", Expect: fp(t, p("tree"))})
	srcFP := fp(t, p("src"))
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("copy"), From: p("src"), FromExpect: &srcFP, Reason: "copy dir"})

	var show bytes.Buffer
	if err := changeset.Show(&show, cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"@@ -1,3 +1,5 @@ ", "-b", "+B1", "+B2", "+d", "rename from ", "--- " + p("tree") + "/", "- removed folder: 2 files, 4 B", "+ new folder: 1 file, 2 B", "cfix test: 7 changes"} {
		if !strings.Contains(show.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, show.String())
		}
	}
	// The full view lists what a folder removed or copied holds.
	var full bytes.Buffer
	if _, err := (changeset.View{Full: true}).Write(&full, cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-sub/y (2 B)", "+z (2 B)"} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("the full view lacks %q:\n%s", want, full.String())
		}
	}
	// The plan survives a save and a load.
	saved := filepath.Join(t.TempDir(), "plan.json")
	if err := cs.Save(saved); err != nil {
		t.Fatal(err)
	}
	cs, err := changeset.Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	journals := t.TempDir()
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, p("rewrite.jsonl")); got != "a\nB1\nB2\nc\nd\n" {
		t.Errorf("rewrite: %q", got)
	}
	if fi, _ := os.Stat(p("rewrite.jsonl")); fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(old) {
		t.Errorf("rewrite: mode %v mtime %v", fi.Mode().Perm(), fi.ModTime())
	}
	if read(t, p("data.json")) != "{\"a\":1}\n" || read(t, p("new/created.txt")) != "new\n" || read(t, p("moved/rename.txt")) != "moved\n" || read(t, p("copy/z")) != "z\n" {
		t.Error("data, create, rename or create-dir wrong")
	}
	for _, gone := range []string{"delete.txt", "rename.txt", "tree"} {
		if _, err := os.Stat(p(gone)); err == nil {
			t.Errorf("%s still there", gone)
		}
	}
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"rewrite.jsonl": "a\nb\nc\n", "data.json": "{}\n", "delete.txt": "gone\n", "rename.txt": "moved\n", "tree/sub/y": "y\n"} {
		if got := read(t, p(f)); got != want {
			t.Errorf("after undo %s = %q", f, got)
		}
	}
	for _, gone := range []string{"new/created.txt", "moved/rename.txt", "copy", "new", "moved"} {
		if _, err := os.Stat(p(gone)); err == nil {
			t.Errorf("after undo %s still there", gone)
		}
	}
	js, err := changeset.ListJournals(journals, dir)
	if err != nil || len(js) != 2 {
		t.Fatalf("journals: %v %v", js, err)
	}
}

// TestRefuseChanged: a file that changed since the plan stops everything.
func TestRefuseChanged(t *testing.T) {
	dir := storeDir(t)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, "a\n")
	write(t, b, "b\n")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Data: []byte("A\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: b, Expect: fp(t, b), Data: []byte("B\n"), HasData: true})
	write(t, b, "c\n") // same size, same mtime, other bytes
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	var re *changeset.RefusedError
	if !errors.As(err, &re) || re.Path != b || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	if read(t, a) != "a\n" {
		t.Error("a was changed")
	}
	// A create whose path appeared since.
	cs = changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(dir, "c"), Data: []byte("x"), HasData: true})
	write(t, filepath.Join(dir, "c"), "there")
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "exists now") {
		t.Fatalf("err = %v", err)
	}
}

// TestRollback: a failure in the middle rolls back what was applied.
func TestRollback(t *testing.T) {
	dir := storeDir(t)
	a := filepath.Join(dir, "a")
	write(t, a, "a\n")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Data: []byte("A\n"), HasData: true})
	// An edit past the end of the file fails while writing.
	b := filepath.Join(dir, "b")
	write(t, b, "b\n")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: b, Expect: fp(t, b), Edits: []changeset.Edit{{Offset: 100, Length: 5}}})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("err = %v", err)
	}
	if read(t, a) != "a\n" || read(t, b) != "b\n" {
		t.Errorf("after rollback a=%q b=%q", read(t, a), read(t, b))
	}
}

// TestLongLinesShortened: the display cuts long lines, the file keeps them.
func TestLongLinesShortened(t *testing.T) {
	dir := storeDir(t)
	a := filepath.Join(dir, "a.jsonl")
	long := strings.Repeat("x", 5000)
	write(t, a, "short\n"+long+"\n")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Edits: []changeset.Edit{{Line: 2, Offset: 6, Length: 5001, Count: 1, New: []byte(long + "y\n")}}})
	var out bytes.Buffer
	if err := changeset.Diff(&out, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n-xxx") || !strings.Contains(out.String(), "x [5000 bytes]\n") ||
		!strings.Contains(out.String(), "xy [5001 bytes]\n") || len(out.String()) > 1000 {
		t.Errorf("diff:\n%s", out.String())
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if read(t, a) != "short\n"+long+"y\n" {
		t.Error("the file lost bytes")
	}
}

// TestDiffShowsControls: a damaged line's NUL bytes, escape sequences and
// bytes that are not UTF-8 are shown as Go escapes, in a short line, a
// long one and a changed pair, a path, a reason and a note, never sent to
// the terminal as they are.
func TestDiffShowsControls(t *testing.T) {
	dir := storeDir(t)
	a := filepath.Join(dir, "a\x1b[2Jb.jsonl")
	bad := "{\"type\":\x00\"user\"}\x1b[2J\xff"
	long := "\x1b]0;title\x07" + strings.Repeat("x", 5000)
	write(t, a, "ok\n"+bad+"\n"+long+"\n{\"k\":\"a\x00\"}\n")
	cs := changeset.New(dir, "test")
	cs.Notes = append(cs.Notes, "session \x1b[2Jx kept")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Reason: "drop \x1b]0;t\x07", Edits: []changeset.Edit{
		{Line: 2, Offset: 3, Length: int64(len(bad)) + 1, Count: 1},
		{Line: 3, Offset: int64(3 + len(bad) + 1), Length: int64(len(long)) + 1, Count: 1},
		{Line: 4, Offset: int64(3 + len(bad) + 1 + len(long) + 1), Length: 10, Count: 1, New: []byte("{\"k\":\"a\x1b\"}\n")},
	}})
	var out bytes.Buffer
	if err := changeset.Show(&out, cs); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x00\x1b\x07") || !utf8.ValidString(got) {
		t.Errorf("the diff holds raw control characters or bytes that are not UTF-8:\n%q", got)
	}
	for _, want := range []string{`a\x1b[2Jb.jsonl`, `-{"type":\x00"user"}\x1b[2J\xff`, `\x1b]0;title\x07`, `-{"k":"a\x00"}`, `+{"k":"a\x1b"}`, `note: session \x1b[2Jx kept`, `drop \x1b]0;t\x07`} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff does not show %s:\n%s", want, got)
		}
	}
}

// TestTwiceRefused: a plan that changes one path twice is refused before
// anything is written (a planner's bug must not reach the store, not even
// as an apply rolled back halfway).
func TestTwiceRefused(t *testing.T) {
	dir := storeDir(t)
	a := filepath.Join(dir, "a.jsonl")
	b := filepath.Join(dir, "b.jsonl")
	write(t, a, "one\n\n")
	write(t, b, "b\n")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Delete, Path: b, Expect: fp(t, b)})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Edits: []changeset.Edit{{Line: 2, Offset: 4, Length: 1, Count: 1}}})
	cs.Add(changeset.Op{Action: changeset.Delete, Path: a, Expect: fp(t, a)})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	var re *changeset.RefusedError
	if !errors.As(err, &re) || re.Path != a || !re.Untouched || !strings.Contains(err.Error(), "changes it twice (rewrite, then delete)") {
		t.Fatalf("apply: %v", err)
	}
	if read(t, a) != "one\n\n" || read(t, b) != "b\n" {
		t.Error("a refused plan wrote")
	}
}

func TestLoadRejects(t *testing.T) {
	dir := storeDir(t)
	for name, body := range map[string]string{
		"version":  `{"version":9,"ops":[]}`,
		"relative": `{"version":1,"ops":[{"action":"delete","path":"rel"}]}`,
		"action":   `{"version":1,"ops":[{"action":"explode","path":"/x"}]}`,
		"order":    `{"version":1,"ops":[{"action":"rewrite","path":"/x","edits":[{"offset":9,"length":1},{"offset":2,"length":1}]}]}`,
		"json":     `{`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := changeset.Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

// TestStaleBaseline: a file that changes between verify and its own op
// (earlier ops take time) is refused, whatever gives its new content, and
// the append stays.
func TestStaleBaseline(t *testing.T) {
	dir := storeDir(t)
	first, data, gone := filepath.Join(dir, "first"), filepath.Join(dir, "data.jsonl"), filepath.Join(dir, "gone.jsonl")
	write(t, first, "1\n")
	write(t, data, "a\n")
	write(t, gone, "g\n")
	for _, op := range []changeset.Op{
		{Action: changeset.Rewrite, Path: data, Data: []byte("b\n"), HasData: true},
		{Action: changeset.Delete, Path: gone},
	} {
		op.Expect = fp(t, op.Path)
		cs := changeset.New(dir, "test")
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: first, Expect: fp(t, first), Data: []byte("2\n"), HasData: true})
		cs.Add(op)
		_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
			if step == "after" && i == 0 {
				f, _ := os.OpenFile(op.Path, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("appended\n")
				f.Close()
			}
		}})
		if err == nil || !strings.Contains(err.Error(), "changed while applying") || strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("%s: err = %v", op.Action, err)
		}
		if got := read(t, op.Path); !strings.HasSuffix(got, "appended\n") {
			t.Errorf("%s: the append is gone: %q", op.Action, got)
		}
		if got := read(t, first); got != "1\n" {
			t.Errorf("%s: the first op was not rolled back: %q", op.Action, got)
		}
		write(t, first, "1\n")
	}
}

// TestCreateNeverReplaces: a file that appears at a Create's path after
// verify is kept; the apply is refused.
func TestCreateNeverReplaces(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "new.jsonl")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Create, Path: p, Data: []byte("ours\n"), HasData: true})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "checked" {
			os.WriteFile(p, []byte("theirs\n"), 0o600)
		}
	}})
	if err == nil || read(t, p) != "theirs\n" {
		t.Fatalf("err = %v, file %q", err, read(t, p))
	}
}

// TestUndoResumes: an undo that was interrupted can be run again; a
// folder removed half-way gets its missing files back.
func TestUndoResumes(t *testing.T) {
	dir := storeDir(t)
	a, b, tree := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "tree")
	write(t, a, "a\n")
	write(t, b, "b\n")
	write(t, filepath.Join(tree, "x"), "x\n")
	write(t, filepath.Join(tree, "y"), "y\n")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Expect: fp(t, a), Data: []byte("A\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: b, Expect: fp(t, b), Data: []byte("B\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: tree, Expect: fp(t, tree)})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// As if the removal had stopped half-way: the folder with one file.
	write(t, filepath.Join(tree, "y"), "y\n")
	// As if an undo had restored b, then died.
	write(t, b, "b\n")
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{a: "a\n", b: "b\n", filepath.Join(tree, "x"): "x\n", filepath.Join(tree, "y"): "y\n"} {
		if got := read(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	// Everything is back: a third undo plans nothing.
	u, err = changeset.Undo(res.Journal)
	if err != nil || !u.Empty() {
		t.Errorf("undo again: %v, %d ops", err, len(u.Ops))
	}
}

// TestCutInPlace: a rewrite that only drops the end of a file shortens the
// file in place (same inode, mode and mtime), keeps the cut bytes in the
// journal, and undo puts them back byte for byte.
func TestCutInPlace(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	const before = "{\"a\":1}\n{\"b\":2}\n{\"c\":"
	write(t, p, before)
	os.Chmod(p, 0o640)
	fi0, _ := os.Stat(p)
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "torn", Expect: fp(t, p),
		Edits: []changeset.Edit{{Line: 3, Offset: 16, Length: 5, Count: 1}}})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(p)
	if got := read(t, p); got != before[:16] {
		t.Fatalf("after the cut: %q", got)
	}
	if !os.SameFile(fi0, fi1) || fi1.Mode().Perm() != 0o640 || !fi1.ModTime().Equal(old) {
		t.Errorf("not cut in place: same inode %v, mode %v, mtime %v", os.SameFile(fi0, fi1), fi1.Mode().Perm(), fi1.ModTime())
	}
	if got := read(t, filepath.Join(res.Journal, "backup", "0")); got != before[16:] {
		t.Errorf("backup holds %q, want the cut bytes", got)
	}
	if log := read(t, filepath.Join(res.Journal, "log.jsonl")); !strings.Contains(log, `"cut":true`) {
		t.Errorf("log has no cut backup:\n%s", log)
	}
	// An append after the cut makes undo refuse: it would lose the line.
	os.WriteFile(p, []byte(before[:16]+"{\"d\":4}\n"), 0o640)
	if _, err := changeset.Undo(res.Journal); err == nil || !strings.Contains(err.Error(), "changed since cfix wrote it") {
		t.Fatalf("undo of a file changed since: %v", err)
	}
	os.WriteFile(p, []byte(before[:16]), 0o640)
	os.Chtimes(p, old, old)
	u, err := changeset.Undo(res.Journal)
	if err != nil || len(u.Ops) != 1 {
		t.Fatalf("undo: %v (%d ops)", err, len(u.Ops))
	}
	var diff bytes.Buffer
	changeset.Show(&diff, u)
	if !strings.Contains(diff.String(), "+{\"c\":") {
		t.Errorf("undo diff does not show the bytes put back:\n%s", diff.String())
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(p)
	if got := read(t, p); got != before || !fi2.ModTime().Equal(old) || fi2.Mode().Perm() != 0o640 {
		t.Fatalf("after undo: %q, mtime %v, mode %v", got, fi2.ModTime(), fi2.Mode().Perm())
	}
	if u, err := changeset.Undo(res.Journal); err != nil || !u.Empty() {
		t.Errorf("undo again: %v, %d ops", err, len(u.Ops))
	}
}

// TestCutRefusesChanged: a cut re-checks the file like any rewrite.
func TestCutRefusesChanged(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	write(t, p, "{\"a\":1}\n{\"b\"")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "torn", Expect: fp(t, p),
		Edits: []changeset.Edit{{Line: 2, Offset: 8, Length: 4, Count: 1}}})
	write(t, p, "{\"a\":2}\n{\"b\"") // same size, same mtime, other bytes
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "content changed") {
		t.Fatalf("err = %v", err)
	}
	if got := read(t, p); got != "{\"a\":2}\n{\"b\"" {
		t.Errorf("file changed: %q", got)
	}
}

// TestDiffFromTheEnd: the diff of an edit far into a file of long lines
// shows the right context lines and numbers (read backwards from the edit).
func TestDiffFromTheEnd(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	var b strings.Builder
	var offs []int
	for i := 1; i <= 6; i++ {
		offs = append(offs, b.Len())
		b.WriteString(`{"n":` + strings.Repeat(string(rune('0'+i)), 100<<10) + "}\n")
	}
	offs = append(offs, b.Len())
	b.WriteString(`{"torn`)
	write(t, p, b.String())
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "torn", Expect: fp(t, p),
		Edits: []changeset.Edit{{Line: 7, Offset: int64(offs[6]), Length: 6, Count: 1, Reason: "drop the torn last line"}}})
	var out bytes.Buffer
	if err := changeset.Diff(&out, cs); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "@@ -4,4 +4,3 @@") || !strings.Contains(got, `-{"torn`) {
		t.Fatalf("diff:\n%s", got)
	}
	for i, want := range []string{" {\"n\":444", " {\"n\":555", " {\"n\":666"} {
		if !strings.Contains(got, want) {
			t.Errorf("context line %d missing:\n%s", i+4, got)
		}
	}
	if strings.Contains(got, `{"n":333`) {
		t.Errorf("a line before the context is shown:\n%s", got)
	}
}

// cutPlan plans the cut of the bytes of p from keep to size (line line).
func cutPlan(t *testing.T, dir, p string, keep, size int64, line int) *changeset.ChangeSet {
	t.Helper()
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "torn", Expect: fp(t, p),
		Edits: []changeset.Edit{{Line: line, Offset: keep, Length: size - keep, Count: 1}}})
	return cs
}

// TestCutNotInPlace: a file with other names (a user's cp -al snapshot) or
// one cfix may not open for writing is rewritten, not cut: the other names
// keep their bytes.
func TestCutNotInPlace(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	const before = "{\"a\":1}\n{\"b\""
	write(t, p, before)
	other := filepath.Join(dir, "snapshot.jsonl")
	if err := os.Link(p, other); err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(cutPlan(t, dir, p, 8, 12, 2), changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, other); got != before {
		t.Errorf("the other name changed: %q", got)
	}
	if got := read(t, p); got != "{\"a\":1}\n" {
		t.Errorf("the file: %q", got)
	}

	// With --force the session may be live: rewritten, so an append that
	// lands meanwhile is carried over, not cut.
	f := filepath.Join(dir, "forced.jsonl")
	write(t, f, before)
	fi0, _ := os.Stat(f)
	if _, err := changeset.Apply(cutPlan(t, dir, f, 8, 12, 2), changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true}); err != nil {
		t.Fatal(err)
	}
	if fi1, _ := os.Stat(f); os.SameFile(fi0, fi1) || read(t, f) != "{\"a\":1}\n" {
		t.Errorf("forced: cut in place, or wrong bytes %q", read(t, f))
	}

	if os.Geteuid() == 0 {
		t.Skip("root opens a read-only file for writing")
	}
	q := filepath.Join(dir, "ro.jsonl")
	write(t, q, before)
	os.Chmod(q, 0o444)
	if _, err := changeset.Apply(cutPlan(t, dir, q, 8, 12, 2), changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatalf("a read-only file: %v", err)
	}
	if got := read(t, q); got != "{\"a\":1}\n" {
		t.Errorf("the read-only file: %q", got)
	}
}

// TestCutRefusedRollsBack: a file replaced after the cut's backup is
// refused at the last look, and the rollback restores the ops before it.
func TestCutRefusedRollsBack(t *testing.T) {
	dir := storeDir(t)
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	write(t, a, "{\"a\":1}\n")
	write(t, b, "{\"a\":1}\n{\"b\"")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Reason: "x", Expect: fp(t, a), Data: []byte("{\"a\":2}\n"), HasData: true})
	cs.Ops = append(cs.Ops, cutPlan(t, dir, b, 8, 12, 2).Ops...)
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "backed-up" && i == 1 {
			write(t, b+".tmp", "{\"x\":1}\n{\"y\":2}\n")
			os.Rename(b+".tmp", b)
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "everything applied was rolled back") {
		t.Fatalf("apply: %v", err)
	}
	if got := read(t, a); got != "{\"a\":1}\n" {
		t.Errorf("a not rolled back: %q", got)
	}
	if got := read(t, b); got != "{\"x\":1}\n{\"y\":2}\n" {
		t.Errorf("b: %q", got)
	}
}

// TestUndoNeverCut: an apply stopped before its cut, the file changed by
// someone else since: undo restores the other ops and leaves that file.
func TestUndoNeverCut(t *testing.T) {
	dir, jd := storeDir(t), t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	write(t, a, "{\"a\":1}\n")
	write(t, b, "{\"a\":1}\n{\"b\"")
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Reason: "x", Expect: fp(t, a), Data: []byte("{\"a\":2}\n"), HasData: true})
	cs.Ops = append(cs.Ops, cutPlan(t, dir, b, 8, 12, 2).Ops...)
	stop := errors.New("stopped")
	func() {
		defer func() {
			if r := recover(); r != nil && r != stop {
				panic(r)
			}
		}()
		changeset.Apply(cs, changeset.ApplyOptions{JournalDir: jd, Hook: func(step string, i int) {
			if step == "checked" && i == 1 {
				panic(stop) // as a kill would stop it
			}
		}})
	}()
	if got := read(t, b); got != "{\"a\":1}\n{\"b\"" {
		t.Fatalf("b: %q", got)
	}
	write(t, b, "{\"a\":9}\n")
	ents, _ := os.ReadDir(jd)
	u, err := changeset.Undo(filepath.Join(jd, ents[0].Name()))
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if read(t, a) != "{\"a\":1}\n" || read(t, b) != "{\"a\":9}\n" {
		t.Errorf("after undo a=%q b=%q", read(t, a), read(t, b))
	}
}

// TestDiffAppendAfterUnterminated: context lines before an append after a
// last line with no newline.
func TestDiffAppendAfterUnterminated(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	s := "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n{\"n\":6}"
	write(t, p, s)
	cs := changeset.New(dir, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "append", Expect: fp(t, p),
		Edits: []changeset.Edit{{Line: 7, Offset: int64(len(s)), New: []byte("\n{\"n\":7}\n")}}})
	var out bytes.Buffer
	if err := changeset.Diff(&out, cs); err != nil {
		t.Fatal(err)
	}
	want := " {\"n\":4}\n {\"n\":5}\n {\"n\":6}\n+\n+{\"n\":7}\n"
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "{\"n\":3}") {
		t.Errorf("diff:\n%s\nwant the lines:\n%s", out.String(), want)
	}
}
