package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
	corpusdamage "github.com/cfix-dev/cfix/internal/damage"
)

// TestRepairKeepsHistory: the repairs that re-link an entry keep every
// entry the resume sent before the damage, proven with the real client.
// On a copy of the scenario store, a resume runs a Task (1.0.x writes the
// subagent's entries inline, isSidechain, between the call and its
// result); a second copy of that store is resumed undamaged (the
// reference: what the client sends), the first is damaged, repaired with
// cfix repair --apply and resumed. The history sent must be the
// reference's, message piece by message piece, and every request must get
// 200.
//
//   - cycle: the last tool result on the resumed chain points at the
//     answer written after it. Made a root, as repair did before, the
//     entries before it were cut off and its tool_result answered nothing
//     (1.0.x sends it: 400); linked to the entry written before it, the
//     history is whole.
//   - torn-task: the Task call's line is cut in half (not JSON), its
//     sidechain written before its result. The re-link passes over the
//     sidechain to the removed line; the history is whole but for the
//     call the damage destroyed and its result, which then answers nothing
//     and goes. Skipped for versions that write subagents to files of
//     their own (2.0.x on): no sidechain entry sits in the main transcript.
func TestRepairKeepsHistory(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		for _, d := range []struct {
			name   string
			inline bool
			// make damages the session file and returns the pieces (see
			// pieces) the damage itself destroys.
			make func(t *testing.T, path string) (lost []string)
		}{
			{"cycle", false, keepCycle},
			{"torn-task", true, keepTornTask},
		} {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel() // each on a copy of its own
				keepHistory(t, sc, d.inline, d.make)
			})
		}
	})
}

// keepHistory runs one damage of TestRepairKeepsHistory.
// inline says that the damage needs the Task's sidechain entries in the
// main transcript, as 1.0.x writes them.
func keepHistory(t *testing.T, sc *Scenario, inline bool, makeDamage func(t *testing.T, path string) []string) {
	claude := CopyStore(t, sc.Version)
	env := NewEnv(t, sc.Version, filepath.Dir(claude))
	dir := filepath.Join(sc.Home, AlphaDir)
	// A Task after the last compaction, on the chain a resume loads.
	agent := env.Run(dir, "-r", sc.Main, "-p", "AGENT: BASH: echo sub")
	if agent.ExitCode != 0 {
		t.Fatalf("resume with a Task: %s", agent)
	}
	s := newSite(t, claude, dir, sc.Main)
	if inline && !inlineSidechain(t, s.path) {
		t.Skipf("claude %s writes no sidechain entries in the main transcript (its subagents have files of their own)", sc.Version)
	}

	// The reference: a resume of an undamaged copy.
	refHome := filepath.Join(t.TempDir(), "home")
	if err := copyTree(filepath.Join(refHome, ".claude"), claude); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(filepath.Dir(claude), ".claude.json")); err == nil {
		if err := os.WriteFile(filepath.Join(refHome, ".claude.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := resumeAndRecord(t, NewEnv(t, sc.Version, refHome), dir, "-r", sc.Main)
	if ref.Main == nil || ref.Main.Status != 200 {
		t.Fatalf("resume of the undamaged store: %s\n%s", ref.summary(), ref.Res)
	}

	lost := makeDamage(t, s.path)
	ageStore(t, claude, 10*time.Minute)
	changes := repairApply(t, claude, t.TempDir())
	for _, c := range changes {
		if c.Path == s.path {
			t.Logf("%s %s: %s", c.Action, filepath.Base(c.Path), c.Reason)
		}
	}
	post := resumeAndRecord(t, env, dir, "-r", sc.Main)
	requireAccepted(t, post)
	var want []string
	for _, p := range pieces(ref.Main) {
		if !slices.Contains(lost, p) {
			want = append(want, p)
		}
	}
	got := pieces(post.Main)
	t.Logf("the resume after repair sends %d pieces; the reference %d, less the %d the damage destroyed", len(got), len(pieces(ref.Main)), len(lost))
	if !slices.Equal(got, want) {
		t.Errorf("the resume after repair sends %d pieces, the reference %d (less %d the damage destroyed: %q)\n got %q\nwant %q\nafter repair:\n%s\nreference:\n%s",
			len(got), len(want), len(lost), lost, got, want, post.dump(), ref.dump())
	}
	for _, f := range ValidateStore(t, claude).Errors() {
		t.Errorf("cfix validate after the resume of the repaired store: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
	}
}

// pieces lists, in order, what the user and assistant messages of a
// request carry: each text (as cleanText leaves it, without the resume
// prompt), tool call and tool result (with its text).
func pieces(q *fakeapi.Request) []string {
	if q == nil {
		return nil
	}
	var out []string
	for _, m := range q.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		for _, b := range m.Content {
			out = append(out, blockPieces(b)...)
		}
	}
	return out
}

// blockPieces is the piece of one content block (none for an empty text
// or the resume prompt).
func blockPieces(b fakeapi.Block) []string {
	switch b.Type {
	case "text":
		if s := cleanText(b.Text); s != "" && s != resumePrompt {
			return []string{"text " + s}
		}
		return nil
	case "tool_use":
		return []string{"tool_use " + b.ID}
	case "tool_result":
		return []string{fmt.Sprintf("tool_result %s %s", b.ToolUseID, strings.TrimSpace(b.ResultText()))}
	}
	return []string{b.Type}
}

// keepCycle makes the last tool result on the resumed chain point at the
// entry written after it that names it as parent: a cycle of two.
func keepCycle(t *testing.T, path string) []string {
	t.Helper()
	e := lastOnChain(t, readLines(t, path), "tool result", hasToolResult)
	corpusdamage.Cycle(t, path, e.line+1)
	return nil
}

// keepTornTask cuts the last Task call's line in half: its sidechain was
// written before its result. The call (every block of its entry) and its
// result are what the damage destroys.
func keepTornTask(t *testing.T, path string) []string {
	t.Helper()
	lines := readLines(t, path)
	call, _ := corpusdamage.TearTaskCall(t, path)
	var e struct {
		UUID    string          `json:"uuid"`
		Message fakeapi.Message `json:"message"`
	}
	if err := json.Unmarshal(lines[call-1], &e); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(resumedChain(t, lines), func(c *entry) bool { return c.UUID == e.UUID }) {
		t.Fatalf("line %d: the Task call is not on the chain a resume loads", call)
	}
	var lost []string
	for _, b := range e.Message.Content {
		lost = append(lost, blockPieces(b)...)
		if b.Type == "tool_use" {
			for _, l := range lines[call:] {
				var r struct {
					Message fakeapi.Message `json:"message"`
				}
				if json.Unmarshal(l, &r) != nil {
					continue
				}
				for _, rb := range r.Message.Content {
					if rb.Type == "tool_result" && rb.ToolUseID == b.ID {
						lost = append(lost, blockPieces(rb)...)
					}
				}
			}
		}
	}
	return lost
}

// inlineSidechain reports whether the transcript at path holds sidechain
// entries (isSidechain: a Task's subagent written inline, as 1.0.x does).
func inlineSidechain(t *testing.T, path string) bool {
	t.Helper()
	for _, l := range readLines(t, path) {
		var e entry
		if json.Unmarshal(l, &e) == nil && e.Sidechain {
			return true
		}
	}
	return false
}
