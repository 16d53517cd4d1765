package export

import (
	"strings"
	"testing"
)

// TestMDText: nothing in a message's text breaks the document around it.
func TestMDText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain *markdown* stays", "plain *markdown* stays"},
		{"</details> and <script>x</script>", "&lt;/details> and &lt;script>x&lt;/script>"},
		{"a `<b>` code span keeps its text", "a `<b>` code span keeps its text"},
		{"``x ` <y>`` too", "``x ` <y>`` too"},
		{"an unmatched ` <z>", "an unmatched ` &lt;z>"},
		{"```go\nif a < b {}\n```\nafter <i>", "```go\nif a < b {}\n```\nafter &lt;i>"},
		{"a fence left open\n```\n</details>", "a fence left open\n```\n</details>\n```"},
		{"~~~~\n```\n</details>\n~~~~\n<x>", "~~~~\n```\n</details>\n~~~~\n&lt;x>"},
		{"text\n\n    indented <code>\nback <here>", "text\n\n    indented <code>\nback &lt;here>"},
		{"AT&T", "AT&amp;T"},
	} {
		if got := mdText(c.in); got != c.want {
			t.Errorf("mdText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFenced: a fence longer than any backtick run inside.
func TestFenced(t *testing.T) {
	got := fenced("a ```` b", "")
	if !strings.HasPrefix(got, "`````\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fenced = %q", got)
	}
}
