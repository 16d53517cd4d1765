package changeset

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// openFiles counts the files this process holds open.
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("the platform does not list open files (/proc/self/fd)")
	}
	return len(ents) - 1 // less the one ReadDir held
}

// TestApplyHoldsFewFiles applies (and undoes) a plan of 60 creates,
// rewrites, removals and folders: at no step does the apply hold more
// than handlesNeeded files open beyond those open before, and afterwards
// it holds none (the journal's log was left open by every apply before).
func TestApplyHoldsFewFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts open files in /proc/self/fd")
	}
	root := storeDir(t)
	old := time.Now().Add(-time.Hour)
	cs := New(root, "many")
	for k := range 15 {
		write := func(rel, s string) string {
			p := filepath.Join(root, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(p, old, old)
			return p
		}
		fp := func(p string) Fingerprint {
			f, err := FingerprintOf(p)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		a := write(fmt.Sprintf("a%d.jsonl", k), "a\nb\n")
		b := write(fmt.Sprintf("b%d.jsonl", k), "b\n")
		d := filepath.Dir(write(fmt.Sprintf("d%d/sub/x.json", k), "x\n"))
		cs.Add(Op{Action: Create, Path: filepath.Join(root, fmt.Sprintf("new%d/n.txt", k)), Data: []byte("new\n"), HasData: true, Reason: "new"})
		cs.Add(Op{Action: Rewrite, Path: a, Expect: fp(a), Edits: []Edit{{Line: 2, Offset: 2, Length: 2, Count: 1}}, Reason: "cut"})
		cs.Add(Op{Action: Delete, Path: b, Expect: fp(b), Reason: "delete"})
		cs.Add(Op{Action: DeleteDir, Path: d, Expect: fp(d), Reason: "delete dir"})
	}
	journals := t.TempDir()
	for _, step := range []string{"apply", "undo"} {
		before := openFiles(t)
		most := 0
		res, err := Apply(cs, ApplyOptions{JournalDir: journals, Hook: func(string, int) { most = max(most, openFiles(t)) }})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if most-before > handlesNeeded {
			t.Errorf("%s: %d files open at once, %d before", step, most, before)
		}
		if after := openFiles(t); after != before {
			t.Errorf("%s: %d files open after, %d before", step, after, before)
		}
		if cs, err = Undo(res.Journal); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUndoTornPutBack: a rollback killed while it put the bytes of a cut
// back (appendInPlace) leaves part of them; undo puts back the rest.
func TestUndoTornPutBack(t *testing.T) {
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	const before = "{\"a\":1}\n{\"b\":2}\n{\"c\":3,\"torn"
	old := time.Now().Add(-time.Hour)
	if err := os.WriteFile(p, []byte(before), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	want, err := FingerprintOf(p)
	if err != nil {
		t.Fatal(err)
	}
	cs := New(dir, "test")
	cs.Add(Op{Action: Rewrite, Path: p, Reason: "torn", Expect: want, Edits: []Edit{{Line: 3, Offset: 16, Length: int64(len(before) - 16), Count: 1}}})
	res, err := Apply(cs, ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Half the cut bytes back, as a killed rollback leaves them.
	if err := os.WriteFile(p, []byte(before[:22]), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	u, err := Undo(res.Journal)
	if err != nil {
		t.Fatalf("undo after a torn put-back: %v", err)
	}
	if _, err := Apply(u, ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != before {
		t.Fatalf("after undo: %q, want %q", got, before)
	}
}
