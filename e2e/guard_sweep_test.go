package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sweepDelay is when Claude Code's sweep comes after the first prompt of
// an interactive session: 5 s after it, put off by 10 minutes while the
// user typed in the last minute (the prompt itself is typing), so 10
// minutes and 5 s (measured in real time with 2.1.205 and 2.1.332).
const sweepDelay = 10*time.Minute + 5*time.Second

// sweepSpeed is how many times faster than real time the client's clocks
// run in TestGuardSweep (fastClock): the sweep's 10 minutes pass in one,
// and what the client does in real time before (its start, the hooks, the
// prompt and its reply) may take up to a minute, as it does on a loaded
// 2-core machine, before its clock has run the 10 minutes.
const sweepSpeed = 10

// TestGuardSweep: Claude Code's own start-up sweep, in an interactive
// session in a real terminal (tmux), with cfix's hooks installed and
// without. A session whose files were last written 60 days ago is in the
// store; the client starts, a prompt is sent, and the test waits (without
// a key) until the sweep has written .last-cleanup. Without the hooks the
// session is gone and nowhere; with them it is gone from the store too,
// as Claude Code wanted, but cfix's SessionStart hook archived it before
// the sweep ran, and cfix restore gives back its files byte for byte, with
// their modes and mtimes. In "resume", the client resumes (-r) another
// session as old: a resumed session sweeps too, and the hook archives the
// old one first but leaves the one resumed, which keeps its history and
// the new prompt.
//
// The interactive client's clocks run 10 times faster than real time
// (fastClock, libfaketime): the sweep's 10 minutes pass in one, the
// client's own timers and clock deciding when it comes. With
// CFIX_E2E_REALTIME=1 the test waits for the sweep in real time (over ten
// minutes; e2e/README.md records such a run of both versions). The
// versions and the cases run at once, beside the other tests.
func TestGuardSweep(t *testing.T) {
	versions := versionsSince(t, guardSince)
	t.Parallel()
	if !realTime() {
		defer removeFaketimeLeftovers(time.Now())
	}
	// The cases wait for the client, not the CPU: they run at once, not
	// t.Parallel (which runs GOMAXPROCS at a time).
	var wg sync.WaitGroup
	for _, v := range versions {
		for _, mode := range []string{"guard", "none", "resume"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(v+"/"+mode, func(t *testing.T) { guardSweep(t, v, mode) })
			}()
		}
	}
	wg.Wait()
}

