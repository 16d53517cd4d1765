package show

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadNULBytes: a line holding NUL bytes is read as the chain reader
// and validate read it, with them taken out: its entries count, and it is
// no line "not JSON".
func TestReadNULBytes(t *testing.T) {
	rec := func(uuid, parent, typ, text string) string {
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + parent + `,"version":"2.1.88","message":{"role":"` + typ + `","content":"` + text + `"}}`
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := rec("u1", "null", "user", "hello \x00") + "\n" + rec("u2", `"u1"`, "assistant", "reply") + rec("u3", `"u2"`, "user", "again \x00") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Read(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 3 || st.NotJSON != 0 || st.Prompts != 2 {
		t.Errorf("%d entries, %d lines not JSON, %d turns; want 3, 0, 2", st.Entries, st.NotJSON, st.Prompts)
	}
	if n := len(st.chain.Graph.Nodes); n != st.Entries {
		t.Errorf("the chain reader holds %d entries, the stats %d", n, st.Entries)
	}
}

// TestTurns: turns count what the person wrote: a prompt, an image, a
// slash command, a shell command; not a command's output, the mark of an
// interrupted request, a tool result or a meta entry.
func TestTurns(t *testing.T) {
	var lines []string
	for _, c := range []string{
		`"a prompt"`,
		`[{"type":"text","text":"another"},{"type":"image","source":{}}]`,
		`"<command-name>/model</command-name>"`,
		`"<local-command-stdout>Set model</local-command-stdout>"`,
		`"<bash-input>ls</bash-input>"`,
		`"<bash-stdout>a.go</bash-stdout><bash-stderr></bash-stderr>"`,
		`[{"type":"text","text":"[Request interrupted by user]"}]`,
		`[{"type":"text","text":"[Request interrupted by user for tool use]"}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":"x"}]`,
	} {
		lines = append(lines, `{"type":"user","message":{"role":"user","content":`+c+`}}`)
	}
	lines = append(lines, `{"type":"user","isMeta":true,"message":{"role":"user","content":"meta"}}`)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Read(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Prompts != 4 {
		t.Errorf("%d turns, want 4 (a prompt, another, /model, ! ls)", st.Prompts)
	}
}

// TestReadLongLines: the stats of a transcript are the same when its
// lines are over a MB (read from their light trees) as when they are
// short (decoded whole): entries, types, turns, models, versions, usage,
// and glued records and lines not JSON told apart.
func TestReadLongLines(t *testing.T) {
	write := func(pad string) *Stats {
		rec := func(uuid, typ, text, extra string) string {
			return `{"type":"` + typ + `","uuid":"` + uuid + `","timestamp":"2026-01-0` + uuid[1:] + `T00:00:00Z","version":"2.1.88","cwd":"/w","sessionId":"s","message":{"role":"` + typ + `","model":"m-` + uuid + `","id":"id-` + uuid + `","usage":{"input_tokens":3,"output_tokens":4,"server_tool_use":{"web_search_requests":1}},"content":` + text + `}` + extra + `}`
		}
		lines := []string{
			rec("u1", "user", `"`+pad+`hello"`, ``),
			rec("u2", "assistant", `[{"type":"text","text":"`+pad+`"}]`, `,"isSidechain":true`),
			rec("u3", "user", `[{"type":"tool_result","tool_use_id":"t","content":"`+pad+`"}]`, ``),
			rec("u4", "user", `"<bash-stdout>`+pad+`</bash-stdout>"`, ``) + rec("u5", "user", `"again"`, ``),
			`{"type":"user","message":{"content":"` + pad + `torn`,
			rec("u6", "user", `"`+pad+`\u00e9\ud800"`, `,"slug":"a-slug"`),
		}
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := Read(path, false)
		if err != nil {
			t.Fatal(err)
		}
		st.chain = nil
		return st
	}
	short, long := write(""), write(strings.Repeat("x", 2*longLine))
	if fmt.Sprintf("%+v", short) != fmt.Sprintf("%+v", long) {
		t.Errorf("short lines: %+v\nlong lines: %+v", short, long)
	}
	if short.Entries != 6 || short.NotJSON != 1 {
		t.Errorf("%d entries, %d not JSON; want 6, 1", short.Entries, short.NotJSON)
	}
}
