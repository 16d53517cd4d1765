package archive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// findingSet is the code|file of each finding of the store at root.
func findingSet(t *testing.T, root string) map[string]bool {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range rep.Findings {
		rel, _ := filepath.Rel(root, f.Path)
		out[string(f.Code)+"|"+rel] = true
	}
	return out
}

// TestStubsGoWithTheirSession: rm and archive of a 1.0.128 session take
// the stub its resume wrote (a transcript of one summary line naming its
// entry, under another id) with its todo list; left behind, the stub named
// nothing (leaf-missing, session-unwritten) and its todo list nothing
// either. Restore of both gives the store back.
func TestStubsGoWithTheirSession(t *testing.T) {
	const (
		id   = "e08a945a-5a3e-434e-8f69-9e8721080cda"
		stub = "2292fb5a-c6fc-4e1f-b717-735a34b30801"
	)
	src := filepath.Join("..", "testdata", "corpus", "1.0.128", ".claude")
	stubPath := filepath.Join("projects", "-home-dev-work-alpha", stub+".jsonl")
	for _, archived := range []bool{false, true} {
		root := copyStore(t, src)
		before := findingSet(t, root)
		whole := tree(t, root)
		adir := filepath.Join(t.TempDir(), "archive")
		journals := t.TempDir()
		if archived {
			p, err := Archive(Options{Root: root, Dir: adir, Sessions: []string{id}, Build: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Archives) != 2 {
				t.Errorf("archive: %d archives, want the session's and its stub's", len(p.Archives))
			}
			apply(t, p.ChangeSet, journals)
			p.Cleanup()
		} else {
			c, err := Rm(RmOptions{Root: root, Sessions: []string{id}})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, op := range c.Ops {
				found = found || op.Path == filepath.Join(root, stubPath)
			}
			if !found {
				t.Errorf("rm does not remove the stub %s", stubPath)
			}
			apply(t, c, journals)
		}
		for p := range findingSet(t, root) {
			if !before[p] {
				t.Errorf("archived %v: a finding the store did not have: %s", archived, p)
			}
		}
		if archived {
			// Restoring the session restores the stub archived with it.
			rp, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{id}, Extract: true})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, rp.ChangeSet, journals)
			rp.Cleanup()
			requireTree(t, "restore", whole, tree(t, root))
			if ents, _ := os.ReadDir(adir); len(ents) != 0 {
				t.Errorf("restore of %s left %d archives: %v", id, len(ents), ents)
			}
		}
	}
}
