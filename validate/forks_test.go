package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// TestForksBesideCompactedParallel: the results of parallel tool calls
// that 2.1.x hangs beside the chain, in history a compaction summarized,
// are no other branch (the resumes before the compaction loaded them);
// a message off the chain there still is. Seen first in the 2.1.332
// corpus store, whose scenario runs two Bash calls at once before /compact.
func TestForksBesideCompactedParallel(t *testing.T) {
	const id = "f0c0e000-0000-4000-8000-000000000001"
	entry := func(typ, uuid, parent, extra string) string {
		p := "null"
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,%s,"uuid":%q,"timestamp":"2026-11-26T10:00:%02dZ","sessionId":%q,"version":"2.1.332","cwd":"/w"}`,
			p, typ, extra, uuid, len(uuid), id)
	}
	user := func(text string) string {
		return fmt.Sprintf(`"message":{"role":"user","content":%q}`, text)
	}
	result := func(tool string) string {
		return fmt.Sprintf(`"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"done"}]}`, tool)
	}
	call := func(msg, tool string) string {
		return fmt.Sprintf(`"message":{"id":%q,"role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"true"}}]}`, msg, tool)
	}
	text := func(msg, s string) string {
		return fmt.Sprintf(`"message":{"id":%q,"role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":%q}]}`, msg, s)
	}
	lines := []string{
		entry("user", "u1", "", user("two at once")),
		entry("assistant", "a1", "u1", call("m1", "t1")),
		entry("assistant", "a2", "a1", call("m1", "t2")),
		entry("user", "r1", "a1", result("t1")), // beside the chain, as the client writes it
		entry("user", "r2", "a2", result("t2")),
		entry("assistant", "a3", "r2", text("m2", "done")),
		entry("system", "cb", "", `"subtype":"compact_boundary","content":"Conversation compacted","logicalParentUuid":"a3","compactMetadata":{"trigger":"manual","preTokens":100}`),
		entry("user", "s1", "cb", `"isCompactSummary":true,`+user("summary")),
		entry("user", "u2", "s1", user("after")),
		entry("assistant", "a4", "u2", text("m3", "ok")),
	}
	for _, c := range []struct {
		name  string
		extra []string
		forks string // the message, "" for no chain-forks finding
	}{
		{"parallel results only", nil, ""},
		{"and a retried prompt", []string{entry("user", "u1b", "u1", user("abandoned"))}, "1 message sits on other branches"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			dir := filepath.Join(root, "projects", "-w")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			// The extra lines go before the compaction: the leaf stays a4.
			all := append(append(append([]string(nil), lines[:5]...), c.extra...), lines[5:]...)
			body := strings.Join(all, "\n") + "\n"
			if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, f := range run(t, root).Findings {
				if f.Code == validate.ChainForks {
					got = f.Message
				}
				if f.Severity == validate.Error {
					t.Errorf("error: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
				}
			}
			if (c.forks == "") != (got == "") || !strings.Contains(got, c.forks) {
				t.Errorf("chain-forks: %q, want %q", got, c.forks)
			}
		})
	}
}
