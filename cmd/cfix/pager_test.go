package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/shell"
)

// TestPlanOnATerminal: on a terminal, a dry run of a planner prints its
// plan and ends without waiting for a key, whether it says something
// before the plan (unpack: where each session lands) or its plan is long
// (archive of every session); --diff, the whole diff asked for, goes
// through the pager, which waits. In a real terminal of 24 lines (tmux),
// and under script(1), whose terminal has no size: unpack's dry run
// waited in less in both before.
func TestPlanOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux and script")
	}
	for _, p := range []string{"tmux", "script", "less"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed: the terminal test of plans is skipped", p)
		}
	}
	bin := buildCfix(t)
	tmp := t.TempDir()
	env := []string{"CFIX_JOURNAL_DIR=" + filepath.Join(tmp, "journal"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"XDG_DATA_HOME=" + filepath.Join(tmp, "data"), "XDG_STATE_HOME=" + filepath.Join(tmp, "state"),
		"CLAUDE_CONFIG_DIR=", "CFIX_PAGER=", "PAGER=", "LESS=", "TERM=xterm-256color", "HOME=" + tmp}
	os.Mkdir(filepath.Join(tmp, "a"), 0o755)
	a := damage.CopyStoreTo(t, "2.1.332", filepath.Join(tmp, "a"))
	packFile := filepath.Join(tmp, "work.cfixpack")
	pk := exec.Command(bin, "pack", "bc1c66c0", "--root", a, "-o", packFile)
	pk.Env = append(os.Environ(), env...)
	if out, err := pk.CombinedOutput(); err != nil {
		t.Fatalf("cfix pack: %v\n%s", err, out)
	}
	empty := filepath.Join(tmp, "b", ".claude")
	os.MkdirAll(filepath.Join(empty, "projects"), 0o755)
	to := filepath.Join(tmp, "to")
	os.Mkdir(to, 0o755)
	old := filepath.Join(tmp, "c")
	os.Mkdir(old, 0o755)
	oldRoot := damage.CopyStoreTo(t, "2.0.77", old)
	damage.Age(t, oldRoot)

	unpack := fmt.Sprintf("%s unpack %s --root %s --to %s", bin, shell.Quote(packFile), shell.Quote(empty), shell.Quote(to))
	archive := fmt.Sprintf("%s archive --older-than 30d --root %s", bin, shell.Quote(oldRoot))
	for _, c := range []struct{ name, command, want string }{
		{"unpack", unpack, "new here"},
		{"archive", archive, "delete-empty-dir"},
	} {
		tm := newTmux(t, 100, 24, env, c.command)
		tm.waitFor(c.name+"'s dry run, ended", c.want, "dry run: nothing was written", "EXITED 0")

		// script's terminal has no size: the pager cannot know the screen.
		cmd := exec.Command("script", "-qc", c.command, "/dev/null")
		cmd.Env = append(os.Environ(), env...)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r // kept open: a key never comes
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil || !strings.Contains(out.String(), "dry run: nothing was written") {
				t.Errorf("script -qc '%s dry run': %v\n%s", c.name, err, out.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("script -qc '%s dry run': still waiting after 20 s:\n%q", c.name, out.String())
		}
		w.Close()
	}

	// --diff asks for the whole diff: it goes through the pager, which
	// waits for q.
	tm := newTmux(t, 100, 24, env, archive+" --diff")
	tm.waitFor("the pager", "cfix archive: archives", ":")
	time.Sleep(500 * time.Millisecond)
	if s := tm.screen(); strings.Contains(s, "EXITED") {
		t.Fatalf("archive --diff did not page:\n%s", s)
	}
	tm.keys("q")
	tm.waitFor("the pager quit", "EXITED 0")
}
