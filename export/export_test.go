package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// TestJSONLIsTheChain: on every main transcript of the corpus and wild
// stores, --format jsonl writes records of the file byte for byte, in the
// order of the history behind its compactions and then the chain
// validate.LoadedChain models a resume to load; Markdown and HTML of the
// same are written without error and balance their <details>.
func TestJSONLIsTheChain(t *testing.T) {
	n := 0
	eachMainTranscript(t, func(root string, f store.File, fam *show.Family) {
		n++
		var out bytes.Buffer
		if err := Write(&out, fam, Options{Format: "jsonl"}); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		want := chainOf(t, f.Path)
		raw, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			got = nil
		}
		// The file's lines, to find a record that is one without a search
		// of the whole file for each (a record glued to another on its
		// line is still searched for).
		lines := map[string]bool{}
		for _, l := range bytes.Split(raw, []byte("\n")) {
			lines[string(l)] = true
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d records written, the chain has %d", f.Path, len(got), len(want))
			return
		}
		for i, line := range got {
			var v struct {
				UUID string `json:"uuid"`
			}
			if json.Unmarshal([]byte(line), &v) != nil || v.UUID != want[i] {
				t.Errorf("%s: record %d is %.80s, want the entry %s", f.Path, i+1, line, want[i])
				break
			}
			if !lines[line] && !bytes.Contains(raw, []byte(line)) {
				t.Errorf("%s: record %d is not a record of the file as written", f.Path, i+1)
				break
			}
		}
		for _, format := range []string{"md", "html"} {
			out.Reset()
			if err := Write(&out, fam, Options{Format: format}); err != nil {
				t.Fatalf("%s: %s: %v", f.Path, format, err)
			}
			s := out.String()
			if a, b := strings.Count(s, "<details"), strings.Count(s, "</details>"); a != b {
				t.Errorf("%s: %s: %d <details> and %d </details>", f.Path, format, a, b)
			}
		}
	})
	if n < 100 {
		t.Fatalf("only %d transcripts found", n)
	}
}

// chainOf returns the uuids a resume loads, after those behind its
// compactions, as validate and show model them.
func chainOf(t *testing.T, path string) []string {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	c := validate.NewChainReader()
	rd := session.NewReader(fh, nil)
	for rd.Next() {
		c.Line(rd.Line())
	}
	loaded, ld := c.Load(false)
	var out []string
	for _, i := range show.Compacted(c.Graph, ld.Chain) {
		out = append(out, c.Graph.Nodes[i].UUID)
	}
	if lc, err := validate.LoadedChain(path); err != nil || len(lc.UUIDs) != len(loaded.UUIDs) {
		t.Fatalf("%s: LoadedChain disagrees with ChainReader: %v", path, err)
	}
	return append(out, loaded.UUIDs...)
}

