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
