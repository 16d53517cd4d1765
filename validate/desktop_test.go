package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

const desktopSkeleton = "../testdata/desktop/2.1.161-2.1.170/claude-code-sessions"

// TestDesktopIndex checks the skeleton Desktop index against the wild store
// Desktop wrote: a transcript not on disk (a notice for an archived entry,
// nothing for an entry of no turn), one outside the folder of the entry's
// cwd, and, on a copy, a transcript holding another session's entries only
// (a file synced over another); Desktop's own forks give nothing, and a run
// with no index gives no Desktop finding.
func TestDesktopIndex(t *testing.T) {
	const store = "2.1.161-2.1.170"
	desktopFindings := func(rep *validate.Report) map[string]validate.Finding {
		out := map[string]validate.Finding{}
		for _, f := range rep.Findings {
			if strings.HasPrefix(string(f.Code), "desktop-") {
				out[filepath.Base(f.Path)] = f
			}
		}
		return out
	}
	rep, err := validate.Run(validate.Options{Root: wild.Root(store)})
	if err != nil {
		t.Fatal(err)
	}
	if got := desktopFindings(rep); len(got) != 0 {
		t.Errorf("no index: %v", got)
	}
	rep, err = validate.Run(validate.Options{Root: wild.Root(store), DesktopDir: desktopSkeleton})
	if err != nil {
		t.Fatal(err)
	}
	got := desktopFindings(rep)
	want := map[string]struct {
		code validate.Code
		sev  validate.Severity
		says string
	}{
		"local_2c8d4e3f-9a0b-4c1d-8e2f-3a4b5c6d7e8f.json": {validate.DesktopMissing, validate.Warning, `session 5e3c9a71-2b4d-4f6e-8a1c-3d5e7f9b1c2d "Plan the trip", whose transcript is not in the store: Desktop shows "Session not found on disk"`},
		"local_4e0f6a5b-1c2d-4e3f-8a4b-5c6d7e8f9a0b.json": {validate.DesktopMissing, validate.Notice, "(Desktop archived the entry)"},
		"ff06e642-25a7-42ab-bac8-5496b3e753bc.jsonl":      {validate.DesktopElsewhere, validate.Notice, `"Fix the site" (/`},
	}
	for name, w := range want {
		f, ok := got[name]
		if !ok {
			t.Errorf("%s: no %s", name, w.code)
			continue
		}
		if f.Code != w.code || f.Severity != w.sev || !strings.Contains(f.Message, w.says) || f.Hint != "" {
			t.Errorf("%s: %s %s: %s (hint %q)", name, f.Severity, f.Code, f.Message, f.Hint)
		}
		delete(got, name)
	}
	for name, f := range got {
		t.Errorf("%s: %s %s: %s", name, f.Severity, f.Code, f.Message)
	}
	// A targeted run does not see every transcript: no missing one.
	rep, err = validate.Run(validate.Options{Root: wild.Root(store), DesktopDir: desktopSkeleton, Targets: []string{"ff06e642"}})
	if err != nil {
		t.Fatal(err)
	}
	got = desktopFindings(rep)
	if len(got) != 1 || got["ff06e642-25a7-42ab-bac8-5496b3e753bc.jsonl"].Code != validate.DesktopElsewhere {
		t.Errorf("targeted run: %v", got)
	}

	// The missing transcript's name holding another session's transcript.
	root := wild.Copy(t, store)
	b, err := os.ReadFile(filepath.Join(root, "projects", "C--Users-d1--claude", "06210e47-8d6d-4c23-8732-de20bf2eb7e3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	synced := filepath.Join(root, "projects", "C--Users-d1--claude", "5e3c9a71-2b4d-4f6e-8a1c-3d5e7f9b1c2d.jsonl")
	if err := os.WriteFile(synced, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = validate.Run(validate.Options{Root: root, DesktopDir: desktopSkeleton})
	if err != nil {
		t.Fatal(err)
	}
	got = desktopFindings(rep)
	f := got[filepath.Base(synced)]
	if f.Code != validate.DesktopMismatch || f.Severity != validate.Warning || f.Hint != "" ||
		!strings.Contains(f.Message, `"Plan the trip"`) || !strings.Contains(f.Message, "they carry session 06210e47-8d6d-4c23-8732-de20bf2eb7e3's") {
		t.Errorf("synced over: %+v", f)
	}
	if _, ok := got["local_2c8d4e3f-9a0b-4c1d-8e2f-3a4b5c6d7e8f.json"]; ok {
		t.Errorf("synced over: still reported missing")
	}
}
