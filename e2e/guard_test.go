package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corpusdamage "github.com/cfix-dev/cfix/internal/damage"
)

// guardSince is the oldest version TestGuard runs: the 2.1.x clients run
// SessionStart hooks in -p mode.
const guardSince = "2.1.205"

// TestGuard: cfix guard install --apply --yes into the test HOME's store,
// beside a hook of another tool that records what the client sends its
// hooks; a session is written, damaged (a parentUuid cycle at its last tool
// result: a resume loses history), and resumed with -r ID -p: cfix's
// SessionStart hook answers, and its warning is in what the client sends
// the model. A session last active 60 days ago is archived (and gone from
// the store) after that start, as cfix's SessionStart hook starts cfix
// archive in the background; the session resumed stays. cfix guard uninstall then gives
// settings.json back byte for byte. It logs the fields each hook got (the measurement docs quote).
func TestGuard(t *testing.T) {
	for _, v := range versionsSince(t, guardSince) {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			guardResume(t, v)
		})
	}
}

func guardResume(t *testing.T, version string) {
	env := NewEnv(t, version, "")
	journal := filepath.Join(env.Home, "journal")
	res := env.Run("proj", "-p", "BASH: echo one", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	// A session last active 60 days ago: the next sweep deletes it.
	oldRes := env.Run("old", "-p", "hello", "--output-format", "json")
	oldOut, err := oldRes.Output()
	if err != nil || oldRes.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, oldRes)
	}
	ageSession(t, env.ClaudeDir(), oldOut.SessionID, 60*24*time.Hour)
	oldDir, err := ProjectDir(env.ClaudeDir(), env.Dir("old"))
	if err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(oldDir, oldOut.SessionID+".jsonl")

	// Another tool's hooks: they record what the client sends.
	seen := filepath.Join(env.Home, "hooks-seen.jsonl")
	settings := filepath.Join(env.ClaudeDir(), "settings.json")
	rec := "cat >> " + seen + "; echo >> " + seen
	other := `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "` + rec + `"}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "` + rec + `"}]}]
  }
}
`
	if err := os.WriteFile(settings, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := RunCfix(t, journal, "guard", "install", "--root", env.ClaudeDir(), "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}

	dir, err := ProjectDir(env.ClaudeDir(), env.Dir("proj"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, out.SessionID+".jsonl")
	e := lastOnChain(t, readLines(t, path), "tool result", hasToolResult)
	corpusdamage.Cycle(t, path, e.line+1)

	res = env.Run("proj", "-r", out.SessionID, "-p", "CHECK")
	const warning = "cfix: the session being resumed"
	var warned bool
	for _, q := range res.MessageRequests() {
		if i := strings.Index(q.Text(), warning); i >= 0 && !warned {
			warned = true
			t.Logf("%s sends the warning as: %q", version, clip(q.Text()[max(0, i-120):], 400))
		}
	}
	t.Logf("%s prints the systemMessage: stdout %v, stderr %v", version, strings.Contains(res.Stdout, warning), strings.Contains(res.Stderr, warning))
	if !warned {
		b, _ := os.ReadFile(filepath.Join(env.Home, ".local", "state", "cfix", "guard.log"))
		t.Errorf("no request holds cfix's warning\n%s\nguard.log: %s", res, b)
	}
	if b, err := os.ReadFile(seen); err == nil {
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				t.Logf("%s hook input: %s (source %v, reason %v)", version, strings.Join(sortedStrings(keys), " "), m["source"], m["reason"])
			}
		}
	} else {
		t.Logf("%s: no hook input recorded: %v", version, err)
	}
	if b, err := os.ReadFile(filepath.Join(env.Home, ".local", "state", "cfix", "guard-state.json")); err == nil {
		t.Logf("%s guard state: %s", version, b)
	}

	// The resume's start archived the old session in the background, and
	// left the session resumed in the store.
	archived := filepath.Join(env.Home, ".local", "share", "cfix", "archive", oldOut.SessionID+".tar.zst")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, aerr := os.Stat(archived)
		_, serr := os.Stat(oldPath)
		if aerr == nil && os.IsNotExist(serr) {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(env.Home, ".local", "state", "cfix", "guard.log"))
			t.Fatalf("the old session was not archived: %v, %v\nguard.log: %s", aerr, serr, b)
		}
	}

	if _, err := os.Stat(path); err != nil {
		t.Errorf("the session resumed is not in the store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Home, ".local", "share", "cfix", "archive", out.SessionID+".tar.zst")); err == nil {
		t.Errorf("the session resumed was archived")
	}

	if r := RunCfix(t, journal, "guard", "uninstall", "--root", env.ClaudeDir(), "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}
	if b, _ := os.ReadFile(settings); string(b) != other {
		t.Errorf("settings.json after uninstall:\n%s\nwant:\n%s", b, other)
	}
}

// ageSession sets the mtime of every file of the store whose path names
// the session id to age ago.
func ageSession(t *testing.T, claudeDir, id string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	err := filepath.WalkDir(claudeDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.Contains(p, id) {
			return err
		}
		return os.Chtimes(p, when, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
