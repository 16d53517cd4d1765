//go:build unix

package guard

import (
	"os/exec"
	"syscall"
)

// detach makes cmd outlive the hook: a session of its own, away from the
// process group Claude Code may kill.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
