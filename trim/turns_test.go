package trim

import (
	"strings"
	"testing"
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
