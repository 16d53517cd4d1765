package changeset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
)

// Recover finishes, under the store's lock (opts.Lock), what a cfix that
// was killed left in the store. The newest journals of the store, as long
// as they are incomplete (their apply, or rollback, never ended; no
// process holds the lock, so none runs), are rolled back, newest first, as
// undo would, with the same checks, and logged as rolled back; the
// temporary files their apply left go first (RemoveTemps). An incomplete
// journal older than a finished one was written over since: it is left to
// undo. A journal that cannot be rolled back (a file changed since, a live
// session) stays as it is, and so do older ones; a line says so, with the
// command that undoes it. Recover returns one line for each thing it did.
// Writers call it before they plan; undo does not (the journal it undoes
// first is the incomplete one).
func Recover(opts ApplyOptions) ([]string, error) {
	if opts.Lock == nil {
		return nil, errors.New("recover: the store is not locked (a bug of cfix)")
	}
	base := opts.JournalDir
	if base == "" {
		var err error
		if base, err = DefaultJournalDir(); err != nil {
			return nil, err
		}
	}
	// Newest first, each read only when reached: the walk ends at the
	// store's newest journal that ended, however many older ones there are.
	dirs, err := journalDirs(base)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", base, err)
	}
	var lines []string
	for _, dir := range dirs {
		j, err := ReadJournalInfo(dir)
		if err != nil {
			continue // as ListJournals leaves it out
		}
		if !opts.Lock.Holds(j.Root) {
			continue
		}
		if j.State != "incomplete" {
			// An incomplete journal older than a finished one was left
			// by a cfix before this one, and written over since: undo
			// takes it when asked to.
			break
		}
		if j.Damage != "" {
			// Not left by a killed apply (which names each backup before
			// it makes it): its log lost the end that said it ended.
			lines = append(lines, fmt.Sprintf("journal %s: %s; not rolled back, as a killed apply would be; undo puts back what its backups verify: %s", j.Dir, j.Damage, undoCommand(j)))
			break
		}
		gone, err := RemoveTemps(j.Dir)
		for _, p := range gone {
			lines = append(lines, fmt.Sprintf("%s: removed, a temporary file of a cfix that was killed", p))
		}
		if err != nil {
			return lines, err
		}
		cs, err := Undo(j.Dir)
		if err != nil {
			lines = append(lines, fmt.Sprintf("journal %s: left unfinished by a cfix that was killed; not rolled back: %v; undo it with: %s", j.Dir, err, undoCommand(j)))
			break
		}
		if !cs.Empty() {
			res, err := Apply(cs, opts)
			var re *RefusedError
			if errors.As(err, &re) && re.Untouched {
				lines = append(lines, fmt.Sprintf("journal %s: left unfinished by a cfix that was killed; not rolled back: %v; undo it with: %s", j.Dir, err, undoCommand(j)))
				break
			}
			if err != nil {
				return lines, fmt.Errorf("journal %s: rolling back what a cfix that was killed left unfinished: %w", j.Dir, err)
			}
			lines = append(lines, fmt.Sprintf("journal %s: rolled back %d %s that a cfix that was killed left unfinished (undo journal %s)", j.Dir, res.Applied, plural.Of(res.Applied, "change"), res.Journal))
		} else {
			lines = append(lines, fmt.Sprintf("journal %s: left unfinished by a cfix that was killed before it changed anything; marked rolled back", j.Dir))
		}
		if err := markJournal(j.Dir, "rolled-back"); err != nil {
			return lines, err
		}
	}
	return lines, nil
}

// RemoveTemps removes the temporary files that the apply of the journal
// at dir left in the folders it writes, when it was killed: files named
// TempPrefix and random digits (and .renameio-TempDir and digits, the
// probe of earlier versions), nothing else. It returns their paths.
func RemoveTemps(dir string) ([]string, error) {
	cs, err := loadJournalPlan(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var gone []string
	for _, op := range cs.Ops {
		for _, p := range []string{op.Path, op.To} {
			if p == "" {
				continue
			}
			d := filepath.Dir(p)
			if seen[d] {
				continue
			}
			seen[d] = true
			ents, err := os.ReadDir(d)
			if err != nil {
				continue // a folder not made yet, or gone
			}
			for _, e := range ents {
				if !e.Type().IsRegular() || !isTempName(e.Name()) {
					continue
				}
				p := filepath.Join(d, e.Name())
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					return gone, err
				}
				gone = append(gone, p)
			}
		}
	}
	return gone, nil
}

// isTempName reports whether name is one an apply gives a temporary file.
func isTempName(name string) bool {
	for _, prefix := range []string{TempPrefix, ".renameio-TempDir"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// markJournal appends an event to the log of the journal at dir.
func markJournal(dir, ev string) error {
	f, err := rfile.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	j := &journal{dir: dir, log: f}
	return j.logEvent(event{Event: ev})
}

// undoCommand is the command line that undoes the journal j: a journal
// applies only to the store given (CheckStore), so it names the store;
// one of a project's settings is undone in the project.
func undoCommand(j JournalInfo) string {
	if j.Scope == ScopeProjectSettings {
		return "cfix undo --apply " + j.Dir + " (in " + filepath.Dir(j.Root) + ")"
	}
	return "cfix undo --apply " + j.Dir + " --root " + j.Root
}
