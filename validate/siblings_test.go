package validate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// siblingResults writes a transcript of version v whose one assistant
// entry holds three calls (a non-Anthropic endpoint's stream: MiniMax),
// each result a child of that entry, written 3, 1, 2, and the answer
// under the last one.
func siblingResults(t *testing.T, v string) (root, path string) {
	root = filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const sid = "a1b2c3d4-0000-4000-8000-000000000001"
	u := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	head := func(uuid, parent, ts string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"%s","version":"%s","uuid":"%s","timestamp":"2026-03-08T08:03:%sZ"`, p, sid, v, uuid, ts)
	}
	usage := `"usage":{"input_tokens":460,"output_tokens":95}`
	lines := []string{
		`{` + head(u(1), "", "00.000") + `,"type":"user","message":{"role":"user","content":"read three files"}}`,
		`{` + head(u(2), u(1), "05.000") + `,"type":"assistant","message":{"id":"05fc6037467eb98c78b6f529dc23c4cb","type":"message","role":"assistant","model":"MiniMax-M2.1","content":[` +
			`{"type":"tool_use","id":"call_function_abc_1","name":"Read","input":{"file_path":"/w/f1"}},` +
			`{"type":"tool_use","id":"call_function_abc_2","name":"Read","input":{"file_path":"/w/f2"}},` +
			`{"type":"tool_use","id":"call_function_abc_3","name":"Read","input":{"file_path":"/w/f3"}}],"stop_reason":"tool_use",` + usage + `}}`,
	}
	for k, i := range []int{3, 1, 2} {
		lines = append(lines, fmt.Sprintf(`{`+head(u(10+i), u(2), fmt.Sprintf("06.%03d", 100+10*k))+`,"type":"user","message":{"role":"user","content":[{"tool_use_id":"call_function_abc_%d","type":"tool_result","content":"r%d"}]},"sourceToolAssistantUUID":"%s"}`, i, i, u(2)))
	}
	lines = append(lines, `{`+head(u(20), u(12), "11.000")+`,"type":"assistant","message":{"id":"05fc603ab9e942d775036ef0b6a14262","type":"message","role":"assistant","model":"MiniMax-M2.1","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn",`+usage+`}}`)
	path = filepath.Join(dir, sid+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// TestSiblingResults: the results of three calls of one assistant entry,
// each a child of it, are loaded by 2.1.30 and later (measured with
// 2.1.30, 2.1.68 and 2.1.100: every result reaches the API), so no
// tool-result-missing; 2.1.29 loads only the last one written and drops
// the two other calls, which stays a warning.
func TestSiblingResults(t *testing.T) {
	for v, want := range map[string]int{"2.1.29": 2, "2.1.30": 0, "2.1.68": 0, "2.1.79": 0, "2.1.100": 0} {
		root, path := siblingResults(t, v)
		rep := run(t, root)
		n := 0
		for _, f := range rep.Findings {
			if f.Code == validate.ToolResultMiss && f.Path == path {
				n++
				if f.Severity != validate.Warning {
					t.Errorf("%s: %s: %s", v, f.Severity, f.Message)
				}
			}
		}
		if n != want {
			t.Errorf("%s: %d tool-result-missing, want %d", v, n, want)
		}
	}
}
