package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/plant"
	"github.com/cfix-dev/cfix/secrets"
)

// TestRedact: with Redact, no answer holds a secret planted in the store:
// read_session with thinking, tool output and subagents, search_sessions
// for the text around a secret and for a piece of one, list_sessions.
// Without it (cfix mcp --no-redact) the same calls return them, so the
// test can fail.
func TestRedact(t *testing.T) {
	p := plant.New(t)
	root, _ := plant.Store(t, p)
	f, err := secrets.NewFilter(secrets.RedactorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := []string{p.GitHub, p.AWSID, p.Slack, p.Anthropic, p.Stripe}
	answers := func(opts Options) string {
		cs := connectWith(t, opts)
		var b strings.Builder
		b.WriteString(readAll(t, cs, map[string]any{"session": alpha, "include_thinking": true, "include_tool_output": true, "include_subagents": true}))
		for _, q := range []string{"my token is", "AWS_ACCESS_KEY_ID", "x-api-key", "stripe key", p.GitHub[:12], p.Slack[:14]} {
			var out SearchOutput
			call(t, cs, "search_sessions", map[string]any{"query": q, "project": "all"}, &out)
			raw, _ := json.Marshal(out)
			b.Write(raw)
		}
		var ls ListOutput
		call(t, cs, "list_sessions", map[string]any{"project": "all"}, &ls)
		raw, _ := json.Marshal(ls)
		b.Write(raw)
		return b.String()
	}
	plain := answers(Options{Root: root, Dir: t.TempDir()})
	red := answers(Options{Root: root, Dir: t.TempDir(), Redact: f})
	for _, s := range in {
		if !strings.Contains(plain, s) {
			t.Errorf("the answers without redaction lack %s…: the test proves nothing", s[:6])
		}
		if strings.Contains(red, s) {
			t.Errorf("a redacted answer holds %s…", s[:6])
		}
	}
	if !strings.Contains(red, "[REDACTED:") {
		t.Errorf("no marker in the redacted answers")
	}
}
