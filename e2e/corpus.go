package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CorpusHome is the HOME the corpus stores of testdata/corpus were written
// in: their entries, project folder names and .claude.json name
// /home/dev/work/..., and the unit tests look for those paths.
const CorpusHome = "/home/dev"

// Working folder of the corpus steps that the e2e scenario does not run.
const DeltaDir = "work/delta"

// CorpusScenario runs the scenario of RunScenario for version in home, then
// the steps the corpus stores of testdata/corpus also hold (see
// testdata/corpus/README.md):
//
//  9. alpha: -r Main, a TodoWrite call (todos/ in older versions)
//  10. beta.dir/sub: -r Fresh in place
//  11. gamma with space: a fresh session
//  12. delta: -r Fresh --fork-session from another folder
//  13. delta: a fresh session with an Agent call
//
// Steps 9 to 13 are kept as the client ran them (step 12 answers "No
// conversation found" in the versions that do not resume from another
// folder); only a run that did not finish fails the test.
func CorpusScenario(t testing.TB, version, home string) *Scenario {
	t.Helper()
	env := NewEnv(t, version, home)
	sc := runScenario(t, env)
	if t.Failed() {
		return sc
	}
	start := time.Now().Add(-sc.Duration)
	defer func() { sc.Duration = time.Since(start) }()
	run := func(step, dir string, args ...string) {
		t.Helper()
		res := env.Run(dir, args...)
		sc.Runs = append(sc.Runs, res)
		t.Logf("claude %s step %s: exit %d in %v, %d requests", version, step, res.ExitCode, res.Duration.Round(time.Millisecond), len(res.Requests))
		if res.TimedOut {
			t.Errorf("step %s timed out: %s", step, res)
		}
	}
	run("9 todo", AlphaDir, "-r", sc.Main, "-p", "TODO: plan the work")
	run("10 resume fresh", FreshDir, "-r", sc.Fresh, "-p", "resume the fresh one in place")
	run("11 fresh in gamma", OtherDir, "-p", "a fresh one in gamma")
	run("12 fork elsewhere", DeltaDir, "-r", sc.Fresh, "--fork-session", "-p", "forked copy")
	run("13 agent in delta", DeltaDir, "-p", "AGENT: BASH: echo delta")
	return sc
}

// WriteCorpus writes the corpus store of sc into out (which must not
// exist), in the layout of testdata/corpus/<version>: the store .claude/
// (without plugins/ and backups/, which are the client's own, not
// sessions), .claude.json, api-requests.jsonl (every request the fake API
// got) and cli.log (what the client printed, run after run).
func WriteCorpus(sc *Scenario, out string) error {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("corpus %s: exists already", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(out, ".claude"), sc.ClaudeDir); err != nil {
		return fmt.Errorf("corpus %s: %w", out, err)
	}
	for _, skip := range []string{"plugins", "backups"} {
		if err := os.RemoveAll(filepath.Join(out, ".claude", skip)); err != nil {
			return err
		}
	}
	// debug logs name the install folder of this machine: say it the way
	// the older stores do.
	logs, _ := filepath.Glob(filepath.Join(out, ".claude", "debug", "*.txt"))
	for _, p := range logs {
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		raw = bytes.ReplaceAll(raw, []byte(filepath.Join(CacheDir(), sc.Version)), []byte("/usr/local/lib/claude-code-"+sc.Version))
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			return err
		}
	}
	for _, name := range []string{".claude.json", "api-requests.jsonl"} {
		raw, err := os.ReadFile(filepath.Join(sc.Home, name))
		if err != nil {
			return fmt.Errorf("corpus %s: %w", out, err)
		}
		if err := os.WriteFile(filepath.Join(out, name), raw, 0o644); err != nil {
			return err
		}
	}
	// Git keeps no empty folder (session-env/<id>/, memory/, sessions/):
	// drop them, so the store is the same before and after a commit.
	if err := removeEmptyDirs(filepath.Join(out, ".claude")); err != nil {
		return err
	}
	var log strings.Builder
	for _, r := range sc.Runs {
		log.WriteString(r.Stdout)
		log.WriteString(r.Stderr)
	}
	return os.WriteFile(filepath.Join(out, "cli.log"), []byte(log.String()), 0o644)
}

// removeEmptyDirs removes the empty folders under dir (and those left
// empty by that), deepest first; dir itself stays.
func removeEmptyDirs(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != dir {
			dirs = append(dirs, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if ents, err := os.ReadDir(dirs[i]); err == nil && len(ents) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
