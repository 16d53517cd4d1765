package changeset_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/killtest"
)

// TestLockHolder is the child process of TestLockReleasedWhenKilled: it
// takes the lock of the store $LOCK_ROOT, says LOCKED, and holds it until
// it is killed (or its stdin ends).
func TestLockHolder(t *testing.T) {
	root := os.Getenv("LOCK_ROOT")
	if root == "" {
		t.Skip("the child of TestLockReleasedWhenKilled")
	}
	l, err := changeset.LockStore(os.Getenv("LOCK_JOURNALS"), root)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("LOCKED")
	io.Copy(io.Discard, os.Stdin)
	l.Unlock()
}

// holdLock starts TestLockHolder on the store at root and returns once
// it holds the lock.
func holdLock(t *testing.T, journals, root string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolder$")
	cmd.Env = append(os.Environ(), "LOCK_ROOT="+root, "LOCK_JOURNALS="+journals)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "LOCKED\n" {
		t.Fatalf("the holder said %q (%v)", line, err)
	}
	return cmd
}

// TestLockReleasedWhenKilled: while another process holds a store's lock,
// Apply waits, then refuses with the holder's pid and command and changes
// nothing; another store is not held up; once the holder is killed with
// SIGKILL, the next apply goes through.
func TestLockReleasedWhenKilled(t *testing.T) {
	defer func(w time.Duration) { changeset.LockWait = w }(changeset.LockWait)
	changeset.LockWait = 200 * time.Millisecond
	root, other, journals := storeDir(t), storeDir(t), t.TempDir()
	f := filepath.Join(root, "a.jsonl")
	write(t, f, "{\"a\":1}\n")
	holder := holdLock(t, journals, root)

	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: f, Reason: "r", Expect: fp(t, f), Data: []byte("{\"a\":2}\n"), HasData: true})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	var be *changeset.BusyError
	if !errors.As(err, &be) {
		t.Fatalf("apply while another holds the store: %v, want a BusyError", err)
	}
	want := fmt.Sprintf("store %s is being changed by another cfix (pid %d: ", be.Root, holder.Process.Pid)
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "TestLockHolder") || !strings.HasSuffix(err.Error(), "); try again when it ends") {
		t.Errorf("error %q, want %q, the holder's command and what to do", err, want)
	}
	if read(t, f) != "{\"a\":1}\n" {
		t.Error("the file changed")
	}
	if js, _ := changeset.ListJournals(journals, ""); len(js) != 0 {
		t.Errorf("a refused apply made journals: %v", js)
	}
	// Another store has a lock of its own.
	l, err := changeset.LockStore(journals, other)
	if err != nil {
		t.Fatalf("another store: %v", err)
	}
	l.Unlock()

	holder.Process.Kill()
	holder.Wait()
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals}); err != nil {
		t.Fatalf("apply after the holder was killed: %v", err)
	}
	if read(t, f) != "{\"a\":2}\n" {
		t.Error("not applied")
	}
}

// TestLockHeldByCaller: Apply uses the lock its caller holds (undo takes
// it before it picks a journal) instead of waiting for it, and refuses
// the lock of another store.
func TestLockHeldByCaller(t *testing.T) {
	root, other, journals := storeDir(t), storeDir(t), t.TempDir()
	f := filepath.Join(root, "a.jsonl")
	write(t, f, "a\n")
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: f, Reason: "r", Expect: fp(t, f), Data: []byte("b\n"), HasData: true})
	lo, err := changeset.LockStore(journals, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals, Lock: lo}); err == nil || !strings.Contains(err.Error(), "a bug of cfix") {
		t.Fatalf("apply with the lock of another store: %v", err)
	}
	lo.Unlock()
	l, err := changeset.LockStore(journals, root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals, Lock: l}); err != nil {
		t.Fatal(err)
	}
	if read(t, f) != "b\n" {
		t.Error("not applied")
	}
}

// TestKillChild is the child process of TestRecoverAfterKill.
func TestKillChild(t *testing.T) { killtest.Child(t) }

