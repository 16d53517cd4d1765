package trim

import (
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
)

func TestPromptWords(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"user","message":{"role":"user","content":"hello,\n  first   session"}}`, "hello, first session"},
		{`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"data":"x"}},{"type":"text","text":"look at this"}]},"uuid":"u"}`, "look at this"},
		{`{"uuid":"u","message":{"content":[{"type":"tool_result","content":"not a prompt"}]}}`, ""},
		{`{"message":{"role":"user","content":"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>"}}`, "/model opus"},
		{`{"toolUseResult":{"text":"no"},"message":{"role":"user","content":"yes"}}`, "yes"},
		{`{"message":{"role":"user","content":"` + strings.Repeat("word ", 100) + `"}}`, strings.TrimSpace(strings.Repeat("word ", 14)) + "…"},
	} {
		if got := promptWords(strings.NewReader(c.line)); got != c.want {
			t.Errorf("promptWords(%.60s) = %q, want %q", c.line, got, c.want)
		}
		// Read no further than a cut of the line: the start of its text.
		if cut := 40; len(c.line) > cut && c.want != "" && !strings.HasPrefix(c.want, "/") && strings.Contains(c.line[:cut], `"content":"`) {
			if got := promptWords(strings.NewReader(c.line[:cut])); !strings.HasPrefix(c.want, strings.TrimSuffix(got, "…")) || got == "" {
				t.Errorf("promptWords(cut %.40s) = %q, want a start of %q", c.line, got, c.want)
			}
		}
	}
}

// TestPromptLineKeys: the keys of a line are looked for around a string
// content, never in it; an escaped quote does not end the string.
func TestPromptLineKeys(t *testing.T) {
	n := &session.Node{Type: "user"}
	for _, c := range []struct {
		line string
		want bool
	}{
		{`{"type":"user","message":{"role":"user","content":"say \"isMeta\":true\\\\"},"uuid":"u"}`, true},
		{`{"type":"user","message":{"role":"user","content":"hi \\\" there"},"isMeta":true,"uuid":"u"}`, false},
		{`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}}`, false},
		{`{"type":"user","message":{"role":"user","content":"<local-command-stdout>ok</local-command-stdout>"}}`, false},
		{`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"look"}]}}`, true},
		{`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<local-command-stderr>x"}]}}`, false},
	} {
		if got := PromptLine([]byte(c.line), n); got != c.want {
			t.Errorf("PromptLine(%s) = %v, want %v", c.line, got, c.want)
		}
	}
}
