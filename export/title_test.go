package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/show"
)

// TestHTMLTitleIsTheSessions: the page's <title> (what a browser's tab
// and history show) is the session's title as cfix ls shows it, not its
// uuid; a session with no title line takes its first prompt, as ls does.
func TestHTMLTitleIsTheSessions(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	for arg, want := range map[string]string{
		damage.V88Session: "<title>hello, first session</title>",
		"d835ba00":        "<title>a fresh one in gamma</title>",
	} {
		fam, err := show.Resolve(root, arg)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, fam, Options{Format: "html"}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			i := strings.Index(out.String(), "<title>")
			t.Errorf("%s: want %s, the page has %.80s", arg, want, out.String()[max(0, i):])
		}
	}
}
