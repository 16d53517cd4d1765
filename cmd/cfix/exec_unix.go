//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execClient replaces cfix with the client, run in dir with args.
func execClient(program, dir string, args []string) error {
	if err := os.Chdir(dir); err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("resume: %w", err)}
	}
	releaseLock()
	err := syscall.Exec(program, append([]string{program}, args...), os.Environ())
	return &exitError{code: exitFound, err: fmt.Errorf("resume: starting %s: %w", program, err)}
}
