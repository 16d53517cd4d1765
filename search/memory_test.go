package search

import (
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: a search of a store whose session is hostile input
// peaks under 200 MB of RSS. The prompt of 256 MB is found by its first
// words (a line over session.MaxLine is searched in its skeleton, and the
// warning says so), the reply after it too.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, _ := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				var warns []string
				var hits []*Hit
				for _, pat := range []string{"pasted pasted", "Read it."} {
					_, err := Run(Options{Root: root, Pattern: pat, Warn: func(m string) { warns = append(warns, m) }}, func(h *Hit) error {
						hits = append(hits, h)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if kind != rsstest.HugeLine {
					return
				}
				// One warning per search: the line is not searched whole.
				if len(hits) != 2 || len(warns) != 2 || !strings.Contains(warns[0], ":13: line of 256.0 MB") {
					t.Errorf("hits %d, warnings %q", len(hits), warns)
				}
			})
		})
	}
}
