package archive

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
)

var killPlan = flag.String("kill-plan", "", "internal: apply this plan and SIGKILL at hook -kill-at")
var killAt = flag.Int("kill-at", -1, "internal: the hook call to die at")

// TestArchiveKillHelper is the child process of TestArchiveKilled.
func TestArchiveKillHelper(t *testing.T) {
	if *killPlan == "" {
		t.Skip("run by TestArchiveKilled")
	}
	cs, err := changeset.Load(*killPlan)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: os.Getenv("KILL_JOURNALS"), Hook: func(step string, i int) {
		if n == *killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Second)
		}
		n++
	}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("HOOKS", n)
}

// TestArchiveKilled kills the (batch) apply of an archive of every session
// of a store at each of its steps. Afterwards no file is lost (each is in
// the store or in the journal's backup), and undo of the interrupted
// journal gives back the whole store, every byte, mode and mtime, and
// leaves no archive file.
func TestArchiveKilled(t *testing.T) {
	src := "../testdata/corpus/2.1.330/.claude"
	hooks := -1
	for at := 0; hooks < 0 || at < hooks; at++ {
		root := copyStore(t, src)
		before := tree(t, root)
		adir := filepath.Join(t.TempDir(), "archive")
		p, err := Archive(Options{Root: root, Dir: adir, OlderThan: time.Minute, Build: true})
		if err != nil {
			t.Fatal(err)
		}
		if !p.ChangeSet.Batch {
			t.Fatal("the archive plan is not a batch")
		}
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if err := p.ChangeSet.Save(planFile); err != nil {
			t.Fatal(err)
		}
		journals := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestArchiveKillHelper$", "-kill-plan="+planFile, "-kill-at="+strconv.Itoa(at))
		cmd.Env = append(os.Environ(), "KILL_JOURNALS="+journals)
		out, err := cmd.CombinedOutput()
		p.Cleanup()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			if err != nil {
				t.Fatalf("kill at %d: %v\n%s", at, err, out)
			}
			if i := strings.Index(string(out), "HOOKS "); i >= 0 {
				fmt.Sscanf(string(out[i+6:]), "%d", &hooks)
			}
			if hooks < 0 || at < hooks {
				t.Fatalf("kill at %d: not killed, hooks=%d\n%s", at, hooks, out)
			}
			break
		}
		dirs, _ := filepath.Glob(filepath.Join(journals, "*"))
		if len(dirs) != 1 {
			t.Fatalf("kill at %d: %d journals", at, len(dirs))
		}
		u, err := changeset.Undo(dirs[0])
		if err != nil {
			t.Fatalf("kill at %d: undo: %v", at, err)
		}
		if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals}); err != nil {
			t.Fatalf("kill at %d: undo: %v", at, err)
		}
		requireTree(t, fmt.Sprintf("kill at %d, then undo", at), before, tree(t, root))
		if left, _ := filepath.Glob(filepath.Join(adir, "*"+Ext)); len(left) != 0 {
			t.Fatalf("kill at %d: archive files left after undo: %v", at, left)
		}
	}
	if hooks < 10 {
		t.Fatalf("only %d hook calls", hooks)
	}
	t.Logf("killed at each of %d steps", hooks)
}
