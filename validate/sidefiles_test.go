package validate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// TestFilesWithoutModel: files newer clients keep beside the transcripts
// are no finding, in the shapes the real clients wrote them: a project
// folder's .session-aliases (2.1.223's /add-dir), a workflow run's
// subagents/workflows/<run>/journal.jsonl and the session's workflows/
// folder (2.1.223 and 2.1.332's Workflow tool), and the store's
// jobs/<short>/state.json (2.1.332's claude --bg). Each also with a torn
// last line or a dangling name, which the clients ignore (the alias file's
// loader drops lines naming no folder; the workflow journal's skips lines
// it cannot parse; a job names its session by id). A subagents/journal.jsonl
// directly under a session folder, which no client here could be made to
// write, is tolerated too.
func TestFilesWithoutModel(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	facts := filepath.Join(filepath.Dir(file), "..", "testdata", "facts")
	for _, tc := range []struct {
		name  string
		files int
		tear  []string // files (relative to .claude) whose last line is cut
		add   map[string]string
	}{
		{name: "session-aliases-2.1.223", files: 1, add: map[string]string{
			"projects/-tmp-shapes-hi-b/.session-aliases": "/tmp/shapes/hi/.claude/projects/-tmp-shapes-hi-a\n/tmp/shapes/hi/.claude/projects/-gone\n/tmp/shapes/hi/.claude/projects/-tmp",
		}},
		{name: "workflow-2.1.223", files: 2, tear: []string{
			"projects/-tmp-shapes-h223-w/76fcb2eb-44bd-43b3-a549-c709938cfa13/subagents/workflows/wf_1a273b42-b55/journal.jsonl",
		}, add: map[string]string{
			"projects/-tmp-shapes-h223-w/76fcb2eb-44bd-43b3-a549-c709938cfa13/subagents/journal.jsonl": `{"type":"started","key":"v2:0","agentId":"a0"}` + "\n",
		}},
		{name: "workflow-2.1.332", files: 2, tear: []string{
			"projects/-tmp-shapes-h332-w/1988fe44-3105-4395-8836-8e015d2700c7/subagents/workflows/wf_e6c663ae-e3b/journal.jsonl",
		}},
		{name: "bg-job-2.1.332", files: 1, add: map[string]string{
			"jobs/deadbeef/state.json": `{"state":"stopped","sessionId":"deadbeef-0000-4000-8000-000000000000"}`,
			"jobs/torn0000/state.json": `{"state":"work`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			if out, err := exec.Command("cp", "-a", filepath.Join(facts, tc.name, ".claude"), root).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, rel := range tc.tear {
				p := filepath.Join(root, rel)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b[:len(b)-10], 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for rel, data := range tc.add {
				p := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Severity > validate.Notice {
					t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
				}
			}
			if rep.FilesChecked != tc.files {
				t.Errorf("%d files checked, want %d (the transcripts)", rep.FilesChecked, tc.files)
			}
		})
	}
}
