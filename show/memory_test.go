package show

import (
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
	"github.com/cfix-dev/cfix/validate"
)

// TestMemoryHostile: cfix show of a session of hostile input peaks under
// 200 MB of RSS (its figures, chain, turns and findings each read the
// transcript as it streams past); the long prompt counts as the entry it
// is.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				fam, err := Resolve(root, path)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := Build(fam)
				if err != nil {
					t.Fatal(err)
				}
				switch kind {
				case rsstest.FewEmpties:
					if rep.Counts[string(validate.TypeMissing)] != rsstest.Lines(kind) {
						t.Errorf("counts: %v", rep.Counts)
					}
				case rsstest.HugeLine:
					if rep.Counts[string(validate.LineLong)] != 1 || rep.Files[0].Resume == nil {
						t.Errorf("counts %v", rep.Counts)
					}
					if r := rep.Files[0].Resume; r.Leaf != rsstest.SessionLines()+2 {
						t.Errorf("a resume starts from line %d, want the reply after the long prompt (%d)", r.Leaf, rsstest.SessionLines()+2)
					}
				}
			})
		})
	}
}
