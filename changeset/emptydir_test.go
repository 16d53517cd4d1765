package changeset_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// emptiedStore makes a store with two project folders: -a holds a
// transcript and its session folder, -b two transcripts. -a has mode 0750
// and an old mtime.
func emptiedStore(t *testing.T) (root, a, b string) {
	t.Helper()
	root = storeDir(t)
	a = filepath.Join(root, "projects", "-a")
	b = filepath.Join(root, "projects", "-b")
	write(t, filepath.Join(a, "s.jsonl"), "{}\n")
	write(t, filepath.Join(a, "s", "tool-results", "r.txt"), "out\n")
	write(t, filepath.Join(b, "t.jsonl"), "{}\n")
	write(t, filepath.Join(b, "u.jsonl"), "{}\n")
	if err := os.Chmod(a, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	return root, a, b
}

// emptyingPlan removes everything in -a and t.jsonl of -b, then the
// folders that leaves empty.
func emptyingPlan(t *testing.T, root, a, b string) *changeset.ChangeSet {
	t.Helper()
	cs := changeset.New(root, "rm")
	cs.Add(changeset.Op{Action: changeset.Delete, Path: filepath.Join(a, "s.jsonl"), Expect: fp(t, filepath.Join(a, "s.jsonl")), Session: "s", Reason: "main transcript"})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: filepath.Join(a, "s"), Expect: fp(t, filepath.Join(a, "s")), Session: "s", Reason: "session folder"})
	cs.Add(changeset.Op{Action: changeset.Delete, Path: filepath.Join(b, "t.jsonl"), Expect: fp(t, filepath.Join(b, "t.jsonl")), Session: "t", Reason: "main transcript"})
	if err := cs.RemoveEmptied("the project folder is left empty", a, b); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestRemoveEmptied: a plan that empties a project folder removes it last;
// one it leaves a file in stays. Undo makes the folder again with its mode
// and mtime, and puts its files back. In a batch apply too.
func TestRemoveEmptied(t *testing.T) {
	for _, batch := range []bool{false, true} {
		root, a, b := emptiedStore(t)
		cs := emptyingPlan(t, root, a, b)
		cs.Batch = batch
		last := cs.Ops[len(cs.Ops)-1]
		if len(cs.Ops) != 4 || last.Action != changeset.DeleteEmptyDir || last.Path != a {
			t.Fatalf("batch %v: the plan does not remove %s (and only it) last: %+v", batch, a, cs.Ops)
		}
		var show bytes.Buffer
		if err := changeset.Show(&show, cs); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(show.String(), "  delete-empty-dir "+a+" (left empty): the project folder is left empty") {
			t.Errorf("the summary does not name the folder's removal:\n%s", show.String())
		}
		res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(a); !os.IsNotExist(err) {
			t.Errorf("batch %v: %s is still there: %v", batch, a, err)
		}
		if _, err := os.Stat(filepath.Join(b, "u.jsonl")); err != nil {
			t.Errorf("batch %v: %v", batch, err)
		}
		undoAll(t, res.Journal)
		fi, err := os.Stat(a)
		if err != nil {
			t.Fatalf("batch %v: undo did not make %s again: %v", batch, a, err)
		}
		if fi.Mode().Perm() != 0o750 || !fi.ModTime().Equal(old) {
			t.Errorf("batch %v: %s is back with mode %04o and mtime %s, want 0750 and %s", batch, a, fi.Mode().Perm(), fi.ModTime().UTC(), old)
		}
		present(t, map[string]string{filepath.Join(a, "s.jsonl"): "{}\n", filepath.Join(a, "s", "tool-results", "r.txt"): "out\n", filepath.Join(b, "t.jsonl"): "{}\n"})
	}
}

// TestRemoveEmptiedWrittenSince: a file written into the folder after the
// plan keeps it: the apply leaves it, and undo puts back the rest around
// it.
func TestRemoveEmptiedWrittenSince(t *testing.T) {
	root, a, b := emptiedStore(t)
	cs := emptyingPlan(t, root, a, b)
	write(t, filepath.Join(a, "new.jsonl"), "{\"new\":1}\n")
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	present(t, map[string]string{filepath.Join(a, "new.jsonl"): "{\"new\":1}\n"}, filepath.Join(a, "s.jsonl"))
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range u.Ops {
		if op.Action == changeset.RestoreDir {
			t.Errorf("undo makes again a folder the apply left: %+v", op)
		}
	}
	undoAll(t, res.Journal)
	present(t, map[string]string{filepath.Join(a, "new.jsonl"): "{\"new\":1}\n", filepath.Join(a, "s.jsonl"): "{}\n"})
}

