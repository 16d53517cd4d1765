package repair_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

const betaFile = "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl"

// moveOut moves a project folder of the store to another folder ("another
// disk") and links it back. It returns the link and where it leads.
func moveOut(t *testing.T, root, folder string) (link, disk string) {
	t.Helper()
	link = filepath.Join(root, "projects", folder)
	disk = filepath.Join(t.TempDir(), folder)
	if err := os.Rename(link, disk); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(disk, link); err != nil {
		t.Fatal(err)
	}
	return link, disk
}

func tear(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","uuid":"torn`)
	f.Close()
}

func notes(ns []string) string { return strings.Join(ns, "\n") }

// TestRepairLinkedProject: a torn session behind a project folder linked
// out of the store is found, but repair writes nothing through the link
// and says so in the plan; the rest of the store is repaired.
func TestRepairLinkedProject(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	beta := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", betaFile)
	tear(t, main)
	tear(t, beta)
	link, disk := moveOut(t, root, damage.V88Project)
	age(t, root)
	age(t, disk)
	if !has(findings(t, root), validate.LineTorn, main, 0) {
		t.Fatal("validate does not find the torn line behind the link")
	}
	behind, _ := os.ReadFile(main)

	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	fixed := false
	for _, op := range cs.Ops {
		if strings.HasPrefix(op.Path, link+string(filepath.Separator)) {
			t.Errorf("planned %s %s, behind the link", op.Action, op.Path)
		}
		fixed = fixed || op.Path == beta
	}
	if !fixed {
		t.Error("the torn file outside the link is not repaired")
	}
	want := link + " is a symbolic link to " + disk + ", out of the store: cfix writes nothing through it; 1 change left out of this plan: rewrite " + main
	if !strings.Contains(notes(cs.Notes), want) {
		t.Errorf("notes lack %q:\n%s", want, notes(cs.Notes))
	}
	apply(t, cs, t.TempDir())
	if after, _ := os.ReadFile(main); !bytes.Equal(after, behind) {
		t.Error("the transcript behind the link was changed")
	}
	if has(findings(t, root), validate.LineTorn, beta, 0) {
		t.Error("the file outside the link is still torn")
	}
	// A session named by an id prefix gets the same plan for it.
	cs, err = repair.Plan(repair.Options{Root: root, Targets: []string{damage.V88Session[:8]}})
	if err != nil || len(cs.Ops) != 0 || !strings.Contains(notes(cs.Notes), "rewrite "+main) {
		t.Errorf("by prefix: %v, ops %+v, notes %v", err, cs.Ops, cs.Notes)
	}
}

// TestRepairStubIntoLink: a stub whose metadata would move into a
// transcript behind the link stays, and the plan says why.
func TestRepairStubIntoLink(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	var leaf any
	damage.EditLine(t, main, damage.FindLast(t, main, damage.IsType("assistant")), func(m map[string]any) { leaf = m["uuid"] })
	stub := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "55555555-5555-4555-8555-555555555555.jsonl")
	damage.WriteLines(t, stub, [][]byte{[]byte(`{"type":"summary","summary":"title","leafUuid":"` + leaf.(string) + `"}`)}, true)
	link, disk := moveOut(t, root, damage.V88Project)
	age(t, root)
	age(t, disk)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range cs.Ops {
		if op.Path == stub || op.Path == main {
			t.Errorf("planned %s %s", op.Action, op.Path)
		}
	}
	if want := stub + ": stub not removed (its metadata would move into " + main + "); " + link + " is a symbolic link"; !strings.Contains(notes(cs.Notes), want) {
		t.Errorf("notes lack %q:\n%s", want, notes(cs.Notes))
	}
}

// TestPruneLinkedProject: the sessions behind a linked project folder
// exist (their sidecars are no orphans), and an old one is kept whole:
// neither its transcript nor its file-history and todos go.
func TestPruneLinkedProject(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	id := damage.V88Session
	fh := filepath.Join(root, "file-history", id)
	todo := filepath.Join(root, "todos", id+"-agent-"+id+".json")
	os.MkdirAll(fh, 0o700)
	os.WriteFile(filepath.Join(fh, "abc@v1"), []byte("old"), 0o600)
	os.MkdirAll(filepath.Dir(todo), 0o700)
	os.WriteFile(todo, []byte("[]"), 0o600)
	link, disk := moveOut(t, root, damage.V88Project)
	age(t, root)
	age(t, disk)

	ops := planned(prune(t, repair.PruneOptions{Root: root}))
	if _, ok := ops[fh]; ok {
		t.Error("the file-history of a session behind the link is taken for an orphan")
	}
	if _, ok := ops[todo]; ok {
		t.Error("the todos of a session behind the link are taken for orphans")
	}

	cs := prune(t, repair.PruneOptions{Root: root, OlderThan: 24 * time.Hour, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	ops = planned(cs)
	for p := range ops {
		if strings.HasPrefix(p, link) || p == fh || p == todo {
			t.Errorf("planned %s %s of the session behind the link", ops[p], p)
		}
	}
	other := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", betaFile)
	if _, ok := ops[other]; !ok {
		t.Errorf("an old session outside the link is not pruned: %v", ops)
	}
	if !strings.Contains(notes(cs.Notes), link+" is a symbolic link to "+disk) || !strings.Contains(notes(cs.Notes), "delete-dir "+fh) {
		t.Errorf("notes: %s", notes(cs.Notes))
	}
}
