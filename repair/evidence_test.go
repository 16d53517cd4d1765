package repair_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// TestNotJSONLLeftAlone: a file of which no line is JSON is another
// program's output, not a transcript with bad lines: repair plans nothing
// for it (emptying it would destroy it) and says so.
func TestNotJSONLLeftAlone(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	if err := os.WriteFile(p, []byte("make: *** [all] Error 1\nbuild failed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range cs.Ops {
		if op.Path == p {
			t.Fatalf("repair plans %s of a file that is not JSONL: %s", op.Action, op.Reason)
		}
	}
	if !strings.Contains(strings.Join(cs.Notes, "\n"), string(validate.FileNotJSONL)) {
		t.Errorf("no note about the file: %q", cs.Notes)
	}
}

// TestRelinkOverNonJSONLine: when the line that held an entry's parent is
// not JSON (and goes), the child is linked to the entry before that line,
// by default: the removed line is the evidence. Every message stays on the
// chain a resume loads.
func TestRelinkOverNonJSONLine(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	// The last tool result's line is damaged; its child (the assistant
	// answer) now names a parent written nowhere.
	n := damage.FindLast(t, p, damage.HasBlock("tool_result"))
	ls := damage.Lines(t, p)
	var m map[string]any
	json.Unmarshal(ls[n-1], &m)
	parentOfDamaged, _ := m["parentUuid"].(string)
	ls[n-1] = ls[n-1][:len(ls[n-1])/2] // a torn record, no longer JSON
	damage.WriteLines(t, p, ls, true)
	age(t, root)
	if rep := findings(t, root); !has(rep, validate.ParentMissing, p, n+1) {
		t.Fatalf("no parent-missing on line %d before repair", n+1)
	}
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	rep := findings(t, root)
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			t.Errorf("after repair: %s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	after := damage.Lines(t, p)
	var child map[string]any
	json.Unmarshal(after[n-1], &child) // the child moved up one line
	if child["parentUuid"] != parentOfDamaged {
		t.Errorf("child re-linked to %v, want %s (the entry before the removed line)\n%s", child["parentUuid"], parentOfDamaged, bytes.Join(after, []byte("\n")))
	}
}
