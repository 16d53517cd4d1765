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