func guardSweep(t *testing.T, version, mode string) {
	guarded := mode != "none"
	env := NewEnv(t, version, "")
	claude := env.ClaudeDir()
	journal := filepath.Join(env.Home, "journal")
	adir := filepath.Join(env.Home, ".local", "share", "cfix", "archive")

	// A session last written 60 days ago: the sweep deletes it.
	res := env.Run("old", "-p", "hello", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	old := out.SessionID

	proj := env.Dir("proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// The session to resume, as old as the other.
	var resumed, resumedPath string
	var resumedBytes []byte
	var args []string
	if mode == "resume" {
		res := env.Run("proj", "-p", "first", "--output-format", "json")
		out, err := res.Output()
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v\n%s", err, res)
		}
		resumed = out.SessionID
		ageSession(t, claude, resumed, 60*24*time.Hour)
		dir, err := ProjectDir(claude, proj)
		if err != nil {
			t.Fatal(err)
		}
		resumedPath = filepath.Join(dir, resumed+".jsonl")
		if resumedBytes, err = os.ReadFile(resumedPath); err != nil {
			t.Fatal(err)
		}
		args = []string{"-r", resumed}
	}
	// Aged after every -p run: a -p run that lasts over about 10 s sweeps
	// too (2.1.332: "BASH: sleep 15" swept a transcript 60 days old), as
	// a loaded machine can make even these; such a sweep found nothing
	// old, and its .last-cleanup (which would put off the next sweep by a
	// day) goes.
	ageSession(t, claude, old, 60*24*time.Hour)
	oldFiles := sessionFiles(t, claude, old)
	if len(oldFiles) == 0 {
		t.Fatalf("session %s has no file in %s", old, claude)
	}
	marker := filepath.Join(claude, ".last-cleanup")
	if _, err := os.Stat(marker); err == nil {
		t.Logf("a slow -p run swept the store; %s removed", marker)
		if err := os.Remove(marker); err != nil {
			t.Fatal(err)
		}
	}
	// Installed after every -p run: their SessionStart would archive.
	if guarded {
		if r := RunCfix(t, journal, "guard", "install", "--root", claude, "--apply", "--yes"); r.ExitCode != 0 {
			t.Fatalf("%s", r)
		}
	}
	interactiveConfig(t, env, proj)
	tenv := interactiveEnv(env)
	var clock *fastClock
	wait := sweepDelay + 4*time.Minute
	if !realTime() {
		var cenv []string
		clock, cenv = newFastClock(t, sweepSpeed)
		tenv = append(tenv, cenv...)
		wait = 3 * time.Minute
	}
	started := time.Now()
	tm := newTmux(t, 120, 40, tenv, proj, env.Exe, args...)
	// The prompt box, and no dialog: the first-run screens are answered
	// in .claude.json.
	tm.waitUntil("the prompt of an interactive session", time.Minute, func(s string) bool {
		if strings.Contains(s, "Enter to confirm") || strings.Contains(s, "Pane is dead") {
			t.Fatalf("claude %s shows a dialog or ended instead of its prompt:\n%s", version, s)
		}
		return strings.Contains(s, "mode on") && strings.Contains(s, "❯")
	})
	tm.prompt("hello")
	prompted := time.Now()
	tm.waitUntil("the fake API's reply", time.Minute, func(s string) bool { return strings.Contains(s, "ok: hello") })

	// No key from here on: the sweep waits for a minute without one.
	var swept time.Time
	for end := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		if fi, err := os.Stat(marker); err == nil {
			swept = fi.ModTime()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("claude %s had not swept %v after the first prompt by its clock (no %s):\n%s", version, clock.Elapsed(prompted, time.Now()).Round(time.Second), marker, tm.screen())
		}
	}
	t.Logf("claude %s swept %v after the first prompt by its clock, %v after its start (%v after the prompt in real time)", version,
		clock.Elapsed(prompted, swept).Round(time.Second), clock.Elapsed(started, swept).Round(time.Second), swept.Sub(prompted).Round(100*time.Millisecond))
	// Its own 10 minutes, by its own clock: the speed-up sweeps no
	// earlier than a user's client would.
	if e := clock.Elapsed(started, swept); e < 10*time.Minute {
		t.Errorf("claude %s swept %v after its start by its clock, before its 10 minutes", version, e.Round(time.Second))
	}

	for rel := range oldFiles {
		if _, err := os.Lstat(filepath.Join(claude, rel)); err == nil {
			t.Errorf("%s of the old session is still in the store after the sweep", rel)
		}
	}
	archived := filepath.Join(adir, old+".tar.zst")
	afi, aerr := os.Stat(archived)
	if !guarded {
		if aerr == nil {
			t.Errorf("without cfix's hooks, %s is there", archived)
		}
		return
	}
	if aerr != nil {
		b, _ := os.ReadFile(filepath.Join(env.Home, ".local", "state", "cfix", "guard.log"))
		t.Fatalf("the sweep deleted the old session, and cfix's hook did not archive it: %v\nguard.log: %s", aerr, b)
	}
	if !afi.ModTime().Before(swept) {
		t.Errorf("the archive was written at %v, not before the sweep (%v)", afi.ModTime(), swept)
	}
	t.Logf("claude %s: the archive was written %v before the sweep", version, swept.Sub(afi.ModTime()).Round(time.Second))

	if r := RunCfix(t, journal, "restore", old, "--root", claude, "--archive-dir", adir, "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}
	requireSameTree(t, "the old session after restore", oldFiles, sessionFiles(t, claude, old))

	if mode == "resume" {
		if _, err := os.Stat(filepath.Join(adir, resumed+".tar.zst")); err == nil {
			t.Errorf("the session resumed was archived")
		}
		b, err := os.ReadFile(resumedPath)
		if err != nil || !strings.HasPrefix(string(b), string(resumedBytes)) || !strings.Contains(string(b[len(resumedBytes):]), "hello") {
			t.Errorf("the session resumed does not hold its history and the new prompt (%v): %d bytes, %d before", err, len(b), len(resumedBytes))
		}
	}
}

// sessionFiles is storeTree of the files of the store whose path names
// the session id.
func sessionFiles(t *testing.T, claude, id string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for rel, v := range storeTree(t, claude) {
		if strings.Contains(rel, id) && !strings.HasSuffix(rel, "/") {
			out[rel] = v
		}
	}
	return out
}

// interactiveEnv is the environment of an interactive client in tmux:
// the Env's, a terminal that has colours, no session-quality survey (the
// client shows it at random after a reply, under the prompt, where it
// takes keys typed for the prompt), and no install of the official plugin
// marketplace (at its start 2.1.332 runs git and ssh to clone
// anthropics/claude-plugins-official from GitHub: children that wait on
// the machine's network and DNS).
func interactiveEnv(env *Env) []string {
	var tenv []string
	for _, kv := range env.environ() {
		if strings.HasPrefix(kv, "TERM=") {
			kv = "TERM=xterm-256color"
		}
		tenv = append(tenv, kv)
	}
	return append(tenv, "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1")
}

// interactiveConfig sets what lets an interactive client start straight
// to its prompt in HOME/.claude.json (keeping what the client wrote
// there): onboarding done, a theme, the test's API key approved (the
// client asks for the last 20 characters of a key from the environment),
// the folder dir trusted and its onboarding done, and the fullscreen
// renderer's offer seen.
func interactiveConfig(t *testing.T, env *Env, dir string) {
	t.Helper()
	path := filepath.Join(env.Home, ".claude.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	key := "dummy"
	for _, kv := range env.environ() {
		if v, ok := strings.CutPrefix(kv, "ANTHROPIC_API_KEY="); ok {
			key = v
		}
	}
	cfg["hasCompletedOnboarding"] = true
	cfg["theme"] = "dark"
	cfg["customApiKeyResponses"] = map[string]any{"approved": []string{key[max(0, len(key)-20):]}, "rejected": []string{}}
	cfg["fullscreenUpsellSeenCount"] = 3
	projects, _ := cfg["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	p, _ := projects[dir].(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	p["hasTrustDialogAccepted"] = true
	p["hasCompletedProjectOnboarding"] = true
	projects[dir] = p
	cfg["projects"] = projects
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
