package repair_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// TestTitleTargeted: a repair that names one session finds a title out of
// the picker's reach from the title lines its fixer kept (no validate
// run), and plans for that session what a repair of the whole store plans:
// the title appended again, merged with the other fixes of the file, or
// nothing when the picker finds the title.
func TestTitleTargeted(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, root, p string)
		append bool // the title line is appended again
	}{
		{"buried title", func(t *testing.T, root, p string) {}, true},
		{"buried title, an older one in the head", func(t *testing.T, root, p string) {
			ls := damage.Lines(t, p)
			ls = append(ls[:1:1], append([][]byte{damage.TitleLine("old name", damage.V330Session)}, ls[1:]...)...)
			damage.WriteLines(t, p, ls, true)
		}, true},
		{"buried title, the same in the tail", func(t *testing.T, root, p string) {
			appendLine(t, p, append(damage.TitleLine("my renamed session", damage.V330Session), '\n'))
		}, false},
		{"buried title, in the title sidecar", func(t *testing.T, root, p string) {
			dir := filepath.Join(filepath.Dir(p), damage.V330Session)
			os.MkdirAll(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "custom-title.json"), []byte(`{"customTitle":"my renamed session"}`), 0o600)
		}, false},
		{"buried title and a torn last line", func(t *testing.T, root, p string) { tear(t, p) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := damage.CopyStore(t, damage.V330)
			p, _ := damage.BuryTitle(t, root, "my renamed session")
			c.damage(t, root, p)
			age(t, root)
			if got := has(findings(t, root), validate.TitleOutOfReach, p, 0); got != c.append {
				t.Fatalf("validate reports %s: %v, want %v", validate.TitleOutOfReach, got, c.append)
			}
			whole := opOf(rvPlan(t, repair.Options{Root: root}), p)
			targeted := opOf(rvPlan(t, repair.Options{Root: root, Targets: []string{p}}), p)
			title := damage.TitleLine("my renamed session", damage.V330Session)
			appended := targeted != nil && len(targeted.Edits) > 0 && bytes.Contains(targeted.Edits[len(targeted.Edits)-1].New, title)
			if appended != c.append {
				t.Errorf("targeted plan appends the title: %v, want %v (%+v)", appended, c.append, targeted)
			}
			if (whole == nil) != (targeted == nil) || whole != nil && (!reflect.DeepEqual(whole.Edits, targeted.Edits) || whole.Reason != targeted.Reason) {
				t.Errorf("plans differ for %s:\nwhole store: %+v\ntargeted:    %+v", p, whole, targeted)
			}
		})
	}
}

// opOf returns the op of a plan for path, or nil.
func opOf(cs *changeset.ChangeSet, path string) *changeset.Op {
	for i := range cs.Ops {
		if cs.Ops[i].Path == path {
			return &cs.Ops[i]
		}
	}
	return nil
}
