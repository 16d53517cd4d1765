package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/show"
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
		{"~~~~\n```\n</details>\n~~~~\n<x>", "````\n```\n</details>\n````\n&lt;x>"},
		{"- item\n\n  ```sh\n  a <b>\n  ```", "- item\n\n```sh\na <b>\n```"},
		{"text\n\n    indented <code>\nback <here>", "text\n\n    indented &lt;code>\nback &lt;here>"},
		{"\\`<b>`", "\\`&lt;b>`"},
		{"a\r\nb <c>", "a\nb &lt;c>"},
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

// cmarkGFM is GitHub's Markdown renderer; the Markdown export is read back
// through it.
const cmarkGFM = "/usr/bin/cmark-gfm"

// hostile are message texts that try to leave the export's Markdown: HTML
// in a list item's or a block quote's code, an escaped backtick, fences
// that a container ends, carriage returns.
var hostile = []string{
	"- a\n\n    </details><x-evil>",
	"- b\n\n  ```\n</details>\n<x-evil>",
	"\\`<x-evil>`",
	"1. step\n   ```\n   code\n      ```\n   </details><x-evil>\n   ```",
	"> ```\n</details><x-evil>",
	"* x\n  ~~~\n</details>\n<x-evil>\n~~~",
	"text\r```\r</details><x-evil>",
	"~~~ a`b\n</details><x-evil>\n~~~",
	"<!-- </details> --><x-evil>",
	"`` ` ``<x-evil>",
	"10. a\n\n    ```\n</details><x-evil>",
}

// TestMarkdownInCmarkGFM renders the Markdown export of messages, thinking
// and tool output holding hostile text with GitHub's renderer (raw HTML
// let through, as GitHub's sanitizer lets <details> through) and checks
// that no tag of the text is taken as HTML and that every <details> the
// export opens closes where the export closes it.
func TestMarkdownInCmarkGFM(t *testing.T) {
	if _, err := os.Stat(cmarkGFM); err != nil {
		t.Fatalf("%s: %v: the Markdown export is read back with GitHub's renderer; install it (as root: apt-get install -y cmark-gfm)", cmarkGFM, err)
	}
	var recs []map[string]any
	parent := any(nil)
	add := func(typ string, content any) {
		u := fmt.Sprintf("u%02d", len(recs)+1)
		m := map[string]any{"role": typ, "content": content}
		if typ == "assistant" {
			m["id"], m["model"] = "m"+u, "claude-test"
		}
		recs = append(recs, map[string]any{"type": typ, "uuid": u, "parentUuid": parent, "sessionId": "55555555-5555-4555-8555-555555555555",
			"timestamp": fmt.Sprintf("2026-01-01T00:%02d:00Z", len(recs)), "version": "2.1.88", "cwd": "/w", "message": m})
		parent = u
	}
	for i, h := range hostile {
		add("user", h)
		id := fmt.Sprintf("t%d", i)
		add("assistant", []any{
			map[string]any{"type": "thinking", "thinking": h},
			map[string]any{"type": "text", "text": h},
			map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": h}},
		})
		add("user", []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": h}})
	}
	// Line breaks in what a <summary> holds: a tool's name, its summary.
	add("assistant", []any{map[string]any{"type": "tool_use", "id": "tn", "name": "Bash\r\n\r\n</summary>", "input": map[string]any{"description": "a\r\r<x-evil>b"}}})
	var file bytes.Buffer
	for _, r := range recs {
		b, _ := json.Marshal(r)
		file.Write(b)
		file.WriteByte('\n')
	}
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "55555555-5555-4555-8555-555555555555.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Write(&md, fam, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cmarkGFM, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
	cmd.Stdin = &md
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	if strings.Contains(page, "<x-evil") {
		t.Errorf("a tag of the text is HTML in the rendered page:\n%s", page)
	}
	// The export's own <details> and </details> nest, and are as many
	// as the export wrote: each call, each thinking block.
	depth, opened := 0, 0
	for _, m := range regexp.MustCompile(`</?details[ >]`).FindAllString(page, -1) {
		if strings.HasPrefix(m, "</") {
			depth--
		} else {
			depth++
			opened++
		}
		if depth < 0 {
			t.Fatalf("a </details> closes what the export did not open:\n%s", page)
		}
	}
	if depth != 0 || opened != 2*len(hostile)+1 {
		t.Errorf("%d <details> rendered, %d left open; want %d, all closed:\n%s", opened, depth, 2*len(hostile)+1, page)
	}
	if n := len(regexp.MustCompile(`<summary>[^\n]*</summary>\n`).FindAllString(page, -1)); n != opened {
		t.Errorf("%d of %d <summary> elements are whole on their line:\n%s", n, opened, page)
	}
}
