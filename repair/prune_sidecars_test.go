package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// pruned are the codes prune removes the subject of.
var pruned = map[validate.Code]bool{
	validate.SessionUnwritten: true, validate.SessionHusk: true, validate.OrphanTasks: true, validate.OrphanPlan: true,
	validate.OrphanUsageData: true, validate.OrphanPaste: true, validate.OrphanShellSnap: true,
	validate.SessionPIDStale: true,
}

// prunedCases are the damage cases of the codes prune removes.
func prunedCases() []damage.Case {
	return append(append([]damage.Case{}, damage.StoreCases...), damage.FieldCases...)
}

// TestPruneSidecarsRoundTrip: each store-level leftover of issue 10
// (a transcript never written, a session folder left without one, the
// task list, plan, /insights data, pasted text and shell snapshot of
// what is gone; shapes as 2.1.330 wrote them, see internal/damage and the
// validate tests), alone on a copy of the 2.1.88 store: validate reports
// it, prune plans its removal and nothing of a real session, validate
// then reports none of these codes and no error, a second prune plans
// nothing, and undo gives back every byte and mtime.
func TestPruneSidecarsRoundTrip(t *testing.T) {
	covered := map[validate.Code]bool{}
	for _, c := range prunedCases() {
		if !pruned[c.Code] {
			continue
		}
		covered[c.Code] = true
		t.Run(c.Name, func(t *testing.T) {
			root := damage.CopyStore(t, c.Version)
			path, _ := c.Damage(t, root)
			if !has(findings(t, root), c.Code, path, 0) {
				t.Fatalf("validate does not report %s at %s", c.Code, path)
			}
			// Every file a year old: settled (pastes and plans count an
			// hour after their last write; snapshots by their name's time).
			age(t, root)
			before := snapshot(t, root)
			cs := prune(t, repair.PruneOptions{Root: root})
			ops := planned(cs)
			if _, ok := ops[path]; !ok {
				t.Fatalf("prune does not plan %s: %v", path, ops)
			}
			for p, a := range ops {
				if filepath.Ext(p) == ".jsonl" && p != path {
					t.Errorf("prune plans %s of %s", a, p)
				}
			}
			res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings(t, root).Findings {
				if pruned[f.Code] || f.Severity == validate.Error {
					t.Errorf("after prune: %s %s %s", f.Code, f.Path, f.Message)
				}
			}
			if again := prune(t, repair.PruneOptions{Root: root}); !again.Empty() {
				t.Errorf("a second prune plans %v", planned(again))
			}
			u, err := changeset.Undo(res.Journal)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, u, t.TempDir())
			after := snapshot(t, root)
			for p, want := range before {
				got, ok := after[p]
				if !ok || !bytes.Equal(got.data, want.data) || !got.mtime.Equal(want.mtime) {
					t.Errorf("undo did not restore %s", p)
				}
			}
			if len(after) != len(before) {
				t.Errorf("undo: %d files, want %d", len(after), len(before))
			}
		})
	}
	if len(covered) != len(pruned) {
		t.Errorf("cases cover %d codes, want %d", len(covered), len(pruned))
	}
}

// TestPruneWhatSidecars: --what names each kind on its own.
func TestPruneWhatSidecars(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	paths := map[string]string{}
	for _, c := range prunedCases() {
		if pruned[c.Code] {
			p, _ := c.Damage(t, root)
			paths[c.Name] = p
		}
	}
	age(t, root)
	for what, name := range map[string]string{
		repair.PruneEmptySessions: "title alone, never a transcript",
		repair.PruneHusks:         "husk of a gone transcript",
		repair.PruneTasks:         "task list of a gone session",
		repair.PrunePlans:         "plan no transcript names",
		repair.PruneUsageData:     "/insights summary of a gone session",
		repair.PrunePastes:        "pasted text no prompt names",
		repair.PruneShellSnaps:    "shell snapshot of a gone process",
		repair.PrunePIDFiles:      "pid file of a gone process",
	} {
		ops := planned(prune(t, repair.PruneOptions{Root: root, What: []string{what}}))
		if _, ok := ops[paths[name]]; !ok {
			t.Errorf("--what %s does not plan %s", what, paths[name])
		}
		for p := range ops {
			for other, op := range paths {
				if op == p && other != name && !(what == repair.PruneUsageData && other == "/insights facets of a gone session") && !(what == repair.PrunePIDFiles && other == "pid file of a reused pid") {
					t.Errorf("--what %s plans %s (%s)", what, p, other)
				}
			}
		}
	}
}

