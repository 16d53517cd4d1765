package carryremote_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/remote"
	"github.com/cfix-dev/cfix/store"
)

// sessionsHolding returns the ids of root's sessions whose transcripts
// hold text.
func sessionsHolding(t *testing.T, root, text string) []string {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range l.Files {
		if f.Kind == store.KindSession {
			if b, _ := os.ReadFile(f.Path); bytes.Contains(b, []byte(text)) {
				ids = append(ids, f.Session)
			}
		}
	}
	return ids
}

// lines says which of the marks each session of root holds, by session.
func lines(t *testing.T, root string, marks []string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, m := range marks {
		for _, id := range sessionsHolding(t, root, `"customTitle":"`+m+`"`) {
			got[id] += m + ","
		}
	}
	return got
}

// TestPullForkLines: a session pulled, then gone on at both machines in
// turns, its forks gone on too, pushed and pulled both ways. Each pull
// lands one fork per line of history that diverged from what the store
// has: a fork landed before grows with its line, a fork that went on here
// is left and the remote line lands once more beside it; a fork pushed
// back to the machine whose line it holds is that line, not a copy of it.
// No store ends with two sessions holding the same lines, and every line
// written is in both stores.
func TestPullForkLines(t *testing.T) {
	dir := t.TempDir()
	st, err := remote.Open("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	a := damage.CopyStore(t, "2.1.332")
	b := carrytest.EmptyStore(t)
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
	mainA, mainB := carrytest.MainOf(t, a, alpha), carrytest.MainOf(t, b, alpha)
	goOn := func(path, id, text string) {
		carrytest.AppendLine(t, path, `{"type":"custom-title","customTitle":"`+text+`","sessionId":"`+id+`"}`)
	}
	how := func(pl *carryremote.PullPlan) map[string]carry.Landed {
		m := map[string]carry.Landed{}
		for _, l := range pl.Sessions {
			if l.How != carry.LandSame {
				m[l.Session] = l
			}
		}
		return m
	}
	forks := func(pl *carryremote.PullPlan) (ids []string) {
		for _, l := range pl.Sessions {
			if l.How == carry.LandFork {
				ids = append(ids, l.ID)
			}
		}
		return ids
	}
	nothing := func(what string, root, machine, home string) {
		t.Helper()
		n := sessionCount(t, root)
		if pl := pull(t, st, root, machine, home, carryremote.PullOptions{}); !pl.ChangeSet.Empty() || sessionCount(t, root) != n {
			t.Fatalf("%s: the pull plans %d ops: %+v", what, len(pl.ChangeSet.Ops), how(pl))
		}
	}

	// Both go on: the remote line lands as a fork.
	goOn(mainA, alpha, "a1")
	goOn(mainB, alpha, "b1")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	pl := pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
	f1 := forks(pl)
	if len(f1) != 1 {
		t.Fatalf("both went on: forks %v", f1)
	}
	// B's session goes on after the fork: the remote did not, nothing to do.
	goOn(mainB, alpha, "b2")
	nothing("B went on after the fork, the remote did not", b, "laptop", "/home/b")
	// Both go on again: the fork grows with the remote's line.
	goOn(mainA, alpha, "a2")
	goOn(mainB, alpha, "b3")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
	if l := how(pl)[alpha]; l.How != carry.LandAppend || l.ID != f1[0] || len(forks(pl)) != 0 {
		t.Fatalf("both went on again: %+v, forks %v; want the fork %s appended to", l, forks(pl), f1[0])
	}
	// The fork goes on at B (resumed there), and A goes on: the fork is
	// a line of B's now; the remote's lands beside it, once.
	goOn(carrytest.MainOf(t, b, f1[0]), f1[0], "f1 at B")
	goOn(mainA, alpha, "a3")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
	if f2 := forks(pl); len(f2) != 1 || f2[0] == f1[0] {
		t.Fatalf("the fork and the remote went on: forks %v (the first %s)", f2, f1[0])
	}
	nothing("B again", b, "laptop", "/home/b")

	// B pushes its sessions, forks with them; A pulls them: B's line lands
	// as a fork, the fork B went on with as new, and the fork of A's own
	// line is that line.
	push(t, st, b, "desk", "/home/b", carryremote.PushOptions{})
	pl = pull(t, st, a, "desk", "/home/dev", carryremote.PullOptions{})
	own := 0
	for _, l := range pl.Sessions {
		if l.How == carry.LandAhead && l.ID == alpha && l.Session != alpha {
			own++
		}
	}
	if own != 1 || len(forks(pl)) != 1 || how(pl)[f1[0]].How != carry.LandNew {
		t.Fatalf("pull at A: %+v; want one fork (B's line), %s new, the fork of A's line found as %s", how(pl), f1[0], alpha)
	}
	nothing("A again", a, "desk", "/home/dev")
	// A pushes, B pulls: the fork of B's line that A made is B's line.
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	nothing("B after A pushed the fork of B's line", b, "laptop", "/home/b")
	push(t, st, b, "desk", "/home/b", carryremote.PushOptions{})
	nothing("A after B pushed again", a, "desk", "/home/dev")

	marks := []string{"a1", "a2", "a3", "b1", "b2", "b3", "f1 at B"}
	for _, root := range []string{a, b} {
		got := lines(t, root, marks)
		seen := map[string]string{}
		for id, ls := range got {
			if other, ok := seen[ls]; ok {
				t.Errorf("%s: sessions %s and %s hold the same lines %s", root, other, id, ls)
			}
			seen[ls] = id
		}
		all := strings.Join(func() []string {
			var v []string
			for _, ls := range got {
				v = append(v, ls)
			}
			return v
		}(), "")
		for _, m := range marks {
			if !strings.Contains(all, m+",") {
				t.Errorf("%s lacks the line %s", root, m)
			}
		}
		t.Logf("%s: %v", root, got)
		carrytest.NoErrors(t, root)
	}
}
