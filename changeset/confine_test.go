package changeset_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
)

// hostile makes, in a temporary folder, a store (root) with a transcript
// s.jsonl and t.jsonl in project folder -w and a session folder S holding
// subagents/agent-a.jsonl, and beside it a folder outside holding victim.
func hostile(t *testing.T) (tmp, root, outside string) {
	t.Helper()
	tmp = t.TempDir()
	root = filepath.Join(tmp, "claude")
	outside = filepath.Join(tmp, "outside")
	write(t, filepath.Join(root, "projects", "-w", "s.jsonl"), "{\"a\":1}\n")
	write(t, filepath.Join(root, "projects", "-w", "t.jsonl"), "{\"t\":1}\n")
	write(t, filepath.Join(root, "projects", "-w", "S", "subagents", "agent-a.jsonl"), "{\"sub\":1}\n")
	write(t, filepath.Join(outside, "victim"), "victim\n")
	return tmp, root, outside
}

// tree lists every file, folder and link under dir with its mode and its
// bytes or target.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			line += " -> " + l
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %q", b)
		}
		out = append(out, line)
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestHostilePlanRefused: a plan file that writes outside the store (a new
// executable file, a removal, a rename, a path with "..", a root that is
// not a store), reads or adopts what is not its own, or sets a setuid bit,
// is refused whole by Load, naming the file, the op and the path; built in
// the process instead, it is refused whole by Apply. Nothing is written.
func TestHostilePlanRefused(t *testing.T) {
	tmp, root, outside := hostile(t)
	s := filepath.Join(root, "projects", "-w", "s.jsonl")
	sub := filepath.Join(root, "projects", "-w", "S", "subagents", "agent-a.jsonl")
	victim := filepath.Join(outside, "victim")
	data := func(op changeset.Op) changeset.Op {
		op.Data, op.HasData = []byte("#!/bin/sh\necho owned\n"), true
		return op
	}
	for _, c := range []struct {
		name string
		root string // the plan's root, when not root
		op   changeset.Op
		want string
	}{
		{"create outside", "", data(changeset.Op{Action: changeset.Create, Path: filepath.Join(outside, "evil"), Mode: 0o755}), "path " + filepath.Join(outside, "evil") + " is outside the store " + root},
		{"delete outside", "", changeset.Op{Action: changeset.Delete, Path: victim, Expect: fp(t, victim)}, "path " + victim + " is outside the store"},
		{"dot-dot", "", data(changeset.Op{Action: changeset.Create, Path: root + "/projects/../../outside/evil"}), "is not an absolute, clean path"},
		{"rename out", "", changeset.Op{Action: changeset.Rename, Path: sub, To: filepath.Join(outside, "a.jsonl"), Expect: fp(t, sub)}, "to " + filepath.Join(outside, "a.jsonl") + " is outside the store"},
		{"read outside", "", changeset.Op{Action: changeset.Create, Path: filepath.Join(root, "projects", "-w", "v.jsonl"), From: victim}, "from " + victim + " is outside the store"},
		{"adopt", "", changeset.Op{Action: changeset.Create, Path: filepath.Join(root, "projects", "-w", "v.jsonl"), From: sub, Adopt: true, FromExpect: ptr(fp(t, sub))}, "it adopts none other"},
		{"setuid", "", data(changeset.Op{Action: changeset.Create, Path: filepath.Join(root, "projects", "-w", "x.jsonl"), Mode: 0o4755}), "has bits beyond rwx"},
		{"archive outside", "", data(changeset.Op{Action: changeset.Create, Path: filepath.Join(outside, "x.tar.zst")}), "is outside the store"},
		{"the store itself", "", changeset.Op{Action: changeset.DeleteDir, Path: root, Expect: fp(t, root)}, "is the store itself"},
		// A plan may not ask to put a "backup" back by a hard link: it
		// removed <From>.restore and made two store files one inode.
		{"restore flag", "", changeset.Op{Action: changeset.Rewrite, Path: s, Expect: fp(t, s), From: sub, FromExpect: ptr(fp(t, sub)), Restore: true}, "only an undo puts back a journal's backup"},
		{"not a store", outside, data(changeset.Op{Action: changeset.Create, Path: filepath.Join(outside, "evil")}), "store root " + outside + " is not a Claude Code store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := tree(t, tmp)
			planRoot := root
			if c.root != "" {
				planRoot = c.root
			}
			cs := changeset.New(planRoot, "test")
			// A harmless first op: the plan is refused whole.
			cs.Add(changeset.Op{Action: changeset.Rewrite, Path: s, Expect: fp(t, s), Data: []byte("{\"a\":2}\n"), HasData: true})
			cs.Add(c.op)
			plan := filepath.Join(t.TempDir(), "plan.json")
			if err := cs.Save(plan); err != nil {
				t.Fatal(err)
			}
			_, err := changeset.Load(plan)
			if err == nil || !strings.HasPrefix(err.Error(), "plan "+plan+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("load: %v; want %q", err, c.want)
			}
			if c.root == "" && !strings.Contains(fmt.Sprint(err), "op 2: ") {
				t.Errorf("load: %v names no op 2", err)
			}
			if c.name != "archive outside" {
				_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
				var re *changeset.RefusedError
				if !errors.As(err, &re) || !re.Untouched || !strings.Contains(err.Error(), c.want) {
					t.Errorf("apply: %v; want %q, nothing changed", err, c.want)
				}
			}
			if after := tree(t, tmp); after != before {
				t.Errorf("written:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestTranscriptNotExecutable: a transcript a plan creates with an
// executable mode is written without the executable bits.
func TestTranscriptNotExecutable(t *testing.T) {
	_, root, _ := hostile(t)
	p := filepath.Join(root, "projects", "-w", "x.jsonl")
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Create, Path: p, Data: []byte("{}\n"), HasData: true, Mode: 0o755})
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%s: %v %v, want mode 0644", p, fi.Mode(), err)
	}
}

// TestWriteThroughInnerLink: a copy into a session folder whose subagents/
// is a symbolic link (to a folder outside the store, or to another
// session's folder) is refused whole, and so is a write into a session
// folder that is a link; nothing is written through the link. (The link
// check looked only at the top folder of a copy.)
func TestWriteThroughInnerLink(t *testing.T) {
	for _, to := range []string{"outside", "inside"} {
		t.Run(to, func(t *testing.T) {
			tmp, root, outside := hostile(t)
			sess := filepath.Join(root, "projects", "-w", "S")
			other := filepath.Join(root, "projects", "-w", "O", "subagents")
			write(t, filepath.Join(other, "agent-o.jsonl"), "{\"o\":1}\n")
			dest := outside
			if to == "inside" {
				dest = other
			}
			os.RemoveAll(filepath.Join(sess, "subagents"))
			if err := os.Symlink(dest, filepath.Join(sess, "subagents")); err != nil {
				t.Fatal(err)
			}
			stage := filepath.Join(t.TempDir(), "stage")
			write(t, filepath.Join(stage, "subagents", "agent-b.jsonl"), "{\"b\":1}\n")
			before := tree(t, tmp)
			cs := changeset.New(root, "restore")
			cs.Own(stage)
			cs.Add(changeset.Op{Action: changeset.CreateDir, Path: sess, From: stage, FromExpect: ptr(fp(t, stage)), Merge: true, Expect: fp(t, sess)})
			_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), filepath.Join(sess, "subagents")+" is a symbolic link") || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("apply: %v", err)
			}
			if after := tree(t, tmp); after != before {
				t.Errorf("written:\n%s\nwas:\n%s", after, before)
			}
			// A write into a session folder that is itself a link.
			alias := filepath.Join(root, "projects", "-w", "A")
			if err := os.Symlink(sess, alias); err != nil {
				t.Fatal(err)
			}
			before2 := tree(t, tmp)
			cs = changeset.New(root, "test")
			cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(alias, "x.json"), Data: []byte("{}"), HasData: true})
			if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), alias+" is a symbolic link") {
				t.Errorf("apply through %s: %v", alias, err)
			}
			if after := tree(t, tmp); after != before2 {
				t.Errorf("written:\n%s\nwas:\n%s", after, before2)
			}
			if _, err := os.Lstat(filepath.Join(dest, "agent-b.jsonl")); err == nil {
				t.Errorf("agent-b.jsonl was written through the link into %s", dest)
			}
		})
	}
}

