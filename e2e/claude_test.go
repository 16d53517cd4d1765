package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
	"github.com/cfix-dev/cfix/session"
)

// scriptEnv is an Env whose "Claude Code" is a shell script, to test Run
// without a real install.
func scriptEnv(t *testing.T, script string) *Env {
	t.Helper()
	api, err := fakeapi.New(fakeapi.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	exe := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Version: "script", Home: home, API: api, Exe: exe, t: t}
}

func TestRunEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "must-not-leak")
	t.Setenv("CLAUDE_CONFIG_DIR", "/must/not/leak")
	env := scriptEnv(t, `
echo "home=$HOME"
echo "url=$ANTHROPIC_BASE_URL"
echo "key=$ANTHROPIC_API_KEY"
echo "traffic=$CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC $DISABLE_NONESSENTIAL_TRAFFIC $DISABLE_AUTOUPDATER $DISABLE_TELEMETRY $DISABLE_ERROR_REPORTING"
echo "leak=$ANTHROPIC_AUTH_TOKEN$CLAUDE_CONFIG_DIR"
echo "pwd=$(pwd)"
echo "args=$*"
if [ -t 0 ]; then echo tty; else echo notty; fi
echo oops >&2
exit 3`)
	res := env.Run("work/gamma with space", "-p", "hello there")
	if res.ExitCode != 3 || res.TimedOut || res.Stderr != "oops\n" {
		t.Fatalf("run: %s", res)
	}
	for _, want := range []string{
		"home=" + env.Home + "\n",
		"url=" + env.API.URL + "\n",
		"key=dummy\n",
		"traffic=1 1 1 1 1\n",
		"leak=\n",
		"pwd=" + filepath.Join(env.Home, "work/gamma with space") + "\n",
		"args=-p hello there --allowedTools " + strings.Join(AllowedTools, ",") + "\n",
		"notty\n",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.Stdout)
		}
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	env := scriptEnv(t, `sleep 300 & echo $! > "$HOME/child.pid"; sleep 300`)
	env.Timeout = time.Second
	res := env.Run("work")
	if !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("want a timeout: %s", res)
	}
	if res.Duration > 15*time.Second {
		t.Errorf("killed after %v", res.Duration)
	}
	raw, err := os.ReadFile(filepath.Join(env.Home, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(raw))
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break // gone, or a zombie waiting for its new parent
		}
		if _, err := os.Stat("/proc"); err != nil {
			t.Skip("no /proc to check the child")
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %s of the timed-out run still alive: %s", pid, stat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestResultOutput(t *testing.T) {
	r := Result{Stdout: "warning: something\n" + `{"type":"result","subtype":"success","result":"ok: hi","session_id":"abc-123"}` + "\n"}
	out, err := r.Output()
	if err != nil || out.SessionID != "abc-123" || out.Result != "ok: hi" {
		t.Errorf("Output() = %+v, %v", out, err)
	}
	if _, err := (Result{Stdout: "plain text"}).Output(); err == nil {
		t.Errorf("Output() of plain text: no error")
	}
}

func TestProjectDirName(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/work/alpha":            "-home-dev-work-alpha",
		"/home/dev/work/beta.dir/sub":     "-home-dev-work-beta-dir-sub",
		"/home/dev/work/gamma with space": "-home-dev-work-gamma-with-space",
		"/tmp/x_y-z/é/🙂":                  "-tmp-x-y-z-----",
	} {
		if got := ProjectDirName(in); got != want {
			t.Errorf("ProjectDirName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewestSession(t *testing.T) {
	claude := t.TempDir()
	dir := "/home/dev/work/alpha"
	p := filepath.Join(claude, "projects", ProjectDirName(dir))
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string, age time.Duration) {
		f := filepath.Join(p, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write("old.jsonl", "{}\n", time.Hour)
	write("new.jsonl", "{}\n", time.Minute)
	write("empty.jsonl", "", 0)
	write("agent-a1.jsonl", "{}\n", 0)
	write("notes.txt", "x", 0)
	got, err := NewestSession(claude, dir)
	if err != nil || got != "new" {
		t.Errorf("NewestSession = %q, %v; want new", got, err)
	}
	if _, err := NewestSession(claude, "/elsewhere"); err == nil {
		t.Errorf("NewestSession of a folder without project: no error")
	}
}

// TestVersions: versions.txt lists each version once, oldest first, and
// each pinned version has its corpus store (scripts/new-version.sh makes
// both).
func TestVersions(t *testing.T) {
	vs, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	semver := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	seen := map[string]bool{}
	for i, v := range vs {
		if !semver.MatchString(v) || seen[v] {
			t.Errorf("bad or repeated version %q in versions.txt", v)
		}
		seen[v] = true
		if i > 0 && !session.VersionLess(vs[i-1], v) {
			t.Errorf("versions.txt: %s after %s: list them oldest first", v, vs[i-1])
		}
		if _, err := os.Stat(filepath.Join(RepoRoot(), "testdata", "corpus", v, ".claude")); err != nil {
			t.Errorf("version %s has no corpus store: run scripts/new-version.sh %s (%v)", v, v, err)
		}
	}
}

// TestSince: version facts are ranges from the version measured on.
func TestSince(t *testing.T) {
	for _, c := range []struct {
		v, from string
		want    bool
	}{
		{"2.1.330", "2.1.330", true},
		{"2.1.332", "2.1.330", true},
		{"2.1.1000", "2.1.330", true},
		{"2.2.0", "2.1.330", true},
		{"2.1.205", "2.1.330", false},
		{"2.1.33", "2.1.330", false},
		{"1.0.128", "2.0.0", false},
	} {
		if got := Since(c.v, c.from); got != c.want {
			t.Errorf("Since(%s, %s) = %v, want %v", c.v, c.from, got, c.want)
		}
	}
	for v, want := range map[string][2]bool{
		"1.0.128": {false, true}, "2.0.77": {false, true}, "2.1.205": {false, true},
		"2.1.250": {false, false},
		"2.1.330": {true, true}, "2.1.332": {true, true}, "2.2.0": {true, true},
	} {
		if finds, known := CrossFolderResume(v); finds != want[0] || known != want[1] {
			t.Errorf("CrossFolderResume(%s) = %v, %v, want %v", v, finds, known, want)
		}
	}
}

// TestScenarioVersions: CFIX_E2E_VERSIONS picks the versions, pinned or not.
func TestScenarioVersions(t *testing.T) {
	t.Setenv("CFIX_E2E_VERSIONS", "2.1.332, 9.9.9")
	got, err := ScenarioVersions()
	if err != nil || strings.Join(got, " ") != "2.1.332 9.9.9" {
		t.Errorf("ScenarioVersions = %q, %v", got, err)
	}
	t.Setenv("CFIX_E2E_VERSIONS", "")
	got, err = ScenarioVersions()
	pinned, _ := Versions()
	if err != nil || strings.Join(got, " ") != strings.Join(pinned, " ") {
		t.Errorf("ScenarioVersions without a selection = %q, %v, want %q", got, err, pinned)
	}
}
