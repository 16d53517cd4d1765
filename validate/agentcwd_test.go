package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestWildAgentCWD: on the skeletons of real stores, no subagent
// transcript gets a cwd-mismatch: each ran in a cwd of its session (after
// a cd, where its session's own finding is a notice).
func TestWildAgentCWD(t *testing.T) {
	for _, name := range wild.Stores(t) {
		rep := run(t, wild.Root(name))
		for _, f := range rep.Findings {
			if f.Code == validate.CWDMismatch && strings.HasPrefix(filepath.Base(f.Path), "agent-") {
				t.Errorf("%s: %s:%d: %s", name, f.Path, f.Line, f.Message)
			}
		}
	}
}

// TestAgentCWD: a subagent that ran where its session continued (a cwd of
// the session that is not the folder's) is no finding; one that ran in a
// directory its session never saw is, and its hint names no command that
// refuses a subagent transcript (move and clone take its session).
func TestAgentCWD(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	agent := filepath.Join(filepath.Dir(main), damage.V88Session, "subagents", "agent-a0822258224265608.jsonl")
	setCWD := func(path, cwd string, from int) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i := from; i < len(lines); i++ {
			lines[i] = bytes.ReplaceAll(lines[i], []byte(`"cwd":"/home/dev/work/alpha"`), []byte(`"cwd":"`+cwd+`"`))
		}
		if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The session went on in /home/dev/other (a cd); its subagent ran there.
	setCWD(main, "/home/dev/other", 4)
	setCWD(agent, "/home/dev/other", 0)
	rep := run(t, root)
	if !hasCode(rep, validate.CWDMismatch) {
		t.Fatal("the session's own notice is gone")
	}
	for _, f := range rep.Findings {
		if f.Code == validate.CWDMismatch && f.Path == agent {
			t.Errorf("subagent in its session's cwd: %s:%d %s", f.Path, f.Line, f.Message)
		}
	}
	// A cwd its session never had: still a finding, with no move hint.
	b, _ := os.ReadFile(agent)
	os.WriteFile(agent, bytes.ReplaceAll(b, []byte(`"cwd":"/home/dev/other"`), []byte(`"cwd":"/home/dev/nowhere"`)), 0o600)
	rep = run(t, root)
	found := false
	for _, f := range rep.Findings {
		if f.Code == validate.CWDMismatch && f.Path == agent {
			found = true
			if f.Hint != "" {
				t.Errorf("hint %q on a subagent transcript", f.Hint)
			}
		}
	}
	if !found {
		t.Error("no cwd-mismatch for a subagent in a cwd its session never had")
	}
}
