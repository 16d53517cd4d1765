package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/show"
)

// TestBrowseForkResume: the fork cfix browse makes at a message (f: cfix
// fork --at the entry the message's end mark names, in the Markdown its
// preview reads) resumes with the history up to that message and nothing
// of the session after it. The client writes a session of three turns
// (a Bash call and its answer; a plain prompt; another Bash call), then,
// for every message of it (the prompts, the replies with their calls, the
// answers), a fork at it is applied and resumed with "-r FORK -p FORK
// CHECK". The reference is the resume of the session itself; a message
// starts its history where the reference's user prompt or a reply after
// a prompt or a tool result starts. Each fork's resume gets 200, sends
// the reference history up to where the next message starts, and then
// nothing of the reference's history after it (the client may add its
// own: a continuation of an interrupted turn).
func TestBrowseForkResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		env := cloneEnv(t, sc)
		claude := env.ClaudeDir()
		journal := t.TempDir()
		dir := filepath.Join(env.Home, "work", "browsefork")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		turns := []string{"BASH: echo first-call", "a plain second prompt", "BASH: echo third-call"}
		var id string
		for i, p := range turns {
			args := []string{"-p", p}
			if i > 0 {
				args = append([]string{"-r", id}, args...)
			}
			res := env.Run(dir, args...)
			if res.ExitCode != 0 {
				t.Fatalf("turn %d (%q): %s", i+1, p, res)
			}
			if i == 0 {
				var err error
				if id, err = NewestSession(claude, dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		src := filepath.Join(cloneProjectDir(t, claude, dir), id+".jsonl")
		cloneAge(t, sc, claude)

		// The messages browse's preview offers, as it reads them.
		fam, err := show.Resolve(claude, src)
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		if err := export.Write(&md, fam, export.Options{Format: "md", Anchors: true}); err != nil {
			t.Fatal(err)
		}
		var ats []string
		for _, l := range strings.Split(md.String(), "\n") {
			if at, ok := strings.CutPrefix(l, "<!-- cfix:at "); ok {
				ats = append(ats, strings.TrimSuffix(at, " -->"))
			}
		}
		forks := make([]string, len(ats))
		for k, at := range ats {
			forks[k] = fmt.Sprintf("7a1e0000-0000-4000-8000-0000000b%04d", k+1)
			res := RunCfix(t, journal, "fork", id, "--at", at, "--id", forks[k], "--root", claude, "--apply", "--yes")
			if res.ExitCode != 0 {
				t.Fatalf("cfix fork --at %s: %s", at, res)
			}
		}
		cloneAge(t, sc, claude)

		ref := cloneRun(t, env, dir, "FORK CHECK", "-r", id)
		if !ref.ok() {
			t.Fatalf("resume of the session: %s\n%s", ref.summary(), ref.Res)
		}
		// Where each message starts in the reference history.
		var starts []int
		assistant := func(h string) bool {
			return strings.HasPrefix(h, "assistant: ") || strings.HasPrefix(h, "thinking: ") || strings.HasPrefix(h, "tool_use ")
		}
		for i, h := range ref.Hist {
			if strings.HasPrefix(h, "user: ") || assistant(h) && (i == 0 || !assistant(ref.Hist[i-1])) {
				starts = append(starts, i)
			}
		}
		t.Logf("claude %s: session %s, %d messages marked, reference history:\n%s", sc.Version, id, len(ats), cloneDump(ref.Hist))
		if len(starts) != len(ats) || len(ats) < 8 {
			t.Fatalf("the preview marks %d messages, the reference history starts %d (want 8 or more, as many)\n%s", len(ats), len(starts), md.String())
		}
		for k, fork := range forks {
			end := len(ref.Hist)
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			got := cloneRun(t, env, dir, "FORK CHECK", "-r", fork)
			switch {
			case !got.ok():
				t.Errorf("fork at message %d (%s): -r %s: %s\n%s", k+1, ats[k], fork, got.summary(), got.Res)
			case len(got.Hist) < end || !slices.Equal(got.Hist[:end], ref.Hist[:end]):
				t.Errorf("fork at message %d (%s): the history is not the reference's up to the message after it (- reference, + sent):\n%s", k+1, ats[k], cloneDiff(ref.Hist[:end], got.Hist))
			default:
				for _, h := range got.Hist[end:] {
					if slices.Contains(ref.Hist[end:], h) {
						t.Errorf("fork at message %d (%s): the resume sends %q, which comes after the message", k+1, ats[k], h)
					}
				}
				if len(got.Hist) > end {
					t.Logf("fork at message %d: after it the client adds %q", k+1, got.Hist[end:])
				}
			}
		}
		cloneRequireValid(t, claude, nil)
	})
}
