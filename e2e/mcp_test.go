package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// mcpVersion is the client TestMCP runs: the newest pinned version.
const mcpVersion = "2.1.332"

// TestMCP: Claude Code, started with --mcp-config naming cfix mcp --root
// (its own store), calls the server's tools when the fake API asks for
// them: search_sessions finds a sentence planted in another session (the
// request after the call holds the tool result with that session's id and
// the sentence), and read_session reads that session.
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs a real Claude Code version")
	}
	t.Parallel()
	env := NewEnv(t, mcpVersion, "")
	cfix, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	const planted = "the zebra-quartz harmonica lives in the attic"
	res := env.Run("work/planted", "-p", planted, "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 || out.SessionID == "" {
		t.Fatalf("planting: %v\n%s", err, res)
	}
	id := out.SessionID

	conf := filepath.Join(env.Home, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		// alwaysLoad: the first request waits for the server's tools (a
		// -p run of 2.1.332 otherwise sends it before they are listed).
		"cfix": map[string]any{"command": cfix, "args": []string{"mcp", "--root", env.ClaudeDir()}, "alwaysLoad": true},
	}})
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, input map[string]any) fakeapi.Block {
		t.Helper()
		in, _ := json.Marshal(input)
		res := env.RunProgram(env.Exe, "work/other", "-p", "MCP: mcp__cfix__"+tool+" "+string(in),
			"--mcp-config", conf, "--allowedTools", "mcp__cfix__"+tool)
		if res.ExitCode != 0 {
			t.Fatalf("%s: %s", tool, res)
		}
		// The request after the call holds its result.
		for _, q := range res.MessageRequests() {
			msgs := q.Messages
			if len(msgs) == 0 {
				continue
			}
			for _, blk := range msgs[len(msgs)-1].Content {
				if blk.Type == "tool_result" {
					return blk
				}
			}
		}
		t.Fatalf("%s: no request holds a tool result:\n%s", tool, res)
		return fakeapi.Block{}
	}

	r := call("search_sessions", map[string]any{"query": "zebra-quartz", "project": "all"})
	text := r.ResultText()
	t.Logf("search_sessions answered: %s", text)
	if r.IsError || !strings.Contains(text, `"session":"`+id+`"`) || !strings.Contains(text, "zebra-quartz harmonica lives") {
		t.Errorf("search_sessions: the result lacks session %s and the planted sentence:\n%s", id, text)
	}
	r = call("read_session", map[string]any{"session": id[:8]})
	text = r.ResultText()
	t.Logf("read_session answered: %s", text)
	if r.IsError || !strings.Contains(text, planted) || !strings.Contains(text, id) {
		t.Errorf("read_session %s: the result lacks the session:\n%s", id[:8], text)
	}
	// The model reads the Markdown as it is: no JSON around it, whose
	// escapes would double every line break and quote.
	if !strings.HasPrefix(text, "session "+id+"\n\n# ") || strings.Contains(text, `\n`) || strings.Contains(text, `"text":`) {
		t.Errorf("read_session %s: the model gets no plain Markdown:\n%s", id[:8], text)
	}
}
