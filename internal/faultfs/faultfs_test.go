package faultfs_test

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/faultfs"
	"github.com/cfix-dev/cfix/repair"
)

// trial is one apply of a scenario on the mount.
type trial struct {
	cs    *changeset.ChangeSet
	done  func()                      // after the apply (archive: remove the staging folder)
	retry func() *changeset.ChangeSet // the plan that finishes the job once there is room
}

// A scenario makes a store at mnt/.claude (and what else it needs on the
// mount) and returns the plan to apply.
type scenario func(t *testing.T, mnt string) trial

func store(mnt string) string    { return filepath.Join(mnt, ".claude") }
func journals(mnt string) string { return filepath.Join(mnt, "journal") }

func repairScenario(t *testing.T, mnt string) trial {
	root := damage.CopyStoreTo(t, damage.V88, mnt)
	damage.Many(t, root)
	plan := func() *changeset.ChangeSet {
		cs, err := repair.Plan(repair.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	return trial{cs: plan(), done: func() {}, retry: plan}
}

func archiveScenario(t *testing.T, mnt string) trial { return archiveOf(damage.V88)(t, mnt) }

// archiveOf archives every session of a corpus store.
func archiveOf(version string) scenario {
	return func(t *testing.T, mnt string) trial { return archiveStore(t, mnt, version) }
}

func archiveStore(t *testing.T, mnt, version string) trial {
	root := damage.CopyStoreTo(t, version, mnt)
	damage.Age(t, root)
	var staging []func()
	plan := func() *changeset.ChangeSet {
		p, err := archive.Archive(archive.Options{Root: root, Dir: filepath.Join(mnt, "archive"), OlderThan: time.Minute, Build: true})
		if err != nil {
			t.Fatal(err)
		}
		staging = append(staging, p.Cleanup)
		return p.ChangeSet
	}
	return trial{cs: plan(), done: func() {
		for _, c := range staging {
			c()
		}
	}, retry: plan}
}

// undoScenario repairs the store (with room), then plans the undo.
func undoScenario(t *testing.T, mnt string) trial {
	r := repairScenario(t, mnt)
	res, err := changeset.Apply(r.cs, changeset.ApplyOptions{JournalDir: journals(mnt)})
	if err != nil {
		t.Fatal(err)
	}
	plan := func() *changeset.ChangeSet {
		u, err := changeset.Undo(res.Journal)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	return trial{cs: plan(), done: func() {}, retry: plan}
}

// newestJournal is the journal the last apply made.
func newestJournal(t *testing.T, mnt string) string {
	dirs, _ := filepath.Glob(filepath.Join(journals(mnt), "*Z-*"))
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatal("no journal")
	}
	return dirs[len(dirs)-1]
}

// TestFullDisk applies the plans of repair (of a damaged store), archive
// and undo on a small tmpfs holding the store and the journal, filled to
// leave 0, 1 and 10 KB free before each step of the apply. Each run
// leaves every file of the store as it was (the apply refused or rolled
// back, and says so) or as planned; then, with room again, an undo gives
// back the store as it was, and after a rollback the plan made again
// finishes the job.
func TestFullDisk(t *testing.T) {
	for _, c := range []struct {
		name string
		sc   scenario
	}{{"repair", repairScenario}, {"archive", archiveScenario}, {"undo", undoScenario}} {
		t.Run(c.name, func(t *testing.T) { fullDisk(t, c.sc) })
	}
}

func fullDisk(t *testing.T, sc scenario) {
	mnt := faultfs.Mount(t, 8<<20)
	// The planned store, and how many hook calls a full apply makes.
	tr := sc(t, mnt)
	hooks := 0
	if _, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(mnt), Hook: func(string, int) { hooks++ }}); err != nil {
		t.Fatal(err)
	}
	tr.done()
	planned := faultfs.Tree(t, store(mnt))
	outcomes := map[string]int{}
	for at := 0; at < hooks; at++ {
		for _, leave := range []int64{0, 1 << 10, 10 << 10} {
			faultfs.Clear(t, mnt)
			tr := sc(t, mnt)
			before := faultfs.Tree(t, store(mnt))
			n := 0
			_, err := changeset.Apply(tr.cs, changeset.ApplyOptions{JournalDir: journals(mnt), Hook: func(string, int) {
				if n == at {
					faultfs.Fill(t, mnt, leave)
				}
				n++
			}})
			tr.done()
			now := faultfs.Tree(t, store(mnt))
			what := func(s string) string {
				return s + " (filled to leave " + changeset.Size(leave) + " at hook call " + strconv.Itoa(at) + ")"
			}
			switch {
			case err == nil:
				outcomes["applied"]++
				if d := faultfs.Diff(planned, now, false); d != "" {
					t.Fatalf("%s:\n%s", what("applied, the store is not as planned"), d)
				}
			case strings.Contains(err.Error(), "nothing was changed"), strings.Contains(err.Error(), "everything applied was rolled back"):
				if strings.Contains(err.Error(), "nothing was changed") {
					outcomes["refused"]++
				} else {
					outcomes["rolled back"]++
				}
				if d := faultfs.Diff(before, now, false); d != "" {
					t.Fatalf("%s: %v\nthe store is not as it was:\n%s", what("failed"), err, d)
				}
				if arch, _ := filepath.Glob(filepath.Join(mnt, "archive", "*"+archive.Ext)); len(arch) != 0 {
					t.Fatalf("%s: %v\narchive files left: %v", what("failed"), err, arch)
				}
			default:
				t.Fatalf("%s: %v", what("failed without rolling back"), err)
			}
			faultfs.Unfill(t, mnt)
			if err != nil {
				// With room again, the job can be done.
				cs := tr.retry()
				if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals(mnt)}); err != nil {
					t.Fatalf("%s: %v", what("the apply after the failure"), err)
				}
				tr.done()
				if d := faultfs.Diff(planned, faultfs.Tree(t, store(mnt)), false); d != "" {
					t.Fatalf("%s:\n%s", what("the apply after the failure left the store not as planned"), d)
				}
			}
			// An undo gives back the store as it was.
			u, err := changeset.Undo(newestJournal(t, mnt))
			if err != nil {
				t.Fatalf("%s: %v", what("undo"), err)
			}
			if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: journals(mnt)}); err != nil {
				t.Fatalf("%s: %v", what("undo"), err)
			}
			if d := faultfs.Diff(before, faultfs.Tree(t, store(mnt)), false); d != "" {
				t.Fatalf("%s:\n%s", what("after undo the store is not as it was"), d)
			}
		}
	}
	if outcomes["rolled back"] == 0 {
		t.Fatalf("no apply ran out of room half-way: %v", outcomes)
	}
	t.Logf("%d hook calls: %v", hooks, outcomes)
}
