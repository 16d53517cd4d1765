package e2e

import (
	"testing"
)

// TestScenario runs the corpus scenario against every pinned Claude Code
// version, in parallel, then validates each store with cfix.
func TestScenario(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		t.Logf("%s", sc)

		rep := ValidateStore(t, sc.ClaudeDir)
		t.Logf("cfix validate: %d findings, counts %v", len(rep.Findings), rep.Counts)
		for _, f := range rep.Errors() {
			t.Errorf("cfix validate: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
	})
}
