package changeset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// batchStore makes a store with two files and a folder, all an hour old,
// and a batch change set creating a file beside it, rewriting one file,
// deleting the other and the folder.
func batchStore(t *testing.T) (root string, cs *ChangeSet) {
	t.Helper()
	root = storeDir(t)
	old := time.Now().Add(-time.Hour)
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	write("a.jsonl", "a\n")
	write("b.jsonl", "b\n")
	write("dir/x.json", "x\n")
	write("dir/sub/y.json", "y\n")
	cs = New(root, "batch")
	cs.Batch = true
	fp := func(rel string) Fingerprint {
		f, err := FingerprintOf(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cs.Add(Op{Action: Create, Path: filepath.Join(root, "new.txt"), Data: []byte("new\n"), HasData: true, Reason: "new"})
	cs.Add(Op{Action: Rewrite, Path: filepath.Join(root, "a.jsonl"), Expect: fp("a.jsonl"), Data: []byte("A\n"), HasData: true, Reason: "rewrite"})
	cs.Add(Op{Action: Delete, Path: filepath.Join(root, "b.jsonl"), Expect: fp("b.jsonl"), Reason: "delete"})
	cs.Add(Op{Action: DeleteDir, Path: filepath.Join(root, "dir"), Expect: fp("dir"), Reason: "delete dir"})
	return root, cs
}

func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, _ := d.Info()
		raw, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		b.WriteString(rel + " " + fi.Mode().String() + " " + fi.ModTime().String() + " " + string(raw))
		return nil
	})
	return b.String()
}

// TestBatchApplyUndo: a batch applies what an ordinary apply would, and
// undo gives everything back.
func TestBatchApplyUndo(t *testing.T) {
	root, cs := batchStore(t)
	if !batchable(cs) {
		t.Fatal("not batchable")
	}
	before := snapshot(t, root)
	var steps []string
	res, err := Apply(cs, ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		steps = append(steps, step)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 4 {
		t.Errorf("applied %d ops, want 4", res.Applied)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.jsonl")); string(b) != "A\n" {
		t.Errorf("a.jsonl: %q", b)
	}
	for _, gone := range []string{"b.jsonl", "dir"} {
		if _, err := os.Stat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s is left", gone)
		}
	}
	// Both backups are made before the first removal.
	if s := strings.Join(steps, " "); !strings.Contains(s, "renamed after backed-up backed-up before") {
		t.Errorf("steps: %s", s)
	}
	u, err := Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(u, ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, root); got != before {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, before)
	}
}

// TestBatchRollback: a batch failing in its second phase rolls back every
// op, the new file included.
func TestBatchRollback(t *testing.T) {
	root, cs := batchStore(t)
	_, err := Apply(cs, ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "before" && i == 2 {
			// b.jsonl grows after its backup: its removal is refused.
			f, _ := os.OpenFile(filepath.Join(root, "b.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("more\n")
			f.Close()
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("apply: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
		t.Error("new.txt is left after the rollback")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.jsonl")); string(b) != "a\n" {
		t.Errorf("a.jsonl after the rollback: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "dir", "sub", "y.json")); err != nil {
		t.Errorf("dir after the rollback: %v", err)
	}
}

// TestBatchableRefuses: a path written twice, or a rename, makes an
// ordinary apply.
func TestBatchableRefuses(t *testing.T) {
	_, cs := batchStore(t)
	cs.Ops = append(cs.Ops, Op{Action: Delete, Path: cs.Ops[0].Path})
	if batchable(cs) {
		t.Error("a path written twice is batchable")
	}
	_, cs = batchStore(t)
	cs.Ops = append(cs.Ops, Op{Action: Rename, Path: "/x", To: "/y"})
	if batchable(cs) {
		t.Error("a rename is batchable")
	}
	_, cs = batchStore(t)
	cs.Batch = false
	if batchable(cs) {
		t.Error("batchable without Batch")
	}
}
