package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// TestFilesWithoutModel: files newer clients keep beside the transcripts,
// whose shapes cfix does not model, are no finding: a project folder's
// .session-aliases, a session's subagents/journal.jsonl and a workflow's
// folder under subagents/workflows/, the store's jobs/<id>/state.json and
// .session-aliases. (Their places are those the tracker reports; no
// pinned client writes them here.)
func TestFilesWithoutModel(t *testing.T) {
	root := copyFact(t, "tool-surrogate-2.1.140")
	const id = "a905e947-d630-482e-a080-849e072acb05"
	project := filepath.Join(root, "projects", "-tmp-fid2-w")
	for rel, data := range map[string]string{
		filepath.Join(project, ".session-aliases"):                                    `{"review":"` + id + `"}`,
		filepath.Join(project, id, "subagents", "journal.jsonl"):                      `{"type":"step","ts":1}` + "\n",
		filepath.Join(project, id, "subagents", "workflows", "wf_1", "journal.jsonl"): `{"type":"step","ts":1}` + "\n",
		filepath.Join(root, "jobs", id, "state.json"):                                 `{"status":"done","sessionId":"` + id + `"}`,
		filepath.Join(root, ".session-aliases"):                                       `{}`,
	} {
		if err := os.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rel, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
	}
	if rep.FilesChecked != 1 {
		t.Errorf("%d files checked, want 1 (the transcript)", rep.FilesChecked)
	}
}
