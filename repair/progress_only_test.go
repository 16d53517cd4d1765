package repair_test

import (
	"testing"

	"github.com/cfix-dev/cfix/repair"
)

// TestAggressiveKeepsProgressOnly: a transcript holding nothing but the
// progress entry of a SessionStart hook (2.1.71 wrote three in a real
// store) keeps it under --aggressive: dropping it would leave the file
// empty, a session-empty the store did not have.
func TestAggressiveKeepsProgressOnly(t *testing.T) {
	const progress = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/x","sessionId":"11111111-1111-4111-8111-111111111111","version":"2.1.71","gitBranch":"b2","type":"progress","data":{"type":"hook_progress","hookEvent":"SessionStart","hookName":"SessionStart:startup","command":"x"},"parentToolUseID":"11111111-1111-4111-8111-111111111112","toolUseID":"11111111-1111-4111-8111-111111111112","timestamp":"2026-03-08T08:03:00.000Z","uuid":"11111111-1111-4111-8111-111111111113"}`
	root := rvStore(t, map[string]string{rvSessA + ".jsonl": rvLines(progress)})
	cs, err := repair.Plan(repair.Options{Root: root, Aggressive: true})
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Empty() {
		t.Errorf("planned %d changes for a transcript of one progress entry: %+v", len(cs.Ops), cs.Ops)
	}
	// With a message beside it, the progress entry goes.
	root = rvStore(t, map[string]string{rvSessA + ".jsonl": rvLines(progress,
		rvUser(rvSessA, "11111111-1111-4111-8111-111111111114", "11111111-1111-4111-8111-111111111113", "2026-03-08T08:03:01.000Z", "2.1.71"))})
	if cs, err = repair.Plan(repair.Options{Root: root, Aggressive: true}); err != nil || cs.Empty() {
		t.Errorf("a progress entry before a message: %v, %d changes", err, len(cs.Ops))
	}
}
