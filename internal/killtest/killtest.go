// Package killtest applies a saved change set in a child test process
// and kills it with SIGKILL at a chosen step of the apply, for the tests
// that prove an interrupted apply loses nothing.
package killtest

import (
	"bytes"
	"encoding/json"
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

var (
	planFlag = flag.String("kill-plan", "", "internal: apply this plan and SIGKILL at hook -kill-at")
	atFlag   = flag.Int("kill-at", -1, "internal: the hook call to die at")
)

// Child is the body of a test run only as the child of Apply: it applies
// the plan -kill-plan names into the journals of $KILL_JOURNALS, kills its
// own process at hook call -kill-at, and prints how many hook calls the
// apply made when it finishes first. Run otherwise, it skips its test.
func Child(t *testing.T) {
	if *planFlag == "" {
		t.Skip("run by a test that kills an apply (killtest.Apply)")
	}
	cs := ReadPlan(t, *planFlag)
	n := 0
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: os.Getenv("KILL_JOURNALS"), Hook: func(step string, i int) {
		if n == *atFlag {
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

// Apply runs the test named child (one that calls Child) of this test
// binary on the plan saved at planFile, journaling into journals, and
// kills it at hook call at. It reports whether the child was killed; when
// the apply finished first, at is past its last step, and hooks is how
// many hook calls it made.
func Apply(t *testing.T, child, planFile string, at int, journals string) (killed bool, hooks int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-kill-plan="+planFile, "-kill-at="+strconv.Itoa(at))
	cmd.Env = append(os.Environ(), "KILL_JOURNALS="+journals)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return true, 0
	}
	if err != nil {
		t.Fatalf("kill at %d: %v\n%s", at, err, out)
	}
	hooks = -1
	if i := bytes.Index(out, []byte("HOOKS ")); i >= 0 {
		fmt.Sscanf(string(out[i+6:]), "%d", &hooks)
	}
	if hooks < 0 || at < hooks {
		t.Fatalf("kill at %d: not killed, hooks=%d\n%s", at, hooks, out)
	}
	return false, hooks
}

// ReadPlan reads a change set saved in a test as the parent's planner made
// it, with the staging folders it read from: a plan loaded by
// changeset.Load owns none, and may not write archives.
func ReadPlan(t testing.TB, path string) *changeset.ChangeSet {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cs *changeset.ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	for _, op := range cs.Ops {
		if op.From != "" && !strings.HasPrefix(op.From, cs.Root+string(filepath.Separator)) {
			cs.Own(filepath.Dir(op.From))
		}
	}
	return cs
}
