package validate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestWildVerdicts runs validate on the skeletons of real stores: no error
// that the hand verdicts call a false alarm comes back, every file judged
// really damaged is still reported, and no store gets an error at all (the
// wild stores hold no damage a resume fails on or loses history to: the
// oracle test in e2e/ resumes them with the real clients).
func TestWildVerdicts(t *testing.T) {
	verdicts := wild.Verdicts(t)
	for _, name := range wild.Stores(t) {
		t.Run(name, func(t *testing.T) {
			root := wild.Root(name)
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			type key struct {
				file, code string
				line       int
			}
			got := map[key]validate.Finding{}
			for _, f := range rep.Findings {
				rel, _ := filepath.Rel(filepath.Join(root, "projects"), f.Path)
				if i := strings.IndexByte(rel, filepath.Separator); i >= 0 {
					rel = rel[i+1:]
				}
				got[key{rel, string(f.Code), f.Line}] = f
				if f.Severity == validate.Error {
					t.Errorf("error on a wild store: %s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
				}
			}
			for _, v := range verdicts {
				if v.Store != name {
					continue
				}
				f, ok := got[key{v.File, v.Code, v.Line}]
				switch v.Verdict {
				case "false":
					if ok && f.Severity == validate.Error {
						t.Errorf("false alarm back: %s:%d %s (%s)", v.File, v.Line, v.Code, v.Class)
					}
				case "real":
					if !ok || f.Severity < validate.Warning {
						t.Errorf("real damage no longer reported: %s:%d %s (%s)", v.File, v.Line, v.Code, v.Class)
					}
				}
			}
		})
	}
}

// TestNotJSONLOneFinding: a file of which no line is JSON gets one
// finding, not one per line.
func TestNotJSONLOneFinding(t *testing.T) {
	for _, c := range damage.Cases {
		if c.Code != validate.FileNotJSONL {
			continue
		}
		root := damage.CopyStore(t, c.Version)
		path, _ := c.Damage(t, root)
		rep, err := validate.Run(validate.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.Path == path {
				n++
				if f.Code != validate.FileNotJSONL {
					t.Errorf("%s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d findings on the file, want 1", n)
		}
		return
	}
	t.Fatal("no damage case makes a file that is not JSONL")
}
