package trim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
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

// TestTrimAndForkThroughLink: trim into a new session and fork of a
// session whose transcript is a symbolic link read what it leads to: the
// new transcript is the one made from the same session without the link,
// a file of the source's mode; before, trim wrote a torn file as long as
// the link's target path and fork an empty one, both of mode 0777.
func TestTrimAndForkThroughLink(t *testing.T) {
	const id = "0f0f0000-1111-4222-8333-444455556666"
	for _, command := range []string{"trim", "fork"} {
		var made [2][]byte
		var modes [2]os.FileMode
		for k, link := range []bool{false, true} {
			root := damage.CopyStore(t, damage.V88)
			main := damage.MainFile(root)
			var target string
			if link {
				target = linkOut(t, main)
			}
			var p *clone.Plan
			if command == "trim" {
				tp, err := Trim(Options{Root: root, Session: damage.V88Session, Thinking: true, ToolOutput: true, ID: id})
				if err != nil {
					t.Fatal(err)
				}
				p = tp.Plan
			} else {
				fp, err := Fork(ForkOptions{Root: root, Session: damage.V88Session, Turn: 2, ID: id})
				if err != nil {
					t.Fatal(err)
				}
				p = fp.Plan
			}
			apply(t, p.ChangeSet)
			out := filepath.Join(filepath.Dir(main), id+".jsonl")
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Lstat(out)
			made[k], modes[k] = b, fi.Mode()
			if link {
				if got, err := os.Readlink(main); err != nil || got != target {
					t.Errorf("%s: the link is now %q, %v", command, got, err)
				}
			}
		}
		if len(made[0]) == 0 || !bytes.Equal(made[0], made[1]) {
			t.Errorf("%s through a link: %d bytes, want the %d bytes made without it", command, len(made[1]), len(made[0]))
		}
		if modes[1] != modes[0] {
			t.Errorf("%s through a link: mode %v, want %v", command, modes[1], modes[0])
		}
	}
}

// TestTrimInPlaceOfLinkRefused: trim --in-place of a transcript that is a
// symbolic link is refused, naming the link and where it leads, and
// saying what to do instead; before, it was refused at apply as "changed
// while cfix read it (Claude Code is writing to it?)".
func TestTrimInPlaceOfLinkRefused(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	target := linkOut(t, main)
	before, _ := os.ReadFile(target)
	p, err := Trim(Options{Root: root, Session: damage.V88Session, Thinking: true, ToolOutput: true, InPlace: true})
	if err == nil {
		_, err = changeset.Apply(p.ChangeSet, changeset.ApplyOptions{Force: true, JournalDir: t.TempDir()})
	}
	var ce *clone.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), main+" is a symbolic link to "+target+": cfix does not rewrite a link") ||
		!strings.Contains(err.Error(), "trim into a new session (without --in-place)") {
		t.Fatalf("trim --in-place of a link: %v", err)
	}
	if after, _ := os.ReadFile(target); !bytes.Equal(after, before) {
		t.Error("what the link leads to changed")
	}
	if got, err := os.Readlink(main); err != nil || got != target {
		t.Errorf("the link is now %q, %v", got, err)
	}
}
