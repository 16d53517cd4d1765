package changeset

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSameFile: a file hashed after its change time settled is trusted
// while it is unchanged; any write moves the change time, and apply then
// hashes it again and sees the change.
func TestSameFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("change times are read on Linux only")
	}
	p := filepath.Join(storeDir(t), "a.jsonl")
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	write("a\nb\n")
	// Just written: its change time has not settled, no identity is kept.
	fp, err := FingerprintOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if !fp.Ctime.IsZero() || fp.Ino != 0 {
		t.Fatalf("identity kept for a file changed just now: %+v", fp)
	}

	defer func(d time.Duration) { settle = d }(settle)
	settle = 0
	if fp, err = FingerprintOf(p); err != nil {
		t.Fatal(err)
	}
	if fp.Ctime.IsZero() || fp.Ino == 0 {
		t.Fatalf("no identity for a settled file: %+v", fp)
	}
	got, _ := Stat(p)
	if !sameFile(got, fp) {
		t.Fatalf("unchanged file not recognised: %+v vs %+v", got, fp)
	}
	time.Sleep(20 * time.Millisecond) // past a coarse clock's tick
	write("a\nc\n")                   // same size, same mtime, other bytes
	got, _ = Stat(p)
	if sameFile(got, fp) {
		t.Fatal("a rewritten file counts as the same")
	}
	cs := New(filepath.Dir(p), "test")
	cs.Add(Op{Action: Rewrite, Path: p, Expect: fp, Edits: []Edit{{Line: 2, Offset: 2, Length: 2, Count: 1}}})
	_, err = Apply(cs, ApplyOptions{JournalDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "content changed") {
		t.Fatalf("apply of a stale cut: %v", err)
	}
}

// TestSameFileReplaced: a file replaced by another of the same size and
// mtime after apply opened it is refused, even though the first one was
// the file the plan hashed.
func TestSameFileReplaced(t *testing.T) {
	defer func(d time.Duration) { settle = d }(settle)
	settle = 0
	dir := storeDir(t)
	p := filepath.Join(dir, "s.jsonl")
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	put := func(path, s string) {
		os.WriteFile(path, []byte(s), 0o600)
		os.Chtimes(path, old, old)
	}
	put(p, "{\"a\":1}\n{\"b\":2}\n")
	fp, err := FingerprintOf(p)
	if err != nil {
		t.Fatal(err)
	}
	cs := New(dir, "test")
	cs.Add(Op{Action: Rewrite, Path: p, Reason: "x", Expect: fp,
		Edits: []Edit{{Line: 1, Offset: 0, Length: 8, Count: 1, New: []byte("{\"a\":0}\n")}}})
	_, err = Apply(cs, ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "backed-up" {
			put(p+".tmp", "{\"a\":1}\n{\"X\":9}\n")
			os.Rename(p+".tmp", p)
		}
	}})
	if err == nil {
		t.Fatalf("applied to a replaced file: %q", readFile(t, p))
	}
	if got := readFile(t, p); got != "{\"a\":1}\n{\"X\":9}\n" {
		t.Errorf("the replacement changed: %q", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
