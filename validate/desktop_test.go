package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestDesktopForks: Claude Desktop's forks start their file with the
// parent's lines under the parent's sessionId and go on under their own
// (Claude Code loads the whole file: measured with 2.1.177 resuming
// 12cd7dd6); a fork never continued holds only the parent's first lines.
// Both are notices. A file holding another session's lines that are not
// its transcript's first lines stays a warning.
func TestDesktopForks(t *testing.T) {
	const store = "2.1.161-2.1.170"
	dir := filepath.Join(wild.Root(store), "projects", "C--Users-d1--claude")
	rep, err := validate.Run(validate.Options{Root: wild.Root(store)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		code validate.Code
		sev  validate.Severity
	}{
		"12cd7dd6-343f-4812-bb4d-7a35d72cc817.jsonl": {validate.SessionIDWrong, validate.Notice},
		"2bdae6f0-730c-422d-8760-674c046d7015.jsonl": {validate.SessionUnwritten, validate.Notice},
		"b5da7242-98c8-4722-b6cc-fcacc904738e.jsonl": {validate.SessionUnwritten, validate.Notice},
		"4713dbc4-f04d-4d24-81bd-621a5f4778ec.jsonl": {validate.SessionUnwritten, validate.Warning},
	}
	for _, f := range rep.Findings {
		if f.Code != validate.SessionIDWrong && f.Code != validate.SessionUnwritten {
			continue
		}
		w, ok := want[filepath.Base(f.Path)]
		if !ok || w.code != f.Code || w.sev != f.Severity {
			t.Errorf("%s: %s %s: %s", filepath.Base(f.Path), f.Severity, f.Code, f.Message)
		}
		delete(want, filepath.Base(f.Path))
	}
	for name, w := range want {
		t.Errorf("%s: no %s %s", name, w.sev, w.code)
	}

	// The copy no longer the parent's first lines: a warning again.
	root := wild.Copy(t, store)
	copyPath := filepath.Join(root, "projects", "C--Users-d1--claude", "2bdae6f0-730c-422d-8760-674c046d7015.jsonl")
	b, err := os.ReadFile(filepath.Join(dir, "2bdae6f0-730c-422d-8760-674c046d7015.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("18:52:41.674Z"), []byte("18:52:41.675Z"), 1)
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, f := range rep.Findings {
		if f.Path == copyPath && f.Severity < validate.Warning {
			t.Errorf("altered copy: %s %s: %s", f.Severity, f.Code, f.Message)
		}
		if f.Path == copyPath && f.Code == validate.SessionUnwritten {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("altered copy: %d session-unwritten warnings, want 1", warned)
	}
}
