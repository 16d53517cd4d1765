package export

import (
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/show"
)

// TestLongPromptAllocs: exporting a session whose prompt is a pasted file
// of 16 MB allocates a few copies of it, not one per step of rendering
// (a 200 MB prompt took 1.7 GB).
func TestLongPromptAllocs(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	k := damage.FindLast(t, main, damage.IsType("user"))
	n := 16 << 20
	for i := k - 1; i >= 0; i-- {
		var e map[string]any
		if json.Unmarshal(ls[i], &e) != nil || e["type"] != "user" {
			continue
		}
		if m, _ := e["message"].(map[string]any); m != nil {
			if _, ok := m["content"].(string); ok {
				m["content"] = strings.Repeat("pasted line of a file\n", n/22)
				ls[i], _ = json.Marshal(e)
				break
			}
		}
	}
	damage.WriteLines(t, main, ls, true)
	fam, err := show.Resolve(root, damage.V88Session)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := Write(io.Discard, fam, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("export of a %d MB prompt allocated %d MB", n>>20, alloc>>20)
	if alloc > 10*uint64(n) {
		t.Errorf("export of a %d MB prompt allocated %d MB, want at most 10 times the prompt", n>>20, alloc>>20)
	}
}

// TestDecodeEntryLong: an entry of a line over a MB decodes as
// encoding/json decodes it (but for a repeated key whose last value is
// null, which the light tree keeps and encoding/json skips).
func TestDecodeEntryLong(t *testing.T) {
	pad := strings.Repeat("x", 2*longLine)
	type decoded struct {
		E         *entry
		C, MC, A  string
		Trigger   string
		PreTokens int64
	}
	of := func(e *entry) string {
		b, _ := json.Marshal(decoded{e, string(e.Content), string(e.Message.Content), string(e.Attachment), e.CompactMetadata.Trigger, e.CompactMetadata.PreTokens})
		return string(b)
	}
	for _, line := range []string{
		`{"type":"user","timestamp":"t","isMeta":true,"message":{"role":"user","model":"m","content":"` + pad + `\u00e9\n"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + pad + `"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}`,
		`{"type":"system","subtype":"compact_boundary","content":"` + pad + `","compactMetadata":{"trigger":"auto","preTokens":12},"isCompactSummary":false}`,
		`{"type":"attachment","attachment":{"type":"file","content":"` + pad + `"},"message":{"content":"a","content":"b"}}`,
		`{"type":"user","message":{"role":"user","content":"` + pad + `"},"message":{"role":"user2"}}`,
		`{"type":"user","message":{"role":"user","content":null,"x":"` + pad + `"}}`,
		`{"type":"user","message":{"role":"user","content":"\u0041` + pad + `"},"content":"\ud800"}`,
	} {
		got, err := decodeEntry([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		var want entry
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if g, w := of(got), of(&want); g != w {
			t.Errorf("%.120s…: decoded\n%.300s\nencoding/json\n%.300s", line, g, w)
		}
	}
}
