package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Retention is what journal prune keeps: the newest Keep journals of a
// store, and every journal made within KeepFor. A journal goes only when
// neither keeps it.
type Retention struct {
	Keep    int
	KeepFor time.Duration
}

// DefaultRetention keeps the last 20 journals of a store and every
// journal of the last 14 days.
var DefaultRetention = Retention{Keep: 20, KeepFor: 14 * 24 * time.Hour}

// JournalSize is what a journal holds on disk: Bytes in all, of which
// Frees are held by the journal alone (a backup that is a hard link to a
// file still in the store frees nothing when the journal goes).
type JournalSize struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	Frees int64 `json:"frees"`
}

// SizeOf measures the journal folder dir.
func SizeOf(dir string) JournalSize {
	var s JournalSize
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		s.Files++
		s.Bytes += fi.Size()
		if nlink(fi) <= 1 {
			s.Frees += fi.Size()
		}
		return nil
	})
	return s
}

// PruneJournals returns the journals of the store at root (newest first,
// as ListJournals gives them) that r does not keep, as of now. A journal
// whose apply did not end (incomplete: running, or killed before undo
// finished it) is always kept: it may be all that can put its files back;
// so is a damaged one (JournalInfo.Damage), whatever its state: its log
// no longer says which of its backups are the only copy.
func PruneJournals(base, root string, r Retention, now time.Time) ([]JournalInfo, error) {
	js, err := ListJournals(base, root)
	if err != nil {
		return nil, err
	}
	var out []JournalInfo
	for i, j := range js {
		if i < r.Keep || now.Sub(j.Created) < r.KeepFor || j.State == "incomplete" || j.Damage != "" {
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

// RemoveJournal removes the journal folder dir, which must be a journal
// under base (it holds plan.json and log.jsonl).
func RemoveJournal(base, dir string) error {
	rel, err := filepath.Rel(base, dir)
	if err != nil || !local(rel) || rel == "." || filepath.Dir(rel) != "." {
		return fmt.Errorf("journal %s: not a journal of %s", dir, base)
	}
	for _, f := range []string{"plan.json", "log.jsonl"} {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			if errors.Is(err, fs.ErrNotExist) || err == nil {
				return fmt.Errorf("journal %s: no %s; not removed", dir, f)
			}
			return fmt.Errorf("journal %s: %w", dir, err)
		}
	}
	// Renamed aside first, so a folder half removed is never taken for
	// a journal.
	trash := filepath.Join(base, ".removing-"+filepath.Base(dir))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("journal %s: %w", dir, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("journal %s: %w", dir, err)
	}
	return syncDir(base)
}
