//go:build !unix

package guard

import "os/exec"

// detach does nothing where there are no sessions to leave.
func detach(cmd *exec.Cmd) {}
