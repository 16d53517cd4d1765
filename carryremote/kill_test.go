package carryremote_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/e2e/s3server"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/killtest"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
)

// killer is a remote that kills its process at its at-th step: a step
// is the start of a Put or a Delete, or the middle of a Put's bytes.
type killer struct {
	remote.Store
	at, n int
}

func (k *killer) step() {
	if k.n == k.at {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Second)
	}
	k.n++
}

func (k *killer) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	k.step()
	half := size / 2
	pr, pw := io.Pipe()
	go func() {
		_, err := io.CopyN(pw, r, half)
		if err == nil {
			k.step()
			_, err = io.Copy(pw, r)
		}
		pw.CloseWithError(err)
	}()
	return k.Store.Put(ctx, key, pr, size)
}

func (k *killer) Delete(ctx context.Context, key string) error {
	k.step()
	return k.Store.Delete(ctx, key)
}

// TestPushKillChild is the child process of TestPushKilled: it pushes
// the store $KILL_ROOT to $KILL_REMOTE and dies at step $KILL_AT.
func TestPushKillChild(t *testing.T) {
	at := os.Getenv("KILL_AT")
	if at == "" {
		t.Skip("run by TestPushKilled")
	}
	n, _ := strconv.Atoi(at)
	st, err := remote.Open(os.Getenv("KILL_REMOTE"))
	if err != nil {
		t.Fatal(err)
	}
	k := &killer{Store: st, at: n}
	p, err := carryremote.PlanPush(context.Background(), carryremote.PushOptions{Root: os.Getenv("KILL_ROOT"), Remote: k, Machine: "laptop", Home: "/home/dev", Staging: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	fmt.Println("STEPS", k.n)
}

// readable checks that the remote's index of laptop names objects that
// are all there and read whole, and returns how many sessions it names.
func readable(t *testing.T, st remote.Store, what string) int {
	t.Helper()
	ix, err := carryremote.ReadIndex(context.Background(), st, "laptop", pack.Keys{})
	if err != nil {
		t.Fatalf("%s: the index: %v", what, err)
	}
	if ix == nil {
		return 0
	}
	for _, e := range ix.Sessions {
		rc, err := st.Get(context.Background(), e.Key)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		rd, err := pack.Open(rc, e.Key, pack.Keys{})
		if err == nil {
			err = rd.Extract(t.TempDir())
			rd.Close()
		}
		rc.Close()
		if err != nil {
			t.Fatalf("%s: object %s: %v", what, e.Key, err)
		}
	}
	return len(ix.Sessions)
}

// TestPushKilled kills a push at each of its steps (the start of each
// object's upload, the middle of its bytes, the index's, each removal),
// on S3, a first push and one after a session grew: the remote stays
// readable (its index names objects that are all there, whole), and the
// next push finishes it.
func TestPushKilled(t *testing.T) {
	srv := s3server.Start(t)
	srv.Setenv(t)
	for _, grown := range []bool{false, true} {
		steps := -1
		for at := 0; steps < 0 || at < steps; at++ {
			bucket := srv.Bucket(t)
			url := "s3://" + bucket + "/p"
			st, _ := remote.Open(url)
			a := damage.CopyStore(t, "2.1.332")
			n := sessionCount(t, a)
			if grown {
				push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
				carrytest.AppendLine(t, carrytest.MainOf(t, a, alpha), `{"type":"custom-title","customTitle":"grown","sessionId":"`+alpha+`"}`)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestPushKillChild$")
			cmd.Env = append(os.Environ(), "KILL_AT="+strconv.Itoa(at), "KILL_REMOTE="+url, "KILL_ROOT="+a)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
			if !killed {
				if err != nil {
					t.Fatalf("kill at %d: %v\n%s", at, err, out)
				}
				fmt.Sscanf(string(out[bytesIndex(out, "STEPS ")+6:]), "%d", &steps)
				break
			}
			what := fmt.Sprintf("grown=%t, killed at %d", grown, at)
			got := readable(t, st, what)
			if grown && got != n {
				t.Fatalf("%s: the index names %d sessions, not %d", what, got, n)
			}
			p, res := push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
			_ = p
			if readable(t, st, what+", pushed again") != n {
				t.Fatalf("%s: the next push did not finish it", what)
			}
			// Nothing left over: the index's objects and the index.
			if objs := srv.Objects(t, bucket); len(objs) != n+1 {
				t.Fatalf("%s: %d objects after the next push (removed %v)", what, len(objs), res.Removed)
			}
			if p, _ := carryremote.PlanPush(context.Background(), carryremote.PushOptions{Root: a, Remote: st, Machine: "laptop", Home: "/home/dev"}); !p.Empty() {
				t.Fatalf("%s: a third push would send %d sessions", what, len(p.Items))
			}
		}
		if steps < 5 {
			t.Fatalf("only %d steps", steps)
		}
		t.Logf("grown=%t: killed at each of %d steps", grown, steps)
	}
}

func bytesIndex(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -len(s)
}

// TestPullKillHelper is the child process of TestPullKilled.
func TestPullKillHelper(t *testing.T) { killtest.Child(t) }

// TestPullKilled kills the apply of a pull (new sessions, and an append)
// at each of its steps: after the recovery every writer runs first the
// store is as it was, and the next pull makes it as planned.
func TestPullKilled(t *testing.T) {
	dir := t.TempDir()
	st, _ := remote.Open("file://" + dir)
	a := damage.CopyStore(t, "2.1.332")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
	for _, grown := range []bool{false, true} {
		want := carrytest.EmptyStore(t)
		pull(t, st, want, "laptop", "/home/b", carryremote.PullOptions{})
		if grown {
			carrytest.AppendLine(t, carrytest.MainOf(t, a, alpha), `{"type":"custom-title","customTitle":"grown `+strconv.Itoa(len(dir))+`","sessionId":"`+alpha+`"}`)
			push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{})
		}
		steps := -1
		for at := 0; steps < 0 || at < steps; at++ {
			b := carrytest.EmptyStore(t)
			if grown {
				copyTree(t, want, b)
			}
			before := treeSums(t, b)
			p, err := carryremote.PlanPull(context.Background(), carryremote.PullOptions{Root: b, Remote: st, Machine: "laptop", Home: "/home/b", Staging: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			planFile := filepath.Join(t.TempDir(), "plan.json")
			if err := p.ChangeSet.Save(planFile); err != nil {
				t.Fatal(err)
			}
			journals := t.TempDir()
			killed, n := killtest.Apply(t, "TestPullKillHelper", planFile, at, journals)
			p.Cleanup()
			if !killed {
				steps = n
				break
			}
			what := fmt.Sprintf("grown=%t, killed at %d", grown, at)
			l, err := changeset.LockStore(journals, b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := changeset.Recover(changeset.ApplyOptions{JournalDir: journals, Lock: l, Force: true}); err != nil {
				t.Fatalf("%s: recover: %v", what, err)
			}
			l.Unlock()
			if !equalMaps(before, treeSums(t, b)) {
				t.Fatalf("%s: the store is not as it was after the recovery", what)
			}
			pull(t, st, b, "laptop", "/home/b", carryremote.PullOptions{})
			full := carrytest.EmptyStore(t)
			pull(t, st, full, "laptop", "/home/b", carryremote.PullOptions{})
			if !equalMaps(treeSums(t, full), treeSums(t, b)) {
				t.Fatalf("%s: the next pull did not make the store as planned", what)
			}
		}
		if steps < 3 {
			t.Fatalf("only %d steps", steps)
		}
		t.Logf("grown=%t: killed at each of %d steps", grown, steps)
	}
}

// copyTree copies the store src into dst, modes and mtimes kept.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}
