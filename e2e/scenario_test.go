package e2e

import (
	"testing"
)

// TestScenario runs the corpus scenario against every pinned Claude Code
// version, in parallel, then validates each store with cfix.
func TestScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs real Claude Code versions")
	}
	versions, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			sc := ScenarioStore(t, v)
			t.Logf("%s", sc)

			rep := ValidateStore(t, sc.ClaudeDir)
			t.Logf("cfix validate: %d findings, counts %v", len(rep.Findings), rep.Counts)
			for _, f := range rep.Errors() {
				t.Errorf("cfix validate: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
			}
		})
	}
}
