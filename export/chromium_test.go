package export

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/chromium"
	"github.com/cfix-dev/cfix/show"
)

// TestHTMLInChromium renders the HTML export of a corpus session (one with
// a subagent, a compaction, thinking and tool calls) in headless Chromium
// and checks that the page it loaded holds the conversation, and that the
// file names no resource to fetch.
func TestHTMLInChromium(t *testing.T) {
	browser := chromium.New(t, "the HTML export")
	root, err := filepath.Abs("../testdata/corpus/2.1.88/.claude")
	if err != nil {
		t.Fatal(err)
	}
	fam, err := show.Resolve(root, "3ba86ea1-3a44-408b-917b-a10e19d813f0")
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := Write(&page, fam, Options{Format: "html"}); err != nil {
		t.Fatal(err)
	}
	// Nothing to fetch: no src, no link, no url() and no absolute URL in
	// an attribute; the Content-Security-Policy forbids it besides.
	for _, re := range []string{`(?i)\ssrc=`, `(?i)<link\b`, `(?i)url\(`, `(?i)(href|action)="?https?:`, `(?i)<script\b`} {
		if loc := regexp.MustCompile(re).FindIndex(page.Bytes()); loc != nil {
			t.Errorf("the export names a resource (%s): %q", re, page.Bytes()[loc[0]:min(loc[1]+40, page.Len())])
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "session.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	dom := browser.DOM(file)
	for _, want := range []string{
		`<section class="msg user">`,
		`hello, first session`,
		`<details class="thinking">`,
		`<details class="tool agent">`,
		`Subagent conversation`,
		`inspect the tree BASH: ls /home/dev/work`,
		`<div class="compaction">Conversation compacted (manual, 15 tokens before)`,
		`<div class="text">/compact</div>`,
		`&lt;local-command-caveat&gt;`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page Chromium loaded lacks %q", want)
		}
	}
	// The file's own <details> balance, and the browser's parse of it keeps
	// each one (a serialized DOM always balances; one the parser dropped
	// or split shows in the count).
	raw := page.String()
	if n, m := strings.Count(raw, "<details"), strings.Count(raw, "</details>"); n != m || n < 8 {
		t.Errorf("the file holds %d <details> and %d </details>", n, m)
	}
	if n, m := strings.Count(dom, "<details"), strings.Count(raw, "<details"); n != m {
		t.Errorf("the page Chromium loaded holds %d <details>, the file %d", n, m)
	}
	browser.Screenshot(file, shot, "1280,2000")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("no screenshot of the page: %v", err)
	}

	// A session with attachments (2.1.332's), as a line each and all of
	// them folded: the page keeps the lines, and the folds balance.
	root332, _ := filepath.Abs("../testdata/corpus/2.1.332/.claude")
	fam, err = show.Resolve(root332, "bc1c66c0")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{AttachSummary, AttachAll} {
		page.Reset()
		if err := Write(&page, fam, Options{Format: "html", Attachments: mode}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := browser.DOM(file)
		want := `<div class="attach">attachment · file <code>notes.txt</code> (2 lines)</div>`
		if mode == AttachAll {
			want = `<details class="note attach"><summary>attachment · prompt snapshot: the system prompt and 11 tool schemas sent</summary>`
		}
		if !strings.Contains(dom, want) || !strings.Contains(dom, "done: /home/dev/work/alpha") {
			t.Errorf("attachments %s: the page Chromium loaded lacks %q or the reply", mode, want)
		}
		if n, m := strings.Count(dom, "<details"), strings.Count(page.String(), "<details"); n != m {
			t.Errorf("attachments %s: the page Chromium loaded holds %d <details>, the file %d", mode, n, m)
		}
	}
}
