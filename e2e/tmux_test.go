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

// promptBox reads the interactive client's prompt box off the screen s:
// the text of its input line(s), between the last two rules (lines of
// ─), and the lines under it (the mode line, a command menu, a status
// line). ok is false when the screen shows no box.
func promptBox(s string) (input string, below []string, ok bool) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var rules []int
	for i, l := range lines {
		if strings.Contains(l, "──") && strings.Trim(l, "─ ") == "" {
			rules = append(rules, i)
		}
	}
	if len(rules) < 2 {
		return "", nil, false
	}
	r1, r2 := rules[len(rules)-2], rules[len(rules)-1]
	var in []string
	for _, l := range lines[r1+1 : r2] {
		in = append(in, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "❯")))
	}
	return strings.TrimSpace(strings.Join(in, "\n")), lines[r2+1:], true
}

// busy says whether the client works on something (a reply, a tool, a
// command): it offers to interrupt it.
func busy(s string) bool { return strings.Contains(s, "esc to interrupt") }

// waitIdle waits up to limit until the interactive client waits for
// input: its prompt box on the screen, empty, and nothing running.
func (tm *tmuxTerm) waitIdle(what string, limit time.Duration) string {
	tm.t.Helper()
	return tm.waitUntil(what+": the client's prompt, idle and empty", limit, func(s string) bool {
		in, _, ok := promptBox(s)
		return ok && in == "" && !busy(s)
	})
}

// prompt sends text as a prompt to the interactive client, as a person
// does: once the client is idle, it types the text, waits until the
// prompt box shows it, presses Enter, and waits until the box is empty
// again (the client took it). The caller waits for the reply.
func (tm *tmuxTerm) prompt(text string) {
	tm.t.Helper()
	tm.waitIdle("before the prompt "+strconv.Quote(text), time.Minute)
	tm.typed(text)
	tm.waitUntil("the prompt "+strconv.Quote(text)+" typed", 30*time.Second, func(s string) bool {
		in, _, ok := promptBox(s)
		return ok && in == text
	})
	tm.keys("Enter")
	tm.waitUntil("the prompt "+strconv.Quote(text)+" sent", 30*time.Second, func(s string) bool {
		in, _, ok := promptBox(s)
		return ok && in != text
	})
}

// slash runs the client's slash command name (without its /) as a person
// does: once the client is idle, it types it, and presses Enter only when
// the command menu under the prompt box has it selected ("❯ /name" and its
// description): Enter runs the selected entry, which the menu picks as it
// filters, a while after the keys.
func (tm *tmuxTerm) slash(name string) {
	tm.t.Helper()
	tm.waitIdle("before /"+name, time.Minute)
	tm.typed("/" + name)
	tm.waitUntil("/"+name+" selected in the command menu", 30*time.Second, func(s string) bool {
		in, below, ok := promptBox(s)
		if !ok || in != "/"+name {
			return false
		}
		for _, l := range below {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "❯" && f[1] == "/"+name {
				return true
			}
		}
		return false
	})
	tm.keys("Enter")
}