// TestUndoThroughInnerLink: undo of the removal of a session folder (rm),
// after the folder came back with its subagents/ a link to a folder
// outside the store, is refused and writes nothing there.
func TestUndoThroughInnerLink(t *testing.T) {
	tmp, root, outside := hostile(t)
	sess := filepath.Join(root, "projects", "-w", "S")
	cs := changeset.New(root, "rm")
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: sess, Expect: fp(t, sess)})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(sess, 0o700)
	if err := os.Symlink(outside, filepath.Join(sess, "subagents")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, tmp)
	u, err := changeset.Undo(res.Journal)
	if err == nil {
		_, err = changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()})
	}
	if err == nil || !strings.Contains(err.Error(), filepath.Join(sess, "subagents")+" is a symbolic link") {
		t.Errorf("undo: %v", err)
	}
	if after := tree(t, tmp); after != before {
		t.Errorf("written:\n%s\nwas:\n%s", after, before)
	}
	// With the link gone, the undo puts the folder back.
	os.Remove(filepath.Join(sess, "subagents"))
	undoAll(t, res.Journal)
	present(t, map[string]string{filepath.Join(sess, "subagents", "agent-a.jsonl"): "{\"sub\":1}\n"})
}

// applied applies to the store of hostile a rewrite of s.jsonl, the
// removal of t.jsonl and of session folder S, and a copy of S as N, and
// returns the journal.
func applied(t *testing.T, root string) string {
	t.Helper()
	p := func(rel string) string { return filepath.Join(root, "projects", "-w", rel) }
	cs := changeset.New(root, "test")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p("s.jsonl"), Expect: fp(t, p("s.jsonl")), Data: []byte("{\"a\":2}\n"), HasData: true})
	cs.Add(changeset.Op{Action: changeset.Delete, Path: p("t.jsonl"), Expect: fp(t, p("t.jsonl"))})
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: p("N"), From: p("S"), FromExpect: ptr(fp(t, p("S"))), Expect: fp(t, p("N"))})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: p("S"), Expect: fp(t, p("S"))})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res.Journal
}

