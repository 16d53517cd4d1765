package browse

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestPreviewAttachments: the preview shows what Claude Code attached to a
// turn as export's lines, one each, their words as written (Markdown's
// escapes taken off outside code), and no folded block of its own
// bookkeeping.
func TestPreviewAttachments(t *testing.T) {
	d := parseDoc("#### User\n\nhi\n\n- attachment · hook output (Session\\_Start): it\\_s &lt;b> \\\\ `a\\_b`\n- attachment · file `notes.txt` (2 lines)\n\n#### Assistant\n\nok\n")
	got := ansi.Strip(strings.Join(d.render(nil, -1).lines, "\n"))
	want := "- attachment · hook output (Session_Start): it_s <b> \\ `a\\_b`\n- attachment · file `notes.txt` (2 lines)\n"
	if !strings.Contains(got, want) {
		t.Errorf("rendered:\n%s\nwant it to hold\n%s", got, want)
	}

	// The 2.1.332 corpus session: its attachments in the preview.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := open(t, damage.CopyStore(t, "2.1.332"), 100, 40, Options{})
	press(t, m, "bc1c66c0")
	if m.doc == nil {
		t.Fatalf("no preview:\n%s", screen(m))
	}
	var lines []string
	for _, p := range m.doc.parts {
		if p.fold != 0 && strings.HasPrefix(p.title, "attachment") {
			t.Errorf("a folded attachment: %q", p.title)
		}
		lines = append(lines, p.lines...)
	}
	all := strings.Join(lines, "\n")
	if strings.Count(all, attachLine) != 1 || !strings.Contains(all, "\n- attachment · file `notes.txt` (2 lines)\n") {
		t.Errorf("the preview's attachment lines:\n%s", all)
	}
	if s := screen(m); strings.Contains(s, "▸ attachment") || !strings.Contains(s, "done: /home/dev/work/alpha") && !strings.Contains(s, "fakeapi: no TodoWrite tool offered") {
		t.Errorf("the preview:\n%s", s)
	}
}
