package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResume: cfix resume PREFIX -- -p CHECK, run from a directory that has
// nothing to do with the session, makes every pinned client resume it: the
// fake API gets the session's history. Three sessions: a healthy one; one
// whose last line a kill tore (cfix resume --repair repairs it first, and
// the store validates after); and one whose working directory is gone
// (cfix resume refuses, then --here moves it into this directory's project
// folder and resumes it here).
func TestResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		env := cloneEnv(t, sc)
		cfix, err := CfixBinary()
		if err != nil {
			t.Fatal(err)
		}
		claude := env.ClaudeDir()
		main := filepath.Join(cloneProjectDir(t, claude, filepath.Join(sc.Home, AlphaDir)), sc.Main+".jsonl")
		prefix := sc.Main[:8]
		const check = "RESUME CHECK"
		resumeCfix := func(dir string, args ...string) Result {
			t.Helper()
			full := append([]string{"resume", "--claude", env.Exe}, args...)
			return env.RunProgram(cfix, dir, full...)
		}
		sent := func(step string, res Result) {
			t.Helper()
			if res.ExitCode != 0 {
				t.Fatalf("%s: %s", step, res)
			}
			requireHistory(t, step, res, "hello, first session")
			for _, q := range res.MessageRequests() {
				if q.Status != 200 {
					t.Errorf("%s: a request got %d: %s", step, q.Status, q.Reply)
				}
			}
		}

		// A healthy session, from an unrelated directory.
		res := resumeCfix("unrelated", prefix, "--", "-p", check)
		sent("healthy", res)
		if !strings.Contains(res.Stderr, "cfix: resuming "+sc.Main) {
			t.Errorf("healthy: cfix did not say what it resumes:\n%s", res)
		}
		cloneAge(t, sc, claude)

		// A torn last line: the check says so; --repair repairs it first.
		raw, err := os.ReadFile(main)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(main, raw[:len(raw)-40], 0o600); err != nil {
			t.Fatal(err)
		}
		cloneAge(t, sc, claude)
		res = resumeCfix("unrelated", prefix, "--repair", "--", "-p", check)
		sent("torn, --repair", res)
		if !strings.Contains(res.Stderr, "line-torn") || !strings.Contains(res.Stderr, "applied") {
			t.Errorf("torn: cfix did not say what it found and repaired:\n%s", res)
		}
		cloneAge(t, sc, claude)
		if errs := ValidateStore(t, claude).Errors(); len(errs) > 0 {
			t.Errorf("after resume --repair: %+v", errs)
		}

		// A working directory that is gone: refused, then --here.
		gone := filepath.Join(env.Home, "work", "gone")
		if r := RunCfix(t, t.TempDir(), "move", main, "--to", gone, "--root", claude, "--apply", "--yes"); r.ExitCode != 0 {
			t.Fatalf("%s", r)
		}
		cloneAge(t, sc, claude)
		res = resumeCfix("unrelated", prefix, "--", "-p", check)
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, "which is not on disk any more") || !strings.Contains(res.Stderr, "--here") || len(res.MessageRequests()) > 0 {
			t.Errorf("gone: want exit 1 naming --here and no request:\n%s", res)
		}
		res = resumeCfix("here", prefix, "--here", "--yes", "--", "-p", check)
		sent("gone, --here", res)
		if _, err := os.Stat(filepath.Join(cloneProjectDir(t, claude, env.Dir("here")), sc.Main+".jsonl")); err != nil {
			t.Errorf("--here: the session is not in this directory's project folder: %v", err)
		}
	})
}
