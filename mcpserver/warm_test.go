package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/damage"
)

// TestWarm: the server writes the index of a big transcript written to
// before warmQuiet, not of one written to since, nor of a small one; the
// first page read after it is the page read without it.
func TestWarm(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	const old, fresh = "b16b16b1-0000-4000-8000-000000000002", "b16b16b1-0000-4000-8000-000000000003"
	oldPath := bigSession(t, root, old, 5<<20)
	bigSession(t, root, fresh, 5<<20)
	past := time.Now().Add(-2 * warmQuiet)
	if err := os.Chtimes(oldPath, past, past); err != nil {
		t.Fatal(err)
	}
	index := t.TempDir()
	s := &server{opts: Options{Root: root, Dir: t.TempDir(), Index: index}}
	s.warm(context.Background(), 0)
	ents, err := os.ReadDir(index)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(indexFileOf(index, oldPath)) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("index folder holds %v, want the index of the old big session only", names)
	}
	// A second warm writes nothing new: the index is of the file as it is.
	st, _ := os.Stat(indexFileOf(index, oldPath))
	s.warm(context.Background(), 0)
	if st2, _ := os.Stat(indexFileOf(index, oldPath)); st == nil || st2 == nil || !os.SameFile(st, st2) {
		t.Fatalf("the second warm wrote the index again (or it is gone)")
	}
	cs := connectWith(t, Options{Root: root, Dir: t.TempDir(), Index: index})
	var out ReadOutput
	call(t, cs, "read_session", map[string]any{"session": old}, &out)
	if want := exportOf(t, root, old); len(out.Text) == 0 || want[:len(out.Text)] != out.Text {
		t.Errorf("the first page through the warmed index differs from the export")
	}
	// A cancelled warm does nothing.
	index2 := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	(&server{opts: Options{Root: root, Index: index2}}).warm(ctx, time.Hour)
	if ents, _ := os.ReadDir(index2); len(ents) != 0 {
		t.Errorf("a cancelled warm wrote %d files", len(ents))
	}
}

func indexFileOf(dir, path string) string { return export.IndexFile(dir, path) }
