package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/show"
)

// TestNewEntryTypes: the metadata entries of 2.1.2xx (bridge-session,
// file-history-delta, frame-link) stay out of an export; a forked
// subagent (fork-context-ref) gets a folded note saying where its context
// is, once, where its conversation is written, and not the session's
// entries again.
func TestNewEntryTypes(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	const sid = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	main := filepath.Join(root, "projects", "-home-dev-work-alpha", sid+".jsonl")
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"bridge-session","sessionId":"` + sid + `","bridgeSessionId":"MARKER-BRIDGE","lastSequenceNum":3}` + "\n" +
		`{"type":"file-history-delta","messageId":"m","snapshotMessageId":"n","trackingPath":"MARKER-PATH","backup":{"backupFileName":null,"version":1,"backupTime":"2026-11-20T10:00:00.000Z","realParentDir":"MARKER-DIR"},"timestamp":"2026-11-20T10:00:00.000Z"}` + "\n" +
		`{"type":"frame-link","sessionId":"` + sid + `","path":"MARKER-FRAME","frameUrl":"https://example.invalid/MARKER-URL","title":"MARKER-TITLE","timestamp":"2026-11-20T10:00:00.000Z"}` + "\n")
	f.Close()
	agents, _ := filepath.Glob(filepath.Join(root, "projects", "-home-dev-work-alpha", sid, "subagents", "agent-*.jsonl"))
	if len(agents) == 0 {
		t.Fatal("no subagent in the corpus store")
	}
	b, err := os.ReadFile(agents[0])
	if err != nil {
		t.Fatal(err)
	}
	ref := `{"type":"fork-context-ref","agentId":"x","parentSessionId":"` + sid + `","parentLastUuid":"MARKER-LAST","contextLength":7}` + "\n"
	if err := os.WriteFile(agents[0], append([]byte(ref), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	export := func(target, format string) string {
		fam, err := show.Resolve(root, target)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, fam, Options{Format: format}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for _, format := range []string{"md", "html"} {
		s := export(main, format)
		for _, m := range []string{"MARKER-BRIDGE", "MARKER-PATH", "MARKER-DIR", "MARKER-FRAME", "MARKER-URL", "MARKER-TITLE"} {
			if strings.Contains(s, m) {
				t.Errorf("%s: export of the session shows %s, of a metadata entry", format, m)
			}
		}
		if n := strings.Count(s, "MARKER-LAST"); n != 1 {
			t.Errorf("%s: the forked subagent's note %d times in the session's export, want 1", format, n)
		}
		s = export(agents[0], format)
		if !strings.Contains(s, "forked context") || !strings.Contains(s, "up to entry MARKER-LAST (7 messages") {
			t.Errorf("%s: the subagent's export says nothing of its forked context:\n%.3000s", format, s)
		}
	}
}