// TestNULBytes: a line holding NUL bytes, which the chain reader reads
// with them taken out as validate does, is exported like any other, and
// records glued on such a line are written one each.
func TestNULBytes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := func(uuid, parent, typ, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"44444444-4444-4444-8444-444444444444","timestamp":"2026-01-01T00:00:0` + uuid[1:] + `Z","version":"2.1.88","cwd":"/w","message":{"role":"` + typ + `","id":"m` + uuid + `","content":"` + text + `"}}`
	}
	lines := rec("u1", "", "user", "hello \x00 NUL") + "\n" +
		rec("u2", "u1", "assistant", "reply \x00") + rec("u3", "u2", "user", "glued after a NUL") + "\n"
	path := filepath.Join(dir, "44444444-4444-4444-8444-444444444444.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"md", "html"} {
		var out bytes.Buffer
		if err := Write(&out, fam, Options{Format: format}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.Contains(out.String(), "glued after a NUL") {
			t.Errorf("%s: the glued record is not written:\n%s", format, out.String())
		}
	}
	var out bytes.Buffer
	if err := Write(&out, fam, Options{Format: "jsonl"}); err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var v struct {
			UUID string `json:"uuid"`
		}
		if err := json.Unmarshal(bytes.ReplaceAll([]byte(line), []byte{0}, nil), &v); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		uuids = append(uuids, v.UUID)
	}
	if got := strings.Join(uuids, " "); got != "u1 u2 u3" {
		t.Errorf("jsonl records %s, want u1 u2 u3", got)
	}
}

// TestLinesNotJSON: lines that hold no JSON are never skipped unsaid: an
// export of a chain names them in its header, one of a file with no chain
// (a transcript export) shows them where they are instead of failing.
func TestLinesNotJSON(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"projects/-w", "transcripts"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	session := filepath.Join(root, "projects/-w/66666666-6666-4666-8666-666666666666.jsonl")
	data := `{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:01Z","version":"2.1.88","message":{"role":"user","content":"first"}}
{"type":"assistant","uuid":"u2","parentUuid":"u1","message":{"content":"torn
not json at all
{"type":"user","uuid":"u3","parentUuid":"u1","timestamp":"2026-01-01T00:00:03Z","version":"2.1.88","message":{"role":"user","content":"second"}}
`
	loose := filepath.Join(root, "transcripts/ses_x.jsonl")
	ldata := `{"type":"user","content":"hi","timestamp":"2026-01-01T00:00:00Z"}
{"type":"assistant","content":"torn <x>
{"type":"user","content":"bye"}
`
	os.WriteFile(session, []byte(data), 0o644)
	os.WriteFile(loose, []byte(ldata), 0o644)
	for _, c := range []struct{ path, want, also string }{
		{session, "2 lines hold no JSON and are left out (lines 2, 3).", "second"},
		{loose, "Line 2 holds no JSON and is shown as it is.", "bye"},
	} {
		fam, err := show.Resolve(root, c.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"md", "html"} {
			var out bytes.Buffer
			if err := Write(&out, fam, Options{Format: format}); err != nil {
				t.Fatalf("%s: %s: %v", c.path, format, err)
			}
			if s := out.String(); !strings.Contains(s, c.want) || !strings.Contains(s, c.also) {
				t.Errorf("%s: %s: want %q and %q in:\n%s", c.path, format, c.want, c.also, s)
			}
		}
	}
	fam, _ := show.Resolve(root, loose)
	var out bytes.Buffer
	Write(&out, fam, Options{Format: "html"})
	if !strings.Contains(out.String(), "torn &lt;x&gt;") {
		t.Errorf("the torn line is not shown:\n%s", out.String())
	}
}

// TestInlineSubagents: in a transcript that holds its subagents inline
// (1.0.x, 2.0.x), two calls with the same prompt each get their own
// conversation, in order, and --branches writes the inline entries no call
// started too.
func TestInlineSubagents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	os.MkdirAll(dir, 0o755)
	n := 0
	rec := func(uuid, parent, typ string, side bool, content string) string {
		n++
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		msg := `{"role":"` + typ + `","content":` + content + `}`
		if typ == "assistant" {
			msg = `{"id":"m` + uuid + `","role":"assistant","model":"claude-test","content":` + content + `}`
		}
		return fmt.Sprintf(`{"type":"%s","uuid":"%s","parentUuid":%s,"isSidechain":%v,"sessionId":"77777777-7777-4777-8777-777777777777","timestamp":"2026-01-01T00:00:%02dZ","version":"1.0.128","cwd":"/w","message":%s}`, typ, uuid, p, side, n, msg)
	}
	task := func(id string) string {
		return `[{"type":"tool_use","id":"` + id + `","name":"Task","input":{"description":"look","prompt":"the same prompt"}}]`
	}
	result := func(id, text string) string {
		return `[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + text + `"}]`
	}
	lines := []string{
		rec("a1", "", "user", false, `"start"`),
		rec("a2", "a1", "assistant", false, task("t1")),
		rec("s1", "", "user", true, `"the same prompt"`),
		rec("s2", "s1", "assistant", true, `[{"type":"text","text":"first answer"}]`),
		rec("a3", "a2", "user", false, result("t1", "done one")),
		rec("a4", "a3", "assistant", false, task("t2")),
		rec("s3", "", "user", true, `"the same prompt"`),
		rec("s4", "s3", "assistant", true, `[{"type":"text","text":"second answer"}]`),
		rec("a5", "a4", "user", false, result("t2", "done two")),
		rec("s5", "", "user", true, `"a prompt no call gave"`),
		rec("s6", "s5", "assistant", true, `[{"type":"text","text":"stray answer"}]`),
		rec("a6", "a5", "assistant", false, `[{"type":"text","text":"the end"}]`),
	}
	path := filepath.Join(dir, "77777777-7777-4777-8777-777777777777.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	// A subagent transcript no call names (2.0.x's warmup runs).
	os.WriteFile(filepath.Join(dir, "agent-a1b2c3d.jsonl"), []byte(rec("w1", "", "user", true, `"Warmup"`)+"\n"), 0o644)
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, fam, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Count(s, "**Subagent conversation**") != 2 {
		t.Errorf("want 2 subagent conversations:\n%s", s)
	}
	// Each call: its result, then the conversation it started.
	at := []int{strings.Index(s, "done one"), strings.Index(s, "first answer"), strings.Index(s, "done two"), strings.Index(s, "second answer")}
	if at[0] < 0 || at[0] > at[1] || at[1] > at[2] || at[2] > at[3] {
		t.Errorf("each call's conversation under it, in order:\n%s", s)
	}
	if strings.Contains(s, "stray answer") {
		t.Errorf("the chain a resume loads holds no stray subagent:\n%s", s)
	}
	out.Reset()
	if err := Write(&out, fam, Options{Format: "md", Branches: true}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "2 inline subagent entries that no call on the transcript started") || !strings.Contains(s, "stray answer") {
		t.Errorf("--branches leaves out the stray subagent:\n%s", s)
	}
	if s := out.String(); !strings.Contains(s, "agent-a1b2c3d.jsonl, which no call on the transcript started") || !strings.Contains(s, "Warmup") {
		t.Errorf("--branches leaves out the subagent transcript no call names:\n%s", s)
	}
}

// TestHeaderOneEntry: a chain of one entry is "1 entry".
func TestHeaderOneEntry(t *testing.T) {
	x := &exporter{fam: &show.Family{Session: "s"}}
	for _, o := range []Options{{}, {Branches: true}} {
		x.opts = o
		for _, agent := range []bool{false, true} {
			h := x.header(&transcript{loaded: 1, agent: agent})
			if !strings.Contains(h.What, "1 entry") || strings.Contains(h.What, "1 entries") {
				t.Errorf("%q", h.What)
			}
		}
	}
}

// eachMainTranscript calls fn with every main transcript that is not
// empty of the corpus and wild stores in testdata, and its family.
func eachMainTranscript(t *testing.T, fn func(root string, f store.File, fam *show.Family)) {
	t.Helper()
	stores, _ := filepath.Glob("../testdata/corpus/*/.claude")
	wild, _ := filepath.Glob("../testdata/wild/*/.claude")
	for _, root := range append(stores, wild...) {
		root, _ = filepath.Abs(root)
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if f.Kind != store.KindSession || f.Size == 0 {
				continue
			}
			fam, err := show.Resolve(root, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			fn(root, f, fam)
		}
	}
}

// TestModelOncePerPrompt: a reply's heading names its model after a
// prompt, and again only when the model changes.
func TestModelOncePerPrompt(t *testing.T) {
	var lines []string
	parent := any(nil)
	add := func(typ, model, id string, content any) {
		u := fmt.Sprintf("u%02d", len(lines)+1)
		m := map[string]any{"role": typ, "content": content}
		if typ == "assistant" {
			m["model"], m["id"] = model, id
		}
		b, _ := json.Marshal(map[string]any{"type": typ, "uuid": u, "parentUuid": parent, "sessionId": "55555555-5555-4555-8555-555555555555",
			"timestamp": fmt.Sprintf("2026-01-01T00:%02d:00Z", len(lines)), "version": "2.1.88", "cwd": "/w", "message": m})
		lines = append(lines, string(b))
		parent = u
	}
	add("user", "", "", "first")
	add("assistant", "model-a", "m1", []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": "ls"}}})
	add("user", "", "", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "a.go"}})
	add("assistant", "model-a", "m2", []any{map[string]any{"type": "text", "text": "one"}})
	add("assistant", "model-b", "m3", []any{map[string]any{"type": "text", "text": "two"}})
	add("user", "", "", "second")
	add("assistant", "model-b", "m4", []any{map[string]any{"type": "text", "text": "three"}})
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
	var b bytes.Buffer
	if err := Write(&b, fam, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`(?m)^#### .*$`).FindAllString(b.String(), -1)
	want := []string{"#### User · 2026-01-01 00:00:00", "#### Assistant · model-a · 2026-01-01 00:01:00", "#### Assistant · 2026-01-01 00:03:00",
		"#### Assistant · model-b · 2026-01-01 00:04:00", "#### User · 2026-01-01 00:05:00", "#### Assistant · model-b · 2026-01-01 00:06:00"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("headings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
