package clone_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/rsstest"
	"github.com/cfix-dev/cfix/store"
)

// TestMemoryHostile: the clone planner on a session of hostile input, and
// its diff, peak under 200 MB of RSS; the clone of the session with its
// prompt of 256 MB, applied, copies that line as it streams past (its
// sessionId and cwd rewritten), as big as the source.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			to := filepath.Join(t.TempDir(), "copy")
			rsstest.Measure(t, 200, func(t *testing.T) {
				p, err := clone.Clone(clone.Options{Root: root, Session: path, To: to})
				if err != nil {
					t.Fatal(err)
				}
				if err := changeset.Show(discard{}, p.ChangeSet); err != nil {
					t.Fatal(err)
				}
				if kind != rsstest.HugeLine {
					return
				}
				if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
					t.Fatal(err)
				}
				src, _ := os.Stat(path)
				dst, err := os.Stat(filepath.Join(root, "projects", store.EncodeProject(to), p.SessionID+".jsonl"))
				if err != nil || dst.Size() < src.Size()-4096 {
					t.Fatalf("the clone: %v (source %d bytes)", err, src.Size())
				}
			})
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
