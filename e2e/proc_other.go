//go:build !unix

package e2e

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist: the
// context's cancel kills the process only.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup is a no-op where process groups do not exist.
func killProcessGroup(cmd *exec.Cmd) {}
