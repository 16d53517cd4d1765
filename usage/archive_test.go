package usage

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
)

func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s: %v\n%s", src, err, out)
	}
	damage.Age(t, dst)
	return dst
}

// TestArchivedTotalsStay: with half of a store's sessions moved into
// cfix's archive by cfix archive, the totals stay what they were, the
// report says how many replies came from the archive, and --no-archived
// counts what the store alone holds (the independent count of it).
func TestArchivedTotalsStay(t *testing.T) {
	for _, src := range stores(t) {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			root := copyStore(t, src)
			adir := filepath.Join(t.TempDir(), "archive")
			before, err := Collect(Options{Root: root, ArchiveDir: adir})
			if err != nil {
				t.Fatal(err)
			}
			l, err := store.Scan(root)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			seen := map[string]bool{}
			for _, f := range l.Files {
				if f.Kind == store.KindSession && f.Size > 0 && !seen[f.Session] && len(f.Session) == 36 {
					seen[f.Session] = true
					ids = append(ids, f.Session)
				}
			}
			sort.Strings(ids)
			var half []string
			for i, id := range ids {
				if i%2 == 0 {
					half = append(half, id)
				}
			}
			if len(half) == 0 {
				t.Skip("no session to archive")
			}
			p, err := archive.Archive(archive.Options{Root: root, Dir: adir, Sessions: half, Build: true, Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: filepath.Join(t.TempDir(), "journal")}); err != nil {
				t.Fatal(err)
			}
			p.Cleanup()
			after, err := Collect(Options{Root: root, ArchiveDir: adir})
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Warnings) > 0 {
				t.Fatalf("warnings: %v", after.Warnings)
			}
			if after.Archives != len(half) {
				t.Errorf("%d archives read, %d written", after.Archives, len(half))
			}
			if got, want := sumOf(after.Records), sumOf(before.Records); got != want || len(after.Records) != len(before.Records) {
				t.Errorf("after archiving %d of %d sessions: %d replies %+v, before %d %+v", len(half), len(ids), len(after.Records), got, len(before.Records), want)
			}
			rep := Build(after, Day, Filter{Loc: time.UTC, NoArchived: true}, NewPricer(nil), false, time.Now())
			all := Build(after, Day, Filter{Loc: time.UTC}, NewPricer(nil), false, time.Now())
			storeOnly, n := independent(t, root)
			if rep.Total.Tokens != storeOnly || rep.Total.Replies != n {
				t.Errorf("--no-archived: %d replies %+v, the store holds %d %+v", rep.Total.Replies, rep.Total.Tokens, n, storeOnly)
			}
			if all.Archived != len(after.Records)-n {
				t.Errorf("%d replies said to come from the archive, %d do", all.Archived, len(after.Records)-n)
			}
			t.Logf("%d of %d sessions archived: %d of %d replies only in the archive", len(half), len(ids), all.Archived, len(after.Records))
		})
	}
}

// TestCacheAppend: a report read through the cache gives what a report
// read without one gives; after appends to a transcript (its bytes kept,
// more lines after them: the second half of a reply's streamed entries
// among them) it reads only what was appended and still gives the
// independent count.
func TestCacheAppend(t *testing.T) {
	src := "../testdata/wild/2.1.68-2.1.73/.claude" // streamed entries without requestId
	root := copyStore(t, src)
	cdir := t.TempDir()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	// The biggest main transcript, cut after the first half of its lines
	// (a line with the first entry of a reply whose later entry follows).
	var big store.File
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Size > big.Size {
			big = f
		}
	}
	whole, err := os.ReadFile(big.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	cut := len(lines) / 2
	for cut < len(lines) && !strings.Contains(lines[cut-1], `"output_tokens":0`) {
		cut++
	}
	if cut == len(lines) {
		t.Fatal("no first streamed entry to cut after")
	}
	head := strings.Join(lines[:cut], "")
	if err := os.WriteFile(big.Path, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(big.Path, old, old)
	check := func(when string) *Set {
		t.Helper()
		set, err := Collect(Options{Root: root, CacheDir: cdir})
		if err != nil {
			t.Fatal(err)
		}
		want, n := independent(t, root)
		if got := sumOf(set.Records); got != want || len(set.Records) != n {
			t.Errorf("%s: %d replies %+v, want %d %+v", when, len(set.Records), got, n, want)
		}
		return set
	}
	check("cold")
	read := linesRead.Load()
	check("warm")
	if n := linesRead.Load() - read; n != 0 {
		t.Errorf("warm: %d bytes of transcripts read", n)
	}
	// Appends: the rest of the file, written to the same inode.
	fh, err := os.OpenFile(big.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(strings.Join(lines[cut:], ""))
	fh.Close()
	os.Chtimes(big.Path, old.Add(time.Minute), old.Add(time.Minute))
	read = linesRead.Load()
	check("after appends")
	if n, added := linesRead.Load()-read, int64(len(whole)-len(head)); n != added {
		t.Errorf("after appends: %d bytes read, %d appended", n, added)
	}
	check("warm after appends")
	// Another file in the place of the transcript (a rewrite): read whole.
	if err := os.WriteFile(big.Path+".new", []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Rename(big.Path+".new", big.Path)
	os.Chtimes(big.Path, old, old)
	check("after a rewrite")
}
