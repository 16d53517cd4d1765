package clone_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
)

// linkOut moves the file at p out of the store and puts a symbolic link
// to it in its place; it returns where the link leads.
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

// linkedFamily links the main transcript of the 2.1.88 store at root, and
// with subagents each file of its subagents/ folder, to files out of the
// store; it returns each link with where it leads.
func linkedFamily(t *testing.T, root string, subagents bool) map[string]string {
	t.Helper()
	main := damage.MainFile(root)
	links := map[string]string{main: linkOut(t, main)}
	if !subagents {
		return links
	}
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "*"))
	if len(subs) < 2 {
		t.Fatalf("subagents: %v", subs)
	}
	for _, p := range subs {
		links[p] = linkOut(t, p)
	}
	return links
}

// linksIntact checks that each link still leads where it did.
func linksIntact(t *testing.T, links map[string]string) {
	t.Helper()
	for p, target := range links {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v", p, err)
			continue
		}
		if got, _ := os.Readlink(p); got != target {
			t.Errorf("%s leads to %s, want %s", p, got, target)
		}
	}
}

// TestCloneThroughLinkedFiles: a clone of a session whose transcript,
// subagent transcripts and .meta.json are symbolic links copies what they
// lead to: the same files, byte for byte and mode for mode, as the clone
// of the same session without links; never the link's target path (a
// torn file as long as that path, mode 0777). The links stay as they are.
func TestCloneThroughLinkedFiles(t *testing.T) {
	for _, subagents := range []bool{false, true} {
		cloneThroughLinks(t, subagents)
	}
}

func cloneThroughLinks(t *testing.T, subagents bool) {
	plain := damage.CopyStore(t, damage.V88)
	linked := damage.CopyStore(t, damage.V88)
	links := linkedFamily(t, linked, subagents)
	for _, root := range []string{plain, linked} {
		p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, ID: cloneID})
		if err != nil {
			t.Fatal(err)
		}
		journal := apply(t, p.ChangeSet)
		if root == plain {
			continue
		}
		dst := filepath.Join(linked, "projects", zetaFolder)
		sameFiles(t, "the clone through links", snapshot(t, filepath.Join(plain, "projects", zetaFolder)), snapshot(t, dst))
		filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, _ := os.Lstat(p)
			rel, _ := filepath.Rel(linked, p)
			want, _ := os.Stat(filepath.Join(plain, rel))
			if !fi.Mode().IsRegular() || want == nil || fi.Mode() != want.Mode() {
				t.Errorf("%s: mode %v, want a file of mode %v", p, fi.Mode(), want.Mode())
			}
			return nil
		})
		linksIntact(t, links)
		undo(t, journal)
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("%s is still there after the undo", dst)
		}
		linksIntact(t, links)
	}
}

// TestMoveOfLinkRefused: a move of a session whose transcript or subagent
// is a symbolic link is refused (exit 1), naming the link and where it
// leads: the move rewrites the transcript, so it would replace the link
// by a file in another folder and leave what it leads to behind (before,
// it wrote a torn file of the link's length and removed the link).
func TestMoveOfLinkRefused(t *testing.T) {
	for _, which := range []string{"main", "subagent"} {
		root := damage.CopyStore(t, damage.V88)
		p := damage.MainFile(root)
		if which == "subagent" {
			subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(p, ".jsonl"), "subagents", "*.jsonl"))
			p = subs[0]
		}
		target := linkOut(t, p)
		_, err := clone.Move(clone.Options{Root: root, Session: damage.V88Session, To: zeta})
		var ce *clone.ConflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), p+" is a symbolic link to "+target+": cfix does not move a link") {
			t.Errorf("%s: move of a link: %v", which, err)
		}
		linksIntact(t, map[string]string{p: target})
		// move-project refuses it too, whole.
		_, err = clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: zeta})
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), p+" is a symbolic link to "+target+": cfix does not move a link") {
			t.Errorf("%s: move-project of a link: %v", which, err)
		}
		linksIntact(t, map[string]string{p: target})
	}
}

// TestMoveProjectLeavesLinkedHistory: a history.jsonl that is a symbolic
// link (kept elsewhere and linked in) is left out of a move-project, with
// a note naming the link; the rest is applied, and the link and what it
// leads to stay as they were. Before, the plan rewrote it, and the apply
// was refused (the fingerprint was the link's, the bytes its target's).
func TestMoveProjectLeavesLinkedHistory(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	hist := filepath.Join(root, "history.jsonl")
	line := `{"display":"hi","pastedContents":{},"timestamp":1767268800000,"project":"` + alpha + `","sessionId":"` + damage.V88Session + `"}` + "\n"
	if err := os.WriteFile(hist, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	target := linkOut(t, hist)
	damage.Age(t, root)
	p, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: zeta})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range p.ChangeSet.Ops {
		if op.Path == hist {
			t.Errorf("the plan %ss the linked history", op.Action)
		}
	}
	if !strings.Contains(strings.Join(p.ChangeSet.Notes, "\n"), hist+" is a symbolic link to "+target+": not rewritten") {
		t.Errorf("no note on the link: %q", p.ChangeSet.Notes)
	}
	apply(t, p.ChangeSet)
	linksIntact(t, map[string]string{hist: target})
	if b, _ := os.ReadFile(target); string(b) != line {
		t.Errorf("what the link leads to changed: %q", b)
	}
}

// TestCloneOfLinkedFolderRefused: a clone of a session whose tool-results/
// or file-history folder is a symbolic link is refused (exit 1), naming
// the link and where it leads: a copy of the link would share the folder
// with the original. Before, the first failed with "not a regular file",
// the second with "read ...: is a directory" (the link read as a file).
func TestCloneOfLinkedFolderRefused(t *testing.T) {
	for _, which := range []string{"tool-results", "file-history"} {
		root := damage.CopyStore(t, damage.V88)
		dir := filepath.Join(strings.TrimSuffix(damage.MainFile(root), ".jsonl"), "tool-results")
		if which == "file-history" {
			dir = filepath.Join(root, "file-history", damage.V88Session)
		}
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o600)
		target := linkOut(t, dir)
		_, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, ID: cloneID})
		var ce *clone.ConflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), dir+" is a symbolic link to "+target+": cfix copies the file a link leads to, not a folder") {
			t.Errorf("%s: clone of a linked folder: %v", which, err)
		}
	}
}
