package store

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// DefaultCleanupPeriodDays is Claude Code's cleanupPeriodDays when its
// settings.json sets none.
const DefaultCleanupPeriodDays = 30

// Sweep is what Claude Code's retention sweep will delete at its next run.
// Read in 2.1.332's code: an interactive session schedules the sweep in
// the background 5 seconds after its first prompt, puts it off by 10
// minutes at a time while the user typed in the last minute (or the
// session is busy),
// runs it at most once a day (it writes .last-cleanup in the store and
// skips while that file is less than 24 hours old), and it deletes the
// transcripts whose modification time is older than cleanupPeriodDays
// (settings.json; 30 when unset; 0 turns the sweep off), and the other
// per-session files by the same age. Measured with 2.1.332 (fake API,
// nonessential traffic off): a `claude -p` run never sweeps (no
// .last-cleanup, transcripts 31 and 40 days old left), an idle
// interactive session with no prompt did not sweep within 21 minutes (two
// runs), and one prompt, then no key, swept 10 minutes 5 seconds after it
// (2.1.205 too); so "the next start" is the earliest the sweep can come,
// not a certainty.
type Sweep struct {
	// PeriodDays is cleanupPeriodDays; FromSettings tells whether
	// settings.json set it.
	PeriodDays   int
	FromSettings bool
	// Off: cleanupPeriodDays is 0, nothing is swept.
	Off bool
	// Cutoff: a transcript modified before it is deleted (the next sweep's
	// time less PeriodDays).
	Cutoff time.Time
	// LastCleanup is the modification time of .last-cleanup (zero when
	// there is none); NotBefore is when the next sweep may run (zero: at
	// the next start).
	LastCleanup, NotBefore time.Time
}

// SweepOf reads the sweep settings of the store at root as of now. A
// settings.json that cannot be read or parsed, or whose cleanupPeriodDays
// is no whole number of days from 0, counts as unset.
func SweepOf(root string, now time.Time) Sweep {
	s := Sweep{PeriodDays: DefaultCleanupPeriodDays}
	if b, err := rfile.ReadFile(filepath.Join(root, "settings.json")); err == nil {
		var v struct {
			CleanupPeriodDays *float64 `json:"cleanupPeriodDays"`
		}
		if json.Unmarshal(b, &v) == nil && v.CleanupPeriodDays != nil {
			if d := *v.CleanupPeriodDays; d >= 0 && d == math.Trunc(d) && d < 1e6 {
				s.PeriodDays, s.FromSettings = int(d), true
			}
		}
	}
	s.Off = s.PeriodDays == 0
	if fi, err := os.Stat(filepath.Join(root, ".last-cleanup")); err == nil {
		s.LastCleanup = fi.ModTime()
		if next := s.LastCleanup.Add(24 * time.Hour); next.After(now) {
			s.NotBefore = next
		}
	}
	if !s.Off {
		// The next sweep: now, or once .last-cleanup is a day old.
		at := now
		if !s.NotBefore.IsZero() {
			at = s.NotBefore
		}
		s.Cutoff = at.Add(-time.Duration(s.PeriodDays) * 24 * time.Hour)
	}
	return s
}

// Deletes reports whether the next sweep deletes a transcript last
// modified at mtime.
func (s Sweep) Deletes(mtime time.Time) bool {
	return !s.Off && mtime.Before(s.Cutoff)
}
