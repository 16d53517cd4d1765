package trim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: the trim and fork planners on a session of hostile
// input peak under 200 MB of RSS: a run of lines no planner looks into
// costs one line (a fork drops it with one line edit), a line over 64 MB
// is never read whole. The fork of the session with its prompt of 256 MB,
// applied, copies that line as it streams past, its sessionId rewritten.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				if _, err := Trim(Options{Root: root, Session: path, Thinking: true, ToolOutput: true}); err != nil {
					t.Fatal(err)
				}
				p, err := Fork(ForkOptions{Root: root, Session: path, Turn: 1})
				if kind == rsstest.FewEmpties {
					if err == nil || !strings.Contains(err.Error(), "0 turns") {
						t.Errorf("fork of a file of no entry: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if kind == rsstest.NULTail {
					// The line of NUL bytes is dropped with the turns after
					// the first: one line edit each.
					if n := len(p.ChangeSet.Ops[0].Transform.Trim); n > 20 {
						t.Errorf("%d line edits", n)
					}
					return
				}
			})
			if kind != rsstest.HugeLine {
				return
			}
			t.Run("apply", func(t *testing.T) {
				rsstest.Measure(t, 200, func(t *testing.T) {
					p, err := Fork(ForkOptions{Root: root, Session: path, At: rsstest.ReplyUUID})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
						t.Fatal(err)
					}
					fi, err := os.Stat(filepath.Join(filepath.Dir(path), p.SessionID+".jsonl"))
					if err != nil || fi.Size() < rsstest.HugeBytes {
						t.Fatalf("the fork: %v, %d bytes", err, fi.Size())
					}
				})
			})
		})
	}
}
