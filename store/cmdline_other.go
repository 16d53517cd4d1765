//go:build !linux

package store

// processIsClaude cannot tell a process's program here: known is false,
// and a running pid's file is left alone.
func processIsClaude(pid int) (name string, claude, known bool) { return "", false, false }
