package repair_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/killtest"
	"github.com/cfix-dev/cfix/repair"
)

// TestKillHelper is the child process of TestKillDuringApply.
func TestKillHelper(t *testing.T) { killtest.Child(t) }

// TestKillDuringApply kills an apply of a multi-file change set at every
// step. Afterwards each file is byte for byte its old or its new version,
// and both undo and a re-run of repair finish the job.
func TestKillDuringApply(t *testing.T) {
	// The reference: the old and new bytes of every file.
	ref := damage.CopyStore(t, damage.V88)
	damage.Many(t, ref)
	old := snapshot(t, ref)
	cs, err := repair.Plan(repair.Options{Root: ref})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Ops) < 5 {
		t.Fatalf("plan has %d ops, want a multi-file plan", len(cs.Ops))
	}
	res := apply(t, cs, t.TempDir())
	repaired := snapshot(t, ref)
	// The torn last line of the main session is cut in place: the kills
	// cover that path as well as the rewrites.
	if log, _ := os.ReadFile(filepath.Join(res.Journal, "log.jsonl")); !bytes.Contains(log, []byte(`"cut":true`)) {
		t.Fatalf("no op of the plan was cut in place:\n%s", log)
	}

	rel := func(root string, m map[string]file) map[string]file {
		out := map[string]file{}
		for p, f := range m {
			r, _ := filepath.Rel(root, p)
			f.data = bytes.ReplaceAll(f.data, []byte(root), []byte("$ROOT"))
			out[r] = f
		}
		return out
	}
	oldRel, newRel := rel(ref, old), rel(ref, repaired)

	// Count the hook calls of a full apply.
	hooks := -1
	for at := 0; hooks < 0 || at < hooks; at++ {
		root := damage.CopyStore(t, damage.V88)
		damage.Many(t, root)
		plan, err := repair.Plan(repair.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		planFile := filepath.Join(t.TempDir(), "plan.json")
		if err := plan.Save(planFile); err != nil {
			t.Fatal(err)
		}
		journals := t.TempDir()
		killed, n := killtest.Apply(t, "TestKillHelper", planFile, at, journals)
		if !killed {
			hooks = n // the apply finished: at is past the last hook
			break
		}
		// Every file is its old or its new version.
		now := rel(root, snapshot(t, root))
		for r, f := range now {
			if filepath.Base(filepath.Dir(r)) == "journal" {
				continue
			}
			if strings.HasPrefix(filepath.Base(r), changeset.TempPrefix) {
				continue // the new content before its rename: the next writer removes it
			}
			o, isOld := oldRel[r]
			n, isNew := newRel[r]
			if !(isOld && bytes.Equal(f.data, o.data)) && !(isNew && bytes.Equal(f.data, n.data)) {
				t.Fatalf("kill at %d: %s is neither its old nor its new version", at, r)
			}
		}
		for r := range oldRel {
			if _, ok := now[r]; !ok {
				if _, gone := newRel[r]; gone {
					t.Fatalf("kill at %d: %s lost", at, r)
				}
			}
		}
		// Undo the interrupted journal: everything is old again.
		dirs, _ := filepath.Glob(filepath.Join(journals, "*-repair-*"))
		if len(dirs) == 1 {
			if _, err := changeset.RemoveTemps(dirs[0]); err != nil {
				t.Fatalf("kill at %d: %v", at, err)
			}
			u, err := changeset.Undo(dirs[0])
			if err != nil {
				t.Fatalf("kill at %d: undo: %v", at, err)
			}
			apply(t, u, journals)
			back := rel(root, snapshot(t, root))
			for r := range back {
				if strings.HasPrefix(filepath.Base(r), changeset.TempPrefix) {
					t.Fatalf("kill at %d: %s left after undo", at, r)
				}
			}
			for r, o := range oldRel {
				if f, ok := back[r]; !ok || !bytes.Equal(f.data, o.data) {
					t.Fatalf("kill at %d: after undo %s is not its old version", at, r)
				}
			}
		}
		// A re-run finishes the job.
		again, err := repair.Plan(repair.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, again, journals)
		done := rel(root, snapshot(t, root))
		for r, n := range newRel {
			if f, ok := done[r]; !ok || !bytes.Equal(f.data, n.data) {
				t.Fatalf("kill at %d: after the re-run %s is not its repaired version:\n%s\nwant:\n%s", at, r, f.data, n.data)
			}
		}
	}
	if hooks < 10 {
		t.Fatalf("only %d kill points", hooks)
	}
	t.Logf("killed at each of %d points", hooks)
}