// TestRecoverAfterKill kills an apply at each of its steps. The new
// content of a file is written beside it, named .cfix-tmp-<digits>, and
// no other file that is not the plan's appears in the store (no probe of
// where temporary files may go). Then the next writer (Recover, under the
// lock) removes those temporary files and nothing else, and rolls the
// journal back: the store is as before, every byte, and the journal is
// marked rolled back.
func TestRecoverAfterKill(t *testing.T) {
	hooks := -1
	sawTemp := false
	for at := 0; hooks < 0 || at < hooks; at++ {
		root := storeDir(t)
		p := func(s string) string { return filepath.Join(root, s) }
		write(t, p("proj/a.jsonl"), "{\"a\":1}\n")
		write(t, p("proj/b.jsonl"), "{\"b\":1}\n")
		write(t, p("proj/gone.json"), "{}\n")
		// Names like a temporary file's that are not cfix's: kept.
		for _, n := range []string{".cfix-tmp-", ".cfix-tmp-12x", "x.cfix-tmp-1", ".a.jsonl123"} {
			write(t, p("proj/"+n), "keep\n")
		}
		before := readTree(t, root)
		cs := changeset.New(root, "test")
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p("proj/a.jsonl"), Reason: "r", Expect: fp(t, p("proj/a.jsonl")), Data: []byte("{\"a\":2}\n"), HasData: true})
		cs.Add(changeset.Op{Action: changeset.Create, Path: p("proj/c.jsonl"), Reason: "c", Data: []byte("{\"c\":1}\n"), HasData: true, ModTime: old})
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p("proj/b.jsonl"), Reason: "r", Expect: fp(t, p("proj/b.jsonl")), Data: []byte("{\"b\":2}\n"), HasData: true})
		cs.Add(changeset.Op{Action: changeset.Delete, Path: p("proj/gone.json"), Reason: "d", Expect: fp(t, p("proj/gone.json"))})
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if err := cs.Save(planFile); err != nil {
			t.Fatal(err)
		}
		journals := t.TempDir()
		killed, n := killtest.Apply(t, "TestKillChild", planFile, at, journals)
		if !killed {
			hooks = n
			break
		}
		for name := range readTree(t, root) {
			base := filepath.Base(name)
			if strings.HasPrefix(base, changeset.TempPrefix) && strings.Trim(base[len(changeset.TempPrefix):], "0123456789") == "" {
				sawTemp = true
				continue
			}
			if _, ok := before[name]; !ok && name != "proj/c.jsonl" {
				t.Errorf("kill at %d: %s appeared in the store", at, name)
			}
		}
		l, err := changeset.LockStore(journals, root)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := changeset.Recover(changeset.ApplyOptions{JournalDir: journals, Lock: l})
		l.Unlock()
		if err != nil {
			t.Fatalf("kill at %d: recover: %v", at, err)
		}
		after := readTree(t, root)
		if !maps(before, after) {
			t.Errorf("kill at %d: after recover the store is not as before:\n%v\nwant\n%v\n(recover said %q)", at, after, before, lines)
		}
		js, _ := changeset.ListJournals(journals, "")
		states := []string{}
		for _, j := range js {
			states = append(states, j.Command+" "+j.State)
		}
		slices.Sort(states)
		if len(lines) == 0 || !slices.Contains(states, "test rolled-back") || slices.Contains(states, "test incomplete") {
			t.Errorf("kill at %d: recover said %q, journals %v", at, lines, states)
		}
	}
	if hooks < 10 {
		t.Fatalf("only %d hook calls", hooks)
	}
	if !sawTemp {
		t.Error("no kill left the temporary file of a write beside its file")
	}
}

// readTree reads every file under root, by its path relative to root.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(r)] = read(t, p)
		}
		return nil
	})
	return out
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// stopApply applies cs and stops it, as a kill would, at step of op i: a
// journal left incomplete.
func stopApply(t *testing.T, cs *changeset.ChangeSet, journals, step string, i int) {
	t.Helper()
	type stop struct{}
	defer func() {
		if r := recover(); r != nil && r != (stop{}) {
			panic(r)
		}
	}()
	changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals, Hook: func(s string, n int) {
		if s == step && n == i {
			panic(stop{})
		}
	}})
	t.Fatal("the apply was not stopped")
}