// TestPruneUnwrittenWithFolder: a never-written transcript and the
// session folder beside it (the title sidecar 2.1.330 writes on /rename)
// go in one plan, so that a second prune plans nothing.
func TestPruneUnwrittenWithFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	var p string
	for _, c := range damage.StoreCases {
		if c.Code == validate.SessionUnwritten {
			p, _ = c.Damage(t, root)
		}
	}
	dir := p[:len(p)-len(".jsonl")]
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "custom-title.json"), []byte(`{"customTitle":"the lost session"}`), 0o600)
	age(t, root)
	rep := findings(t, root)
	if !has(rep, validate.SessionUnwritten, p, 0) || has(rep, validate.SessionHusk, dir, 0) {
		t.Fatalf("%+v", rep.Findings)
	}
	ops := planned(prune(t, repair.PruneOptions{Root: root}))
	if ops[p] == "" || ops[dir] == "" {
		t.Fatalf("plan: %v", ops)
	}
}

// TestPruneSidecarsLive: nothing of a live session goes, however gone its
// transcript: its task list, /insights data, session folder; nor a shell
// snapshot a running process (started before it) may source.
func TestPruneSidecarsLive(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	var paths []string
	for _, c := range damage.StoreCases {
		switch c.Code {
		case validate.SessionHusk, validate.OrphanTasks, validate.OrphanUsageData, validate.OrphanShellSnap:
			p, _ := c.Damage(t, root)
			paths = append(paths, p)
		}
	}
	age(t, root)
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid())),
		[]byte(fmt.Sprintf(`{"pid":%d,"sessionId":%q,"startedAt":%d}`, os.Getpid(), damage.Gone, damage.OldTime.AddDate(-1, 0, 0).UnixMilli())), 0o600)
	ops := planned(prune(t, repair.PruneOptions{Root: root}))
	for _, p := range paths {
		if ops[p] != "" {
			t.Errorf("planned %s of a live session's %s", ops[p], p)
		}
	}
}

// TestPruneStalePIDFiles: prune removes the sessions/<pid>.json of a gone
// or reused pid whose session is not on disk, and never the file of a
// running Claude Code (a new session before its first prompt) nor one
// whose session is on disk.
func TestPruneStalePIDFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the program of a pid is told from /proc/<pid>/cmdline")
	}
	root := damage.CopyStore(t, damage.V88)
	gone := damage.PIDFile(t, root, damage.GonePID(t), damage.NotOnDisk)
	reused := damage.PIDFile(t, root, damage.Running(t, "vim"), damage.NotOnDisk)
	starting := damage.PIDFile(t, root, damage.Running(t, "claude"), damage.NotOnDisk)
	onDisk := damage.PIDFile(t, root, damage.GonePID(t), damage.V88Session)
	ops := planned(prune(t, repair.PruneOptions{Root: root}))
	for _, p := range []string{gone, reused} {
		if ops[p] == "" {
			t.Errorf("prune does not plan %s", p)
		}
	}
	for _, p := range []string{starting, onDisk} {
		if ops[p] != "" {
			t.Errorf("prune plans %s of %s", ops[p], p)
		}
	}
	if ops := planned(prune(t, repair.PruneOptions{Root: root, What: []string{repair.PruneTodos}})); ops[gone] != "" {
		t.Errorf("--what todos plans %s", gone)
	}
}

// TestPruneKeepsLostTranscript: a transcript rewritten to a stub whose
// subagents survive is not an empty session: prune leaves it (cfix rm
// removes the session, after export).
func TestPruneKeepsLostTranscript(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.StubTranscript(t, root)
	age(t, root)
	if op := planned(prune(t, repair.PruneOptions{Root: root}))[p]; op != "" {
		t.Errorf("prune plans %s of %s", op, p)
	}
}