// editPlan rewrites the plan.json of a journal with edit.
func editPlan(t *testing.T, journal string, edit func(cs *changeset.ChangeSet)) {
	t.Helper()
	p := filepath.Join(journal, "plan.json")
	var cs changeset.ChangeSet
	if err := json.Unmarshal([]byte(read(t, p)), &cs); err != nil {
		t.Fatal(err)
	}
	edit(&cs)
	b, _ := json.Marshal(&cs)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestEditedJournalRefused: undo of a journal whose plan names a path
// outside the store or a root that is not a store, or whose log names a
// backup outside the journal folder, a folder made outside the store or a
// file a copy made outside its folder, is refused whole, naming the
// journal; nothing is written. (Undo planted and removed files outside.)
func TestEditedJournalRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(t *testing.T, journal, root, outside string)
		want string
	}{
		{"plan path", func(t *testing.T, j, root, outside string) {
			editPlan(t, j, func(cs *changeset.ChangeSet) { cs.Ops[1].Path = filepath.Join(outside, "planted.sh") })
		}, "plan.json: op 2: path "},
		{"plan root", func(t *testing.T, j, root, outside string) {
			editPlan(t, j, func(cs *changeset.ChangeSet) {
				cs.Root = outside
				cs.Ops[1].Path = filepath.Join(outside, "planted.sh")
			})
		}, "is not a Claude Code store"},
		{"backup", func(t *testing.T, j, root, outside string) {
			rewriteLog(t, j, func(e map[string]any) {
				if e["event"] == "backup" && e["op"] == 1.0 {
					e["backup"] = "../../../../outside/victim"
				}
			})
		}, `backup "../../../../outside/victim" is not backup/1`},
		{"mkdir", func(t *testing.T, j, root, outside string) {
			os.Mkdir(filepath.Join(outside, "empty"), 0o700)
			rewriteLog(t, j, func(e map[string]any) {
				if e["event"] == "done" && e["op"] == 0.0 {
					e["event"], e["path"] = "mkdir", filepath.Join(outside, "empty")
				}
			})
		}, "is outside the store"},
		{"made", func(t *testing.T, j, root, outside string) {
			rewriteLog(t, j, func(e map[string]any) {
				if e["event"] == "creating" {
					e["made"] = append(e["made"].([]any), "../../../../outside/victim")
				}
			})
		}, `"../../../../outside/victim" is not a path below`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp, root, outside := hostile(t)
			j := applied(t, root)
			c.edit(t, j, root, outside)
			before := tree(t, tmp)
			u, err := changeset.Undo(j)
			if err == nil {
				_, err = changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()})
			}
			if err == nil || !strings.HasPrefix(err.Error(), "journal "+j+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("undo: %v; want %q", err, c.want)
			}
			if after := tree(t, tmp); after != before {
				t.Errorf("written:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// TestRottedBackupRefused: undo compares every backup it restores with the
// hash the journal holds, before it restores any: a backup that rotted, a
// backup swapped with another, a file changed in a folder's backup, a
// missing backup or a cut backup of the wrong length refuse the whole
// undo, naming the backup. (They were restored silently.)
func TestRottedBackupRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		rot  func(t *testing.T, j string)
		want string
	}{
		{"rotted", func(t *testing.T, j string) {
			os.WriteFile(filepath.Join(j, "backup", "0"), []byte("{\"a\":0}\n"), 0o600)
		}, "backup/0 does not hold what was backed up (sha256 "},
		{"swapped", func(t *testing.T, j string) {
			a, b := filepath.Join(j, "backup", "0"), filepath.Join(j, "backup", "1")
			os.Rename(a, a+".x")
			os.Rename(b, a)
			os.Rename(a+".x", b)
		}, "does not hold what was backed up"},
		{"folder", func(t *testing.T, j string) {
			os.WriteFile(filepath.Join(j, "backup", "3", "subagents", "agent-a.jsonl"), []byte("{\"sub\":2}\n"), 0o600)
		}, "backup/3 does not hold what was backed up"},
		{"missing", func(t *testing.T, j string) {
			os.Remove(filepath.Join(j, "backup", "1"))
		}, "backup/1 is missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp, root, _ := hostile(t)
			j := applied(t, root)
			c.rot(t, j)
			before := tree(t, tmp)
			u, err := changeset.Undo(j)
			if err == nil {
				_, err = changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "refusing to undo") {
				t.Errorf("undo: %v; want %q", err, c.want)
			}
			if after := tree(t, tmp); after != before {
				t.Errorf("written:\n%s\nwas:\n%s", after, before)
			}
		})
	}
	t.Run("intact", func(t *testing.T) {
		_, root, _ := hostile(t)
		before := tree(t, root)
		undoAll(t, applied(t, root))
		if after := tree(t, root); after != before {
			t.Errorf("after undo:\n%s\nwas:\n%s", after, before)
		}
	})
	t.Run("cut", func(t *testing.T) {
		dir := storeDir(t)
		p := filepath.Join(dir, "s.jsonl")
		write(t, p, "{\"a\":1}\n{\"b\":2}\n{\"c\":")
		res, err := changeset.Apply(cutPlan(t, dir, p, 16, 21, 3), changeset.ApplyOptions{JournalDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(res.Journal, "backup", "0"), []byte("{\"c"), 0o600)
		if _, err := changeset.Undo(res.Journal); err == nil || !strings.Contains(err.Error(), "backup/0 does not hold what was cut off (3 bytes, expected 5)") {
			t.Errorf("undo: %v", err)
		}
	})
}

// TestUndoArchiveOutside: an archive made outside the store, in a folder
// the apply made, is removed by undo; the folder, outside the store, is
// left (undo removes no folder outside the store).
func TestUndoArchiveOutside(t *testing.T) {
	_, root, outside := hostile(t)
	a := filepath.Join(outside, "archive", "s.tar.zst")
	cs := changeset.New(root, "archive")
	cs.Add(changeset.Op{Action: changeset.Create, Path: a, Data: []byte("archive"), HasData: true, Mode: 0o600})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u := undoAll(t, res.Journal)
	if len(u.Ops) != 1 || u.Ops[0].Action != changeset.Delete {
		t.Errorf("undo: %+v", u.Ops)
	}
	present(t, nil, a)
	if fi, err := os.Stat(filepath.Dir(a)); err != nil || !fi.IsDir() {
		t.Errorf("%s: %v", filepath.Dir(a), err)
	}
}

// TestArchiveExt: the archives confine lets a plan write outside the store
// are those archive makes.
func TestArchiveExt(t *testing.T) {
	if changeset.ArchiveExt != archive.Ext {
		t.Errorf("changeset.ArchiveExt %q, archive.Ext %q", changeset.ArchiveExt, archive.Ext)
	}
}
