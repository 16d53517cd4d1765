package clone_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// made lists the files a change set creates: those of its Create ops and
// those under the folders its CreateDir ops copy.
func made(t *testing.T, cs *changeset.ChangeSet) []string {
	t.Helper()
	var out []string
	for _, op := range cs.Ops {
		switch op.Action {
		case changeset.Create:
			out = append(out, op.Path)
		case changeset.CreateDir:
			filepath.WalkDir(op.Path, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					out = append(out, p)
				}
				return nil
			})
		}
	}
	return out
}

// TestCopiesAreNew: every file a clone makes (main transcript, flat and
// hierarchical subagents, tool-results, todo lists) has the time it was
// made, as a new session's files have: with its source's times, an old
// session's clone was marked swept at once and Claude Code's next
// interactive start deleted it (tool-results files are swept each by its
// own mtime, 2.1.205). Its index entry says that time. An undo right
// after needs no --force: the files are as the clone wrote them. A move
// keeps the times (the session is as old as it was).
func TestCopiesAreNew(t *testing.T) {
	cases := []struct {
		name, session string
		root          func(t *testing.T) string
	}{
		{"tool-results", "8c880a68-969b-4b92-8733-a4927179d072", func(t *testing.T) string { return wild.Copy(t, "2.1.81-2.1.97") }},
		{"flat subagents and todos", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7", func(t *testing.T) string { return damage.CopyStore(t, "2.0.77") }},
		{"index", "146a54eb-b446-4bdf-98c7-1fcd33fcdd2b", func(t *testing.T) string { return wild.Copy(t, "2.1.205") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := c.root(t)
			damage.Age(t, root)
			start := time.Now().Add(-time.Second)
			p, err := clone.Clone(clone.Options{Root: root, Session: c.session, To: filepath.Join(t.TempDir(), "elsewhere")})
			if err != nil {
				t.Fatal(err)
			}
			res, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			files := made(t, p.ChangeSet)
			if len(files) == 0 {
				t.Fatalf("the clone made %d files", len(files))
			}
			for _, f := range files {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if fi.ModTime().Before(start) || fi.ModTime().After(time.Now()) {
					t.Errorf("%s: modified %s, not when the clone made it", f, fi.ModTime())
				}
			}
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Code == validate.IndexDrift {
					t.Errorf("%s: %s", f.Path, f.Message)
				}
			}
			u, err := changeset.Undo(res.Journal)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
				t.Fatalf("undo right after the clone: %v", err)
			}

			mp, err := clone.Move(clone.Options{Root: root, Session: c.session, To: filepath.Join(t.TempDir(), "other")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := changeset.Apply(mp.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			for _, f := range made(t, mp.ChangeSet) {
				if fi, err := os.Stat(f); err != nil || !fi.ModTime().Equal(old) {
					t.Errorf("moved %s: %v, want its old time %s", f, fi.ModTime(), old)
				}
			}
		})
	}
}
