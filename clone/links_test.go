package clone_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
)

// TestCloneByPrefix: SESSION is resolved as every command resolves what
// the user names: a unique id prefix names its session; an ambiguous one
// lists the candidates.
func TestCloneByPrefix(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session[:8], To: zeta, ID: cloneID})
	if err != nil {
		t.Fatal(err)
	}
	if p.ChangeSet.Ops[0].From != damage.MainFile(root) {
		t.Errorf("cloned %s", p.ChangeSet.Ops[0].From)
	}
	// A second session whose id starts the same way.
	other := "3ba86ea1-0000-4000-8000-000000000000"
	b, _ := os.ReadFile(filepath.Join(root, "projects", "-home-dev-work-delta", "b1182327-ed4f-40fc-b86c-e5b8a1b7374b.jsonl"))
	os.WriteFile(filepath.Join(root, "projects", "-home-dev-work-delta", other+".jsonl"), b, 0o600)
	_, err = clone.Clone(clone.Options{Root: root, Session: "3ba86ea1", To: zeta})
	var ae *store.AmbiguousError
	if !errors.As(err, &ae) || len(ae.Candidates) != 2 || ae.Candidates[0].Session != other ||
		!strings.Contains(err.Error(), damage.V88Session+"  "+alphaFolder) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	// A project folder is not a session.
	var ie *clone.InputError
	if _, err := clone.Clone(clone.Options{Root: root, Session: alphaFolder, To: zeta}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "names a project folder, not a session") {
		t.Errorf("project folder as SESSION: %v", err)
	}
}

// TestCloneThroughLink: a clone into, a move out of, and a move-project of
// a project folder linked out of the store are refused whole (exit 1),
// saying which link and where it leads.
func TestCloneThroughLink(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	// The target folder is a link to another disk.
	disk := filepath.Join(t.TempDir(), zetaFolder)
	os.MkdirAll(disk, 0o700)
	zlink := filepath.Join(root, "projects", zetaFolder)
	if err := os.Symlink(disk, zlink); err != nil {
		t.Fatal(err)
	}
	var ce *clone.ConflictError
	_, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), zlink+" is a symbolic link to "+disk+", out of the store: cfix writes nothing through it; a clone is all or nothing") {
		t.Errorf("clone into the link: %v", err)
	}
	if ents, _ := os.ReadDir(disk); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
	// The source folder is a link: a move would delete through it.
	os.Remove(zlink)
	alink := filepath.Join(root, "projects", alphaFolder)
	adisk := filepath.Join(t.TempDir(), alphaFolder)
	if err := os.Rename(alink, adisk); err != nil {
		t.Fatal(err)
	}
	os.Symlink(adisk, alink)
	if _, err := clone.Move(clone.Options{Root: root, Session: damage.V88Session, To: zeta}); !errors.As(err, &ce) || !strings.Contains(err.Error(), alink+" is a symbolic link") {
		t.Errorf("move out of the link: %v", err)
	}
	// A clone only reads the source: it goes through.
	if _, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta}); err != nil {
		t.Errorf("clone out of the link: %v", err)
	}
	if _, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: zeta}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "a move-project is all or nothing") {
		t.Errorf("move-project of the link: %v", err)
	}
}
