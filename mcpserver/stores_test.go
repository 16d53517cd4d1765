package mcpserver

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/store"
)

// TestEveryStore calls every tool on every corpus and wild store (read
// where they are: the server only reads): list_sessions and
// search_sessions of every project, and, for every session id a file of
// the store names (main transcripts, and subagents with no main one),
// read_session's first page, the whole session with thinking, tool
// outputs and subagents, and session_health. None may fail.
func TestEveryStore(t *testing.T) {
	ctx := context.Background()
	for _, root := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(root))
		if strings.Contains(root, string(filepath.Separator)+"wild"+string(filepath.Separator)) {
			name = "wild/" + name
		}
		t.Run(name, func(t *testing.T) {
			cs := connect(t, root)
			fail := func(tool string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatalf("%s %v: %v", tool, args, err)
				}
				if res.IsError {
					t.Errorf("%s %v: tool error: %s", tool, args, res.Content[0].(*mcp.TextContent).Text)
				}
				return res
			}
			var list ListOutput
			call(t, cs, "list_sessions", map[string]any{"project": "all", "limit": 500}, &list)
			for _, q := range []map[string]any{
				{"query": "the", "project": "all", "limit": 200, "max_chars": 100000},
				{"query": "e", "project": "all", "ignore_case": true},
				{"query": `\w+\.(go|txt|md)`, "regex": true, "project": "all"},
				{"query": "echo", "project": "all", "role": "tool"},
			} {
				fail("search_sessions", q)
			}
			l, err := store.Scan(root)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			for _, f := range l.Files {
				if f.Session != "" && (f.Kind == store.KindSession || !f.Side()) {
					ids[f.Session] = true
				}
			}
			for _, p := range store.ProjectsOf(l, store.SessionsOf(l, nil)) {
				if len(p.Paths) > 0 {
					fail("list_sessions", map[string]any{"project": p.Paths[0]})
				}
			}
			var sorted []string
			for id := range ids {
				sorted = append(sorted, id)
			}
			sort.Strings(sorted)
			for _, id := range sorted {
				var out ReadOutput
				fail("read_session", map[string]any{"session": id})
				args := map[string]any{"session": id, "max_chars": 100000, "include_thinking": true, "include_tool_output": true, "include_subagents": true}
				for pages := 0; pages < 100; pages++ {
					res := fail("read_session", args)
					if res.IsError {
						break
					}
					out = ReadOutput{}
					decode(t, res, &out)
					if out.Session == "" {
						t.Errorf("read_session %s: no session in the answer", id)
					}
					if out.NextOffset == nil {
						break
					}
					args["offset"] = *out.NextOffset
				}
				fail("session_health", map[string]any{"session": id})
			}
			t.Logf("%d sessions listed, %d session ids read", len(list.Sessions), len(sorted))
		})
	}
}
