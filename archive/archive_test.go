package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
)

// corpusStores lists the corpus stores written by the real clients.
func corpusStores(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../testdata/corpus/*/.claude")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus stores: %v", err)
	}
	return dirs
}

// copyStore copies a store (cp -a: modes kept) into a new temporary
// folder, with every file's mtime set back to 2026-01-01 (damage.Age: a
// fresh clone's files were written seconds ago, and the planners leave
// sessions that may be live alone), and returns the copy's root.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s: %v\n%s", src, err, out)
	}
	damage.Age(t, dst)
	return dst
}

// tree describes every file (path, mode, mtime to the nanosecond, size,
// sha256), symbolic link and folder (path, mode) under root. Folder
// mtimes are left out: removing and adding an entry moves them, and no
// client reads them.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %v %s %d %s", fi.Mode().Perm(), fi.ModTime().UTC().Format(time.RFC3339Nano), fi.Size(), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func requireTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "- "+k+" "+w)
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("~ %s\n    was %s\n    now %s", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "+ "+k+" "+g)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s: the tree differs (%d paths):\n%s", what, len(diffs), strings.Join(diffs, "\n"))
	}
}

func apply(t *testing.T, cs *changeset.ChangeSet, journals string) string {
	t.Helper()
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	if err != nil {
		t.Fatalf("apply %s: %v", cs.Command, err)
	}
	return res.Journal
}

func undo(t *testing.T, journal, journals string) {
	t.Helper()
	u, err := changeset.Undo(journal)
	if err != nil {
		t.Fatalf("undo %s: %v", journal, err)
	}
	apply(t, u, journals)
	if err := changeset.MarkUndone(journal); err != nil {
		t.Fatal(err)
	}
}

// sessionIDs lists the sessions with a main transcript.
func sessionIDs(t *testing.T, root string) []string {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, f := range l.Files {
		if f.Kind == store.KindSession && !seen[f.Session] {
			seen[f.Session] = true
			ids = append(ids, f.Session)
		}
	}
	return ids
}

// TestRmUndo removes every session of each corpus store, with its
// prompts, checks that nothing of theirs is left, then undoes: every
// file comes back, the same bytes, mode and mtime.
func TestRmUndo(t *testing.T) {
	for _, src := range corpusStores(t) {
		v := filepath.Base(filepath.Dir(src))
		t.Run(v, func(t *testing.T) {
			root := copyStore(t, src)
			before := tree(t, root)
			ids := sessionIDs(t, root)
			if len(ids) == 0 {
				t.Fatal("no session")
			}
			cs, err := Rm(RmOptions{Root: root, Sessions: ids, History: true})
			if err != nil {
				t.Fatal(err)
			}
			journals := t.TempDir()
			j := apply(t, cs, journals)
			if left := sessionIDs(t, root); len(left) != 0 {
				t.Fatalf("sessions left after rm: %v", left)
			}
			after := tree(t, root)
			for p := range after {
				for _, id := range ids {
					if strings.Contains(p, id) {
						t.Errorf("%s is left after rm of %s", p, id)
					}
				}
			}
			undo(t, j, journals)
			requireTree(t, "rm then undo", before, tree(t, root))
		})
	}
}

// TestRmOne removes one session and leaves the others whole.
func TestRmOne(t *testing.T) {
	root := copyStore(t, "../testdata/corpus/2.1.330/.claude")
	ids := sessionIDs(t, root)
	before := tree(t, root)
	cs, err := Rm(RmOptions{Root: root, Sessions: []string{ids[0][:8]}})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	after := tree(t, root)
	for p, w := range before {
		if strings.Contains(p, ids[0]) {
			if _, ok := after[p]; ok {
				t.Errorf("%s is left", p)
			}
		} else if p != "projects/"+filepath.Base(filepath.Dir(p))+"/" && after[p] != w && !strings.HasSuffix(p, "/") {
			t.Errorf("%s changed: %s → %s", p, w, after[p])
		}
	}
}

// TestRmHistory removes a session's prompts from history.jsonl (a wild
// store: every line names its session), and only those.
func TestRmHistory(t *testing.T) {
	root := copyStore(t, "../testdata/wild/2.1.87/.claude")
	hist := filepath.Join(root, "history.jsonl")
	old, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, s := range sessionIDs(t, root) {
		if bytes.Contains(old, []byte(`"sessionId":"`+s+`"`)) {
			id = s
			break
		}
	}
	if id == "" {
		t.Fatal("no session of the store has a prompt in history.jsonl")
	}
	cs, err := Rm(RmOptions{Root: root, Sessions: []string{id}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	journals := t.TempDir()
	j := apply(t, cs, journals)
	got, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, line := range bytes.SplitAfter(old, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"sessionId":"`+id+`"`)) {
			want = append(want, line...)
		}
	}
	if !bytes.Equal(got, want) || len(got) == len(old) {
		t.Fatalf("history.jsonl after rm --history: %d bytes, want %d (was %d)", len(got), len(want), len(old))
	}
	undo(t, j, journals)
	if b, _ := os.ReadFile(hist); !bytes.Equal(b, old) {
		t.Fatal("undo did not give history.jsonl back")
	}
}

// TestRmLive refuses a session a running Claude Code holds, and one
// written seconds ago.
func TestRmLive(t *testing.T) {
	root := copyStore(t, "../testdata/corpus/2.1.330/.claude")
	ids := sessionIDs(t, root)
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	live := fmt.Sprintf(`{"pid":%d,"sessionId":"%s"}`, os.Getpid(), ids[0])
	if err := os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid())), []byte(live), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Rm(RmOptions{Root: root, Sessions: ids[:1]}); err == nil || !strings.Contains(err.Error(), "live") {
		t.Fatalf("rm of a live session: %v", err)
	}
	l, _ := store.Scan(root)
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Session == ids[1] {
			now := time.Now()
			os.Chtimes(f.Path, now, now)
		}
	}
	if _, err := Rm(RmOptions{Root: root, Sessions: ids[1:2]}); err == nil || !strings.Contains(err.Error(), "may be live") {
		t.Fatalf("rm of a session written now: %v", err)
	}
}

// TestArchiveRestore archives every session of each corpus store, checks
// that the store holds none of their files and that each archive lists
// what it holds, restores them all: the tree is the same as before. Then
// archive again and undo: the same again, and the archive files are gone.
func TestArchiveRestore(t *testing.T) {
	for _, src := range corpusStores(t) {
		v := filepath.Base(filepath.Dir(src))
		t.Run(v, func(t *testing.T) {
			root := copyStore(t, src)
			adir := filepath.Join(t.TempDir(), "archive")
			journals := t.TempDir()
			before := tree(t, root)
			// The sessions that hold no message stay (see emptySession).
			ids, empty := messaged(t, root)
			p, err := Archive(Options{Root: root, Dir: adir, OlderThan: time.Minute, Build: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Archives) != len(ids) {
				t.Fatalf("--older-than 1m picked %d sessions of %d", len(p.Archives), len(ids))
			}
			if len(empty) > 0 && !slices.ContainsFunc(p.ChangeSet.Notes, func(n string) bool { return strings.Contains(n, "no message: not archived") }) {
				t.Errorf("no note on the %d sessions left: %q", len(empty), p.ChangeSet.Notes)
			}
			j := apply(t, p.ChangeSet, journals)
			p.Cleanup()
			if left := sessionIDs(t, root); !slices.Equal(left, empty) {
				t.Fatalf("sessions left after archive: %v, want %v", left, empty)
			}
			list, bad, err := List(adir)
			if err != nil || len(bad) > 0 || len(list) != len(ids) {
				t.Fatalf("list: %d archives of %d, damaged %v, %v", len(list), len(ids), bad, err)
			}
			if ents, _ := os.ReadDir(adir); len(ents) != len(ids) {
				t.Fatalf("the archive folder holds %d entries, want %d (staging left?)", len(ents), len(ids))
			}
			archived := tree(t, root)

			rp, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: ids, Extract: true})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, rp.ChangeSet, journals)
			rp.Cleanup()
			requireTree(t, "archive then restore", before, tree(t, root))
			if ents, _ := os.ReadDir(adir); len(ents) != 0 {
				t.Fatalf("the archive folder holds %d entries after restore", len(ents))
			}

			// Undo of the archive, on the state it left.
			os.RemoveAll(root)
			copyBack(t, src, root)
			p, err = Archive(Options{Root: root, Dir: adir, Sessions: ids, Build: true})
			if err != nil {
				t.Fatal(err)
			}
			j = apply(t, p.ChangeSet, journals)
			p.Cleanup()
			requireTree(t, "archive (again)", archived, tree(t, root))
			undo(t, j, journals)
			requireTree(t, "archive then undo", before, tree(t, root))
			if ents, _ := os.ReadDir(adir); len(ents) != 0 {
				t.Fatalf("the archive folder holds %d entries after undo", len(ents))
			}
		})
	}
}

// messaged splits the sessions of the store at root into those archive
// --older-than takes (those that hold a message, and their stubs) and
// those it leaves (sessions holding no message of their own).
func messaged(t *testing.T, root string) (ids, empty []string) {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	all := sessionIDs(t, root)
	ss, err := newOwner(root, l).sessions(all)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		e, err := emptySession(s)
		if err != nil {
			t.Fatal(err)
		}
		if e == notEmpty {
			ids = append(ids, s.ID)
		} else {
			empty = append(empty, s.ID)
		}
	}
	// The stubs of those go with them (stubsOf).
	stubs, _, err := stubsOf(l, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	left := empty[:0]
	for _, id := range empty {
		if stubs[id] != "" {
			ids = append(ids, id)
		} else {
			left = append(left, id)
		}
	}
	slices.Sort(ids)
	return ids, left
}

func copyBack(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	damage.Age(t, dst)
}

// TestRestoreDamaged: a truncated archive, and one with a bit flipped
// anywhere, are refused, named, and nothing is restored.
func TestRestoreDamaged(t *testing.T) {
	root := copyStore(t, "../testdata/corpus/2.1.330/.claude")
	adir := filepath.Join(t.TempDir(), "archive")
	ids := sessionIDs(t, root)
	p, err := Archive(Options{Root: root, Dir: adir, Sessions: ids[:1], Build: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet, t.TempDir())
	p.Cleanup()
	path := filepath.Join(adir, ids[0]+Ext)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	archived := tree(t, root)
	try := func(what string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, extract := range []bool{false, true} {
			_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: ids[:1], Extract: extract})
			var de *DamagedError
			if !errors.As(err, &de) || de.Path != path || !strings.Contains(err.Error(), "nothing was restored") {
				t.Fatalf("%s (extract %v): restore gave %v, want a DamagedError naming %s", what, extract, err, path)
			}
		}
		requireTree(t, what, archived, tree(t, root))
		if ents, _ := os.ReadDir(adir); len(ents) != 1 {
			t.Fatalf("%s: the archive folder holds %d entries (staging left?)", what, len(ents))
		}
	}
	for _, n := range []int{0, 10, len(good) / 3, len(good) / 2, len(good) - 1} {
		try(fmt.Sprintf("truncated to %d bytes", n), good[:n])
	}
	for _, at := range []int{5, 40, len(good) / 4, len(good) / 2, len(good) * 3 / 4, len(good) - 2} {
		b := bytes.Clone(good)
		b[at] ^= 0x10
		try(fmt.Sprintf("bit flipped at %d", at), b)
	}
	try("a byte appended", append(bytes.Clone(good), 0))
	// The intact archive still restores.
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	rp, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: ids[:1], Extract: true})
	if err != nil {
		t.Fatal(err)
	}
	rp.Cleanup()
}

// TestRestoreConflict: a file of the store that differs from the archived
// one is never overwritten.
func TestRestoreConflict(t *testing.T) {
	root := copyStore(t, "../testdata/corpus/2.1.330/.claude")
	adir := filepath.Join(t.TempDir(), "archive")
	ids := sessionIDs(t, root)
	p, err := Archive(Options{Root: root, Dir: adir, Sessions: ids[:1], Build: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet, t.TempDir())
	p.Cleanup()
	var main string
	for _, part := range p.Archives[0].Manifest.Parts {
		if strings.HasSuffix(part.Path, ".jsonl") {
			main = filepath.Join(root, part.Path)
		}
	}
	// The archive removed the project folder it left empty.
	if err := os.MkdirAll(filepath.Dir(main), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: ids[:1]}); err == nil || !strings.Contains(err.Error(), "in the store already") {
		t.Fatalf("restore over a session in the store: %v", err)
	}
}
