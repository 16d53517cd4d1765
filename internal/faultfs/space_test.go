package faultfs_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/faultfs"
	"github.com/cfix-dev/cfix/internal/killtest"
)

// TestNoRoomRefused applies a repair on a tmpfs with less room than the
// plan writes plus the margin: apply refuses before it writes anything,
// says how much the plan writes and how much is free, and makes no
// journal.
func TestNoRoomRefused(t *testing.T) {
	mnt := faultfs.Mount(t, 8<<20)
	tr := repairScenario(t, mnt)
	before := faultfs.Tree(t, store(mnt))
	faultfs.Fill(t, mnt, 64<<10)
	_, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(mnt)})
	if err == nil || !strings.Contains(err.Error(), "free there; nothing was changed") || !strings.Contains(err.Error(), "the plan writes") {
		t.Fatalf("apply with 64 KB free: %v, want a refusal that names the room", err)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, store(mnt)), false); d != "" {
		t.Fatalf("the store changed:\n%s", d)
	}
	if dirs, _ := filepath.Glob(filepath.Join(journals(mnt), "*Z-*")); len(dirs) != 0 {
		t.Fatalf("a journal was made: %v", dirs)
	}
	t.Log(err)
}

// TestNofileHelper is the child process of TestFewHandles: it lowers its
// limit of open files to $FAULTFS_NOFILE, applies the plan
// $FAULTFS_PLAN into the journals of $FAULTFS_JOURNALS and prints the
// outcome.
func TestNofileHelper(t *testing.T) {
	plan := os.Getenv("FAULTFS_PLAN")
	if plan == "" {
		t.Skip("run by TestFewHandles")
	}
	n, _ := strconv.ParseUint(os.Getenv("FAULTFS_NOFILE"), 10, 64)
	cs := killtest.ReadPlan(t, plan)
	lower := func(n uint64) {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			t.Fatal(err)
		}
	}
	opts := changeset.ApplyOptions{JournalDir: os.Getenv("FAULTFS_JOURNALS")}
	if at := os.Getenv("FAULTFS_AT"); at != "" {
		// At hook call at, the limit drops to n above the lowest file
		// number free: the apply may open n more files.
		k, _ := strconv.Atoi(at)
		calls := 0
		opts.Hook = func(string, int) {
			if calls == k {
				f, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				free := uint64(f.Fd())
				f.Close()
				lower(free + n)
			}
			calls++
		}
	} else {
		lower(n)
	}
	_, err := changeset.Apply(cs, opts)
	if err != nil {
		fmt.Printf("RESULT %v\n", err)
		return
	}
	fmt.Println("RESULT applied")
}

