package export

import (
	"bufio"
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
	"github.com/cfix-dev/cfix/store"
)

// describeCases are attachments of every kind, their lines, and whether
// they are left out by default.
var describeCases = []struct {
	in, line string
	quiet    bool
}{
	{`{"type":"file","filename":"/w/src/x.go","displayPath":"src/x.go","content":{"type":"text","file":{"filePath":"/w/src/x.go","content":"a\nb\n","numLines":120,"startLine":1,"totalLines":120}}}`,
		"attachment · file src/x.go (120 lines)", false},
	{`{"type":"file","filename":"/w/big.go","content":{"type":"text","file":{"content":"x","numLines":2000,"startLine":1,"totalLines":5000}}}`,
		"attachment · file /w/big.go (lines 1 to 2000 of 5000)", false},
	{`{"type":"file","filename":"/w/a.png","content":{"type":"image","file":{}}}`, "attachment · file /w/a.png (image)", false},
	{`{"type":"compact_file_reference","filename":"/w/a.go","displayPath":"a.go"}`, "attachment · file a.go (read before the compaction, named only)", false},
	{`{"type":"directory","path":"/w/src","content":"a.go\nb.go\n"}`, "attachment · directory /w/src (2 entries)", false},
	{`{"type":"edited_text_file","filename":"/w/a.go","snippet":"1 x\n2 y"}`, "attachment · file changed /w/a.go (2 lines of it)", false},
	{`{"type":"selected_lines_in_ide","filename":"/w/a.go","lineStart":3,"lineEnd":9,"content":"x"}`, "attachment · lines selected in the IDE /w/a.go (lines 3 to 9)", false},
	{`{"type":"nested_memory","path":"/w/sub/CLAUDE.md","displayPath":"sub/CLAUDE.md","content":{"path":"/w/sub/CLAUDE.md","type":"Project","content":"one\ntwo\nthree"}}`,
		"attachment · memory sub/CLAUDE.md (3 lines)", false},
	{`{"type":"diagnostics","files":[{"uri":"file:///w/a.go","diagnostics":[{},{}]},{"uri":"file:///w/b.go","diagnostics":[{}]}]}`, "attachment · diagnostics: 3 in 2 files", false},
	{`{"type":"diagnostics","files":[{"uri":"file:///w/a.go","diagnostics":[{}]}]}`, "attachment · diagnostics: 1 in /w/a.go", false},
	{`{"type":"diagnostics","files":[]}`, "attachment · diagnostics: 0 in 0 files", true},
	{`{"type":"todo_reminder","content":[{"content":"a","status":"completed"},{"content":"b","status":"pending"},{"content":"c","status":"pending"},{"content":"d","status":"in_progress"}],"itemCount":4}`,
		"attachment · todo list (4 items, 1 done)", false},
	{`{"type":"task_reminder","content":[],"itemCount":0}`, "attachment · task list (0 items)", true},
	{`{"type":"hook_success","hookName":"SessionStart:resume","hookEvent":"SessionStart","content":"","stdout":"cfix guard: this session resumes cleanly\nmore","stderr":"","exitCode":0}`,
		"attachment · hook output (SessionStart:resume): cfix guard: this session resumes cleanly…", false},
	{`{"type":"hook_success","hookName":"Stop","hookEvent":"Stop","content":"","stdout":"","exitCode":0}`, "attachment · hook ran (Stop)", true},
	{`{"type":"hook_additional_context","content":["be brief"],"hookName":"SessionStart","hookEvent":"SessionStart"}`, "attachment · hook context (SessionStart): be brief", false},
	{`{"type":"hook_system_message","content":"lint passed","hookName":"PostToolUse:Bash","hookEvent":"PostToolUse"}`, "attachment · hook message (PostToolUse:Bash): lint passed", false},
	{`{"type":"hook_non_blocking_error","hookName":"Stop","stderr":"exit 2: no"}`, "attachment · hook error (Stop): exit 2: no", false},
	{`{"type":"queued_command","prompt":"and then the tests","commandMode":"prompt"}`, "attachment · prompt queued while Claude worked: and then the tests", false},
	{`{"type":"queued_command","prompt":[{"type":"text","text":"look at this"},{"type":"image"}]}`, "attachment · prompt queued while Claude worked: look at this", false},
	{`{"type":"invoked_skills","skills":[{"name":"pdf","path":"/s","content":"x"},{"name":"xlsx"}]}`, "attachment · skills invoked: pdf, xlsx", false},
	{`{"type":"plan_file_reference","planFilePath":"/h/.claude/plans/p.md","planContent":"# plan\n1. a\n"}`, "attachment · plan /h/.claude/plans/p.md (2 lines)", false},
	{`{"type":"plan_mode_exit","planFilePath":"/p.md","planExists":true}`, "attachment · plan mode ended /p.md", false},
	{`{"type":"mcp_resource","server":"docs","uri":"docs://a","content":{}}`, "attachment · MCP resource docs://a (server docs)", false},
	{`{"type":"prompt_snapshot","systemPrompt":["You are"],"tools":[{},{},{}]}`, "attachment · prompt snapshot: the system prompt and 3 tool schemas sent", true},
	{`{"type":"skill_listing","content":"- a: x\n- b: y","skillCount":36,"isInitial":true}`, "attachment · skill listing (36 skills)", true},
	{`{"type":"deferred_tools_delta","addedNames":["A","B"],"addedLines":["A","B"],"removedNames":["C"]}`, "attachment · deferred tools (2 added, 1 removed)", true},
	{`{"type":"agent_listing_delta","addedTypes":["x"],"addedLines":["- x"],"removedTypes":[]}`, "attachment · agent listing (1 added)", true},
	{`{"type":"mcp_instructions_delta","addedNames":[],"addedBlocks":[],"removedNames":["s"]}`, "attachment · MCP server instructions (0 added, 1 removed)", true},
	{`{"type":"environment","snapshot":{"workingDirectory":"/w","platform":"linux","shell":"bash"}}`, "attachment · environment (linux, bash, /w)", true},
	{`{"type":"model","identity":{"modelId":"claude-opus-5-5"},"text":"You are"}`, "attachment · model claude-opus-5-5", true},
	{`{"type":"date","date":"2026-11-21"}`, "attachment · date 2026-11-21", true},
	{`{"type":"total_tokens_reminder","text":"x"}`, "attachment · token usage reminder", true},
	{`{"type":"remote_session_change","commit":"Co-Authored-By: x"}`, "attachment · commit and pull request attribution", true},
	{`{"type":"command_permissions","allowedTools":["Bash"]}`, "attachment · tools the command allows (1)", true},
	// Kinds cfix does not know: the type, and what it names.
	{`{"type":"brand_new_thing","filename":"/w/n.txt","x":1}`, "attachment · brand new thing /w/n.txt", false},
	{`{"type":"other_thing"}`, "attachment · other thing", false},
	{`{"filename":"/w/a"}`, "attachment · of no type /w/a", false},
	{`null`, "attachment · that is not an object", false},
	{`"a string"`, "attachment · that is not an object", false},
	{``, "attachment · that is not an object", false},
	// What comes from the file stays on one line.
	{`{"type":"hook_additional_context","content":["\u001b[31mred\r\nnext"],"hookName":"Start\nx"}`, "attachment · hook context (Start x): [31mred…", false},
	{`{"type":"file","filename":"/w/a\nb.go"}`, "attachment · file /w/a b.go", false},
}

