package e2e

import (
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

// TestAttachmentMalformed: a file attachment whose content was stripped
// makes the client that wrote the session throw on every resume, before any
// request (attachment-malformed); after cfix repair the resume sends the
// whole history again.
func TestAttachmentMalformed(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs a real Claude Code version")
	}
	if err := Install(AttachProbeVersion); err != nil {
		t.Fatal(err)
	}
	env := NewEnv(t, AttachProbeVersion, "")
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

	// Strip the attachment's content, as tools that slim transcripts do.
	_, line := dmg.StripAttachment(t, path, "file", "content")
	dmg.Age(t, env.ClaudeDir())
	if !hasCode(ValidateStore(t, env.ClaudeDir()), "attachment-malformed", "error", line) {
		t.Fatalf("validate reports no attachment-malformed error at line %d", line)
	}
	broken := resumeAndRecord(t, env, dir, "-r", id)
	if broken.Res.ExitCode == 0 || len(broken.Res.MessageRequests()) > 0 {
		t.Fatalf("claude %s resumed the damaged session (expected it to throw before any request): %s", AttachProbeVersion, broken.Res)
	}
	if out := broken.Res.Stdout + broken.Res.Stderr; !strings.Contains(out, "is not an object") {
		t.Errorf("the failed resume says %q, not the TypeError measured", strings.TrimSpace(out))
	}
	t.Logf("damaged: claude %s exits %d: %s", AttachProbeVersion, broken.Res.ExitCode, strings.TrimSpace(broken.Res.Stdout+broken.Res.Stderr))

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