// TestRecoverRefused: a killed apply that cannot be rolled back (a file it
// wrote changed since) stays as it is; Recover says so, with the command
// that undoes it, and lets the writer go on; the next Recover, once a
// later apply is written over it, leaves it alone and says nothing.
func TestRecoverRefused(t *testing.T) {
	root, journals := storeDir(t), t.TempDir()
	a, b := filepath.Join(root, "a.jsonl"), filepath.Join(root, "b.jsonl")
	write(t, a, "{\"a\":1}\n")
	write(t, b, "{\"b\":1}\n")
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: a, Reason: "r", Expect: fp(t, a), Data: []byte("{\"a\":2}\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: b, Reason: "r", Expect: fp(t, b), Data: []byte("{\"b\":2}\n"), HasData: true})
	stopApply(t, cs, journals, "before", 1)
	write(t, a, "{\"a\":2}\n{\"a\":3}\n") // written after cfix wrote it

	recoverOnce := func() []string {
		l, err := changeset.LockStore(journals, root)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Unlock()
		lines, err := changeset.Recover(changeset.ApplyOptions{JournalDir: journals, Lock: l})
		if err != nil {
			t.Fatalf("recover: %v", err)
		}
		return lines
	}
	lines := recoverOnce()
	if len(lines) != 1 || !strings.Contains(lines[0], "not rolled back: ") || !strings.Contains(lines[0], "undo it with: cfix undo --apply ") {
		t.Fatalf("recover said %q", lines)
	}
	if read(t, a) != "{\"a\":2}\n{\"a\":3}\n" || read(t, b) != "{\"b\":1}\n" {
		t.Error("a file changed")
	}
	// A later apply, then recover: the buried journal is left to undo.
	cs2 := changeset.New(root, "test2")
	cs2.Add(changeset.Op{Action: changeset.Rewrite, Path: b, Reason: "r", Expect: fp(t, b), Data: []byte("{\"b\":3}\n"), HasData: true})
	if _, err := changeset.Apply(cs2, changeset.ApplyOptions{JournalDir: journals}); err != nil {
		t.Fatal(err)
	}
	if lines := recoverOnce(); len(lines) != 0 {
		t.Errorf("recover of a store whose newest journal is finished said %q", lines)
	}
	js, _ := changeset.ListJournals(journals, root)
	if len(js) != 2 || js[1].State != "incomplete" {
		t.Errorf("journals %+v", js)
	}
}

// TestLockFileNotFollowed: the lock file is opened without following a
// link and must be a regular file of one name. A link at its path, to a
// file or to nowhere, a hard link to another file, a folder and a FIFO
// are each refused at once, naming the lock file; the file a link or a
// hard link names keeps its bytes, a dangling link's target is not made,
// and the FIFO does not hang the writer. A lock file is never truncated:
// a longer line left by an earlier holder is written over, and the next
// writer still reads the holder's line.
func TestLockFileNotFollowed(t *testing.T) {
	root, journals := storeDir(t), t.TempDir()
	lock := changeset.LockPath(journals, root)
	victim := filepath.Join(t.TempDir(), "victim")
	const keep = "precious bytes\n"
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	for _, c := range []struct {
		name  string
		plant func() error
		want  string
	}{
		{"link", func() error { return os.Symlink(victim, lock) }, "is a symbolic link"},
		{"dangling link", func() error { return os.Symlink(nowhere, lock) }, "is a symbolic link"},
		{"hard link", func() error { return os.Link(victim, lock) }, "has 2 names"},
		{"folder", func() error { return os.Mkdir(lock, 0o700) }, "is not a regular file"},
		{"fifo", func() error { return mkfifo(lock) }, "is not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(lock)
			os.Remove(nowhere)
			write(t, victim, keep)
			if err := c.plant(); err != nil {
				t.Skip(err)
			}
			defer os.RemoveAll(lock)
			done := make(chan error, 1)
			go func() {
				l, err := changeset.LockStore(journals, root)
				if err == nil {
					l.Unlock()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("LockStore hangs")
			}
			if err == nil || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("lock through a %s: %v, want a refusal naming %s that %s", c.name, err, lock, c.want)
			}
			if read(t, victim) != keep {
				t.Errorf("the file the %s names was changed: %q", c.name, read(t, victim))
			}
			if _, err := os.Lstat(nowhere); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the target of the dangling link was made (%v)", err)
			}
			t.Log(err)
		})
	}

	os.RemoveAll(lock)
	long := "pid 1: " + strings.Repeat("x", 300) + "\nmore\n"
	write(t, lock, long)
	l, err := changeset.LockStore(journals, root)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(lock)
	line, _, _ := strings.Cut(string(b), "\n")
	if !strings.HasPrefix(line, fmt.Sprintf("pid %d: ", os.Getpid())) || len(b) < len(long) {
		t.Errorf("lock file while held: %q (%d bytes), want this process's line over the old one, nothing truncated", line, len(b))
	}
	l.Unlock()
	if b, _ := os.ReadFile(lock); len(b) < len(long) {
		t.Errorf("unlock truncated the lock file to %d bytes", len(b))
	}
}
