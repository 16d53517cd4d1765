package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dmg "github.com/cfix-dev/cfix/internal/damage"
)

// TestLeafOverResume: a repair that removes the entry the last last-prompt
// names points that last-prompt at the entry's parent, and the resume
// stays on the branch it was on. The session was rewound: branch B (the
// one the user is on, ending in a reply of unsigned thinking alone, which
// the repair removes) is written before branch A; the last-prompt names
// the thinking entry. 2.1.120 and later resume from the entry it names;
// one naming no entry is ignored and the resume starts from the message
// written last, on branch A (measured with 2.1.205 and 2.1.332, -r and -c
// alike).
func TestLeafOverResume(t *testing.T) {
	version := newestPinned(t)
	t.Parallel()
	const (
		sid   = "5e55a0de-0000-4000-8000-000000000001"
		think = "22222222-0000-4000-8000-00000000000a"
	)
	// run writes the session into a fresh store, lets prepare change it,
	// resumes it and returns the texts the client sent.
	run := func(t *testing.T, leaf string, prepare func(claude string)) []string {
		env := NewEnv(t, version, "")
		dir := env.Dir("proj")
		proj := filepath.Join(env.ClaudeDir(), "projects", ProjectDirName(dir))
		if err := os.MkdirAll(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		entry := func(typ, uuid, parent, text, ts string) {
			p := `null`
			if parent != "" {
				p = fmt.Sprintf("%q", parent)
			}
			head := fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":%q,"gitBranch":"",`, p, dir, sid, version)
			switch typ {
			case "user":
				fmt.Fprintf(&b, `%s"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":%q}`+"\n", head, text, uuid, ts)
			case "thinking":
				fmt.Fprintf(&b, `%s"message":{"id":"msg_think","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":%q,"signature":""}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}},"type":"assistant","uuid":%q,"timestamp":%q}`+"\n", head, text, uuid, ts)
			default:
				fmt.Fprintf(&b, `%s"message":{"id":"msg_%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}},"type":"assistant","uuid":%q,"timestamp":%q}`+"\n", head, uuid[len(uuid)-4:], text, uuid, ts)
			}
		}
		u := func(n int) string { return fmt.Sprintf("11111111-0000-4000-8000-%012d", n) }
		entry("user", u(1), "", "first prompt", "2026-11-20T10:00:00.000Z")
		entry("assistant", u(2), u(1), "first answer", "2026-11-20T10:00:01.000Z")
		entry("user", u(3), u(2), "branch B prompt", "2026-11-20T10:00:02.000Z")
		entry("assistant", u(4), u(3), "branch B answer", "2026-11-20T10:00:03.000Z")
		entry("thinking", think, u(4), "hm", "2026-11-20T10:00:03.500Z")
		entry("user", u(5), u(2), "branch A prompt", "2026-11-20T10:00:04.000Z")
		entry("assistant", u(6), u(5), "branch A answer", "2026-11-20T10:00:05.000Z")
		fmt.Fprintf(&b, `{"type":"last-prompt","lastPrompt":"branch B prompt","leafUuid":%q,"sessionId":%q}`+"\n", leaf, sid)
		if err := os.WriteFile(filepath.Join(proj, sid+".jsonl"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		dmg.Age(t, env.ClaudeDir())
		if prepare != nil {
			prepare(env.ClaudeDir())
		}
		rec := resumeAndRecord(t, env, dir, "-r", sid)
		if rec.Res.ExitCode != 0 || rec.Main == nil {
			t.Fatalf("resume: %s", rec.Res)
		}
		return messageTexts(rec.Main.Messages)
	}
	branchB := []string{"first prompt", "first answer", "branch B prompt", "branch B answer"}
	branchA := []string{"first prompt", "first answer", "branch A prompt", "branch A answer"}
	t.Run("before", func(t *testing.T) {
		if got := run(t, think, nil); !slices.Equal(got, branchB) {
			t.Fatalf("claude %s sent %q, want branch B %q", version, got, branchB)
		}
	})
	t.Run("leaf-missing", func(t *testing.T) {
		// What the repair left before it moved leafUuids: a last-prompt
		// naming no entry.
		if got := run(t, "99999999-0000-4000-8000-000000000009", nil); !slices.Equal(got, branchA) {
			t.Fatalf("claude %s sent %q, want branch A %q (the message written last)", version, got, branchA)
		}
	})
	t.Run("repaired", func(t *testing.T) {
		got := run(t, think, func(claude string) {
			if !hasCode(ValidateStore(t, claude), "thinking-unsigned", "error", 5) {
				t.Fatalf("validate reports no thinking-unsigned error at line 5")
			}
			repairApply(t, claude, t.TempDir())
			if rep := ValidateStore(t, claude); hasCode(rep, "leaf-missing", "", 0) || len(rep.Errors()) > 0 {
				t.Fatalf("after repair: %+v", rep.Findings)
			}
			dmg.Age(t, claude)
		})
		if !slices.Equal(got, branchB) {
			t.Fatalf("after repair claude %s sent %q, want branch B %q", version, got, branchB)
		}
	})
}
