package guard

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: the hooks on a session of hostile input peak under
// 200 MB of RSS. SessionEnd records what it found (ten million type-missing
// counted, not one line each); SessionStart on a resume of it warns with
// the count and five of them.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			state := t.TempDir()
			rsstest.Measure(t, 200, func(t *testing.T) {
				// An archive started a minute ago: the start starts none.
				if err := Record(state, "SessionStart", Run{At: time.Now().Add(-time.Minute), Archive: "25d"}); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := Hook(state, root, "SessionEnd", input("SessionEnd", "", path, rsstest.Session), &out); err != nil {
					t.Fatal(err)
				}
				if err := Hook(state, root, "SessionStart", input("SessionStart", "resume", path, rsstest.Session), &out); err != nil {
					t.Fatal(err)
				}
				st, err := ReadState(state)
				if err != nil {
					t.Fatal(err)
				}
				end := st.Last["SessionEnd"]
				switch kind {
				case rsstest.Empties:
					if len(end.Problems) != 101 || !strings.Contains(out.String(), "has 10000000 problems") || !strings.Contains(out.String(), "and 9999995 more") {
						t.Errorf("SessionEnd recorded %d problems; SessionStart said %q", len(end.Problems), out.String())
					}
				case rsstest.NULTail:
					if len(end.Problems) != 1 || !strings.Contains(out.String(), "nul-bytes") {
						t.Errorf("problems %q, warning %q", end.Problems, out.String())
					}
				case rsstest.HugeLine:
					if len(end.Problems) != 0 || out.Len() != 0 {
						t.Errorf("problems %q, warning %q", end.Problems, out.String())
					}
				}
			})
		})
	}
}