// TestFewHandles applies the plans of repair and archive in a child
// process whose limit of open files is lowered to each of 4 to 32, or,
// at each step of the apply, to as many as are open, and one more. Each
// run is refused up front, rolled back, or applied, says which, and
// leaves every file of the store as it was or as planned; an undo after
// an apply gives back the store as it was.
func TestFewHandles(t *testing.T) {
	for _, c := range []struct {
		name string
		sc   scenario
	}{{"repair", repairScenario}, {"archive", archiveScenario}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := c.sc(t, dir)
			if _, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(dir)}); err != nil {
				t.Fatal(err)
			}
			tr.done()
			planned := faultfs.Tree(t, store(dir))
			outcomes := map[string]int{}
			hooks := 0
			if _, err := changeset.Apply(c.sc(t, t.TempDir()).cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Hook: func(string, int) { hooks++ }}); err != nil {
				t.Fatal(err)
			}
			type limit struct{ n, at int }
			var limits []limit
			for _, n := range []int{4, 8, 12, 16, 20, 21, 22, 23, 24, 32} {
				limits = append(limits, limit{n, -1})
			}
			for at := range hooks {
				limits = append(limits, limit{0, at}, limit{1, at})
			}
			for _, lim := range limits {
				n := fmt.Sprintf("limit %d", lim.n)
				if lim.at >= 0 {
					n = fmt.Sprintf("limit of %d more files from hook call %d", lim.n, lim.at)
				}
				faultfs.Clear(t, dir)
				tr := c.sc(t, dir)
				before := faultfs.Tree(t, store(dir))
				planFile := filepath.Join(t.TempDir(), "plan.json")
				if err := tr.cs.Save(planFile); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestNofileHelper$")
				cmd.Env = append(os.Environ(), "FAULTFS_PLAN="+planFile, "FAULTFS_NOFILE="+strconv.Itoa(lim.n), "FAULTFS_JOURNALS="+journals(dir))
				if lim.at >= 0 {
					cmd.Env = append(cmd.Env, "FAULTFS_AT="+strconv.Itoa(lim.at))
				}
				out, err := cmd.CombinedOutput()
				tr.done()
				i := bytes.Index(out, []byte("RESULT "))
				if err != nil || i < 0 {
					t.Fatalf("%s: %v\n%s", n, err, out)
				}
				res := string(out[i+7:])
				res = res[:strings.IndexByte(res, '\n')]
				now := faultfs.Tree(t, store(dir))
				switch {
				case res == "applied":
					outcomes["applied"]++
					if d := faultfs.Diff(planned, now, false); d != "" {
						t.Fatalf("%s: applied, the store is not as planned:\n%s", n, d)
					}
					u, err := changeset.Undo(newestJournal(t, dir))
					if err != nil {
						t.Fatalf("%s: undo: %v", n, err)
					}
					if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(dir)}); err != nil {
						t.Fatalf("%s: undo: %v", n, err)
					}
					now = faultfs.Tree(t, store(dir))
					fallthrough
				case strings.HasSuffix(res, "nothing was changed"), strings.Contains(res, "everything applied was rolled back"):
					switch {
					case strings.HasSuffix(res, "nothing was changed"):
						outcomes["refused"]++
					case res != "applied":
						outcomes["rolled back"]++
					}
					if d := faultfs.Diff(before, now, false); d != "" {
						t.Fatalf("%s: %s\nthe store is not as it was:\n%s", n, res, d)
					}
				default:
					t.Fatalf("%s: %s", n, res)
				}
			}
			t.Logf("%v", outcomes)
		})
	}
}

// TestUndoNearlyFull undoes an archive of every session on a tmpfs with
// too little room left for a copy of the sessions: undo puts each file
// back by a link to its backup, so it needs no room for them, and gives
// back the store as it was.
func TestUndoNearlyFull(t *testing.T) {
	mnt := faultfs.Mount(t, 8<<20)
	tr := archiveOf(damage.V330)(t, mnt)
	before := faultfs.Tree(t, store(mnt))
	res, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(mnt)})
	if err != nil {
		t.Fatal(err)
	}
	tr.done()
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var restored int64
	for _, op := range u.Ops {
		switch {
		case op.Action == changeset.CreateDir:
			restored += changeset.TreeSize(op.From)
		case op.FromExpect != nil:
			restored += op.FromExpect.Size
		}
	}
	leave := int64(160 << 10)
	if restored < 2*leave {
		t.Fatalf("the undo restores %d bytes, want more than %d", restored, 2*leave)
	}
	faultfs.Fill(t, mnt, leave)
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(mnt)}); err != nil {
		t.Fatalf("undo with %s free (it restores %s): %v", changeset.Size(leave), changeset.Size(restored), err)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, store(mnt)), false); d != "" {
		t.Fatalf("after undo the store is not as it was:\n%s", d)
	}
}

// TestUndoAcrossFileSystems repairs a store on a tmpfs with the journal
// on another file system, and undoes it: the backups are copied back (a
// link cannot cross), and the store is as it was.
func TestUndoAcrossFileSystems(t *testing.T) {
	mnt := faultfs.Mount(t, 8<<20)
	tr := repairScenario(t, mnt)
	before := faultfs.Tree(t, store(mnt))
	js := t.TempDir()
	a, _ := os.Stat(mnt)
	b, _ := os.Stat(js)
	if a.Sys().(*syscall.Stat_t).Dev == b.Sys().(*syscall.Stat_t).Dev {
		t.Fatal("the mount and the temporary folder are one file system")
	}
	res, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: js})
	if err != nil {
		t.Fatal(err)
	}
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: js}); err != nil {
		t.Fatal(err)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, store(mnt)), false); d != "" {
		t.Fatalf("after undo the store is not as it was:\n%s", d)
	}
	if left, _ := filepath.Glob(filepath.Join(res.Journal, "backup", "*.restore")); len(left) != 0 {
		t.Fatalf("links left in the journal: %v", left)
	}
}
