package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dmg "github.com/cfix-dev/cfix/internal/damage"
)

// TestSessionAliases: /add-dir B typed in the newest pinned interactive
// client, in a session of folder A, appends A's project folder (its
// absolute path and a newline) to B's project folder's .session-aliases;
// claude -c in B then continues A's session (the client lists the sessions
// of the folders the file names). cfix validate finds nothing to report.
// After cfix move-project A A2, the alias names A2's folder and -c in B
// still continues the session; with the alias naming a folder that is not
// there, -c in B starts a new session (the client ignores the line).
func TestSessionAliases(t *testing.T) {
	version := newestPinned(t)
	env := NewEnv(t, version, "")
	claude := env.ClaudeDir()
	a, b := env.Dir("a"), env.Dir("b")
	res := env.Run("a", "-p", "FIRST PROMPT IN A", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	sid := out.SessionID
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	interactiveConfig(t, env, a)
	interactiveConfig(t, env, b)
	tm := newTmux(t, 140, 40, interactiveEnv(env), a, env.Exe, "-r", sid)
	tm.waitIdle("the resumed session's prompt", 2*time.Minute)
	tm.typed("/add-dir " + b)
	tm.waitUntil("/add-dir typed", 30*time.Second, func(s string) bool {
		in, _, ok := promptBox(s)
		return ok && sameText(in, "/add-dir "+b)
	})
	time.Sleep(time.Second) // the completion menu settles
	tm.keys("Enter")
	s := tm.waitUntil("the add-directory dialog", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Enter to confirm") || strings.Contains(s, "Added ")
	})
	if !strings.Contains(s, "Added ") {
		tm.keys("Enter") // "Yes, for this session"
		tm.waitUntil("the directory added", 30*time.Second, func(s string) bool { return strings.Contains(s, "Added ") })
	}
	folderA := filepath.Join(claude, "projects", ProjectDirName(a))
	aliases := filepath.Join(claude, "projects", ProjectDirName(b), ".session-aliases")
	var raw []byte
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if raw, err = os.ReadFile(aliases); err == nil && len(raw) > 0 {
			break
		}
	}
	if string(raw) != folderA+"\n" {
		t.Fatalf("%s holds %q, want %q", aliases, raw, folderA+"\n")
	}
	fi, err := os.Stat(aliases)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, mode %v", aliases, err, fi.Mode())
	}
	tm.keys("C-c")
	tm.keys("C-c")
	time.Sleep(2 * time.Second)

	cont := func(what string) Output {
		t.Helper()
		res := env.Run("b", "-c", "-p", "CONTINUE IN B", "--output-format", "json")
		out, err := res.Output()
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %v\n%s", what, err, res)
		}
		return out
	}
	if got := cont("-c in B"); got.SessionID != sid {
		t.Fatalf("-c in B continued %s, want A's session %s", got.SessionID, sid)
	}
	for _, f := range ValidateStore(t, claude).Findings {
		if f.Severity == "error" || f.Severity == "warning" {
			t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
		}
	}

	// cfix move-project carries the alias.
	dmg.Age(t, claude)
	a2 := env.Dir("a2")
	if r := RunCfix(t, t.TempDir(), "move-project", a, a2, "--root", claude, "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("cfix move-project: %s", r)
	}
	folderA2 := filepath.Join(claude, "projects", ProjectDirName(a2))
	if raw, _ := os.ReadFile(aliases); string(raw) != folderA2+"\n" {
		t.Fatalf("after move-project %s holds %q, want %q", aliases, raw, folderA2+"\n")
	}
	if got := cont("-c in B after move-project"); got.SessionID != sid {
		t.Fatalf("-c in B after move-project continued %s, want A's session %s", got.SessionID, sid)
	}

	// Dangling: the client ignores the line.
	if err := os.WriteFile(aliases, []byte(filepath.Join(claude, "projects", "-gone")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := cont("-c in B with a dangling alias"); got.SessionID == sid {
		t.Fatalf("-c in B with the alias naming no folder continued A's session")
	}
	t.Logf("%s: %s names %s; -c in B continued %s, after move-project too", version, aliases, folderA, sid)
}