// TestAppendBetweenPlanAndApply: Claude Code appends to the session after
// the plan was made. Apply refuses, and the appended line is there.
func TestAppendBetweenPlanAndApply(t *testing.T) {
	main, cs := emptyLinePlan(t)
	line := []byte(`{"type":"last-prompt","lastPrompt":"appended","sessionId":"` + damage.V88Session + `"}` + "\n")
	appendLine(t, main, line)
	fi, _ := os.Stat(main) // the file with the append
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	var re *changeset.RefusedError
	if !errors.As(err, &re) || re.Path != main {
		t.Fatalf("apply: %v, want a refusal naming %s", err, main)
	}
	b, _ := os.ReadFile(main)
	if !bytes.HasSuffix(b, line) {
		t.Fatal("the appended line is gone")
	}
	if fi2, _ := os.Stat(main); fi2.Size() != fi.Size() {
		t.Fatal("apply changed the file")
	}
}

// TestAppendDuringApply: an append that lands after apply's last look but
// before its rename goes to the old file; apply carries it over.
func TestAppendDuringApply(t *testing.T) {
	main, cs := emptyLinePlan(t)
	line := []byte(`{"type":"last-prompt","lastPrompt":"appended","sessionId":"` + damage.V88Session + `"}` + "\n")
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "checked" && cs.Ops[i].Path == main {
			appendLine(t, main, line)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Appended) != 1 || res.Appended[0] != main {
		t.Errorf("appended = %v", res.Appended)
	}
	b, _ := os.ReadFile(main)
	if !bytes.HasSuffix(b, line) || bytes.Contains(b, []byte("\n\n")) {
		t.Fatal("the append was not carried over, or the empty line is still there")
	}
	// And an append between verify and the last look: refused, rolled back.
	main, cs = emptyLinePlan(t)
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if step == "written" && cs.Ops[i].Path == main {
			appendLine(t, main, line)
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "changed while applying") {
		t.Fatalf("apply: %v", err)
	}
	b, _ = os.ReadFile(main)
	if !bytes.HasSuffix(b, line) {
		t.Fatal("the appended line is gone")
	}
}

// TestAppendBeforeCut: a torn last line is cut in place; an append that
// lands after the cut's backup is seen at its last look: refused, and the
// appended line (and the torn one) are still there.
func TestAppendBeforeCut(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	damage.WriteLines(t, main, append(ls, []byte(`{"type":"user","torn`)), false)
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"type":"last-prompt","lastPrompt":"appended","sessionId":"` + damage.V88Session + `"}` + "\n")
	steps := ""
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(step string, i int) {
		if cs.Ops[i].Path == main {
			steps += step + " "
			if step == "backed-up" {
				appendLine(t, main, line)
			}
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "changed while applying") || !strings.Contains(err.Error(), "everything applied was rolled back") || steps != "before backed-up " {
		t.Fatalf("apply: %v (steps %s; a cut has no written step)", err, steps)
	}
	b, _ := os.ReadFile(main)
	if !bytes.HasSuffix(b, append([]byte(`{"type":"user","torn`), line...)) {
		t.Fatalf("the file lost bytes:\n%s", b[max(0, len(b)-200):])
	}
}

// emptyLinePlan copies the v88 store, puts an empty line into its main
// session (a rewrite, not a cut) and plans its repair.
func emptyLinePlan(t *testing.T) (main string, cs *changeset.ChangeSet) {
	t.Helper()
	root := damage.CopyStore(t, damage.V88)
	main = damage.MainFile(root)
	ls := damage.Lines(t, main)
	damage.WriteLines(t, main, append(ls[:5:5], append([][]byte{{}}, ls[5:]...)...), true)
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return main, cs
}

func appendLine(t testing.TB, path string, line []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(line)
	f.Close()
}

// TestLiveSessionRefused: a session a running Claude Code holds, or one
// written to in the last minute, is not rewritten without --force.
func TestLiveSessionRefused(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	damage.WriteLines(t, main, append(ls, []byte("")), true)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(main)
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "may be live") {
		t.Fatalf("fresh file: %v", err)
	}
	age(t, root)
	cs, _ = repair.Plan(repair.Options{Root: root})
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), LiveSessions: map[string]bool{damage.V88Session: true}})
	if err == nil || !strings.Contains(err.Error(), "is live") {
		t.Fatalf("live session: %v", err)
	}
	if after, _ := os.ReadFile(main); !bytes.Equal(before, after) {
		t.Fatal("a refused apply changed the file")
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true, LiveSessions: map[string]bool{damage.V88Session: true}}); err != nil {
		t.Fatalf("--force: %v", err)
	}
}
