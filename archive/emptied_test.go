package archive

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
)

// TestEmptiedFolder: rm and archive of the last session of a project
// folder remove the folder in the same plan (a folder that keeps another
// session, or memory/, stays); undo, and restore, make it again with its
// mode and mtime.
func TestEmptiedFolder(t *testing.T) {
	const (
		alone  = "140fbe06-16c3-4bec-9598-7770985558f2" // alone in -home-dev-work-alpha
		shared = "7cf9ed5d-a3f5-41f6-b182-7b7bd6992648" // one of two in -home-dev-work-delta
	)
	stamp := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (root, alpha, delta string) {
		root = copyStore(t, "../testdata/corpus/2.1.330/.claude")
		alpha = filepath.Join(root, "projects", "-home-dev-work-alpha")
		delta = filepath.Join(root, "projects", "-home-dev-work-delta")
		for _, d := range []string{alpha, delta} {
			if err := os.Chmod(d, 0o751); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(d, stamp, stamp); err != nil {
				t.Fatal(err)
			}
		}
		return root, alpha, delta
	}
	check := func(t *testing.T, what, dir string) {
		t.Helper()
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if fi.Mode().Perm() != 0o751 || !fi.ModTime().Equal(stamp) {
			t.Errorf("%s: %s has mode %04o and mtime %s, want 0751 and %s", what, dir, fi.Mode().Perm(), fi.ModTime().UTC(), stamp)
		}
	}
	removes := func(cs *changeset.ChangeSet) []string {
		var out []string
		for _, op := range cs.Ops {
			if op.Action == changeset.DeleteEmptyDir {
				out = append(out, op.Path)
			}
		}
		return out
	}

	t.Run("rm", func(t *testing.T) {
		root, alpha, delta := setup(t)
		cs, err := Rm(RmOptions{Root: root, Sessions: []string{alone, shared}})
		if err != nil {
			t.Fatal(err)
		}
		if got := removes(cs); len(got) != 1 || got[0] != alpha {
			t.Fatalf("the plan removes the folders %v, want %s alone", got, alpha)
		}
		journals := t.TempDir()
		j := apply(t, cs, journals)
		if _, err := os.Lstat(alpha); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after rm: %v", alpha, err)
		}
		if _, err := os.Stat(filepath.Join(delta, "fb63f81e-6720-45fb-a12f-9f5cf3f5a117.jsonl")); err != nil {
			t.Fatalf("the session rm leaves: %v", err)
		}
		undo(t, j, journals)
		check(t, "rm then undo", alpha)
	})

	t.Run("archive", func(t *testing.T) {
		root, alpha, _ := setup(t)
		adir := filepath.Join(t.TempDir(), "archive")
		p, err := Archive(Options{Root: root, Dir: adir, Sessions: []string{alone}, Build: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := removes(p.ChangeSet); len(got) != 1 || got[0] != alpha {
			t.Fatalf("the plan removes the folders %v, want %s", got, alpha)
		}
		journals := t.TempDir()
		apply(t, p.ChangeSet, journals)
		p.Cleanup()
		if _, err := os.Lstat(alpha); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after archive: %v", alpha, err)
		}
		rp, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{alone}, Extract: true})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, rp.ChangeSet, journals)
		rp.Cleanup()
		check(t, "archive then restore", alpha)
	})

	t.Run("memory kept", func(t *testing.T) {
		root, alpha, _ := setup(t)
		write := filepath.Join(alpha, "memory", "MEMORY.md")
		if err := os.MkdirAll(filepath.Dir(write), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(write, []byte("# notes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cs, err := Rm(RmOptions{Root: root, Sessions: []string{alone}})
		if err != nil {
			t.Fatal(err)
		}
		if got := removes(cs); len(got) != 0 {
			t.Fatalf("the plan removes %v, which holds memory/", got)
		}
	})
}
