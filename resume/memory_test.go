package resume

import (
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
	"github.com/cfix-dev/cfix/validate"
)

// TestMemoryHostile: resume's check (cfix resume --check-only, and what
// cfix resume runs before it starts the client) of a session of hostile
// input peaks under 200 MB of RSS and finds what validate finds.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, _ := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				_, found, err := FindChecked(root, rsstest.Session, "")
				if err != nil {
					t.Fatal(err)
				}
				want := map[rsstest.Kind]int{rsstest.Empties: rsstest.EmptyLines, rsstest.NULTail: 1, rsstest.HugeLine: 0}[kind]
				if n := validate.Total(found); n != want {
					t.Errorf("%d findings of severity error, want %d", n, want)
				}
			})
		})
	}
}
