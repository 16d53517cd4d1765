package repair

import (
	"os"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: repair of a session of hostile input peaks under 200
// MB of RSS: the plan of the 512 MB of NUL bytes a crash left cuts that
// line off (and the apply, which copies it into the journal as it
// streams past, too); ten million empty objects are left (no entry to
// keep, no fix); the prompt of 256 MB, a sound entry, is left as it is.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := Plan(Options{Root: root, Targets: []string{path}})
				if err != nil {
					t.Fatal(err)
				}
				var ops []changeset.Op
				for _, op := range cs.Ops {
					if op.Path == path {
						ops = append(ops, op)
					}
				}
				switch kind {
				case rsstest.NULTail:
					keep := fi.Size() - rsstest.NULBytes
					if len(ops) != 1 || len(ops[0].Edits) != 1 || ops[0].Edits[0].Offset != keep || ops[0].Edits[0].Length != rsstest.NULBytes ||
						!strings.Contains(ops[0].Edits[0].Reason, "NUL bytes only") {
						t.Fatalf("plan of a last line of NUL bytes: %+v", ops)
					}
					if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
						t.Fatal(err)
					}
					if fi, err := os.Stat(path); err != nil || fi.Size() != keep {
						t.Fatalf("after the apply: %v, %v bytes, want %d", err, fi.Size(), keep)
					}
				case rsstest.Empties:
					if len(ops) != 0 {
						t.Errorf("ops on a file of empty objects: %+v", ops)
					}
				case rsstest.HugeLine:
					if len(ops) != 0 {
						t.Errorf("ops on a sound session with a long line: %+v", ops)
					}
				}
			})
		})
	}
}

// TestBlankLinesOneEdit: a run of empty lines is removed by one edit (one
// fix while planning), a run of lines that are not JSON by another, and
// the diff shows their first lines and how many more: 10 million empty
// lines cost 6.2 GB and over 300 s to plan and show before, a million
// lines of no JSON 845 MB.
func TestBlankLinesOneEdit(t *testing.T) {
	root, path := rsstest.Store(t, rsstest.NULTail)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + rsstest.Session + `","message":{"role":"user","content":"hi"}}` + "\n")
	f.WriteString(strings.Repeat("\n", 200_000))
	f.WriteString(strings.Repeat("garbage\n", 100_000))
	f.Close()
	cs, err := Plan(Options{Root: root, Targets: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Ops) != 1 || len(cs.Ops[0].Edits) != 2 {
		t.Fatalf("plan: %+v", cs.Ops)
	}
	if e := cs.Ops[0].Edits; e[0].Count != 200_000 || e[0].Length != 200_000 || e[1].Count != 100_000 || e[1].Length != 800_000 ||
		!strings.Contains(e[1].Reason, "not JSON") {
		t.Fatalf("edits: %+v", e)
	}
	var diff strings.Builder
	if err := changeset.Diff(&diff, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff.String(), "-… 199997 more lines") || !strings.Contains(diff.String(), "-garbage\n-… 99997 more lines") || diff.Len() > 2000 {
		t.Errorf("diff of %d bytes:\n%s", diff.Len(), diff.String())
	}
}
