package browse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestWarmStartPaintsWholeList: a second start on a store that has not
// changed has the whole list (titles, health) in its first message, from
// the catalog's cache, the same rows the first start's glances gave.
func TestWarmStartPaintsWholeList(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := damage.CopyStore(t, damage.V88)
	damage.Age(t, root)
	m := New(Options{Root: root})
	first, ok := m.Init()().(scannedMsg)
	if !ok || first.err != nil || first.layout.done {
		t.Fatalf("cold start: %+v, want the scan, then details", first)
	}
	cold, ok := detailsCmd(first.layout)().(detailsMsg)
	if !ok || cold.err != nil || len(cold.rows) != 4 {
		t.Fatalf("cold details: %+v", cold)
	}
	warm, ok := New(Options{Root: root}).Init()().(scannedMsg)
	if !ok || warm.err != nil || !warm.layout.done {
		t.Fatalf("warm start: %+v, want the whole list at once", warm)
	}
	if !reflect.DeepEqual(warm.rows, cold.rows) {
		t.Fatalf("warm rows differ from cold ones:\n%+v\n%+v", warm.rows, cold.rows)
	}
	m = New(Options{Root: root})
	m.Update(warm)
	if s := screen(m); !strings.Contains(s, alphaTitle) || !strings.Contains(s, gammaTitle) {
		t.Fatalf("the first frame of a warm start:\n%s", s)
	}
}

// TestMessagesCountedAfterPaint: the messages of transcripts too big for
// a glance to read whole (every session of the 2.1.330 store) are
// counted after the list is painted, as cfix ls counts them, cold and
// with the cache warm.
func TestMessagesCountedAfterPaint(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := damage.CopyStore(t, "2.1.330")
	damage.Age(t, root)
	for _, round := range []string{"cold", "warm"} {
		m := open(t, root, 120, 20, Options{})
		var alpha *Row
		for i := range m.all {
			if m.all[i].Title == alphaTitle {
				alpha = &m.all[i]
			}
		}
		if alpha == nil || !alpha.MessagesKnown || alpha.Messages != 27 {
			t.Fatalf("%s: the row of %q: %+v, want 27 messages (as cfix ls counts them)", round, alphaTitle, alpha)
		}
		if s := screen(m); !strings.Contains(s, "     27 ") {
			t.Fatalf("%s: the list shows no count of 27:\n%s", round, s)
		}
	}
}
