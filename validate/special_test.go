//go:build unix

package validate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileSpecial: names of transcripts that are not files (a FIFO, a link
// leading nowhere) are each a file-special finding, not skipped in silence.
func TestFileSpecial(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-home-dev-work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "4d6a1c4e-8f0e-4d5a-9d54-2b1f0a1e7c11.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "x.jsonl")
	if err := os.Symlink(filepath.Join(root, "gone.jsonl"), dangling); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{fifo: "named pipe (FIFO)", dangling: "symbolic link leading nowhere"}
	for _, f := range rep.Findings {
		if f.Code != FileSpecial {
			continue
		}
		if w, ok := want[f.Path]; !ok || !strings.Contains(f.Message, w) || f.Severity != Warning {
			t.Errorf("unexpected %s %s: %s", f.Severity, f.Path, f.Message)
		}
		delete(want, f.Path)
	}
	for p, w := range want {
		t.Errorf("no file-special finding for %s (%s)", p, w)
	}
}
