package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestArchiveGolden: the plans of rm, archive and restore of a 2.1.330
// session (its session folder holds a subagent).
func TestArchiveGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cfix-agolden-%010d", os.Getpid()))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := damage.CopyStoreTo(t, damage.V330, dir)
	damage.Age(t, root)
	// The project folder the session is alone in: archive removes it, and
	// restore makes it again with its mode and this mtime.
	stamp := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "projects", "-home-dev-work-alpha"), stamp, stamp); err != nil {
		t.Fatal(err)
	}
	adir := filepath.Join(dir, "archive")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	norm := func(s string) string {
		s = strings.ReplaceAll(s, adir, "$ARCHIVE")
		s = regexp.MustCompile(`\.restore-[0-9a-f]+`).ReplaceAllString(s, ".restore-XXXX")
		return strings.ReplaceAll(s, root, "$ROOT")
	}

	out, code := cli(t, "rm", damage.V330Session, "--history", "--root", root, "--exit-code")
	if code != exitChanges {
		t.Errorf("rm dry run with --exit-code: status %d, want %d", code, exitChanges)
	}
	golden(t, "rm-plan.diff", norm(out))

	out, code = cli(t, "archive", damage.V330Session, "--root", root, "--archive-dir", adir)
	if code != exitOK {
		t.Errorf("archive dry run: status %d", code)
	}
	golden(t, "archive-plan.diff", norm(out))

	if out, code = cli(t, "archive", damage.V330Session, "--root", root, "--archive-dir", adir, "--apply", "--yes"); code != exitOK {
		t.Fatalf("archive --apply: status %d\n%s", code, out)
	}
	out, code = cli(t, "restore", damage.V330Session[:8], "--root", root, "--archive-dir", adir)
	if code != exitOK {
		t.Errorf("restore dry run: status %d", code)
	}
	// The archive's size depends on the time in its manifest.
	out = regexp.MustCompile(`\.tar\.zst \([0-9.]+ K?B\)`).ReplaceAllString(out, ".tar.zst (SIZE)")
	out = regexp.MustCompile(`changes, [0-9.]+ K?B removed`).ReplaceAllString(out, "changes, SIZE removed")
	out = regexp.MustCompile(`@@ binary file \([0-9.]+ K?B\) @@`).ReplaceAllString(out, "@@ binary file (SIZE) @@")
	golden(t, "restore-plan.diff", norm(out))
}
