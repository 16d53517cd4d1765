package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// TestLeftRoundTrip: a session whose conversation is gone while its
// subagents survive (its transcript rewritten to a stub, or missing):
// validate reports it with what is left and a hint; show lists what is
// left; the hint's commands work: export writes each subagent's
// conversation and the session's prompts from history.jsonl, rm removes
// the session; then validate reports it no more, and no error.
func TestLeftRoundTrip(t *testing.T) {
	t.Setenv("CFIX_JOURNAL_DIR", t.TempDir())
	cases := map[string]struct {
		code    validate.Code
		session string
		want    []string // in the export
	}{
		"transcript rewritten to a stub, subagents left": {validate.TranscriptLost, damage.V88Session,
			[]string{"hello, first session", "now spawn a subagent", "agent-a0822258224265608.jsonl", "the first session: what is left"}},
		"subagents of a missing session": {validate.AgentOrphan, "b1182327-ed4f-40fc-b86c-e5b8a1b7374b",
			[]string{"agent-ab5cc4f12ea091166.jsonl", "do two things BASH: echo sub", "done: sub", "main transcript is missing"}},
	}
	for _, c := range damage.Cases {
		want, ok := cases[c.Name]
		if !ok {
			continue
		}
		delete(cases, c.Name)
		t.Run(c.Name, func(t *testing.T) {
			root := damage.CopyStore(t, c.Version)
			path, _ := c.Damage(t, root)
			damage.Age(t, root) // not live: written long ago
			f := leftFinding(t, root, want.code, path)
			if f == nil {
				t.Fatalf("validate does not report %s at %s", want.code, path)
			}
			if !strings.Contains(f.Message, "left: ") {
				t.Errorf("the message says not what is left: %s", f.Message)
			}
			out, _ := cli(t, "show", "--root", root, want.session)
			if !strings.Contains(out, "\nlost ") || !strings.Contains(out, "subagent transcript") {
				t.Errorf("show does not say what is left:\n%s", out)
			}
			cmds := strings.Split(f.Hint, " && ")
			if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "cfix export ") || !strings.HasPrefix(cmds[1], "cfix rm ") {
				t.Fatalf("hint %q", f.Hint)
			}
			dir := t.TempDir()
			for _, cmd := range cmds {
				args := strings.Fields(strings.TrimPrefix(cmd, "cfix "))
				for i, a := range args {
					if strings.HasSuffix(a, ".md") {
						args[i] = filepath.Join(dir, a)
					}
				}
				args = append(args, "--root", root)
				if args[0] == "rm" {
					args = append(args, "--yes")
				}
				if out, code := cli(t, args...); code != exitOK {
					t.Fatalf("%s: status %d\n%s", cmd, code, out)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, want.session+".md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("the export holds no %q:\n%s", w, b)
				}
			}
			if strings.Contains(string(b), "a prompt of another session") {
				t.Errorf("the export holds another session's prompt")
			}
			if f := leftFinding(t, root, want.code, path); f != nil {
				t.Errorf("after rm: %s %s", f.Code, f.Message)
			}
			out, _ = cli(t, "validate", "--root", root, "--json")
			if strings.Contains(out, `"severity": "error"`) {
				t.Errorf("after rm, an error:\n%s", out)
			}
		})
	}
	for name := range cases {
		t.Errorf("no damage case %q", name)
	}
}

// leftFinding returns the finding of code at path that validate --json
// gives for the store at root, or nil.
func leftFinding(t *testing.T, root string, code validate.Code, path string) *validate.Finding {
	t.Helper()
	out, _ := cli(t, "validate", "--root", root, "--json")
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	for _, f := range rep.Findings {
		if f.Code == code && f.Path == path {
			return &f
		}
	}
	return nil
}