// TestRemoveEmptiedKeeps: a folder the plan writes into, a symbolic link
// and a folder outside projects/ are never removed empty; a plan from a
// file that removes projects/ itself is refused.
func TestRemoveEmptiedKeeps(t *testing.T) {
	root, a, _ := emptiedStore(t)
	cs := changeset.New(root, "move")
	cs.Add(changeset.Op{Action: changeset.Delete, Path: filepath.Join(a, "s.jsonl"), Expect: fp(t, filepath.Join(a, "s.jsonl"))})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: filepath.Join(a, "s"), Expect: fp(t, filepath.Join(a, "s"))})
	cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(a, "n.jsonl"), Data: []byte("{}\n"), HasData: true})
	link := filepath.Join(root, "projects", "-link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if err := cs.RemoveEmptied("left empty", a, link, filepath.Join(root, "todos"), filepath.Join(root, "projects")); err != nil {
		t.Fatal(err)
	}
	for _, op := range cs.Ops {
		if op.Action == changeset.DeleteEmptyDir {
			t.Errorf("removes %s", op.Path)
		}
	}
	bad := changeset.New(root, "rm")
	projects := filepath.Join(root, "projects")
	bad.Add(changeset.Op{Action: changeset.DeleteEmptyDir, Path: projects, Expect: fp(t, projects)})
	saved := filepath.Join(t.TempDir(), "plan.json")
	if err := bad.Save(saved); err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Load(saved); err == nil || !strings.Contains(err.Error(), "only a folder below") {
		t.Errorf("a plan removing projects/ loads: %v", err)
	}
}

// TestViewFits: a plan that fits on the screen is shown with its diff; a
// longer one shows its summary alone and says so; Full shows the diff
// whatever its length, Stat never. The headline counts sessions first.
func TestViewFits(t *testing.T) {
	root := storeDir(t)
	cs := changeset.New(root, "archive")
	for i := range 5 {
		p := filepath.Join(root, "projects", "-a", "s"+string(rune('0'+i))+".jsonl")
		write(t, p, strings.Repeat("{\"n\":1}\n", 100))
		cs.Add(changeset.Op{Action: changeset.Delete, Path: p, Expect: fp(t, p), Session: "s" + string(rune('0'+i%3)), Reason: "archive it"})
	}
	var sum bytes.Buffer
	changeset.Summary(&sum, cs)
	if first, _, _ := strings.Cut(sum.String(), "\n"); first != "cfix archive: archives 3 sessions (5 changes, 3.9 KB removed, 0 B added)" {
		t.Errorf("headline %q", first)
	}
	show := func(v changeset.View) (string, bool) {
		var b bytes.Buffer
		cut, err := v.Write(&b, cs)
		if err != nil {
			t.Fatal(err)
		}
		return b.String(), cut
	}
	out, cut := show(changeset.View{Lines: 40})
	if cut || !strings.Contains(out, "- removed file: 100 lines, 800 B") || strings.Contains(out, `-{"n":1}`) {
		t.Errorf("a plan of 5 files on 40 lines (cut %v):\n%s", cut, out)
	}
	out, cut = show(changeset.View{Lines: 12})
	if !cut || strings.Contains(out, "---") || !strings.HasPrefix(out, "cfix archive: archives 3 sessions") {
		t.Errorf("a plan of 5 files on 12 lines (cut %v):\n%s", cut, out)
	}
	out, cut = show(changeset.View{Lines: 12, Full: true})
	if cut || strings.Count(out, "\n-{\"n\":1}") != 5*40 {
		t.Errorf("the full view (cut %v) does not list 40 lines of each file:\n%s", cut, out)
	}
	out, cut = show(changeset.View{Stat: true})
	if cut || strings.Contains(out, "---") {
		t.Errorf("the stat view shows a diff:\n%s", out)
	}
}

// TestRestoreDirLoad: a RestoreDir in a saved plan keeps its mode and
// mtime.
func TestRestoreDirLoad(t *testing.T) {
	root := storeDir(t)
	cs := changeset.New(root, "undo")
	cs.Add(changeset.Op{Action: changeset.RestoreDir, Path: filepath.Join(root, "projects", "-a"), Mode: 0o750, ModTime: old})
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	var back changeset.ChangeSet
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if op := back.Ops[0]; op.Mode != 0o750 || !op.ModTime.Equal(old) {
		t.Errorf("%+v", op)
	}
	if _, err := changeset.Apply(&back, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "projects", "-a"))
	if err != nil || fi.Mode().Perm() != 0o750 || !fi.ModTime().Equal(old) {
		t.Errorf("made %v %v", fi, err)
	}
}
