package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dmg "github.com/cfix-dev/cfix/internal/damage"
)

// AttachProbeVersion is the client TestAttachmentMalformed runs: one of the
// versions (2.1.100 to 2.1.279) that throw on a file attachment without
// content. It is not pinned; scripts/test-deps.sh installs it ("# probe:"
// in versions.txt).
const AttachProbeVersion = "2.1.219"

// TestAttachmentMalformed: an attachment entry a client cannot turn into
// a message makes the client that wrote the session throw on every resume,
// before any request (attachment-malformed); after cfix repair the resume
// sends the whole history again. Two shapes: a file attachment whose
// content was stripped (2.1.100 to 2.1.274 throw: AttachProbeVersion), and
// a hook's output whose stdout is an object (every version from 2.1.100:
// the newest pinned one).
func TestAttachmentMalformed(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs a real Claude Code version")
	}
	t.Parallel()
	pinned, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, version string
		damage        func(t *testing.T, path string) int
	}{
		{"file-without-content", AttachProbeVersion, func(t *testing.T, path string) int {
			// Stripped as tools that slim transcripts do.
			_, line := dmg.StripAttachment(t, path, "file", "content")
			return line
		}},
		{"hook-stdout-object", pinned[len(pinned)-1], func(t *testing.T, path string) int {
			// A hook's JSON output stored decoded, right after the prompt.
			return insertAttachment(t, path, map[string]any{"type": "hook_success", "hookName": "UserPromptSubmit",
				"hookEvent": "UserPromptSubmit", "toolUseID": "hook-1", "content": "", "stdout": map[string]any{"continue": true},
				"stderr": "", "exitCode": 0})
		}},
	} {
		t.Run(c.name+"-"+c.version, func(t *testing.T) { attachmentMalformed(t, c.version, c.damage) })
	}
}

// attachmentMalformed runs one case of TestAttachmentMalformed.
func attachmentMalformed(t *testing.T, version string, damage func(t *testing.T, path string) int) {
	if err := Install(version); err != nil {
		t.Fatal(err)
	}
	env := NewEnv(t, version, "")
	dir := env.Dir("proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An @-mention: the client attaches the file's content to the turn.
	const prompt = "look at @notes.txt please"
	if r := env.Run(dir, "-p", prompt); r.ExitCode != 0 {
		t.Fatalf("first run: %s", r)
	}
	id, err := NewestSession(env.ClaudeDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := ProjectDir(env.ClaudeDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(proj, id+".jsonl")
	before := resumeAndRecord(t, env, dir, "-r", id)
	if before.Res.ExitCode != 0 || before.Main == nil {
		t.Fatalf("resume of the sound session: %s", before.Res)
	}

	line := damage(t, path)
	dmg.Age(t, env.ClaudeDir())
	if !hasCode(ValidateStore(t, env.ClaudeDir()), "attachment-malformed", "error", line) {
		t.Fatalf("validate reports no attachment-malformed error at line %d", line)
	}
	broken := resumeAndRecord(t, env, dir, "-r", id)
	if broken.Res.ExitCode == 0 || len(broken.Res.MessageRequests()) > 0 {
		t.Fatalf("claude %s resumed the damaged session (expected it to throw before any request): %s", version, broken.Res)
	}
	out := strings.TrimSpace(broken.Res.Stdout + broken.Res.Stderr)
	if !strings.Contains(out, "is not an object") && !strings.Contains(out, "is not a function") {
		t.Errorf("the failed resume says %q, not the TypeError measured", out)
	}
	t.Logf("damaged: claude %s exits %d: %s", version, broken.Res.ExitCode, clip(out, 300))

	dmg.Age(t, env.ClaudeDir())
	repairApply(t, env.ClaudeDir(), t.TempDir())
	if rep := ValidateStore(t, env.ClaudeDir()); hasCode(rep, "attachment-malformed", "", 0) || len(rep.Errors()) > 0 {
		t.Fatalf("after repair: %+v", rep.Findings)
	}
	after := resumeAndRecord(t, env, dir, "-r", id)
	if after.Res.ExitCode != 0 || after.Main == nil {
		t.Fatalf("resume after repair: %s", after.Res)
	}
	if miss := missingTexts(before.Texts, after.Texts); len(miss) > 0 {
		t.Errorf("after repair the resume leaves out %q (before the damage it sent %q)", miss, before.Texts)
	}
	if !slices.ContainsFunc(after.Texts, func(s string) bool { return strings.Contains(s, prompt) }) {
		t.Errorf("after repair the resume does not send the first prompt: %q", after.Texts)
	}
	if after.Msgs < before.Msgs-1 {
		// The attachment's own message goes with it, no other.
		t.Errorf("after repair the resume sends %d messages, %d before the damage", after.Msgs, before.Msgs)
	}
}

// insertAttachment writes an attachment entry holding att right after the
// first user entry of path, its children linked to it, and returns its
// line.
func insertAttachment(t *testing.T, path string, att map[string]any) int {
	t.Helper()
	ls := dmg.Lines(t, path)
	for i, l := range ls {
		var u map[string]any
		if json.Unmarshal(l, &u) != nil || u["type"] != "user" {
			continue
		}
		e := map[string]any{}
		for _, k := range []string{"isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "timestamp", "entrypoint"} {
			if v, ok := u[k]; ok {
				e[k] = v
			}
		}
		e["type"], e["uuid"], e["parentUuid"], e["attachment"] = "attachment", "a77ac400-0000-4000-8000-000000000001", u["uuid"], att
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out := append(append([][]byte{}, ls[:i+1]...), raw)
		for _, l := range ls[i+1:] {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil && m["parentUuid"] == u["uuid"] {
				m["parentUuid"] = e["uuid"]
				if l, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, l)
		}
		dmg.WriteLines(t, path, out, true)
		return i + 2
	}
	t.Fatalf("%s: no user entry", path)
	return 0
}

// hasCode reports whether rep has a finding of code (of severity sev
// unless "") on line (any line when 0).
func hasCode(rep Report, code, sev string, line int) bool {
	for _, f := range rep.Findings {
		if f.Code == code && (sev == "" || f.Severity == sev) && (line == 0 || f.Line == line) {
			return true
		}
	}
	return false
}
