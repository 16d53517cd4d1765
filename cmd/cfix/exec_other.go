//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execClient runs the client in dir with args, on cfix's terminal, and
// exits with its status (the platform cannot replace a process).
func execClient(program, dir string, args []string) error {
	releaseLock()
	c := exec.Command(program, args...)
	c.Dir, c.Stdin, c.Stdout, c.Stderr = dir, os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &exitError{code: ee.ExitCode()}
	}
	if err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("resume: starting %s: %w", program, err)}
	}
	return nil
}
