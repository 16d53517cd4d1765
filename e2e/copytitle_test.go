package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCopyTitles: a session made by cfix fork or cfix trim carries a
// custom-title line, "<source title> (fork)" or the --title given, and
// the newest pinned client finds it by that title (claude -p -r TITLE)
// and resumes the copy's history, not the source's. (2.1.330 exits 1 saying
// nothing for a -r title that starts "THINK: ", seen with sessions titled
// so; the first prompt here does not start so.)
func TestCopyTitles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Claude Code")
	}
	t.Parallel()
	versions, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	version := versions[len(versions)-1]
	env := NewEnv(t, version, "")
	res := env.Run("proj", "-p", "first turn THINK: weighing the first step BASH: seq 1 4000", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	id := out.SessionID
	if res = env.Run("proj", "-r", id, "-p", "second-turn words"); res.ExitCode != 0 {
		t.Fatalf("second turn:\n%s", res)
	}
	dir, err := ProjectDir(env.ClaudeDir(), env.Dir("proj"))
	if err != nil {
		t.Fatal(err)
	}
	age := func() {
		old := time.Now().Add(-2 * time.Hour) // out of apply's live window
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range files {
			os.Chtimes(f, old, old)
		}
	}
	age()
	journal := t.TempDir()
	const forkID = "f0c0ffee-0000-4000-8000-000000000001"
	const trimID = "f0c0ffee-0000-4000-8000-000000000002"
	if r := RunCfix(t, journal, "fork", id, "--turn", "1", "--id", forkID, "--root", env.ClaudeDir(), "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}
	if r := RunCfix(t, journal, "trim", id, "--thinking", "--tool-output", "--keep-turns", "0", "--id", trimID, "--title", "my trimmed copy", "--root", env.ClaudeDir(), "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	} else if _, err := os.Stat(filepath.Join(dir, trimID+".jsonl")); err != nil {
		t.Fatalf("cfix trim made no session: %v\n%s", err, r)
	}
	age()
	ls := RunCfix(t, journal, "ls", "--root", env.ClaudeDir(), env.Dir("proj"))
	for _, want := range []string{"first turn THINK: weighing the first step BASH: seq 1 4000 (fork)", "my trimmed copy"} {
		if !strings.Contains(ls.Stdout, want) {
			t.Errorf("cfix ls does not show %q:\n%s", want, ls)
		}
	}

	// The fork, by its title: the first turn only.
	res = env.Run("proj", "-r", "first turn THINK: weighing the first step BASH: seq 1 4000 (fork)", "-p", "RESUME CHECK")
	if res.ExitCode != 0 {
		t.Fatalf("claude -r with the fork's title:\n%s", res)
	}
	requireHistory(t, "fork by title", res, "weighing the first step")
	for _, q := range res.MessageRequests() {
		if strings.Contains(q.Text(), "second-turn words") {
			t.Errorf("the fork's resume sent the source's second turn:\n%s", res)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, forkID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	// The trimmed copy, by the title given: both turns.
	res = env.Run("proj", "-r", "my trimmed copy", "-p", "RESUME CHECK")
	if res.ExitCode != 0 {
		t.Fatalf("claude -r with the trimmed copy's title:\n%s", res)
	}
	requireHistory(t, "trimmed copy by title", res, "weighing the first step", "second-turn words")
}
