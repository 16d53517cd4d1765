package validate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// TestDiagnosticsURINull: a diagnostics attachment whose file entry has a
// null uri makes 2.0.77 (Execution error) and 2.1.111 to 2.1.222
// (evaluating 'n.uri.split') exit 1 on every resume, before any request;
// 1.0.128, 2.1.223 and 2.1.332 resume (measured: the attachment put after
// the first prompt of the session 2.1.177 wrote, resumed by 1.0.128,
// 2.0.77, 2.1.111, 2.1.140, 2.1.177, 2.1.205, 2.1.219, 2.1.222, 2.1.223 and
// 2.1.332).
func TestDiagnosticsURINull(t *testing.T) {
	root := copyFact(t, "agent-setting-2.1.177")
	path := filepath.Join(root, "projects", "-tmp-fid-ag-w", "9717d226-7269-46a7-ae6a-6d0b972d113c.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The attachment after the first prompt, its child linked to it.
	var out []string
	line, parent, id := 0, "", "d1a90000-0000-4000-8000-000000000001"
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if parent != "" && e["parentUuid"] == parent {
			e["parentUuid"], parent = id, ""
			nb, _ := json.Marshal(e)
			l = string(nb)
		}
		out = append(out, l)
		if line == 0 && e["type"] == "user" {
			a := map[string]any{"parentUuid": e["uuid"], "isSidechain": false, "type": "attachment", "uuid": id,
				"timestamp": e["timestamp"], "sessionId": e["sessionId"], "version": e["version"], "cwd": e["cwd"],
				"attachment": map[string]any{"type": "diagnostics", "isNew": true, "files": []any{map[string]any{"uri": nil,
					"diagnostics": []any{map[string]any{"message": "x", "severity": "Error"}}}}}}
			nb, _ := json.Marshal(a)
			out = append(out, string(nb))
			line, parent = i+2, e["uuid"].(string)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client string
		sev    validate.Severity
	}{{"2.1.177", validate.Error}, {"2.0.77", validate.Error}, {"2.1.332", validate.Warning}} {
		rep, err := validate.Run(validate.Options{Root: root, Client: c.client})
		if err != nil {
			t.Fatal(err)
		}
		got := withCode(rep, validate.AttachMalformed)
		for _, f := range got {
			if f.Line != line || f.Severity != c.sev || !strings.Contains(f.Message, "files[].uri") {
				t.Errorf("as %s resumes: line %d %s: %s", c.client, f.Line, f.Severity, f.Message)
			}
		}
		if len(got) != 1 {
			t.Errorf("as %s resumes: %d attachment-malformed findings, want 1", c.client, len(got))
		}
		// Repair removes the entry (as every attachment-malformed one:
		// it attaches nothing, to the clients that do not throw on it
		// either).
		cs, err := repair.Plan(repair.Options{Root: root, Client: c.client})
		if err != nil {
			t.Fatal(err)
		}
		removed := false
		for _, op := range cs.Ops {
			for _, e := range op.Edits {
				removed = removed || op.Path == path && e.Line == line && len(e.New) == 0
			}
		}
		if !removed {
			t.Errorf("as %s resumes: repair leaves the attachment", c.client)
		}
	}
}
