package guard

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/store"
)

// TestMark: with the hooks installed, the sessions last written more than
// cleanupPeriodDays less Margin days ago are marked (those the sweep does
// not delete yet among them), a live one never; without the hooks none.
func TestMark(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	day := 24 * time.Hour
	session := func(age time.Duration, live bool) store.SessionInfo {
		var s store.SessionInfo
		s.ModTime, s.Size, s.Live = now.Add(-age), 100, live
		return s
	}
	ss := []store.SessionInfo{
		session(40*day, false), // swept, archived first
		session(27*day, false), // not swept yet, archived
		session(27*day, true),  // live: never
		session(20*day, false), // too young
	}
	if n, _ := Mark(ss, ProtectionOf(root, now)); n != 0 {
		t.Errorf("without hooks: %d marked", n)
	}
	if err := os.WriteFile(filepath.Join(root, "settings.json"), Fresh("/usr/local/bin/cfix", root), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ProtectionOf(root, now)
	if !p.Installed || p.OlderThan != 25 || p.PeriodDays != 30 {
		t.Fatalf("protection %+v, want installed, 25 days of 30", p)
	}
	n, bytes := Mark(ss, p)
	want := []bool{true, true, false, false}
	for i, s := range ss {
		if s.Guarded != want[i] {
			t.Errorf("session %d (%v old, live %v): guarded %v, want %v", i, now.Sub(s.ModTime).Round(day), s.Live, s.Guarded, want[i])
		}
	}
	if n != 2 || bytes != 200 {
		t.Errorf("marked %d (%d bytes), want 2 (200)", n, bytes)
	}

	// cleanupPeriodDays 5 leaves no day: nothing is archived, and the
	// listing says why.
	if err := os.WriteFile(filepath.Join(root, "settings.json"), []byte(`{"cleanupPeriodDays": 5, "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/usr/local/bin/cfix hook SessionStart"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p = ProtectionOf(root, now)
	if n, _ := Mark(ss, p); n != 0 || ArchiveArgs(root) != nil {
		t.Errorf("cleanupPeriodDays 5: %d marked, archive args %v", n, ArchiveArgs(root))
	}
	if got, want := p.Footer(0, 0, 1), "cfix guard is installed; cleanupPeriodDays 5 leaves no time to archive before the sweep"; got != want {
		t.Errorf("footer %q, want %q", got, want)
	}
}
