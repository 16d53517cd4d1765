package clone_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestMoveProjectSubagentsOnlyFolder: a project folder under the old
// directory that holds a session's subagents and no main transcript (the
// wild 2.1.12-2.1.29 store's -Users-d1-d2-d3-d7-d9-d10) moves with the
// project; it stayed, its entries rewritten to the new directory, which
// its name does not encode (cwd-mismatch).
func TestMoveProjectSubagentsOnlyFolder(t *testing.T) {
	root := wild.Copy(t, "2.1.12-2.1.29")
	damage.Age(t, root)
	old := filepath.Join(root, "projects", "-Users-d1-d2-d3-d7-d9-d10")
	nw := filepath.Join(t.TempDir(), "moved")
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/Users/d1/d2/d3/d7", New: nw})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, pp.ChangeSet)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", old, err)
	}
	moved := filepath.Join(root, "projects", clone.TargetFolder(root, filepath.Join(nw, "d9", "d10")), "dfcd95d4-5c84-4571-a2d8-da5052373ffd", "subagents", "agent-a793f5f.jsonl")
	if _, err := os.Stat(moved); err != nil {
		t.Error(err)
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Code == validate.CWDMismatch && (f.Path == moved || strings.HasPrefix(f.Path, old)) {
			t.Errorf("%s: %s", f.Path, f.Message)
		}
	}
}
