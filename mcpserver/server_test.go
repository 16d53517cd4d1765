package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/show"
)

const alpha = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"

// connect serves a store over in-memory transports and returns the SDK's
// client connected to it; dir, when given, is the server's directory
// ("this project").
func connect(t *testing.T, root string, dir ...string) *mcp.ClientSession {
	t.Helper()
	// By default the server's directory has no project in the store.
	d := t.TempDir()
	if len(dir) > 0 {
		d = dir[0]
	}
	return connectWith(t, Options{Root: root, Dir: d})
}

// connectWith serves a store with opts over in-memory transports and
// returns the SDK's client connected to it.
func connectWith(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	opts.Version = "test"
	srv := New(opts)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool that must succeed and decodes its answer into out.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", tool, args, res.Content[0].(*mcp.TextContent).Text)
	}
	decode(t, res, out)
}

// decode decodes a tool's answer into out.
func decode(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	text := res.Content[0].(*mcp.TextContent).Text
	if o, ok := out.(*ReadOutput); ok {
		*o = parseRead(t, text) // read_session answers text
		return
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
}

// callError calls a tool that must fail with a tool error and returns its
// message.
func callError(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: a protocol error, want a tool error: %v", tool, args, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError {
		t.Fatalf("%s %v: no error: %s", tool, args, text)
	}
	return text
}

func TestTools(t *testing.T) {
	cs := connect(t, damage.CopyStore(t, "2.1.332"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s: want a description, an input schema and the read-only hint", tl.Name)
		}
	}
	if got := strings.Join(names, " "); got != "list_sessions read_session search_sessions session_health" {
		t.Errorf("tools %s", got)
	}
}

func TestSearchSessions(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	cs := connect(t, root)
	var out SearchOutput
	call(t, cs, "search_sessions", map[string]any{"query": "hello", "project": "all"}, &out)
	if len(out.Hits) < 3 {
		t.Fatalf("hits %+v", out)
	}
	// Metadata first: the session titled "hello, ..." before the content.
	h := out.Hits[0]
	if h.Session != alpha || h.Match != "title" || h.Project != "/home/dev/work/alpha" || !strings.Contains(h.Snippet, "hello") || h.Time == "" {
		t.Errorf("first hit %+v: want the title of %s", h, alpha)
	}
	content := false
	for _, h := range out.Hits[1:] {
		if h.Match == "title" || h.Match == "first prompt" {
			if content {
				t.Errorf("a metadata hit after a content hit: %+v", h)
			}
			continue
		}
		content = true
		if h.Session == "" && h.Match != "prompt history" || h.Role == "" || !strings.Contains(strings.ToLower(h.Snippet), "hello") {
			t.Errorf("content hit %+v", h)
		}
	}
	if !content {
		t.Errorf("no content hit: %+v", out.Hits)
	}

	// The server's directory is "this project" by default.
	cs2 := connect(t, root, "/home/dev/work/delta")
	call(t, cs2, "search_sessions", map[string]any{"query": "echo"}, &out)
	if out.Scope != "project /home/dev/work/delta" || len(out.Hits) == 0 {
		t.Fatalf("search in the client's project: %+v", out)
	}
	for _, h := range out.Hits {
		if h.Project != "/home/dev/work/delta" {
			t.Errorf("hit of another project: %+v", h)
		}
	}
	// A client whose directory has no sessions searches every project.
	call(t, cs, "search_sessions", map[string]any{"query": "echo"}, &out)
	if !strings.HasPrefix(out.Scope, "every project") {
		t.Errorf("scope %q", out.Scope)
	}

	// Role, tool and regex narrow it.
	call(t, cs, "search_sessions", map[string]any{"query": "echo (one|two)", "regex": true, "tool": "Bash", "project": "all"}, &out)
	if len(out.Hits) == 0 {
		t.Fatal("no regex hit")
	}
	for _, h := range out.Hits {
		if h.Tool != "Bash" || h.Role != "tool" {
			t.Errorf("hit %+v: want Bash's", h)
		}
	}

	// The budget: the answer fits max_chars and says it cut.
	call(t, cs, "search_sessions", map[string]any{"query": "e", "project": "all", "max_chars": 1000, "limit": 200}, &out)
	b, _ := json.Marshal(out.Hits)
	if len(b) > 1000+len(out.Hits)+2 || out.Cut == "" || !strings.Contains(out.Cut, "max_chars") {
		t.Errorf("budget 1000: %d bytes of hits, cut %q", len(b), out.Cut)
	}
	call(t, cs, "search_sessions", map[string]any{"query": "e", "project": "all", "limit": 3}, &out)
	if len(out.Hits) != 3 || !strings.Contains(out.Cut, "limit") {
		t.Errorf("limit 3: %d hits, cut %q", len(out.Hits), out.Cut)
	}

	call(t, cs, "search_sessions", map[string]any{"query": "no such words anywhere", "project": "all"}, &out)
	if len(out.Hits) != 0 || out.Note == "" {
		t.Errorf("no hits: %+v", out)
	}
}

