package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: a client that sends calls at once, four each of
// read_session, session_health and search_sessions on a session of
// hostile input, gets each answered and the server peaks under 200 MB of
// RSS, as for one call: the calls take turns. Served side by side, four
// session_health calls of the session ending in 512 MB of NUL bytes
// peaked at 510 MB, twelve at 1.25 GB.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, _ := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				cs := connect(t, root)
				calls := []struct {
					tool string
					args map[string]any
					want string
				}{
					{"read_session", map[string]any{"session": rsstest.Session}, "# Session"},
					{"session_health", map[string]any{"session": rsstest.Session}, `"session":"` + rsstest.Session + `"`},
					{"search_sessions", map[string]any{"query": "pasted", "project": "all"}, `"hits":`},
				}
				switch kind {
				case rsstest.FewEmpties:
					calls[1].want = `"code":"type-missing"`
				case rsstest.NULTail:
					calls[1].want = `"code":"nul-bytes"`
				case rsstest.HugeLine:
					calls[2].want = `"session":"` + rsstest.Session + `"` // the long prompt's first words
				}
				var wg sync.WaitGroup
				for range 4 {
					for _, c := range calls {
						wg.Add(1)
						go func() {
							defer wg.Done()
							res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
							if err != nil {
								t.Errorf("%s: %v", c.tool, err)
								return
							}
							text := res.Content[0].(*mcp.TextContent).Text
							if res.IsError || !strings.Contains(text, c.want) {
								t.Errorf("%s: error %v, want %q in %.300s", c.tool, res.IsError, c.want, text)
							}
						}()
					}
				}
				wg.Wait()
			})
		})
	}
}
