package changeset_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// linkedStore makes a store whose project folder -big is a symbolic link
// to a folder on "another disk", -alias a link to a folder inside the
// store, and -gone a link that leads nowhere.
func linkedStore(t *testing.T) (root, disk string) {
	t.Helper()
	tmp := t.TempDir()
	root = filepath.Join(tmp, "claude")
	disk = filepath.Join(tmp, "disk", "-big")
	write(t, filepath.Join(root, "projects", "-w", "a.jsonl"), "a\n")
	write(t, filepath.Join(root, "projects", "-w", "b.jsonl"), "b\n")
	write(t, filepath.Join(disk, "c.jsonl"), "c\n")
	write(t, filepath.Join(root, "todos", "c-agent-c.json"), "[]")
	for name, dest := range map[string]string{"-big": disk, "-alias": filepath.Join(root, "projects", "-w"), "-gone": filepath.Join(tmp, "unplugged")} {
		if err := os.Symlink(dest, filepath.Join(root, "projects", name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, disk
}

func TestOutsideLink(t *testing.T) {
	root, disk := linkedStore(t)
	p := func(rel string) string { return filepath.Join(root, "projects", rel) }
	realDisk, _ := filepath.EvalSymlinks(disk)
	for _, c := range []struct {
		path, link, dest string
	}{
		{p("-w/a.jsonl"), "", ""},
		{p("-w/new/deeper/x.jsonl"), "", ""},
		{p("-alias/a.jsonl"), "", ""}, // a link that stays in the store
		{p("-big/c.jsonl"), p("-big"), realDisk},
		{p("-big/c/subagents/agent-a.jsonl"), p("-big"), realDisk},
		{p("-gone/x.jsonl"), p("-gone"), filepath.Join(filepath.Dir(filepath.Dir(disk)), "unplugged")},
		{p("-big"), "", ""}, // the link itself: removing it writes nothing through it
		{filepath.Join(filepath.Dir(root), ".claude.json"), "", ""},
	} {
		l, ok := changeset.OutsideLink(root, c.path)
		if ok != (c.link != "") || l.Path != c.link || l.Dest != c.dest {
			t.Errorf("%s: %+v %v, want %s → %s", c.path, l, ok, c.link, c.dest)
		}
	}
}

// TestLeaveOutside: the ops writing through the link leave the plan, with
// a note naming the link, where it leads and what was left out; with
// wholeSessions, the other ops of their session go too.
func TestLeaveOutside(t *testing.T) {
	root, _ := linkedStore(t)
	p := func(rel string) string { return filepath.Join(root, rel) }
	plan := func() *changeset.ChangeSet {
		cs := changeset.New(root, "test")
		cs.Add(changeset.Op{Action: changeset.Delete, Path: p("projects/-w/a.jsonl"), Expect: fp(t, p("projects/-w/a.jsonl")), Session: "a"})
		cs.Add(changeset.Op{Action: changeset.Delete, Path: p("projects/-big/c.jsonl"), Expect: fp(t, p("projects/-big/c.jsonl")), Session: "c"})
		cs.Add(changeset.Op{Action: changeset.Delete, Path: p("todos/c-agent-c.json"), Expect: fp(t, p("todos/c-agent-c.json")), Session: "c"})
		cs.Add(changeset.Op{Action: changeset.Rename, Path: p("projects/-w/b.jsonl"), To: p("projects/-big/b.jsonl"), Expect: fp(t, p("projects/-w/b.jsonl"))})
		return cs
	}
	cs := plan()
	if l, ok := cs.OutsideLink(); !ok || l.Path != p("projects/-big") {
		t.Fatalf("OutsideLink: %+v %v", l, ok)
	}
	if n := cs.LeaveOutside(false); n != 2 || len(cs.Ops) != 2 || cs.Ops[0].Path != p("projects/-w/a.jsonl") || cs.Ops[1].Path != p("todos/c-agent-c.json") {
		t.Fatalf("left out %d, kept %+v", n, cs.Ops)
	}
	if len(cs.Notes) != 1 || !strings.Contains(cs.Notes[0], p("projects/-big")+" is a symbolic link to ") ||
		!strings.Contains(cs.Notes[0], "out of the store: cfix writes nothing through it; 2 changes left out of this plan: delete "+p("projects/-big/c.jsonl")+", rename "+p("projects/-w/b.jsonl")) {
		t.Errorf("notes: %q", cs.Notes)
	}
	cs = plan()
	if n := cs.LeaveOutside(true); n != 3 || len(cs.Ops) != 1 {
		t.Errorf("whole sessions: left out %d, kept %+v", n, cs.Ops)
	}
	cs = changeset.New(root, "test")
	if cs.LeaveOutside(true) != 0 || len(cs.Notes) != 0 {
		t.Error("an empty plan got notes")
	}
}

// TestApplyRefusesOutside: a saved plan that writes through the link is
// refused whole, before anything is changed.
func TestApplyRefusesOutside(t *testing.T) {
	root, disk := linkedStore(t)
	a, c := filepath.Join(root, "projects", "-w", "a.jsonl"), filepath.Join(root, "projects", "-big", "c.jsonl")
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Delete, Path: a, Expect: fp(t, a)})
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: c, Expect: fp(t, c), Data: []byte("C\n"), HasData: true})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	var re *changeset.RefusedError
	if !errors.As(err, &re) || !re.Untouched || !strings.Contains(err.Error(), "out of the store: cfix writes nothing through it; nothing was changed") {
		t.Fatalf("apply: %v", err)
	}
	if read(t, a) != "a\n" || read(t, filepath.Join(disk, "c.jsonl")) != "c\n" {
		t.Error("a file was changed")
	}
}
