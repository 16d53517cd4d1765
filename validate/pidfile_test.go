package validate_test

import (
	"runtime"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// TestPIDFileStale: a sessions/<pid>.json is session-pid-stale only when
// its session is not on disk and its pid runs no Claude Code; its hint is
// prune's; a reused pid no longer makes the session live.
func TestPIDFileStale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the program of a pid is told from /proc/<pid>/cmdline")
	}
	root := damage.CopyStore(t, damage.V88)
	gone := damage.PIDFile(t, root, damage.GonePID(t), damage.NotOnDisk)
	reused := damage.PIDFile(t, root, damage.Running(t, "vim"), damage.NotOnDisk)
	// A new session writes no transcript before its first prompt.
	starting := damage.PIDFile(t, root, damage.Running(t, "claude"), damage.NotOnDisk)
	// The session is on disk: not this finding (session-live, or nothing).
	onDisk := damage.PIDFile(t, root, damage.Running(t, "vim"), damage.V88Session)
	deadOnDisk := damage.PIDFile(t, root, damage.GonePID(t), damage.V88Session)
	rep := run(t, root)
	got := map[string]validate.Finding{}
	for _, f := range findingsOf(rep, validate.SessionPIDStale) {
		got[f.Path] = f
	}
	for _, p := range []string{gone, reused} {
		f, ok := got[p]
		if !ok {
			t.Errorf("no session-pid-stale at %s", p)
			continue
		}
		if f.Hint != "cfix prune --what stale-pid-files --apply" {
			t.Errorf("%s: hint %q", p, f.Hint)
		}
	}
	for _, p := range []string{starting, onDisk, deadOnDisk} {
		if _, ok := got[p]; ok {
			t.Errorf("session-pid-stale at %s", p)
		}
	}
	for _, f := range findingsOf(rep, validate.SessionLive) {
		if f.Path == reused {
			t.Errorf("a reused pid's session is taken for live: %s", f.Message)
		}
	}
}
