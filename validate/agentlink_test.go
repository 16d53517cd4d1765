package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestForkedAgentLink: a session forked from another while its agents ran
// holds, in its subagents folder, symbolic links to their transcripts in
// the first session's folder (2.1.216, anthropics/claude-code#79764): their
// entries carry the first session's id. That is a notice naming the link,
// with no hint; a copy (not a link) carrying another session's id stays an
// error.
func TestForkedAgentLink(t *testing.T) {
	root := wild.Copy(t, "2.1.139-2.1.173")
	const a, b, agent = "3871a5cf-e658-4fce-9009-d6c8eb3c461f", "3871a5cf-0000-4000-8000-00000000000b", "agent-a385d855af5e0d3ac"
	dir := filepath.Join(root, "projects", "C--Users-d1-d2-d3")
	main, err := os.ReadFile(filepath.Join(dir, a+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, b+".jsonl"), []byte(strings.ReplaceAll(string(main), a, b)), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, b, "subagents")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".jsonl", ".meta.json"} {
		if err := os.Symlink(filepath.Join(dir, a, "subagents", agent+ext), filepath.Join(sub, agent+ext)); err != nil {
			t.Fatal(err)
		}
	}
	find := func() *validate.Finding {
		rep, err := validate.Run(validate.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		var got *validate.Finding
		for i, f := range rep.Findings {
			if f.Code == validate.AgentSessionDiff {
				if got != nil {
					t.Errorf("two agent-session-mismatch findings: %s and %s", got.Path, f.Path)
				}
				got = &rep.Findings[i]
			}
		}
		if got == nil {
			t.Fatal("no agent-session-mismatch finding")
		}
		if got.Path != filepath.Join(sub, agent+".jsonl") {
			t.Errorf("finding on %s, want the link", got.Path)
		}
		return got
	}
	f := find()
	if f.Severity != validate.Notice || f.Hint != "" || !strings.Contains(f.Message, "symbolic link") {
		t.Errorf("the link: %s %q (hint %q), want a notice naming the link, no hint", f.Severity, f.Message, f.Hint)
	}

	// The same file copied, not linked: another session's entries.
	link := filepath.Join(sub, agent+".jsonl")
	data, err := os.ReadFile(link)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(link)
	if err := os.WriteFile(link, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if f := find(); f.Severity != validate.Error {
		t.Errorf("the copy: %s %q, want an error", f.Severity, f.Message)
	}
}
