package changeset

import (
	"fmt"
	"strings"
	"time"
)

// liveReason says why apply refuses op as a change to a live session
// (named by a running Claude Code, or a transcript written within the
// live window), or "" when it does not; --force takes no such refusal.
func liveReason(op *Op, opts ApplyOptions, now time.Time) string {
	if opts.Force {
		return ""
	}
	if op.Session != "" && opts.LiveSessions[op.Session] {
		return fmt.Sprintf("session %s is live (a running Claude Code holds it); close it or use --force", op.Session)
	}
	if op.Expect.Exists && !op.Expect.Dir && strings.HasSuffix(op.Path, ".jsonl") && op.Action != Create && op.Action != RemoveEmptyDir && !op.AsWritten {
		window := opts.LiveWindow
		if window == 0 {
			window = DefaultLiveWindow
		}
		if age := now.Sub(op.Expect.ModTime); age < window {
			return fmt.Sprintf("written %s ago, the session may be live; wait %s or use --force", age.Round(time.Second), window)
		}
	}
	return ""
}

// LiveRefusals returns what an apply of cs with opts would refuse as
// changes to live sessions, as of now: a dry run says so before the plan.
func LiveRefusals(cs *ChangeSet, opts ApplyOptions) []RefusedError {
	now := time.Now()
	var out []RefusedError
	for i := range cs.Ops {
		if r := liveReason(&cs.Ops[i], opts, now); r != "" {
			out = append(out, RefusedError{Path: cs.Ops[i].Path, Reason: r})
		}
	}
	return out
}
