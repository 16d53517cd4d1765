package validate_test

import (
	"slices"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// TestSnapshotsNamingMessages: file-history-snapshot lines whose messageId
// is the uuid of a message (issue 10; #36583, #24304 call it a collision
// that cuts the history on resume) are what Claude Code always writes, and
// no client loses history because of them (the versions and transcripts
// measured are listed at damage.SnapshotsNamingMessages). Validate must
// report nothing new for them, and its model of a resume must load the same
// chain as before.
func TestSnapshotsNamingMessages(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	before := run(t, root)
	chainBefore, err := validate.LoadedChain(p)
	if err != nil {
		t.Fatal(err)
	}

	_, wrote, _ := damage.SnapshotsNamingMessages(t, root)
	after := run(t, root)
	chainAfter, err := validate.LoadedChain(p)
	if err != nil {
		t.Fatal(err)
	}

	// Nothing at the lines written, and the same findings as before (the
	// lines below them moved).
	count := func(rep *validate.Report) map[string]int {
		n := map[string]int{}
		for _, f := range rep.Findings {
			n[f.Path+" "+string(f.Code)+" "+f.Severity.String()]++
		}
		return n
	}
	for _, f := range after.Findings {
		if f.Path == p && slices.Contains(wrote, f.Line) {
			t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
		}
	}
	cb, ca := count(before), count(after)
	for k, n := range ca {
		if cb[k] != n {
			t.Errorf("%s: %d findings, %d before the snapshots", k, n, cb[k])
		}
	}
	for k, n := range cb {
		if _, ok := ca[k]; !ok {
			t.Errorf("%s: none, %d before the snapshots", k, n)
		}
	}

	if !slices.Equal(chainAfter.UUIDs, chainBefore.UUIDs) || chainAfter.Cut != chainBefore.Cut || chainAfter.Cycle != chainBefore.Cycle {
		t.Errorf("the resume cfix models loads %d entries (cut %v), %d before the snapshots (cut %v)",
			len(chainAfter.UUIDs), chainAfter.Cut, len(chainBefore.UUIDs), chainBefore.Cut)
	}
	if len(chainAfter.UUIDs) == 0 {
		t.Error("the modelled resume loads nothing")
	}
}
