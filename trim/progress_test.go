package trim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgressAfterRuns: progress entries after a run of lines no planner
// looks into (queue operations, kept as one line of the scan) are taken
// out too. With no turn kept, the planner took the scan's count of lines
// for the file's, and left the entries past it (the e2e trim of crafted
// progress entries took 2 of 3).
func TestProgressAfterRuns(t *testing.T) {
	const id = "5a1e0000-0000-4000-8000-000000000001"
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-home-dev-work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:%02dZ","sessionId":%q,"content":"x"}`+"\n", i, id)
	}
	entry := func(typ, uuid, parent, msg string) {
		p := "null"
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":%q,"uuid":%q,"timestamp":"2026-01-01T00:01:00Z","sessionId":%q,"version":"2.1.81","cwd":"/home/dev/work"%s}`+"\n", p, typ, uuid, id, msg)
	}
	call := func(n int) string { return fmt.Sprintf("toolu_%02d", n) }
	parent := ""
	for n := 1; n <= 3; n++ {
		u, a, pr := fmt.Sprintf("u%d", n), fmt.Sprintf("a%d", n), fmt.Sprintf("p%d", n)
		if n == 1 {
			entry("user", u, parent, `,"message":{"role":"user","content":"go"}`)
		} else {
			entry("user", u, parent, fmt.Sprintf(`,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"ok"}]}`, call(n-1)))
		}
		entry("assistant", a, u, fmt.Sprintf(`,"message":{"id":"msg_%d","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"true"}}]}`, n, call(n)))
		entry("progress", pr, a, `,"data":{"type":"hook_progress","hookEvent":"PostToolUse"}`)
		parent = pr
	}
	entry("user", "u4", parent, fmt.Sprintf(`,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"ok"}]}`, call(3)))
	entry("assistant", "a4", "u4", `,"message":{"id":"msg_4","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"done"}]}`)
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Trim(Options{Root: root, Session: id, Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Figures.Progress != 3 || p.Figures.Entries != 3 {
		t.Errorf("trim --progress: %+v, want the 3 progress entries out", p.Figures)
	}
}