func TestListSessions(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	cs := connect(t, root)
	var out ListOutput
	call(t, cs, "list_sessions", map[string]any{"project": "all"}, &out)
	if out.Total != 5 || len(out.Sessions) != 5 {
		t.Fatalf("sessions %+v", out)
	}
	for i, s := range out.Sessions {
		if s.Session == "" || s.Title == "" || !strings.HasPrefix(s.Project, "/home/dev/work/") || s.LastActive == "" || s.Health != "ok" {
			t.Errorf("row %+v", s)
		}
		if i > 0 && s.LastActive > out.Sessions[i-1].LastActive {
			t.Errorf("not newest first: %s after %s", s.LastActive, out.Sessions[i-1].LastActive)
		}
	}
	call(t, connect(t, root, "/home/dev/work/delta"), "list_sessions", nil, &out)
	if out.Total != 2 || out.Scope != "project /home/dev/work/delta" {
		t.Errorf("the client's project: %+v", out)
	}
	call(t, cs, "list_sessions", map[string]any{"project": "/home/dev/work/alpha"}, &out)
	if out.Total != 1 || out.Sessions[0].Session != alpha {
		t.Errorf("project alpha: %+v", out)
	}
	call(t, cs, "list_sessions", map[string]any{"project": "all", "limit": 2}, &out)
	if len(out.Sessions) != 2 || out.Total != 5 || out.Cut == "" {
		t.Errorf("limit 2: %+v", out)
	}
	// A stub written last (a summary line, no conversation) is listed after
	// every session with one, as cfix ls and cfix browse list it.
	stub := filepath.Join(root, "projects", "-home-dev-work-alpha", "55555555-5555-4555-8555-555555555555.jsonl")
	damage.WriteLines(t, stub, [][]byte{[]byte(`{"type":"summary","summary":"a stub's title","leafUuid":"00000000-0000-4000-8000-000000000000"}`)}, true)
	call(t, cs, "list_sessions", map[string]any{"project": "all"}, &out)
	if len(out.Sessions) != 6 || out.Sessions[5].Session != "55555555-5555-4555-8555-555555555555" {
		t.Errorf("the stub is not last: %+v", out.Sessions)
	}
}

// readAll reads a session with read_session a page at a time.
func readAll(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	var b strings.Builder
	for {
		var out ReadOutput
		call(t, cs, "read_session", args, &out)
		b.WriteString(out.Text)
		if out.NextOffset == nil {
			return b.String()
		}
		args["offset"] = *out.NextOffset
	}
}

