package carryremote_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/e2e/s3server"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
	"github.com/cfix-dev/cfix/store"
)

const (
	alpha    = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c" // 2.1.332's, in /home/dev/work/alpha, with subagents
	alphaCWD = "/home/dev/work/alpha"
)

// remotes runs f against a folder remote and an S3 one.
func remotes(t *testing.T, f func(t *testing.T, st remote.Store, count func() int)) {
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		st, err := remote.Open("file://" + dir)
		if err != nil {
			t.Fatal(err)
		}
		f(t, st, func() int { return countFiles(t, dir) })
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3server.Start(t)
		srv.Setenv(t)
		bucket := srv.Bucket(t)
		st, err := remote.Open("s3://" + bucket + "/carry")
		if err != nil {
			t.Fatal(err)
		}
		f(t, st, func() int { return len(srv.Objects(t, bucket)) })
	})
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// push plans and applies a push of root as machine.
func push(t *testing.T, st remote.Store, root, machine, home string, o carryremote.PushOptions) (*carryremote.PushPlan, *carryremote.Pushed) {
	t.Helper()
	o.Root, o.Remote, o.Machine, o.Host, o.Home, o.Staging = root, st, machine, machine, home, t.TempDir()
	p, err := carryremote.PlanPush(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Apply(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}

// pull plans and applies a pull of machine's sessions into root.
func pull(t *testing.T, st remote.Store, root, machine, home string, o carryremote.PullOptions) *carryremote.PullPlan {
	t.Helper()
	o.Root, o.Remote, o.Machine, o.Home, o.Staging = root, st, machine, home, t.TempDir()
	p, err := carryremote.PlanPull(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Cleanup)
	carrytest.Apply(t, p.ChangeSet)
	return p
}

func sessionCount(t *testing.T, root string) int {
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range l.Files {
		if f.Kind == store.KindSession {
			n++
		}
	}
	return n
}

// TestPushPull: a store pushed from one machine lands in another's with
// its home mapped; a session that grows is the only one pushed again (one
// object and the index written, the old version removed) and is appended
// to on the other machine; both go on in turn, and every line written on
// either is in both stores.
func TestPushPull(t *testing.T) {
	remotes(t, func(t *testing.T, st remote.Store, count func() int) {
		a := damage.CopyStore(t, "2.1.332")
		b := carrytest.EmptyStore(t)
		n := sessionCount(t, a)
		p, res := push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		if len(p.Items) != n || len(res.Written) != n+1 || len(res.Removed) != 0 {
			t.Fatalf("first push: %d sessions planned, %d objects written, %d removed; the store has %d sessions", len(p.Items), len(res.Written), len(res.Removed), n)
		}
		if got := count(); got != n+1 {
			t.Fatalf("the remote holds %d objects, want %d", got, n+1)
		}
		if res.Written[len(res.Written)-1] != "laptop/index.json" {
			t.Fatalf("the index is not written last: %v", res.Written)
		}
		// Nothing changed: nothing sent.
		p, _ = push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		if !p.Empty() || p.Unchanged != n {
			t.Fatalf("a second push plans %d sessions (%d unchanged)", len(p.Items), p.Unchanged)
		}

		pl := pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
		if len(pl.Sessions) != n {
			t.Fatalf("pulled %d sessions, want %d", len(pl.Sessions), n)
		}
		for _, l := range pl.Sessions {
			if l.How != carry.LandNew || !strings.HasPrefix(l.Dir, "/home/b/work/") {
				t.Fatalf("landed %+v: not new, or not under the mapped home", l)
			}
		}
		carrytest.NoErrors(t, b)
		mainA, mainB := carrytest.MainOf(t, a, alpha), carrytest.MainOf(t, b, alpha)
		carrytest.SameButCWD(t, mainA, mainB, alphaCWD, "/home/b/work/alpha")

		// A goes on: only that session is sent.
		carrytest.AppendLine(t, mainA, `{"type":"custom-title","customTitle":"went on at A","sessionId":"`+alpha+`"}`)
		before := count()
		p, res = push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		if len(p.Items) != 1 || p.Items[0].ID != alpha || p.Items[0].Why != "changed" || len(res.Written) != 2 || len(res.Removed) != 1 {
			t.Fatalf("push after an append: %+v, written %v, removed %v", p.Items, res.Written, res.Removed)
		}
		if got := count(); got != before {
			t.Fatalf("the remote holds %d objects after the push, %d before (one replaced)", got, before)
		}
		pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
		hows := map[string]int{}
		for _, l := range pl.Sessions {
			hows[l.How]++
		}
		if hows[carry.LandAppend] != 1 || hows[carry.LandSame] != n-1 {
			t.Fatalf("second pull: %v", hows)
		}
		carrytest.SameButCWD(t, mainA, mainB, alphaCWD, "/home/b/work/alpha")

		// B goes on, pushes as its own machine; A pulls it.
		carrytest.AppendLine(t, mainB, `{"type":"custom-title","customTitle":"went on at B","sessionId":"`+alpha+`"}`)
		push(t, st, b, "desk", "/home/b", carryremote.PushOptions{})
		pl = pull(t, st, a, "desk", "/home/dev", carryremote.PullOptions{})
		hows = map[string]int{}
		for _, l := range pl.Sessions {
			hows[l.How]++
		}
		if hows[carry.LandAppend] != 1 || len(pl.Sessions) != n {
			t.Fatalf("pull at A: %v", hows)
		}
		carrytest.SameButCWD(t, mainA, mainB, alphaCWD, "/home/b/work/alpha")
		for _, root := range []string{a, b} {
			body, _ := os.ReadFile(carrytest.MainOf(t, root, alpha))
			if !bytes.Contains(body, []byte("went on at A")) || !bytes.Contains(body, []byte("went on at B")) {
				t.Fatalf("%s lacks a line written on one machine", root)
			}
		}
		carrytest.NoErrors(t, a)
		carrytest.NoErrors(t, b)

		// Both go on at once: each keeps its lines, the other's lands as a
		// fork titled with its machine; nothing is lost.
		carrytest.AppendLine(t, mainA, `{"type":"custom-title","customTitle":"only at A","sessionId":"`+alpha+`"}`)
		carrytest.AppendLine(t, mainB, `{"type":"custom-title","customTitle":"only at B","sessionId":"`+alpha+`"}`)
		push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		push(t, st, b, "desk", "/home/b", carryremote.PushOptions{})
		pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
		var fork string
		for _, l := range pl.Sessions {
			if l.How == carry.LandFork {
				fork = l.ID
			}
		}
		if fork == "" {
			t.Fatalf("no fork: %+v", pl.Sessions)
		}
		fb, _ := os.ReadFile(carrytest.MainOf(t, b, fork))
		if !bytes.Contains(fb, []byte("only at A (from laptop)")) {
			t.Fatalf("the fork is not titled with its machine")
		}
		pull(t, st, a, "desk", "/home/dev", carryremote.PullOptions{})
		// Pulled again, an unchanged remote is nothing to do: the fork
		// landed before is found, not made anew.
		for _, again := range []struct{ root, machine, home string }{{b, "laptop", "/home/b"}, {a, "desk", "/home/dev"}} {
			n := sessionCount(t, again.root)
			pl = pull(t, st, again.root, again.machine, again.home, carryremote.PullOptions{})
			if !pl.ChangeSet.Empty() || sessionCount(t, again.root) != n {
				t.Fatalf("a pull of %s again plans %d ops (%+v): %d sessions, %d before", again.machine, len(pl.ChangeSet.Ops), pl.Sessions, sessionCount(t, again.root), n)
			}
		}
		// A goes on after the fork landed at B: the fork gets what it
		// lacks, its title line last, and no other fork is made.
		carrytest.AppendLine(t, mainA, `{"type":"custom-title","customTitle":"after the fork at A","sessionId":"`+alpha+`"}`)
		push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
		grew, forks := false, 0
		for _, l := range pl.Sessions {
			if l.Session == alpha {
				grew = l.How == carry.LandAppend && l.ID == fork
			}
			if l.How == carry.LandFork {
				forks++
			}
		}
		if !grew || forks > 0 {
			t.Fatalf("a pull after the remote went on past its fork: %+v", pl.Sessions)
		}
		fb, _ = os.ReadFile(carrytest.MainOf(t, b, fork))
		if !bytes.Contains(fb, []byte("after the fork at A")) || !bytes.HasSuffix(fb, carry.TitleLine("only at A (from laptop)", fork)) {
			t.Fatalf("the fork lacks A's new line, or its title line is not last:\n%s", fb[max(0, len(fb)-600):])
		}
		carrytest.NoErrors(t, b)
		if pl = pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{}); !pl.ChangeSet.Empty() {
			t.Fatalf("a pull again after the fork grew plans %d ops", len(pl.ChangeSet.Ops))
		}
		var texts []string
		for _, root := range []string{a, b} {
			var all []byte
			l, _ := store.Scan(root)
			for _, f := range l.Files {
				if f.Kind == store.KindSession {
					bb, _ := os.ReadFile(f.Path)
					all = append(all, bb...)
				}
			}
			for _, w := range []string{"only at A", "only at B", "went on at A", "went on at B"} {
				if !bytes.Contains(all, []byte(w)) {
					texts = append(texts, root+" lacks "+w)
				}
			}
		}
		sort.Strings(texts)
		if len(texts) > 0 {
			t.Fatal(strings.Join(texts, "; "))
		}
		carrytest.NoErrors(t, a)
		carrytest.NoErrors(t, b)
	})
}

// TestPullPlace: --map and --to place sessions as unpack does; a pull of
// a machine the remote lacks is refused naming those it has.
func TestPullPlace(t *testing.T) {
	dir := t.TempDir()
	st, _ := remote.Open("file://" + dir)
	a := damage.CopyStore(t, "2.1.332")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{Sessions: []string{alpha}})
	b := carrytest.EmptyStore(t)
	pl := pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{Place: pack.Place{Map: []string{"/home/dev/work=/srv/src"}}})
	if len(pl.Sessions) != 1 || pl.Sessions[0].Dir != "/srv/src/alpha" {
		t.Fatalf("landed %+v", pl.Sessions)
	}
	_, err := carryremote.PullMachines(context.Background(), st, "nope", "x")
	if err == nil || !strings.Contains(err.Error(), "it has: laptop") {
		t.Fatalf("an unknown machine: %v", err)
	}
	ms, err := carryremote.PullMachines(context.Background(), st, "", "laptop")
	if err != nil || len(ms) != 0 {
		t.Fatalf("this machine's own sessions are pulled: %v %v", ms, err)
	}
}
