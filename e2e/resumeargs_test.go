package e2e

import (
	"strings"
	"testing"
)

// TestResumeArgs measures how each pinned client parses the session of
// --resume, for cfix resume (and browse's Enter), which names a session
// from the store: --resume=ID resumes it; --resume followed by a word
// starting with "-" takes that word for an option (--resume --version
// prints the version: a transcript named --dangerously-skip-permissions
// would turn that on), where --resume=--version takes it for the session;
// and "--" after --resume is not honoured (no session is given).
func TestResumeArgs(t *testing.T) {
	for _, v := range versionsSince(t, "1.0.0") {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, v, "")
			if res := env.Run("work", "-p", "PLANTED FIRST PROMPT"); res.ExitCode != 0 {
				t.Fatalf("%s", res)
			}
			id, err := NewestSession(env.ClaudeDir(), env.Dir("work"))
			if err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) Result {
				t.Helper()
				return env.RunProgram(env.Exe, "work", append(args, "--allowedTools", "Bash")...)
			}
			resumed := func(r Result) bool {
				for _, q := range r.MessageRequests() {
					if strings.Contains(q.Text(), "PLANTED FIRST PROMPT") {
						return true
					}
				}
				return false
			}
			if r := run("--resume="+id, "-p", "CHECK"); r.ExitCode != 0 || !resumed(r) {
				t.Errorf("--resume=ID does not resume the session:\n%s", r)
			}
			if r := run("--resume", "--version"); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != v+" (Claude Code)" {
				t.Errorf("--resume --version: want the version printed (the word taken for an option):\n%s", r)
			}
			if r := run("--resume=--version", "-p", "CHECK"); r.ExitCode == 0 || strings.Contains(r.Stdout, "(Claude Code)") || len(r.MessageRequests()) > 0 {
				t.Errorf("--resume=--version: want --version taken for a session that is not there:\n%s", r)
			}
			if r := run("--resume", "--", id, "-p", "CHECK"); r.ExitCode == 0 || resumed(r) {
				t.Errorf("--resume -- ID: want no session given (-- not honoured):\n%s", r)
			}
		})
	}
}
