package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/cfix-dev/cfix/internal/visible"
)

// pager returns where a long text for w goes: on a terminal, the input of
// the pager ($CFIX_PAGER, else $PAGER, else less; with LESS=FRX unless
// LESS is set, so a text that fits on one screen is printed and left
// there), as git diff does; elsewhere, or when the pager is cat or
// cannot start, w itself. done waits for the pager to end.
func pager(w io.Writer) (out io.Writer, done func()) {
	f, ok := visible.Unwrap(w).(*os.File)
	if !ok || !isTerminal(f) {
		return w, func() {}
	}
	cmdline := os.Getenv("CFIX_PAGER")
	if cmdline == "" {
		cmdline = os.Getenv("PAGER")
	}
	if cmdline == "" {
		if _, err := exec.LookPath("less"); err != nil {
			return w, func() {}
		}
		cmdline = "less"
	}
	if strings.TrimSpace(cmdline) == "cat" {
		return w, func() {}
	}
	c := exec.Command("sh", "-c", cmdline)
	c.Stdout, c.Stderr = f, os.Stderr
	c.Env = os.Environ()
	if os.Getenv("LESS") == "" {
		c.Env = append(c.Env, "LESS=FRX")
	}
	in, err := c.StdinPipe()
	if err != nil {
		return w, func() {}
	}
	if err := c.Start(); err != nil {
		return w, func() {}
	}
	// What a pager gets, it shows as the terminal would: through
	// internal/visible too.
	pw := visible.NewWriter(&pagerWriter{w: in})
	return pw, func() {
		pw.Flush()
		in.Close()
		c.Wait()
	}
}

// pagerWriter writes to a pager, and stops writing, without an error,
// once the pager has quit (the user read enough).
type pagerWriter struct {
	w    io.Writer
	gone bool
}

func (p *pagerWriter) Write(b []byte) (int, error) {
	if p.gone {
		return len(b), nil
	}
	if _, err := p.w.Write(b); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
			p.gone = true
			return len(b), nil
		}
		return 0, err
	}
	return len(b), nil
}
