package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/store"
)

// Protection is what cfix's hooks do for a store before Claude Code's
// sweep: whether they are installed in its settings.json, and which
// sessions the next start of a session archives.
type Protection struct {
	// Installed: the store's settings.json holds cfix's SessionStart hook.
	Installed bool
	// OlderThan is the age in days past which a session is archived at
	// the next start (cleanupPeriodDays less Margin); 0 when none is (the
	// sweep is off, or leaves no time).
	OlderThan int
	// Cutoff: a session last written before it is archived at the next
	// start (zero when OlderThan is 0).
	Cutoff time.Time
	// Dir is the archive folder (empty when it cannot be told).
	Dir string
	// PeriodDays is cleanupPeriodDays (0: the sweep is off).
	PeriodDays int
}

// ProtectionOf says what cfix's hooks do for the store at root as of now.
func ProtectionOf(root string, now time.Time) Protection {
	var p Protection
	if raw, exists, err := ReadSettings(filepath.Join(root, "settings.json")); err == nil && exists {
		for _, h := range List(raw) {
			p.Installed = p.Installed || h.Event == "SessionStart"
		}
	}
	p.PeriodDays = store.SweepOf(root, now).PeriodDays
	if days := archiveDays(root); days > 0 {
		p.OlderThan = days
		p.Cutoff = now.Add(-time.Duration(days) * 24 * time.Hour)
	}
	p.Dir, _ = archive.DefaultDir()
	return p
}

// archiveDays is the --older-than, in days, of the archive the
// SessionStart hook starts in the store at root: cleanupPeriodDays less
// Margin; 0 when the sweep is off or that leaves no day.
func archiveDays(root string) int {
	sw := store.SweepOf(root, time.Now())
	if sw.Off || sw.PeriodDays <= Margin {
		return 0
	}
	return sw.PeriodDays - Margin
}

// Archives reports whether the next start of a session archives a session
// last written at mtime (never a live one).
func (p Protection) Archives(mtime time.Time, live bool) bool {
	return p.Installed && p.OlderThan > 0 && !live && mtime.Before(p.Cutoff)
}

// Mark marks the sessions the next start archives (Guarded), and returns
// how many and their bytes (transcripts and subagents).
func Mark(ss []store.SessionInfo, p Protection) (n int, bytes int64) {
	for i := range ss {
		s := &ss[i]
		// Archive leaves a session that holds no message to the sweep.
		s.Guarded = p.Archives(s.ModTime, s.Live) && !s.NoMessage()
		if s.Guarded {
			n++
			bytes += s.Size + s.SubagentBytes
		}
	}
	return n, bytes
}

// Footer is what a listing says of the guard under its sessions: with the
// hooks installed, what the next start archives (n sessions of bytes,
// marked guard) and where; without them, when swept sessions will be
// deleted, the command that would archive them before every sweep; else
// nothing.
func (p Protection) Footer(n int, bytes int64, swept int) string {
	switch {
	case p.Installed && p.PeriodDays == 0:
		return "cfix guard is installed; Claude Code's sweep is off (cleanupPeriodDays 0): nothing to archive"
	case p.Installed && p.OlderThan == 0:
		return fmt.Sprintf("cfix guard is installed; cleanupPeriodDays %d leaves no time to archive before the sweep", p.PeriodDays)
	case p.Installed && n > 0:
		return fmt.Sprintf("cfix guard archives %s (%s, marked guard) at the next start of a session, before Claude Code's sweep: into %s",
			plural.Count(n, "session"), changeset.Size(bytes), home(p.Dir))
	case p.Installed:
		return fmt.Sprintf("cfix guard is installed: a session whose transcript was last written more than %dd ago is archived at the next start, before Claude Code's sweep, into %s",
			p.OlderThan, home(p.Dir))
	case swept > 0:
		return "cfix guard is not installed: cfix guard install --apply archives such sessions at every start, before the sweep"
	}
	return ""
}

// Archived counts the session archives in the archive folder.
func (p Protection) Archived() (int, error) {
	ents, err := os.ReadDir(p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if name := e.Name(); e.Type().IsRegular() && strings.HasSuffix(name, archive.Ext) && name != archive.Ext {
			n++
		}
	}
	return n, nil
}

// home writes a path below the home folder with ~.
func home(p string) string {
	if h, err := os.UserHomeDir(); err == nil && h != "/" && strings.HasPrefix(p, h+string(filepath.Separator)) {
		return "~" + p[len(h):]
	}
	return p
}
