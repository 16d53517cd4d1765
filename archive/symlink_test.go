package archive

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
)

// TestArchiveOfLinkedTranscript: a session whose transcript is a symbolic
// link (its only file) is not archived: named, the plan is refused saying
// which link and where it leads; picked by --older-than, it is left in the
// store with a note, and the others are archived. Before, the plan made
// an archive of 0 files and dropped the session's index entry and prompt
// history, while the link stayed.
func TestArchiveOfLinkedTranscript(t *testing.T) {
	root := copyStore(t, filepath.Join(damage.Corpus(), damage.V88, ".claude"))
	const id = "faa4037a-9834-4495-ada4-b0c35ab615ba"
	main := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", id+".jsonl")
	target := filepath.Join(t.TempDir(), id+".jsonl")
	if err := os.Rename(main, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, main); err != nil {
		t.Fatal(err)
	}
	// Its index entry and prompt history, which an archive takes along.
	idx := filepath.Join(filepath.Dir(main), "sessions-index.json")
	os.WriteFile(idx, []byte(`{"version":1,"entries":[{"sessionId":"`+id+`","fullPath":"`+main+`"}],"originalPath":"/home/dev/work/beta.dir/sub"}`), 0o600)
	os.WriteFile(filepath.Join(root, "history.jsonl"), []byte(`{"display":"hi","pastedContents":{},"timestamp":1767268800000,"project":"/home/dev/work/beta.dir/sub","sessionId":"`+id+`"}`+"\n"), 0o600)
	damage.Age(t, root)
	before := tree(t, root)
	adir := filepath.Join(t.TempDir(), "archive")

	_, err := Archive(Options{Root: root, Dir: adir, Sessions: []string{id}, Build: true})
	var ce *clone.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "session "+id+": its transcript "+main+" is a symbolic link to "+target) ||
		!strings.Contains(err.Error(), "nothing is planned") {
		t.Errorf("archive of the linked session: %v", err)
	}

	p, err := Archive(Options{Root: root, Dir: adir, OlderThan: time.Minute, Build: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	if len(p.Archives) == 0 {
		t.Fatal("nothing archived")
	}
	for _, a := range p.Archives {
		if a.Session == id {
			t.Errorf("the linked session is archived (%d files)", a.Files)
		}
	}
	if !strings.Contains(strings.Join(p.ChangeSet.Notes, "\n"), "session "+id+": its transcript "+main+" is a symbolic link to "+target) {
		t.Errorf("no note on the linked session: %q", p.ChangeSet.Notes)
	}
	if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true}); err != nil {
		t.Fatal(err)
	}
	after := tree(t, root)
	for rel, what := range before {
		if strings.Contains(rel, id) && after[rel] != what {
			t.Errorf("%s: %q, was %q", rel, after[rel], what)
		}
	}
	if b, _ := os.ReadFile(idx); !strings.Contains(string(b), id) {
		t.Errorf("the session's index entry is gone")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "history.jsonl")); !strings.Contains(string(b), id) {
		t.Errorf("the session's prompt history is gone")
	}
}

// TestLinkedSidecarLeftOut: a sessions-index.json or history.jsonl that is
// a symbolic link (kept elsewhere and linked in) is left out of an archive
// and of rm --history, with a note naming the link; the rest is applied,
// and the link and what it leads to stay as they were. Before, the plan
// rewrote it and the apply was refused whole ("changed while applying").
func TestLinkedSidecarLeftOut(t *testing.T) {
	const id = "faa4037a-9834-4495-ada4-b0c35ab615ba"
	for _, command := range []string{"archive", "rm"} {
		root := copyStore(t, filepath.Join(damage.Corpus(), damage.V88, ".claude"))
		folder := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub")
		// archive drops the session's index entry, rm --history its prompts.
		linked := filepath.Join(folder, "sessions-index.json")
		content := `{"version":1,"entries":[{"sessionId":"` + id + `","fullPath":"` + filepath.Join(folder, id+".jsonl") + `"}],"originalPath":"/home/dev/work/beta.dir/sub"}`
		if command == "rm" {
			linked = filepath.Join(root, "history.jsonl")
			content = `{"display":"hi","pastedContents":{},"timestamp":1767268800000,"project":"/home/dev/work/beta.dir/sub","sessionId":"` + id + `"}` + "\n"
		}
		target := filepath.Join(t.TempDir(), filepath.Base(linked))
		os.WriteFile(target, []byte(content), 0o600)
		if err := os.Symlink(target, linked); err != nil {
			t.Fatal(err)
		}
		var cs *changeset.ChangeSet
		if command == "archive" {
			p, err := Archive(Options{Root: root, Dir: filepath.Join(t.TempDir(), "archive"), Sessions: []string{id}, Build: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Cleanup()
			cs = p.ChangeSet
		} else {
			var err error
			if cs, err = Rm(RmOptions{Root: root, Sessions: []string{id}, History: true}); err != nil {
				t.Fatal(err)
			}
		}
		for _, op := range cs.Ops {
			if op.Path == linked {
				t.Errorf("%s: the plan %ss the linked %s", command, op.Action, linked)
			}
		}
		if !strings.Contains(strings.Join(cs.Notes, "\n"), linked+" is a symbolic link to "+target+": not rewritten") {
			t.Errorf("%s: no note on the link: %q", command, cs.Notes)
		}
		if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true}); err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		if _, err := os.Stat(filepath.Join(folder, id+".jsonl")); err == nil {
			t.Errorf("%s: the session is still there", command)
		}
		if got, _ := os.Readlink(linked); got != target {
			t.Errorf("%s: the link leads to %q", command, got)
		}
		if b, _ := os.ReadFile(target); string(b) != content {
			t.Errorf("%s: what the link leads to changed: %q", command, b)
		}
	}
}
