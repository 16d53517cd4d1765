package store

import "fmt"

// StalePIDFile tells whether sessions/<pid>.json l was left by a process
// that is gone (anthropics/claude-code#93132): its session has nothing on
// disk (onDisk false: no transcript and no session folder in any project
// folder) and its pid runs no process, or runs one that is not Claude Code
// (the pid reused by another program; told from /proc/<pid>/cmdline on
// Linux, and not told elsewhere). The file of a running Claude Code is
// never stale: a new session writes no transcript before its first prompt.
// The string says why, for a finding.
func StalePIDFile(l LiveSession, onDisk bool) (string, bool) {
	if onDisk || l.SessionID == "" {
		return "", false
	}
	if !l.Running {
		return fmt.Sprintf("pid %d runs no process", l.PID), true
	}
	name, claude, known := processIsClaude(l.PID)
	if !known || claude {
		return "", false
	}
	return fmt.Sprintf("pid %d now runs %s, not Claude Code", l.PID, name), true
}

// LayoutHolds reports whether the layout has a transcript (main, stub or
// subagent) or a session folder of session id.
func LayoutHolds(l *Layout, id string) bool {
	for _, f := range l.Files {
		if f.Session == id {
			return true
		}
	}
	for _, d := range l.SessionDirs {
		if d.Session == id {
			return true
		}
	}
	return false
}
