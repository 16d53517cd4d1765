package show_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cfix-dev/cfix/show"
)

// TestSidecarsMeasured: show lists, beside a session, the side files the
// real clients wrote for it: the workflow run's journal (2.1.223 and
// 2.1.332's Workflow tool) and the background session's jobs/<short>/
// folder, named by its state.json (2.1.332's claude --bg). A journal.jsonl
// directly under subagents/ is no workflow's.
func TestSidecarsMeasured(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	facts := filepath.Join(filepath.Dir(file), "..", "testdata", "facts")
	for _, tc := range []struct {
		store, session string
		want           map[string]string // kind → path relative to .claude
	}{
		{"workflow-2.1.332", "1988fe44-3105-4395-8836-8e015d2700c7", map[string]string{
			"workflow journal": "projects/-tmp-shapes-h332-w/1988fe44-3105-4395-8836-8e015d2700c7/subagents/workflows/wf_e6c663ae-e3b/journal.jsonl",
			"workflows":        "projects/-tmp-shapes-h332-w/1988fe44-3105-4395-8836-8e015d2700c7/workflows",
			"subagents":        "projects/-tmp-shapes-h332-w/1988fe44-3105-4395-8836-8e015d2700c7/subagents/journal.jsonl",
		}},
		{"bg-job-2.1.332", "2a33f6ac-ce21-4e36-85f1-f9b8f15ac066", map[string]string{
			"job": "jobs/2a33f6ac",
		}},
	} {
		t.Run(tc.store, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			if out, err := exec.Command("cp", "-a", filepath.Join(facts, tc.store, ".claude"), root).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if p, ok := tc.want["subagents"]; ok {
				os.WriteFile(filepath.Join(root, p), []byte("{}\n"), 0o600)
			}
			fam, err := show.Resolve(root, tc.session)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := show.Build(fam)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range rep.Sidecars {
				rel, _ := filepath.Rel(root, s.Path)
				if _, ok := tc.want[s.Kind]; ok {
					got[s.Kind] = rel
				}
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q (sidecars %+v)", k, got[k], v, rep.Sidecars)
				}
			}
		})
	}
}
