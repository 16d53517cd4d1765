package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepOf: cleanupPeriodDays from the store's settings.json (30 when
// unset or not a whole number of days; 0 turns the sweep off), and
// .last-cleanup holding the next sweep back for a day.
func TestSweepOf(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		settings string
		days     int
		from     bool
		off      bool
	}{
		{"", 30, false, false},
		{`{"cleanupPeriodDays": 7}`, 7, true, false},
		{`{"cleanupPeriodDays": 0}`, 0, true, true},
		{`{"cleanupPeriodDays": 2.5}`, 30, false, false},
		{`{"cleanupPeriodDays": -1}`, 30, false, false},
		{`{"cleanupPeriodDays": "7"}`, 30, false, false},
		{`{not json`, 30, false, false},
	} {
		root := t.TempDir()
		if c.settings != "" {
			os.WriteFile(filepath.Join(root, "settings.json"), []byte(c.settings), 0o600)
		}
		s := SweepOf(root, now)
		if s.PeriodDays != c.days || s.FromSettings != c.from || s.Off != c.off {
			t.Errorf("%q: %+v", c.settings, s)
		}
		old := now.Add(-time.Duration(c.days)*24*time.Hour - time.Minute)
		if s.Deletes(old) == c.off || s.Deletes(now.Add(-time.Duration(c.days)*24*time.Hour+time.Minute)) {
			t.Errorf("%q: deletes %v: %v", c.settings, old, s.Deletes(old))
		}
	}
	root := t.TempDir()
	last := now.Add(-2 * time.Hour)
	os.WriteFile(filepath.Join(root, ".last-cleanup"), []byte("x"), 0o600)
	os.Chtimes(filepath.Join(root, ".last-cleanup"), last, last)
	s := SweepOf(root, now)
	if !s.LastCleanup.Equal(last) || !s.NotBefore.Equal(last.Add(24*time.Hour)) || !s.Cutoff.Equal(last.Add(24*time.Hour-30*24*time.Hour)) {
		t.Errorf(".last-cleanup 2 hours old: %+v", s)
	}
	os.Chtimes(filepath.Join(root, ".last-cleanup"), now.Add(-25*time.Hour), now.Add(-25*time.Hour))
	if s := SweepOf(root, now); !s.NotBefore.IsZero() || !s.Cutoff.Equal(now.Add(-30*24*time.Hour)) {
		t.Errorf(".last-cleanup a day old: %+v", s)
	}
}
