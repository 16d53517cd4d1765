package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/search"
)

// TestSearchGolden: the hits of a corpus store written by 2.1.330, as a
// terminal shows them (highlighted, grouped by session), as a pipe gets
// them (one line each) and as --json gives them.
func TestSearchGolden(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	root, err := filepath.Abs("../../testdata/corpus/2.1.330/.claude")
	if err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "search", "--root", root, "--color", "always", "--heading", "the")
	if code != exitOK {
		t.Errorf("search the: status %d", code)
	}
	if !strings.Contains(out, hlOn+"the"+hlOff) {
		t.Error("--color always: no highlighted match")
	}
	golden(t, "search-2.1.330.txt", out)

	out, code = cli(t, "search", "--root", root, "--color", "never", "-i", "--regex", `\bREPLY \d+ to: (hello|resumed)`)
	if code != exitOK {
		t.Errorf("search --regex: status %d", code)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("--color never: escapes in the output")
	}
	golden(t, "search-2.1.330-regex.txt", out)

	out, code = cli(t, "search", "--root", root, "--json", "--role", "tool", "sub")
	if code != exitOK {
		t.Errorf("search --json: status %d", code)
	}
	var doc struct {
		Root  string           `json:"root"`
		Hits  []map[string]any `json:"hits"`
		Files int              `json:"files_searched"`
		Count int              `json:"hit_count"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json: not one document: %v", err)
	}
	if doc.Root != root || len(doc.Hits) != doc.Count || doc.Count == 0 || doc.Files == 0 {
		t.Errorf("--json: root %q, %d hits, hit_count %d, files %d", doc.Root, len(doc.Hits), doc.Count, doc.Files)
	}
	golden(t, "search-2.1.330.json", strings.ReplaceAll(out, root, "$ROOT"))
}

// TestFormatHitVisible: a tool's name, the member of its input, the role,
// the agent and the session id, all read from the store, are written
// visible as the snippet is: no escape reaches the terminal.
func TestFormatHitVisible(t *testing.T) {
	esc := "\x1b]0;title\a\x1b[2J"
	h := &search.Hit{Source: search.SourceSubagent, Session: "ses" + esc, Agent: "a" + esc, Role: "tool" + esc,
		Tool: "Bash" + esc, Kind: search.KindToolInput, Field: "command" + esc, Match: "needle"}
	a := catalog.About{Short: h.Session, ProjectPath: "/w" + esc, Title: "title" + esc}
	out := formatHit(h, a, false)
	if strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("formatHit: control characters in %q", out)
	}
	if head := headingLine(a, false, 0); strings.ContainsAny(head, "\x1b\a") || !strings.Contains(head, `/w\x1b]0;title`) {
		t.Errorf("headingLine: %q", head)
	}
	if !strings.Contains(out, `Bash\x1b]0;title\x07\x1b[2J`) || !strings.Contains(out, `[subagent a\x1b`) || !strings.Contains(out, `input command\x1b`) {
		t.Errorf("formatHit: %q", out)
	}
}
