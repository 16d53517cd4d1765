package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

func prune(t *testing.T, opts repair.PruneOptions) *changeset.ChangeSet {
	t.Helper()
	cs, err := repair.Prune(opts)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func planned(cs *changeset.ChangeSet) map[string]changeset.Action {
	m := map[string]changeset.Action{}
	for _, op := range cs.Ops {
		m[op.Path] = op.Action
	}
	return m
}

// TestPruneRoundTrip: prune what a 2.0.77 store leaves behind, then
// validate finds no leftovers, a second prune plans nothing, and undo puts
// every byte back, empty folders included.
func TestPruneRoundTrip(t *testing.T) {
	root := damage.CopyStore(t, "2.0.77")
	id := "bcfb4a37-f117-427a-803b-14bc8ef2f0f7"
	os.MkdirAll(filepath.Join(root, "session-env", id), 0o700)                                     // empty, of a live-less existing session
	os.MkdirAll(filepath.Join(root, "session-env", "44444444-4444-4444-8444-444444444444"), 0o700) // orphan
	os.WriteFile(filepath.Join(root, "session-env", "44444444-4444-4444-8444-444444444444", "hook.sh"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(root, "file-history", "44444444-4444-4444-8444-444444444444"), 0o700)
	os.WriteFile(filepath.Join(root, "file-history", "44444444-4444-4444-8444-444444444444", "abc@v1"), []byte("old"), 0o600)
	// debug/latest points at an orphan log: neither goes.
	latestTarget := filepath.Join(root, "debug", "55555555-5555-4555-8555-555555555555.txt")
	os.WriteFile(latestTarget, []byte("log"), 0o600)
	os.Remove(filepath.Join(root, "debug", "latest")) // git kept the link as a file
	if err := os.Symlink(latestTarget, filepath.Join(root, "debug", "latest")); err != nil {
		t.Fatal(err)
	}
	age(t, root)
	before := snapshot(t, root)

	cs := prune(t, repair.PruneOptions{Root: root})
	ops := planned(cs)
	for _, want := range []string{
		filepath.Join(root, "session-env", id),
		filepath.Join(root, "session-env", "44444444-4444-4444-8444-444444444444"),
		filepath.Join(root, "file-history", "44444444-4444-4444-8444-444444444444"),
		filepath.Join(root, "projects", "-home-dev-work-delta", "8a6b6493-151e-4f50-87ee-141e4629e4fd.jsonl"),
	} {
		if _, ok := ops[want]; !ok {
			t.Errorf("not planned: %s", want)
		}
	}
	for p := range ops {
		if filepath.Base(p) == "latest" || p == latestTarget {
			t.Errorf("planned %s", p)
		}
		if filepath.Base(p) == id+".jsonl" {
			t.Errorf("planned the real session %s", p)
		}
	}
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	agents := store.Subagents(l)
	for _, f := range rep.Findings {
		switch f.Code {
		case validate.SessionEmpty:
			// One whose Warmup subagents survive stays (TestPruneKeepsSubagentFamilies).
			if agents[store.FolderSession(filepath.Base(filepath.Dir(f.Path)), strings.TrimSuffix(filepath.Base(f.Path), ".jsonl"))] == 0 {
				t.Errorf("after prune: %s %s", f.Code, f.Path)
			}
		case validate.OrphanTodos, validate.OrphanFileHist, validate.OrphanSessionEnv, validate.SessionEnvEmpty:
			t.Errorf("after prune: %s %s", f.Code, f.Path)
		case validate.OrphanDebug:
			if f.Path != latestTarget {
				t.Errorf("after prune: %s %s", f.Code, f.Path)
			}
		}
		if f.Severity == validate.Error {
			t.Errorf("after prune: %s:%d %s", f.Path, f.Line, f.Code)
		}
	}
	if again := prune(t, repair.PruneOptions{Root: root}); !again.Empty() {
		t.Errorf("a second prune plans %d ops", len(again.Ops))
	}
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, root)
	if len(after) != len(before) {
		t.Errorf("undo: %d files, want %d", len(after), len(before))
	}
	for p, f := range before {
		if g, ok := after[p]; !ok || !bytes.Equal(g.data, f.data) || !g.mtime.Equal(f.mtime) {
			t.Errorf("undo did not restore %s", p)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "session-env", id)); err != nil || !fi.IsDir() {
		t.Error("undo did not restore the empty session-env folder")
	}
}

// TestPruneOlderThan removes whole old sessions, every file of them, and
// nothing of a live one.
func TestPruneOlderThan(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	id := damage.V88Session
	os.MkdirAll(filepath.Join(root, "file-history", id), 0o700)
	os.WriteFile(filepath.Join(root, "file-history", id, "f@v1"), []byte("v1"), 0o600)
	os.MkdirAll(filepath.Join(root, "todos"), 0o700)
	os.WriteFile(filepath.Join(root, "todos", id+"-agent-"+id+".json"), []byte("[]"), 0o600)
	os.MkdirAll(filepath.Join(root, "debug"), 0o700)
	os.WriteFile(filepath.Join(root, "debug", id+".txt"), []byte("log"), 0o600)
	now := time.Now()
	old := now.Add(-100 * 24 * time.Hour)
	recent := now.Add(-2 * time.Hour)
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.Chtimes(p, recent, recent)
		}
		return nil
	})
	main := damage.MainFile(root)
	os.Chtimes(main, old, old)

	cs := prune(t, repair.PruneOptions{Root: root, OlderThan: 30 * 24 * time.Hour, What: []string{"debug"}})
	ops := planned(cs)
	for _, want := range []string{main, filepath.Join(root, "projects", damage.V88Project, id),
		filepath.Join(root, "file-history", id), filepath.Join(root, "todos", id+"-agent-"+id+".json"),
		filepath.Join(root, "debug", id+".txt")} {
		if _, ok := ops[want]; !ok {
			t.Errorf("not planned: %s", want)
		}
	}
	// The session was its project folder's only one: the folder goes too.
	if dir := filepath.Join(root, "projects", damage.V88Project); ops[dir] != changeset.DeleteEmptyDir {
		t.Errorf("%s: %q, want its removal", dir, ops[dir])
	}
	if len(ops) != 6 {
		t.Errorf("planned %d ops, want 6: %v", len(ops), ops)
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == validate.Error || f.Code == validate.AgentOrphan {
			t.Errorf("after prune: %s %s", f.Code, f.Path)
		}
	}

	// A live session is never pruned, however old.
	root = damage.CopyStore(t, damage.V88)
	main = damage.MainFile(root)
	os.Chtimes(main, old, old)
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid())),
		[]byte(fmt.Sprintf(`{"pid":%d,"sessionId":%q}`, os.Getpid(), id)), 0o600)
	if cs := prune(t, repair.PruneOptions{Root: root, OlderThan: 30 * 24 * time.Hour}); planned(cs)[main] != "" {
		t.Error("a live session was planned for removal")
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := repair.ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "x", "-3d", "3y"} {
		if _, err := repair.ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
	if _, err := repair.Prune(repair.PruneOptions{Root: t.TempDir(), What: []string{"nonsense"}}); err == nil {
		t.Error("--what nonsense accepted")
	}
}

// TestPruneEmptiedFolder: a project folder whose only session file prune
// removes (a stub of queue operations) goes with it; undo makes it again
// with its mode and mtime.
func TestPruneEmptiedFolder(t *testing.T) {
	root := damage.CopyStore(t, "2.1.330")
	dir := filepath.Join(root, "projects", "-home-dev-work-omega")
	stub := filepath.Join(dir, "66666666-6666-4666-8666-666666666666.jsonl")
	if err := os.MkdirAll(dir, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stub, []byte(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"66666666-6666-4666-8666-666666666666","content":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, root)
	stamp := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(dir, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	cs := prune(t, repair.PruneOptions{Root: root, What: []string{repair.PruneEmptySessions}})
	if ops := planned(cs); ops[stub] != changeset.Delete || ops[dir] != changeset.DeleteEmptyDir {
		t.Fatalf("the plan: %v", ops)
	}
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s after prune: %v", dir, err)
	}
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o751 || !fi.ModTime().Equal(stamp) {
		t.Fatalf("%s after undo: %v %v", dir, fi, err)
	}
	if _, err := os.Stat(stub); err != nil {
		t.Fatal(err)
	}
}
