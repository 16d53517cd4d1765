package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStatusLine: cfix guard install --statusline sets Claude Code's
// status line, and the interactive client, in a real terminal (tmux),
// runs cfix statusline and shows its line under the prompt: the
// session's cost so far, today's, the current block's. After a prompt
// and its reply the line shows the session's new cost, the one cfix
// usage reports for it.
func TestStatusLine(t *testing.T) {
	for _, v := range versionsSince(t, guardSince) {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := usageEnv(t, v)
			claude := env.ClaudeDir()
			journal := t.TempDir()
			res := env.Run("proj", "-p", "first BASH: echo one", "--output-format", "json")
			out, err := res.Output()
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%v\n%s", err, res)
			}
			id := out.SessionID
			if r := RunCfix(t, journal, "guard", "install", "--statusline", "--root", claude, "--apply", "--yes"); r.ExitCode != 0 {
				t.Fatalf("%s", r)
			}
			proj := env.Dir("proj")
			interactiveConfig(t, env, proj)
			tenv := interactiveEnv(env)
			// What cfix usage says the session cost: the status line's
			// figure, as the line writes it ($1.23).
			sessionCost := func() string {
				r := RunCfix(t, journal, "usage", "session", "--json", "--root", claude)
				var doc struct {
					Rows []struct {
						Key  string   `json:"key"`
						Cost *float64 `json:"cost_usd"`
					} `json:"rows"`
				}
				if r.ExitCode != 0 || json.Unmarshal([]byte(r.Stdout), &doc) != nil {
					t.Fatalf("%s", r)
				}
				for _, row := range doc.Rows {
					if row.Key == id && row.Cost != nil {
						return fmt.Sprintf("$%.2f", *row.Cost)
					}
				}
				t.Fatalf("cfix usage has no priced row for session %s:\n%s", id, r.Stdout)
				return ""
			}
			line := regexp.MustCompile(`session (\$[0-9.,]+) · today (\$[0-9.,]+) · (block \$[0-9.,]+ \([0-9]+h[0-9]+m left\)|no active block)`)
			before := sessionCost()
			tm := newTmux(t, 140, 40, tenv, proj, env.Exe, "-r", id)
			s := tm.waitUntil("cfix's status line", 2*time.Minute, func(s string) bool {
				if strings.Contains(s, "Enter to confirm") || strings.Contains(s, "Pane is dead") {
					t.Fatalf("claude %s shows a dialog or ended instead of its prompt:\n%s", v, s)
				}
				m := line.FindStringSubmatch(s)
				return m != nil && m[1] == before
			})
			if m := line.FindStringSubmatch(s); !strings.HasPrefix(m[3], "block") {
				t.Errorf("the status line names no active block a minute after a reply: %q", m[0])
			}
			tm.prompt("second BASH: echo two")
			tm.waitUntil("the fake API's reply", time.Minute, func(s string) bool { return strings.Contains(s, "done: two") })
			// The client writes the reply's entries while it shows them,
			// and runs the status line again a while after: the line's
			// new cost is the one cfix usage reports once the turn has
			// ended, whenever the line shows it.
			tm.waitIdle("after the reply", time.Minute)
			var after, shown string
			s = tm.waitUntil("the status line with the session's new cost", time.Minute, func(s string) bool {
				m := line.FindStringSubmatch(s)
				if m == nil || m[1] == before {
					return false
				}
				if m[1] != shown {
					shown, after = m[1], sessionCost()
				}
				return m[1] == after
			})
			t.Logf("claude %s: %s", v, line.FindString(s))
			if b, err := os.ReadFile(claude + "/settings.json"); err != nil || !strings.Contains(string(b), "statusline") {
				t.Errorf("settings.json: %v\n%s", err, b)
			}
		})
	}
}
