package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxTerm is a real terminal (a tmux pane on a server of its own) that an
// interactive Claude Code runs in.
type tmuxTerm struct {
	t      testing.TB
	socket string
}

// newTmux starts program with args in dir, in a w×h pane of a tmux server
// of its own, with exactly the environment env (env -i: nothing of the
// test's leaks in). The server is killed when the test ends.
func newTmux(t testing.TB, w, h int, env []string, dir, program string, args ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the interactive client cannot run")
	}
	tm := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := []string{"new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir, "env", "-i"}
	cmd = append(cmd, env...)
	cmd = append(cmd, program)
	cmd = append(cmd, args...)
	tm.run(cmd...)
	tm.run("set-option", "-g", "remain-on-exit", "on")
	pid, _ := strconv.Atoi(strings.TrimSpace(tm.run("display-message", "-p", "-t", "0", "#{pane_pid}")))
	// The server goes, and the program is waited for (it writes into the
	// test's folders until it has gone, which are removed next).
	t.Cleanup(func() {
		exec.Command("tmux", "-S", tm.socket, "kill-server").Run()
		proc, err := os.FindProcess(pid)
		if pid <= 0 || err != nil {
			return
		}
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if proc.Signal(syscall.Signal(0)) != nil {
				return
			}
		}
		proc.Kill()
		time.Sleep(500 * time.Millisecond)
	})
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// typed types text as it is; keys sends tmux key names (Enter, Escape).
func (tm *tmuxTerm) typed(text string) { tm.run("send-keys", "-t", "0", "-l", text) }
func (tm *tmuxTerm) keys(keys ...string) {
	tm.run(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

func (tm *tmuxTerm) screen() string { return tm.run("capture-pane", "-p", "-J", "-t", "0") }

// waitUntil waits up to limit until ok says yes of the screen, and returns
// the screen; the test fails with the last screen otherwise.
func (tm *tmuxTerm) waitUntil(what string, limit time.Duration, ok func(screen string) bool) string {
	tm.t.Helper()
	var s string
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if s = tm.screen(); ok(s) {
			return s
		}
	}
	tm.t.Fatalf("%s: not on the screen after %v:\n%s", what, limit, s)
	return ""
}

// dead says whether the pane's program has ended.
func (tm *tmuxTerm) dead() bool {
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", "0", "#{pane_dead}")) == "1"
}

// exitStatus is the exit status of the pane's program once tmux has it
// (a while after the pane is dead), else "".
func (tm *tmuxTerm) exitStatus() string {
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", "0", "#{?pane_dead,#{pane_dead_status},}"))
}
