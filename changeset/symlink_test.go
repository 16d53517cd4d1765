package changeset_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
)

// linkOut moves the file or folder at p out of the store, to a folder of
// its own, and puts a symbolic link to it in its place. It returns where
// the link leads.
func linkOut(t *testing.T, p string) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), filepath.Base(p))
	if err := os.Rename(p, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return target
}

// isLink checks that p is a symbolic link that says target.
func isLink(t *testing.T, p, target string) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is not a symbolic link (mode %v)", p, fi.Mode())
	}
	if got, _ := os.Readlink(p); got != target {
		t.Fatalf("%s leads to %s, want %s", p, got, target)
	}
}

// TestUndoRestoresLinks: a removed symbolic link (a transcript linked to
// another disk), and a session folder removed with a linked folder in it,
// come back from undo as links saying the same, never as files of what
// they lead to; the plans show them as links. What they lead to is never
// touched. In an ordinary and in a batch apply.
func TestUndoRestoresLinks(t *testing.T) {
	for _, batch := range []bool{false, true} {
		undoRestoresLinks(t, batch)
	}
}

func undoRestoresLinks(t *testing.T, batch bool) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	sessDir := strings.TrimSuffix(main, ".jsonl")
	mainTarget := linkOut(t, main)
	toolResults := filepath.Join(sessDir, "tool-results")
	os.MkdirAll(toolResults, 0o700)
	os.WriteFile(filepath.Join(toolResults, "r.txt"), []byte("output\n"), 0o600)
	trTarget := linkOut(t, toolResults)
	before, _ := os.ReadFile(mainTarget)

	cs := changeset.New(root, "rm")
	cs.Add(changeset.Op{Action: changeset.Delete, Path: main, Expect: fp(t, main), Reason: "remove the linked transcript"})
	cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: sessDir, Expect: fp(t, sessDir), Reason: "remove the session folder"})
	cs.Batch = batch
	var show bytes.Buffer
	if err := changeset.Show(&show, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show.String(), "@@ -symbolic link to "+mainTarget+" @@") || !strings.Contains(show.String(), "-tool-results -> "+trTarget+" (symbolic link)") {
		t.Errorf("the plan does not show the links:\n%s", show.String())
	}
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(main); err == nil {
		t.Fatal("the link is still there")
	}
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	show.Reset()
	if err := changeset.Show(&show, u); err != nil {
		t.Fatalf("showing the undo: %v", err)
	}
	if !strings.Contains(show.String(), "@@ symbolic link to "+mainTarget+" @@") {
		t.Errorf("the undo does not show the link it makes:\n%s", show.String())
	}
	undoAll(t, res.Journal)
	isLink(t, main, mainTarget)
	isLink(t, toolResults, trTarget)
	if after, _ := os.ReadFile(mainTarget); !bytes.Equal(after, before) {
		t.Error("what the link leads to changed")
	}
	if b, err := os.ReadFile(filepath.Join(toolResults, "r.txt")); err != nil || string(b) != "output\n" {
		t.Errorf("tool-results through the link: %q, %v", b, err)
	}
}

// TestShowUndoOfLinkedFolder: the undo of a copy that made a link to a
// folder (move-project of a session folder whose tool-results/ is a link)
// is shown as the removal of a link, not read as a file ("is a
// directory"), and applied.
func TestShowUndoOfLinkedFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	sessDir := strings.TrimSuffix(damage.MainFile(root), ".jsonl")
	os.RemoveAll(filepath.Join(sessDir, "subagents"))
	toolResults := filepath.Join(sessDir, "tool-results")
	os.MkdirAll(toolResults, 0o700)
	os.WriteFile(filepath.Join(toolResults, "r.txt"), []byte("output\n"), 0o600)
	target := linkOut(t, toolResults)
	to := filepath.Join(root, "projects", "-home-dev-work-zeta", filepath.Base(sessDir))
	from := fp(t, sessDir)
	cs := changeset.New(root, "move-project")
	cs.Add(changeset.Op{Action: changeset.CreateDir, Path: to, From: sessDir, FromExpect: &from, Reason: "copy the session folder"})
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true})
	if err != nil {
		t.Fatal(err)
	}
	isLink(t, filepath.Join(to, "tool-results"), target)
	u, err := changeset.Undo(res.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var show bytes.Buffer
	if err := changeset.Show(&show, u); err != nil {
		t.Fatalf("showing the undo: %v", err)
	}
	if !strings.Contains(show.String(), "@@ -symbolic link to "+target+" @@") {
		t.Errorf("the undo does not show the link it removes:\n%s", show.String())
	}
	undoAll(t, res.Journal)
	if _, err := os.Lstat(to); err == nil {
		t.Errorf("%s is still there", to)
	}
	if b, err := os.ReadFile(filepath.Join(target, "r.txt")); err != nil || string(b) != "output\n" {
		t.Errorf("what the link led to: %q, %v", b, err)
	}
}

// TestRewriteOfLinkRefused: a rewrite of a transcript that is a symbolic
// link is refused before anything is written, naming the link: it would
// replace the link by a file and leave what it leads to as it was.
func TestRewriteOfLinkRefused(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	target := linkOut(t, main)
	before, _ := os.ReadFile(target)
	cs := changeset.New(root, "trim")
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: main, Expect: fp(t, main), Data: []byte("{}\n"), HasData: true, Reason: "rewrite"})
	_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true})
	var re *changeset.RefusedError
	if !errors.As(err, &re) || !re.Untouched || !strings.Contains(err.Error(), "is a symbolic link to "+target+": cfix does not rewrite a link") {
		t.Fatalf("err = %v", err)
	}
	isLink(t, main, target)
	if after, _ := os.ReadFile(target); !bytes.Equal(after, before) {
		t.Error("what the link leads to changed")
	}
}
