package catalog

import (
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: the listing of the store and of the project of a
// session of hostile input (cfix ls, browse, completion, resume --title:
// the glance at its head and tail, its messages counted) peaks under 200
// MB of RSS; the session counts its messages (the long prompt one of
// them).
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				c := OpenIn(root, t.TempDir())
				if _, err := c.List(false); err != nil {
					t.Fatal(err)
				}
				l, err := c.Layout()
				if err != nil {
					t.Fatal(err)
				}
				p, err := c.Project(l, rsstest.Project)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range p.Sessions {
					if s.File.Path != path {
						continue
					}
					if kind == rsstest.Empties && s.Messages != 0 || kind == rsstest.HugeLine && s.Messages < 2 {
						t.Errorf("%s: %d messages (known %v)", kind, s.Messages, s.MessagesKnown)
					}
				}
			})
		})
	}
}