// TestDescribe: the line of each kind of attachment, and the kinds left
// out by default.
func TestDescribe(t *testing.T) {
	for _, c := range describeCases {
		a := Describe(json.RawMessage(c.in))
		if a.Line() != c.line || a.Quiet != c.quiet {
			t.Errorf("%s:\n got %q (quiet %v)\nwant %q (quiet %v)", c.in, a.Line(), a.Quiet, c.line, c.quiet)
		}
	}
}

// TestDescribeEveryStore: every attachment of the corpus and wild stores
// is of a kind Describe knows, and its line is one line.
func TestDescribeEveryStore(t *testing.T) {
	stores, _ := filepath.Glob("../testdata/corpus/*/.claude")
	wild, _ := filepath.Glob("../testdata/wild/*/.claude")
	types := map[string]int{}
	for _, root := range append(stores, wild...) {
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if !strings.HasSuffix(f.Path, ".jsonl") {
				continue
			}
			fh, err := os.Open(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 64<<20)
			for n := 1; sc.Scan(); n++ {
				if !bytes.Contains(sc.Bytes(), []byte(`"attachment"`)) {
					continue
				}
				var e struct {
					Type       string          `json:"type"`
					Attachment json.RawMessage `json:"attachment"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "attachment" {
					continue
				}
				a := Describe(e.Attachment)
				types[a.Type]++
				if _, known := describers[a.Type]; !known {
					t.Errorf("%s:%d: attachment type %q has no describer: %s", f.Path, n, a.Type, a.Line())
				}
				if l := a.Line(); strings.ContainsAny(l, "\r\n") || len([]rune(l)) > 400 {
					t.Errorf("%s:%d: line %q", f.Path, n, l)
				}
			}
			fh.Close()
		}
	}
	if len(types) < 25 {
		t.Errorf("%d attachment types in the stores, want the 29 found when this was written: %v", len(types), types)
	}
}

// TestDescribeDoc: each attachment line docs/export.md shows is the
// Markdown line the export writes of one of describeCases.
func TestDescribeDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l, ok := strings.CutPrefix(strings.TrimSpace(l), "- attachment · "); ok {
			shown = append(shown, "- attachment · "+l)
		}
	}
	if len(shown) == 0 {
		t.Fatal("docs/export.md shows no attachment line")
	}
	written := map[string]bool{}
	for _, c := range describeCases {
		var b bytes.Buffer
		m := &markdown{w: bufio.NewWriter(&b)}
		m.attachment(Describe(json.RawMessage(c.in)), "", "", false)
		m.w.Flush()
		written[strings.TrimSuffix(b.String(), "\n")] = true
	}
	for _, l := range shown {
		if !written[l] {
			t.Errorf("docs/export.md shows %q, which the export of no attachment of TestDescribe writes", l)
		}
	}
}

// TestAttachmentsExport: the three ways an export shows the attachments
// of the corpus session of 2.1.332 (a @-less file after its compaction,
// and the prompt snapshots, listings and dates of every turn).
func TestAttachmentsExport(t *testing.T) {
	root, _ := filepath.Abs("../testdata/corpus/2.1.332/.claude")
	fam, err := show.Resolve(root, "bc1c66c0")
	if err != nil {
		t.Fatal(err)
	}
	write := func(format, mode string) string {
		var b bytes.Buffer
		if err := Write(&b, fam, Options{Format: format, Attachments: mode}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// The attachment entries the export writes: those of the chain and
	// of the subagent's transcript (under the Agent call).
	sub, err := os.ReadFile(filepath.Join(root, "projects/-home-dev-work-alpha/bc1c66c0-560d-4a6f-b0d4-796e1f92068c/subagents/agent-a286146d096c0ed79.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	chain := bytes.Count(sub, []byte(`"type":"attachment"`))
	for _, l := range strings.Split(strings.TrimSpace(write("jsonl", "")), "\n") {
		var e struct{ Type string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "attachment" {
			chain++
		}
	}
	sum, all, none := write("md", ""), write("md", AttachAll), write("md", AttachNone)
	if sum != write("md", AttachSummary) {
		t.Errorf("the default is not summary")
	}
	if got := regexp.MustCompile("(?m)^- attachment · .*$").FindAllString(sum, -1); len(got) != 1 || got[0] != "- attachment · file `notes.txt` (2 lines)" {
		t.Errorf("summary: attachment lines %q", got)
	}
	if strings.Contains(sum, "<summary>attachment") || strings.Contains(sum, "systemPrompt") {
		t.Errorf("summary: an attachment folded")
	}
	if n := strings.Count(all, "<details><summary>attachment · "); n != chain || chain < 20 {
		t.Errorf("all: %d attachments folded, the chain holds %d", n, chain)
	}
	for _, s := range []string{"<details><summary>attachment · prompt snapshot: the system prompt and 11 tool schemas sent</summary>", `"systemPrompt": [`,
		"<details><summary>attachment · file <code>notes.txt</code> (2 lines)</summary>", `"content": "written by the fake API\n"`} {
		if !strings.Contains(all, s) {
			t.Errorf("all lacks %q", s)
		}
	}
	if strings.Contains(none, "attachment") {
		t.Errorf("none: an attachment")
	}
	if len(sum) > 10000 || len(all) < 200000 {
		t.Errorf("summary %d bytes, all %d", len(sum), len(all))
	}
	// The same in HTML.
	hs, ha := write("html", ""), write("html", AttachAll)
	if got := regexp.MustCompile(`<div class="attach">[^\n]*</div>`).FindAllString(hs, -1); len(got) != 1 ||
		got[0] != `<div class="attach">attachment · file <code>notes.txt</code> (2 lines)</div>` {
		t.Errorf("html summary: %q", got)
	}
	if n := strings.Count(ha, `<details class="note attach"><summary>attachment · `); n != chain {
		t.Errorf("html all: %d attachments folded, want %d", n, chain)
	}
	var b bytes.Buffer
	if err := Write(&b, fam, Options{Format: "md", Attachments: "some"}); err == nil || !strings.Contains(err.Error(), "summary, all, none") {
		t.Errorf("attachments some: %v", err)
	}
}

// TestAttachmentsInCmarkGFM: attachment lines whose names and text are
// hostile render with GitHub's renderer as one list item each, in a list
// of their own, with nothing of theirs taken as HTML; all of them folded,
// the same.
func TestAttachmentsInCmarkGFM(t *testing.T) {
	if _, err := os.Stat(cmarkGFM); err != nil {
		t.Fatalf("%s: %v: install it (as root: apt-get install -y cmark-gfm)", cmarkGFM, err)
	}
	var lines []string
	parent := any(nil)
	add := func(rec map[string]any) {
		u := fmt.Sprintf("u%02d", len(lines)+1)
		rec["uuid"], rec["parentUuid"], rec["sessionId"] = u, parent, "55555555-5555-4555-8555-555555555555"
		rec["timestamp"], rec["version"], rec["cwd"] = fmt.Sprintf("2026-01-01T00:%02d:00Z", len(lines)), "2.1.332", "/w"
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b))
		parent = u
	}
	add(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "look"}})
	shown := 0
	for _, h := range hostile {
		add(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "file", "filename": h, "displayPath": h,
			"content": map[string]any{"type": "text", "file": map[string]any{"content": h, "numLines": 1}}}})
		add(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "hook_additional_context", "content": []any{h}, "hookName": h}})
		add(map[string]any{"type": "attachment", "attachment": map[string]any{"type": h, "path": h}})
		shown += 3
	}
	add(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "date", "date": "2026-01-01"}}) // quiet
	add(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "id": "m1", "model": "claude-test", "content": []any{map[string]any{"type": "text", "text": "done"}}}})
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "55555555-5555-4555-8555-555555555555.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{AttachSummary, AttachAll} {
		var md bytes.Buffer
		if err := Write(&md, fam, Options{Format: "md", Attachments: mode}); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cmarkGFM, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter")
		cmd.Stdin = bytes.NewReader(md.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		page := string(out)
		if strings.Contains(page, "<x-evil") {
			t.Errorf("%s: a tag of an attachment is HTML in the rendered page:\n%s", mode, page)
		}
		if !strings.Contains(page, "<p>done</p>") {
			t.Errorf("%s: the reply after the attachments is not a paragraph of its own:\n%s", mode, page)
		}
		switch mode {
		case AttachSummary:
			_, body, _ := strings.Cut(page, "<h3>Turn 1</h3>") // the header is a list too
			items := regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllStringSubmatch(body, -1)
			if len(items) != shown || strings.Count(body, "<ul>") != 1 {
				t.Errorf("%d list items in %d lists, want %d in 1:\n%s", len(items), strings.Count(body, "<ul>"), shown, page)
			}
			for _, it := range items {
				if !strings.HasPrefix(it[1], "attachment · ") || strings.Contains(it[1], "<p>") {
					t.Errorf("list item %q", it[1])
				}
			}
		case AttachAll:
			if n := strings.Count(page, "<details>"); n != shown+1 || strings.Count(page, "</details>") != n {
				t.Errorf("%d <details>, want %d (the date too), all closed:\n%s", n, shown+1, page)
			}
		}
	}
}
