package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// DefaultTimeout bounds one Claude Code run.
const DefaultTimeout = 120 * time.Second

// AllowedTools are the tools every run may use without asking: -p runs
// cannot answer permission prompts.
var AllowedTools = []string{"Bash", "Write", "Read", "TodoWrite", "Agent", "Task", "Edit"}

// Env is the world one scenario runs in: a Claude Code version, a HOME that
// every run shares (so sessions accumulate) and a fake API.
type Env struct {
	Version string
	Home    string          // HOME of every run; the store is Home/.claude
	API     *fakeapi.Server // the fake Messages API the runs talk to
	Timeout time.Duration   // per run; DefaultTimeout when zero
	Exe     string          // the Claude Code program
	t       testing.TB
}

// NewEnv prepares a scenario for version with its own fake API (closed when
// the test ends). home is the HOME to use; when empty, one is made in the
// test's TempDir. The test fails when the version is not installed.
func NewEnv(t testing.TB, version, home string) *Env {
	t.Helper()
	exe, err := Executable(version)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if home == "" {
		home = filepath.Join(t.TempDir(), "home")
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if home, err = filepath.EvalSymlinks(home); err != nil {
		t.Fatal(err)
	}
	api, err := fakeapi.New(fakeapi.Options{
		Logf:       t.Logf,
		RecordPath: filepath.Join(home, "api-requests.jsonl"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	return &Env{Version: version, Home: home, API: api, Exe: exe, t: t}
}

// ClaudeDir returns the store the runs write: Home/.claude.
func (e *Env) ClaudeDir() string { return filepath.Join(e.Home, ".claude") }

// Dir returns the absolute path of a working folder given relative to Home.
func (e *Env) Dir(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(e.Home, rel)
}

// Result is what one Claude Code run did.
type Result struct {
	Args     []string
	Dir      string
	Stdout   string
	Stderr   string
	ExitCode int // -1 when the process was killed
	TimedOut bool
	Start    time.Time
	Duration time.Duration
	Requests []fakeapi.Request // what the fake API received during the run
}

// String sums up the run for failure messages.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "claude %q in %s: exit %d after %v", r.Args, r.Dir, r.ExitCode, r.Duration.Round(time.Millisecond))
	if r.TimedOut {
		b.WriteString(" (timed out, killed)")
	}
	fmt.Fprintf(&b, "\nstdout: %s\nstderr: %s\nrequests:", clip(r.Stdout, 2000), clip(r.Stderr, 2000))
	for _, q := range r.Requests {
		fmt.Fprintf(&b, "\n  %d +%v %s %s model=%s msgs=%d tools=%d -> %d %s", q.N, q.Time.Sub(r.Start).Round(time.Millisecond),
			q.Method, q.URL, q.Model, len(q.Messages), len(q.Tools), q.Status, clip(q.Reply, 300))
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Output is the JSON object --output-format json prints.
type Output struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	IsError   bool   `json:"is_error"`
	Result    string `json:"result"`
	SessionID string `json:"session_id"`
}

// Output parses stdout as --output-format json prints it (the last line
// that is a JSON object).
func (r Result) Output() (Output, error) {
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var o Output
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "{") && json.Unmarshal([]byte(lines[i]), &o) == nil {
			return o, nil
		}
	}
	return Output{}, fmt.Errorf("e2e: no JSON result in stdout %q", clip(r.Stdout, 500))
}

// MessageRequests returns the run's /v1/messages requests.
func (r Result) MessageRequests() []fakeapi.Request {
	var out []fakeapi.Request
	for _, q := range r.Requests {
		if q.IsMessages() {
			out = append(out, q)
		}
	}
	return out
}

// Run runs Claude Code once in the working folder dir (relative to Home, or
// absolute; created if needed) with args, e.g. "-p", "BASH: ls" or "-r", id,
// "-p", "/compact". It adds --allowedTools (see AllowedTools). The run has
// no TTY (stdin is empty), its own process group, the Env's HOME and fake
// API, and nonessential traffic, telemetry and the auto-updater turned off;
// on timeout the whole process group is killed.
func (e *Env) Run(dir string, args ...string) Result {
	e.t.Helper()
	full := append(append([]string(nil), args...), "--allowedTools", strings.Join(AllowedTools, ","))
	return e.RunProgram(e.Exe, dir, full...)
}

// RunProgram runs program as Run runs Claude Code: in dir, with the Env's
// environment and fake API, recording the requests the API got meanwhile
// (cfix resume, which starts the client itself).
func (e *Env) RunProgram(program, dir string, full ...string) Result {
	e.t.Helper()
	dir = e.Dir(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, full...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	cmd.Stdin = nil // /dev/null: no TTY, nothing to read
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	before := e.API.Len()
	start := time.Now()
	err := cmd.Run()
	killProcessGroup(cmd) // children left behind (shells, agents) go too
	recordCost(e.t.Name(), cmd, time.Since(start))
	res := Result{
		Args:     full,
		Dir:      dir,
		Stdout:   stdout.String(),
		Stderr:   stderr.String(),
		Start:    start,
		Duration: time.Since(start),
		TimedOut: ctx.Err() != nil,
		Requests: e.API.Since(before),
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	default:
		res.ExitCode = -1
		res.Stderr += "\ne2e: " + err.Error()
	}
	if res.TimedOut {
		res.ExitCode = -1
	}
	return res
}

// environ is the environment of every run: a small fixed set, so nothing
// from the developer's shell (API keys, CLAUDE_CONFIG_DIR) leaks in.
func (e *Env) environ() []string {
	tmp := filepath.Join(e.Home, "tmp")
	os.MkdirAll(tmp, 0o755)
	env := []string{
		"HOME=" + e.Home,
		"USER=" + envOr("USER", "tester"),
		"PATH=" + os.Getenv("PATH"),
		"SHELL=" + shell(),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + tmp,
		"ANTHROPIC_BASE_URL=" + e.API.URL,
		"ANTHROPIC_API_KEY=dummy",
		"DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
	return env
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// shell returns a shell Claude Code accepts for its Bash tool (bash or zsh).
func shell() string {
	for _, s := range []string{"/bin/bash", "/usr/bin/bash", "/bin/zsh"} {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// ProjectDirName returns the folder name Claude Code gives the project at
// the absolute path dir: every UTF-16 code unit that is not [a-zA-Z0-9]
// becomes "-". Names over 200 characters get a hash suffix whose function
// changed between builds; ProjectDir matches those by their prefix.
func ProjectDirName(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ProjectDir returns the project folder of the working folder dir in the
// store claudeDir, or an error when there is none.
func ProjectDir(claudeDir, dir string) (string, error) {
	name := ProjectDirName(dir)
	p := filepath.Join(claudeDir, "projects", name)
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p, nil
	}
	if len(name) > 200 {
		matches, _ := filepath.Glob(filepath.Join(claudeDir, "projects", name[:200]+"-*"))
		if len(matches) == 1 {
			return matches[0], nil
		}
	}
	return "", fmt.Errorf("e2e: no project folder for %s in %s", dir, claudeDir)
}

// NewestSession returns the id of the newest non-empty main transcript
// (<uuid>.jsonl, not agent-*.jsonl) in dir's project folder.
func NewestSession(claudeDir, dir string) (string, error) {
	p, err := ProjectDir(claudeDir, dir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return "", err
	}
	type cand struct {
		id  string
		mod time.Time
	}
	var cands []cand
	for _, de := range entries {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, "agent-") {
			continue
		}
		fi, err := de.Info()
		if err != nil || fi.Size() == 0 {
			continue
		}
		cands = append(cands, cand{strings.TrimSuffix(name, ".jsonl"), fi.ModTime()})
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("e2e: no session in %s", p)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	return cands[0].id, nil
}
