package validate_test

import (
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// TestOrphanedServerResult: an advisor_tool_result whose server_tool_use
// no entry of the file holds, put before the text of the last reply of a
// session 2.1.140 wrote, is sent by 2.1.87 and older (the API answers
// 400: unexpected tool_use_id found in advisor_tool_result blocks); 2.1.88
// and later leave the block out and resume (measured: 2.0.77, 2.1.0,
// 2.1.29, 2.1.73, 2.1.87 against 2.1.88, 2.1.89, 2.1.90, 2.1.94, 2.1.100,
// 2.1.111, 2.1.219, 2.1.332). An error for the first, a warning for the
// second; no hint for either, as repair has no call to bring back.
func TestOrphanedServerResult(t *testing.T) {
	root := copyFact(t, "tool-surrogate-2.1.140")
	path := filepath.Join(root, "projects", "-tmp-fid2-w", "a905e947-d630-482e-a080-849e072acb05.jsonl")
	const last = `"content":[{"type":"text","text":"done: hi"}]`
	orphan := `{"type":"advisor_tool_result","tool_use_id":"srvtoolu_01orphan000000000000001","content":{"type":"advisor_result","text":"go on"}}`
	replaceIn(t, path, last, `"content":[`+orphan+`,{"type":"text","text":"done: hi"}]`, "the last reply")
	for _, c := range []struct{ client, severity string }{
		{"2.0.77", "error"}, {"2.1.87", "error"}, {"2.1.88", "warning"}, {"2.1.332", "warning"}, {"", "warning"},
	} {
		rep, err := validate.Run(validate.Options{Root: root, Client: c.client, ClientFrom: "--client"})
		if err != nil {
			t.Fatal(err)
		}
		got := withCode(rep, validate.ServerToolSplit)
		for _, f := range got {
			if f.Severity.String() != c.severity || f.Line != 7 || f.Hint != "" {
				t.Errorf("client %q: %s on line %d, hint %q, want %s on line 7 and no hint: %s", c.client, f.Severity, f.Line, f.Hint, c.severity, f.Message)
			}
		}
		if len(got) != 1 {
			t.Errorf("client %q: %d server-tool-split findings, want 1", c.client, len(got))
		}
	}
}
