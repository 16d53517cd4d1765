// Package carrytest holds what the tests of pack and carryremote share
// about stores a session is carried between: an empty store to land in,
// the main transcript of a session, validate's errors, and transcripts
// compared but for their cwd.
package carrytest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// EmptyStore makes a store with no session.
func EmptyStore(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	if err := os.MkdirAll(filepath.Join(root, "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	return root
}

// Scan is the layout of root.
func Scan(t testing.TB, root string) *store.Layout {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// MainOf returns the main transcript of session id in root.
func MainOf(t testing.TB, root, id string) string {
	t.Helper()
	f, err := carry.FindSession(root, Scan(t, root), id, "test")
	if err != nil {
		t.Fatal(err)
	}
	return f.Path
}

// AppendLine appends a line to a file.
func AppendLine(t testing.TB, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// NoErrors fails on an error finding of validate in root.
func NoErrors(t testing.TB, root string) {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			t.Errorf("%s:%d: %s %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
}

// SameButCWD compares two transcripts line by line: equal but for the
// cwd fields, old in a and new in b (old "": equal).
func SameButCWD(t testing.TB, a, b, old, new string) {
	t.Helper()
	la, lb := damage.Lines(t, a), damage.Lines(t, b)
	if len(la) != len(lb) {
		t.Fatalf("%s has %d lines, %s %d", a, len(la), b, len(lb))
	}
	tr := &changeset.Transform{Kind: changeset.TransformRetarget, OldDir: old, NewDir: new}
	for i := range la {
		want := la[i]
		if old != "" {
			want, _ = tr.Line(la[i])
		}
		if !bytes.Equal(want, lb[i]) {
			t.Fatalf("line %d differs:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
}

// Apply applies what a landing plans (nothing when it plans nothing),
// journaled in a folder of the test's.
func Apply(t testing.TB, cs *changeset.ChangeSet) {
	t.Helper()
	if cs.Empty() {
		return
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true}); err != nil {
		t.Fatal(err)
	}
}