// exportOf is what cfix export writes of a session.
func exportOf(t *testing.T, root, id string) string {
	t.Helper()
	fam, err := show.Resolve(root, id)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.Write(&b, fam, export.Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReadSession(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	cs := connect(t, root)
	want := exportOf(t, root, alpha)

	// Pages of everything, put together, are the export.
	var all strings.Builder
	off, pages := 0, 0
	for {
		var out ReadOutput
		call(t, cs, "read_session", map[string]any{"session": "bc1c66c0", "offset": off, "max_chars": 7000,
			"include_thinking": true, "include_tool_output": true, "include_subagents": true}, &out)
		if out.Session != alpha || len(out.Text) > 7000 {
			t.Fatalf("page at %d: session %s, %d bytes", off, out.Session, len(out.Text))
		}
		all.WriteString(out.Text)
		pages++
		if out.NextOffset == nil {
			break
		}
		if *out.NextOffset <= off {
			t.Fatalf("next offset %d after %d", *out.NextOffset, off)
		}
		off = *out.NextOffset
	}
	if all.String() != want {
		t.Errorf("pages put together (%d bytes) differ from the export (%d bytes)", all.Len(), len(want))
	}
	if pages != (len(want)+6999)/7000 {
		t.Errorf("%d pages for %d bytes", pages, len(want))
	}

	// By default thinking, subagents and Claude Code's bookkeeping are
	// left out; tool outputs are cut short (TestResultHead), attachments
	// one line each.
	var out ReadOutput
	text := readAll(t, cs, map[string]any{"session": alpha})
	for _, s := range []string{"<summary>Thinking", "**Subagent conversation**\n\n", "Run echo sub", "prompt snapshot", "skill listing", `"type"`} {
		if strings.Contains(text, s) {
			t.Errorf("default read holds %q", s)
		}
	}
	for _, s := range []string{"**Result**\n\n```\nhello-from-bash\n```\n", "include_subagents shows it", "### Turn 2", "<code>Bash</code> Run echo hello-from-bash",
		"\n- attachment · file `notes.txt` (2 lines)\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("default read lacks %q", s)
		}
	}
	if n := strings.Count(text, "<details>"); n != strings.Count(text, "</details>") || n == 0 {
		t.Errorf("default read: unbalanced <details>")
	}
	if text := readAll(t, cs, map[string]any{"session": alpha, "attachments": "all"}); !strings.Contains(text, "<details><summary>attachment · prompt snapshot: the system prompt and 11 tool schemas sent</summary>") ||
		!strings.Contains(text, `"type": "skill_listing"`) {
		t.Errorf("attachments all: no prompt snapshot, or not all of the skill listing")
	}
	if text := readAll(t, cs, map[string]any{"session": alpha, "attachments": "none"}); strings.Contains(text, "attachment") {
		t.Errorf("attachments none: an attachment")
	}
	if text := readAll(t, cs, map[string]any{"session": alpha, "include_thinking": true}); !strings.Contains(text, "<summary>Thinking") {
		t.Errorf("include_thinking: no thinking")
	}
	if text := readAll(t, cs, map[string]any{"session": alpha, "include_subagents": true}); !strings.Contains(text, "Run echo sub") {
		t.Errorf("include_subagents: no subagent")
	}

	// Turns 2 to 3 only.
	call(t, cs, "read_session", map[string]any{"session": alpha, "from_turn": 2, "to_turn": 3, "include_tool_output": true, "max_chars": 100000}, &out)
	if !strings.HasPrefix(out.Text, "### Turn 2\n") || !strings.Contains(out.Text, "### Turn 3\n") || strings.Contains(out.Text, "### Turn 4") ||
		strings.Contains(out.Text, "### Turn 1\n") || out.NextOffset != nil {
		t.Errorf("turns 2-3:\n%s", out.Text)
	}
	start := strings.Index(want, "### Turn 2\n")
	end := strings.Index(want, "### Turn 4\n")
	if out.Text != want[start:end] {
		t.Errorf("turns 2-3 (but thinking and subagents) differ from the export's")
	}

	// latest of the client's project.
	call(t, connect(t, root, "/home/dev/work/alpha"), "read_session", map[string]any{"session": "latest", "max_chars": 100}, &out)
	if out.Session != alpha || out.NextOffset == nil || *out.NextOffset != 100 {
		t.Errorf("latest: %+v", out)
	}
	call(t, cs, "read_session", map[string]any{"session": "latest", "project": "/home/dev/work/alpha", "max_chars": 100}, &out)
	if out.Session != alpha {
		t.Errorf("latest of project alpha: %+v", out)
	}
}

// TestReadSessionStops reads a session a page at a time: the export stops
// at the end of each page and the next page continues it (one export for
// all the pages read in order); a page out of order starts another.
func TestReadSessionStops(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	st, ct := mcp.NewInMemoryTransports()
	srv := &server{opts: Options{Root: root, Dir: t.TempDir()}}
	ctx := context.Background()
	ss, err := newServer(srv).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	want := exportOf(t, root, alpha)
	var all strings.Builder
	args := map[string]any{"session": alpha, "max_chars": 1000, "include_thinking": true, "include_tool_output": true, "include_subagents": true}
	pages := 0
	for {
		var out ReadOutput
		call(t, cs, "read_session", args, &out)
		all.WriteString(out.Text)
		pages++
		if out.NextOffset == nil {
			break
		}
		args["offset"] = *out.NextOffset
	}
	if all.String() != want || pages < 5 {
		t.Fatalf("%d pages put together differ from the export", pages)
	}
	if srv.pager.started != 1 {
		t.Errorf("%d pages read in order started %d exports, want 1", pages, srv.pager.started)
	}
	var out ReadOutput
	call(t, cs, "read_session", map[string]any{"session": alpha, "max_chars": 2000}, &out)
	call(t, cs, "read_session", map[string]any{"session": alpha, "max_chars": 2000, "offset": 4000}, &out)
	if srv.pager.started != 3 || out.Text != want[4000:6000] && !strings.Contains(want, out.Text) {
		t.Errorf("pages out of order: %d exports started, want 3", srv.pager.started)
	}

	// A stream hands the page over once a byte past it comes, and a
	// reading given up stops its writer.
	p := &pager{}
	f := &filter{}
	calls := 0
	r := p.start("k", f, window{0, 10}, func(f *filter) error {
		for i := 0; i < 100; i++ {
			calls++
			f.Write([]byte("a line\n"))
		}
		return nil
	})
	res := <-r.res
	if res.text != "a line\na l" || !res.more || res.kept != 10 {
		t.Errorf("first page %+v", res)
	}
	r.win <- window{10, 7}
	if res = <-r.res; res.text != "ine\na l" || !res.more {
		t.Errorf("second page %+v", res)
	}
	r.stop()
	time.Sleep(10 * time.Millisecond)
	if calls != 3 {
		t.Errorf("the writer went on after it was given up: %d writes", calls)
	}
}

func TestSessionHealth(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	// The last line cut off mid-write.
	path := filepath.Join(root, "projects", "-home-dev-work-alpha", alpha+".jsonl")
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"type":"user","message":{"role":"us`)
	fh.Close()
	cs := connect(t, root)
	var out HealthOutput
	call(t, cs, "session_health", map[string]any{"session": "bc1c"}, &out)
	if out.Session != alpha || !strings.Contains(out.Health, "error") || len(out.Findings) == 0 {
		t.Fatalf("health %+v", out)
	}
	found := false
	for _, f := range out.Findings {
		if f.Code == "line-torn" {
			found = true
			if f.File != path || f.Line == 0 || f.OnResume == "" || !strings.HasPrefix(f.Fix, "cfix repair") {
				t.Errorf("finding %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no line-torn finding: %+v", out.Findings)
	}
	call(t, cs, "session_health", map[string]any{"session": "87441586"}, &out)
	if out.Health != "ok" {
		t.Errorf("healthy session: %+v", out)
	}
}

func TestErrors(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	cs := connect(t, root)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_session", map[string]any{"session": "3f2a"}, "no session matches 3f2a (did you mean 3889a50a-2e6b-4eb4-8d05-b4092bcb402d?); list_sessions gives the ids"},
		{"read_session", map[string]any{"session": "bc1d"}, "(did you mean " + alpha + "?)"},
		{"session_health", map[string]any{"session": "ffffffff"}, "no session matches ffffffff"},
		{"read_session", map[string]any{"session": ""}, "session is empty"},
		{"read_session", map[string]any{"session": "/etc/passwd"}, "is a path"},
		{"read_session", map[string]any{"session": "latest"}, `"latest" needs a project`},
		{"read_session", map[string]any{"session": alpha, "offset": -1}, "offset -1 is negative"},
		{"read_session", map[string]any{"session": alpha, "from_turn": 3, "to_turn": 2}, "from_turn <= to_turn"},
		{"search_sessions", map[string]any{"query": ""}, "query is empty"},
		{"search_sessions", map[string]any{"query": "a(", "regex": true}, "not a valid regular expression"},
		{"search_sessions", map[string]any{"query": "a", "since": "yesterday"}, `since "yesterday"`},
		{"search_sessions", map[string]any{"query": "a", "role": "robot"}, `role "robot"`},
		{"search_sessions", map[string]any{"query": "a", "project": "/no/such/dir"}, `project "/no/such/dir" names no project`},
		{"list_sessions", map[string]any{"project": "/no/such/dir"}, "names no project"},
	} {
		if got := callError(t, cs, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	// An ambiguous prefix names the candidates.
	for _, id := range []string{"abcd0000-0000-4000-8000-000000000001", "abcd0000-0000-4000-8000-000000000002"} {
		src := filepath.Join(root, "projects", "-home-dev-work-alpha", alpha+".jsonl")
		b, _ := os.ReadFile(src)
		os.WriteFile(filepath.Join(root, "projects", "-home-dev-work-alpha", id+".jsonl"), b, 0o644)
	}
	if got := callError(t, cs, "read_session", map[string]any{"session": "abcd"}); !strings.Contains(got, "matches 2 sessions") {
		t.Errorf("ambiguous: %q", got)
	}
	// A transcript named with no session id, in two folders.
	b, _ := os.ReadFile(filepath.Join(root, "projects", "-home-dev-work-alpha", alpha+".jsonl"))
	for _, folder := range []string{"-home-dev-work-alpha", "-home-dev-work-other"} {
		os.MkdirAll(filepath.Join(root, "projects", folder), 0o755)
		os.WriteFile(filepath.Join(root, "projects", folder, "short.jsonl"), b, 0o644)
	}
	if got := callError(t, cs, "read_session", map[string]any{"session": "short"}); !strings.Contains(got, "session short names transcripts in 2 project folders (-home-dev-work-alpha, -home-dev-work-other)") {
		t.Errorf("a name in two folders: %q", got)
	}
}

// TestMalformed sends requests the protocol refuses: each gets the
// protocol's error and the server answers the next.
func TestMalformed(t *testing.T) {
	cs := connect(t, damage.CopyStore(t, "2.1.332"))
	ctx := context.Background()
	for _, p := range []*mcp.CallToolParams{
		{Name: "no_such_tool", Arguments: map[string]any{}},
		{Name: "search_sessions", Arguments: map[string]any{"query": 5}},
		{Name: "read_session", Arguments: map[string]any{}},
		{Name: "list_sessions", Arguments: map[string]any{"limit": "ten"}},
	} {
		res, err := cs.CallTool(ctx, p)
		if err == nil && !res.IsError {
			t.Errorf("%s %v: answered", p.Name, p.Arguments)
		}
		var out ListOutput
		call(t, cs, "list_sessions", map[string]any{"project": "all"}, &out)
		if out.Total != 5 {
			t.Errorf("after %s: %+v", p.Name, out)
		}
	}
}

// TestInstall plans the entry as `claude mcp add --scope user cfix -- BIN
// mcp` of Claude Code 2.1.332 writes it, byte for byte (testdata holds what
// it wrote into the corpus's .claude.json for BIN cfix; it writes the
// command as given), its command the absolute path of the binary, and its
// removal as `claude mcp remove --scope user cfix` does. An entry whose
// command is cfix (found on PATH, which Claude Code may start without
// ~/go/bin) is replaced by the path.
func TestInstall(t *testing.T) {
	const bin = "/home/dev/go/bin/cfix"
	at := func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"command": "cfix"`), []byte(`"command": "`+bin+`"`))
	}
	home := t.TempDir()
	root := damage.CopyStoreTo(t, "2.1.332", home)
	conf := filepath.Join(home, ".claude.json")
	orig, err := os.ReadFile(filepath.Join(damage.Corpus(), "2.1.332", ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	pathAdded, _ := os.ReadFile("testdata/claude-mcp-add.json")
	added := at(pathAdded)
	removed, _ := os.ReadFile("testdata/claude-mcp-remove.json")
	plan := func(content []byte, remove bool) *changeset.ChangeSet {
		t.Helper()
		if err := os.WriteFile(conf, content, 0o600); err != nil {
			t.Fatal(err)
		}
		cs, err := PlanInstall(root, bin, remove)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cs := plan(orig, false)
	if len(cs.Ops) != 1 || cs.Ops[0].Action != changeset.Rewrite || cs.Ops[0].Path != conf || string(cs.Ops[0].Data) != string(added) {
		t.Fatalf("install: %+v\n%s", cs.Ops, cs.Ops[0].Data)
	}
	if cs := plan(added, false); len(cs.Ops) != 0 || !strings.Contains(cs.Notes[0], "installed already") {
		t.Errorf("installed twice: %+v", cs)
	}
	if cs := plan(pathAdded, false); len(cs.Ops) != 1 || string(cs.Ops[0].Data) != string(added) ||
		!strings.Contains(cs.Ops[0].Reason, `replace the cfix MCP server's entry`) {
		t.Errorf("an entry running cfix from PATH is not replaced by the path: %+v", cs.Ops)
	}
	if _, err := PlanInstall(root, "cfix", false); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a command that is not an absolute path: %v", err)
	}
	cs = plan(added, true)
	if len(cs.Ops) != 1 || string(cs.Ops[0].Data) != string(removed) {
		t.Fatalf("uninstall: %+v", cs.Ops)
	}
	if cs := plan(removed, true); len(cs.Ops) != 0 || !strings.Contains(cs.Notes[0], "no cfix MCP server") {
		t.Errorf("uninstalled twice: %+v", cs)
	}
	// Beside another server: added last, taken out to the byte.
	other := []byte("{\n  \"a\": 1,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n")
	cs = plan(other, false)
	want := "{\n  \"a\": 1,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    },\n    \"cfix\": {\n      \"type\": \"stdio\",\n      \"command\": \"/home/dev/go/bin/cfix\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {}\n    }\n  }\n}\n"
	if string(cs.Ops[0].Data) != want {
		t.Fatalf("beside another:\n%s", cs.Ops[0].Data)
	}
	if cs := plan([]byte(want), true); string(cs.Ops[0].Data) != string(other) {
		t.Errorf("taken out from beside another:\n%s", cs.Ops[0].Data)
	}
	first := []byte("{\"mcpServers\": {\"cfix\": {\"command\": \"old\"}, \"other\": {}}}")
	if cs := plan(first, true); string(cs.Ops[0].Data) != `{"mcpServers": {"other": {}}}` {
		t.Errorf("taken out before another: %s", cs.Ops[0].Data)
	}
	if cs := plan(first, false); !strings.Contains(cs.Ops[0].Reason, `replace the cfix MCP server's entry {"command": "old"}`) {
		t.Errorf("replace: %+v", cs.Ops[0])
	}
	if cs := plan([]byte("{}"), false); string(cs.Ops[0].Data) != "{\n  \"mcpServers\": {\n    \"cfix\": {\n      \"type\": \"stdio\",\n      \"command\": \"/home/dev/go/bin/cfix\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {}\n    }\n  }\n}" {
		t.Errorf("into {}:\n%s", cs.Ops[0].Data)
	}

	// Errors: a file that is not JSON, one that is not there.
	os.WriteFile(conf, []byte("{oops"), 0o600)
	if _, err := PlanInstall(root, bin, false); err == nil || !strings.Contains(err.Error(), conf+" is not valid JSON") {
		t.Errorf("not JSON: %v", err)
	}
	os.Remove(conf)
	if _, err := PlanInstall(root, bin, false); err == nil || !strings.Contains(err.Error(), "start claude once") {
		t.Errorf("no file: %v", err)
	}
}

// TestServeMalformed speaks to Serve as a client over stdio does: lines
// that are no JSON-RPC message get the protocol's error, and the server
// answers the requests after them.
func TestServeMalformed(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	dir := t.TempDir()
	go func() {
		err := Serve(context.Background(), Options{Root: root, Dir: dir}, inR, outW)
		// A server that stops answers nothing more.
		outW.Close()
		inR.CloseWithError(errors.New("the server stopped"))
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("answer %s: %v", lines.Bytes(), err)
		}
		return m
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := recv(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{"this is not json", -32700, nil},
		{`{"id":7,"method":"tools/list"}`, -32600, 7.0},
		{`[]`, -32600, nil},
		{`{"jsonrpc":"2.0","id":8,"method":"no/such"}`, -32601, 8.0},
	} {
		send(c.line)
		if m := recv(); code(m) != c.code || m["id"] != c.id {
			t.Errorf("%s: %v, want code %v", c.line, m, c.code)
		}
		send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_sessions","arguments":{"project":"all"}}}`)
		if m := recv(); m["id"] != 9.0 || m["result"] == nil {
			t.Errorf("after %s: %v", c.line, m)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeAnswersBeforeItsInputEnds: a client that writes its requests
// and closes its end (a script piping them in) gets every answer: the
// server ends once it has answered what it read (the SDK's transport
// dropped the requests still running at the end of its input).
func TestServeAnswersBeforeItsInputEnds(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sessions","arguments":{"project":"all"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"hello","project":"all"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"session_health","arguments":{"session":"latest"}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := Serve(context.Background(), Options{Root: root, Dir: t.TempDir()}, strings.NewReader(in), &out); err != nil {
		t.Fatalf("serve: %v", err)
	}
	got := map[any]bool{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %s: %v", sc.Bytes(), err)
		}
		got[m["id"]] = true
	}
	for _, id := range []any{1.0, 2.0, "three", 4.0} {
		if !got[id] {
			t.Errorf("request %v unanswered; the answers:\n%s", id, out.String())
		}
	}
}
