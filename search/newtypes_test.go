package search

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestNewEntryTypesNotSearched: the metadata of the entry types 2.1.2xx
// writes (bridge-session ids, file-history-delta paths, frame-link titles
// and URLs, fork-context-ref links) is never a hit, for any role: it is
// no text of the conversation. The same word in a prompt is.
func TestNewEntryTypesNotSearched(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	const sid = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	dir := filepath.Join(root, "projects", "-home-dev-work-alpha")
	f, err := os.OpenFile(filepath.Join(dir, sid+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"bridge-session","sessionId":"` + sid + `","bridgeSessionId":"zqmarker bridge","lastSequenceNum":3}` + "\n" +
		`{"type":"file-history-delta","messageId":"m","snapshotMessageId":"n","trackingPath":"zqmarker path","backup":{"backupFileName":"zqmarker@v1","version":1,"backupTime":"2026-11-20T10:00:00.000Z","realParentDir":"zqmarker dir"},"timestamp":"2026-11-20T10:00:00.000Z"}` + "\n" +
		`{"type":"frame-link","sessionId":"` + sid + `","path":"zqmarker frame","frameUrl":"https://example.invalid/zqmarker","title":"zqmarker title","timestamp":"2026-11-20T10:00:00.000Z"}` + "\n" +
		`{"type":"fork-context-ref","agentId":"zqmarker","parentSessionId":"zqmarker","parentLastUuid":"zqmarker","contextLength":1}` + "\n")
	f.Close()
	for _, role := range []string{"", "user", "assistant", "tool", "title", "summary"} {
		if hs := runHits(t, Options{Root: root, Pattern: "zqmarker", Role: role}); len(hs) > 0 {
			t.Errorf("role %q: metadata matched: %v", role, hs)
		}
	}
	// The walk does reach the file: a prompt with the word is found.
	f, _ = os.OpenFile(filepath.Join(dir, sid+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"zqmarker prompt"},"uuid":"00000000-0000-4000-8000-000000000099","timestamp":"2026-11-20T10:00:01.000Z","sessionId":"` + sid + `","cwd":"/home/dev/work/alpha","version":"2.1.332"}` + "\n")
	f.Close()
	if hs := runHits(t, Options{Root: root, Pattern: "zqmarker"}); len(hs) != 1 {
		t.Errorf("%d hits for the prompt, want 1: %v", len(hs), hs)
	}
}
