package changeset

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// A journal is a folder holding the change set as applied (plan.json), an
// append-only log of what was done (log.jsonl, fsynced at each step) and a
// backup of every file or folder before it was touched (backup/<op>).

// DefaultJournalDir returns where journals are kept: $CFIX_JOURNAL_DIR, else
// $XDG_STATE_HOME/cfix/journal, else ~/.local/state/cfix/journal. It lies
// outside the folders Claude Code manages, and usually on the same file
// system as the store, so backups are hard links that cost no copy.
func DefaultJournalDir() (string, error) {
	if d := os.Getenv("CFIX_JOURNAL_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "cfix", "journal"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("journal: no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "cfix", "journal"), nil
}

type event struct {
	Op     int          `json:"op"`
	Event  string       `json:"event"`
	Backup string       `json:"backup,omitempty"`
	Path   string       `json:"path,omitempty"` // a folder made (mkdir)
	New    *Fingerprint `json:"new,omitempty"`
	Cut    bool         `json:"cut,omitempty"` // the backup holds only the bytes cut off the end
	// Made lists what a CreateDir is about to make (see missingIn); Listed
	// tells an empty list from a journal of a cfix that kept none.
	Made   []string  `json:"made,omitempty"`
	Listed bool      `json:"listed,omitempty"`
	Time   time.Time `json:"time"`
}

type journal struct {
	dir   string
	cs    *ChangeSet
	log   *os.File // nil while rolling back: no backups, no log
	noCut bool     // rewrite even what could be cut in place (see cutFile)
	// lazy leaves the fsyncs of the log, backups, new files and folders
	// to the barriers of a batch apply (see batch.go).
	lazy bool
	// backedUp are the ops whose backup a batch apply made first.
	backedUp map[int]bool
	// spare are files held open for a rollback (see reserveHandles).
	spare []*os.File
}

// createJournal makes the journal of cs under base. It first gives back
// the room kept for an undo (cs.undoRoom), which its plan and log take;
// the journal of any other apply keeps room (of keep bytes) for its own
// undo.
func createJournal(base string, cs *ChangeSet, keep int64) (*journal, error) {
	if base == "" {
		var err error
		if base, err = DefaultJournalDir(); err != nil {
			return nil, err
		}
	}
	var rnd [3]byte
	rand.Read(rnd[:])
	name := time.Now().UTC().Format("20060102T150405.000Z") + "-" + cs.Command + "-" + hex.EncodeToString(rnd[:])
	name = strings.ReplaceAll(name, " ", "_")
	dir := filepath.Join(base, name)
	if err := giveRoom(cs.undoRoom); err != nil {
		return nil, fmt.Errorf("journal %s: %w", filepath.Dir(cs.undoRoom), err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "backup"), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeSync(filepath.Join(dir, "plan.json"), b); err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	f, err := rfile.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	if cs.undoRoom == "" && keep > 0 {
		keepRoom(dir, keep)
	}
	j := &journal{dir: dir, cs: cs, log: f}
	j.reserveHandles()
	return j, nil
}

// rollbackHandles is how many files a rollback holds open at once: the
// journal's log or a file it hashes, the file it puts back, a folder it
// syncs, the folders of a tree it links back.
const rollbackHandles = 4

// reserveHandles holds rollbackHandles files open (the null device) for
// the rollback, which closes them first: an apply stopped by the limit of
// open files (ulimit -n) can still roll back.
func (j *journal) reserveHandles() {
	for range rollbackHandles {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return
		}
		j.spare = append(j.spare, f)
	}
}

// releaseHandles closes the files reserveHandles holds.
func (j *journal) releaseHandles() {
	for _, f := range j.spare {
		f.Close()
	}
	j.spare = nil
}

// close closes the log and the files held for a rollback.
func (j *journal) close() {
	j.releaseHandles()
	j.log.Close()
}

func writeSync(path string, b []byte) error {
	return copySync(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, bytes.NewReader(b))
}

// copySync opens path with flag (and perm, when it creates it), copies r
// into it and fsyncs it.
func copySync(path string, flag int, perm fs.FileMode, r io.Reader) error {
	f, err := rfile.OpenFile(path, flag, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// log appends an event and fsyncs it.
func (j *journal) logEvent(e event) error {
	if j.log == nil {
		return nil
	}
	e.Time = time.Now().UTC()
	b, _ := json.Marshal(e)
	if n, err := j.log.Write(append(b, '\n')); err != nil {
		// A torn event (a full disk) is cut off, so the events after it
		// (a rollback's) are read.
		if fi, serr := j.log.Stat(); serr == nil && n > 0 {
			j.log.Truncate(fi.Size() - int64(n))
		}
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	if j.lazy {
		return nil
	}
	return j.log.Sync()
}

// backup keeps the file or folder at path as backup/<i>.
func (j *journal) backup(i int, path string) error {
	if j.log == nil {
		return nil
	}
	dst := filepath.Join(j.dir, "backup", strconv.Itoa(i))
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	// The log names the backup before it is made: a backup no event
	// names is one whose log was cut (see unnamedBackups), never one a
	// killed apply left. Undo finds a backup named and missing or half
	// made only beside a file the apply never touched.
	if err := j.logEvent(event{Op: i, Event: "backup", Backup: filepath.Join("backup", strconv.Itoa(i))}); err != nil {
		return err
	}
	if fi.IsDir() {
		err = copyTree(path, dst, true, false, nil)
	} else if err = os.Link(path, dst); err != nil {
		err = copyFile(path, dst)
	}
	if err != nil {
		return fmt.Errorf("backing up %s: %w", path, err)
	}
	return j.syncDir(filepath.Join(j.dir, "backup"))
}

// rollback undoes ops 0..failed (the failed one only as far as it got).
// The room kept for an undo goes first: no undo follows a rollback.
func (j *journal) rollback(failed int) error {
	j.releaseHandles()
	giveRoom(filepath.Join(j.dir, undoRoomName))
	undo, _, err := undoOps(j.dir, j.cs, failed)
	if err != nil {
		j.logEvent(event{Event: "rollback-failed"})
		return err
	}
	quiet := &journal{dir: j.dir}
	for i := range undo {
		if _, err := quiet.applyOp(-1, &undo[i], func(string, int) {}); err != nil {
			j.logEvent(event{Event: "rollback-failed"})
			return fmt.Errorf("%s: %w", undo[i].Path, err)
		}
	}
	// Everything is back. A log too full to say so leaves the journal
	// incomplete, where a later undo finds nothing left to restore.
	j.logEvent(event{Event: "rolled-back"})
	return nil
}

// JournalInfo describes a journal for undo --list.
type JournalInfo struct {
	Dir     string    `json:"dir"`
	Command string    `json:"command"`
	Root    string    `json:"root"`
	Created time.Time `json:"created"`
	Ops     int       `json:"ops"`
	State   string    `json:"state"` // applied, rolled-back, undone, incomplete
	// Scope is its plan's (ScopeProjectSettings: Root is a project's
	// .claude folder, not a store).
	Scope string `json:"scope,omitempty"`
	// Damage, when set, says how the journal's log lost what it said of
	// its backups (see unnamedBackups): undo puts back what those backups
	// verify, the next writer does not take it for a killed apply, and
	// journal prune never removes it.
	Damage string `json:"damage,omitempty"`
}

// ListJournals lists the journals under base for the store at root (all
// when root is ""), newest first: those whose root is that folder
// (SameStore), however it is named.
func ListJournals(base, root string) ([]JournalInfo, error) {
	dirs, err := journalDirs(base)
	if err != nil {
		return nil, err
	}
	var out []JournalInfo
	key := storeKey(root)
	keys := map[string]string{} // a root as journals name it → its key
	for _, dir := range dirs {
		info, err := ReadJournalInfo(dir)
		if err != nil {
			continue
		}
		if root != "" {
			k, ok := keys[info.Root]
			if !ok {
				k = storeKey(info.Root)
				keys[info.Root] = k
			}
			if k != key {
				continue
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// journalDirs lists the folders of the journals under base, newest first
// (their names start with the time of their apply), without reading them.
func journalDirs(base string) ([]string, error) {
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue // a journal journal prune is removing
		}
		dirs = append(dirs, filepath.Join(base, e.Name()))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	return dirs, nil
}

// ReadJournalInfo describes the journal at dir. Its state is "incomplete"
// while its apply runs, and after, when that was killed: under the store's
// lock (LockStore), an incomplete journal is one whose apply was killed.
func ReadJournalInfo(dir string) (JournalInfo, error) {
	cs, events, err := readJournal(dir)
	if err != nil {
		return JournalInfo{}, err
	}
	info := JournalInfo{Dir: dir, Command: cs.Command, Root: cs.Root, Created: cs.Created, Ops: len(cs.Ops), State: "incomplete", Scope: cs.Scope}
	for _, ev := range events {
		switch ev.Event {
		case "applied", "rolled-back", "undone":
			info.State = ev.Event
		}
	}
	info.Damage = damage(dir, unnamedBackups(dir, cs, events))
	return info, nil
}

// unnamedBackups lists the ops whose backup (backup/<op>) is in the
// journal folder while its log names none: the log was cut or edited
// after the apply wrote it (an apply names a backup before it makes it).
func unnamedBackups(dir string, cs *ChangeSet, events []event) []int {
	ents, err := os.ReadDir(filepath.Join(dir, "backup"))
	if err != nil {
		return nil
	}
	named := map[int]bool{}
	for _, e := range events {
		if e.Event == "backup" {
			named[e.Op] = true
		}
	}
	var out []int
	for _, e := range ents {
		i, err := strconv.Atoi(e.Name())
		if err != nil || i < 0 || i >= len(cs.Ops) || strconv.Itoa(i) != e.Name() || named[i] {
			continue // not a backup of the plan (a .restore link), or named
		}
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// damage says, for JournalInfo.Damage, which backups the log of the
// journal at dir does not name ("" when none).
func damage(dir string, unnamed []int) string {
	if len(unnamed) == 0 {
		return ""
	}
	names := make([]string, 0, 3)
	for _, i := range unnamed[:min(len(unnamed), 3)] {
		names = append(names, "backup/"+strconv.Itoa(i))
	}
	list := strings.Join(names, ", ")
	if len(unnamed) > 3 {
		list = fmt.Sprintf("%d backups (%s, ...)", len(unnamed), list)
	}
	log := "its log.jsonl names none of " + list
	if _, err := os.Lstat(filepath.Join(dir, "log.jsonl")); errors.Is(err, fs.ErrNotExist) {
		log = "it has no log.jsonl, and holds " + list
	} else if len(unnamed) == 1 {
		log = "its log.jsonl does not name " + list
	}
	return log + ": the log was cut or edited"
}

func readJournal(dir string) (*ChangeSet, []event, error) {
	b, err := rfile.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		return nil, nil, err
	}
	var cs ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, nil, fmt.Errorf("journal %s: plan.json: %w", dir, err)
	}
	f, err := rfile.Open(filepath.Join(dir, "log.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		// Killed before it made its log, or the log is lost: the
		// backups say the rest (unnamedBackups).
		return &cs, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// Lines of any length: a CreateDir's event lists every path it makes.
	var events []event
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var e event
			if json.Unmarshal(line, &e) == nil { // a torn last event is ignored
				events = append(events, e)
			}
		}
		if err == io.EOF {
			return &cs, events, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("journal %s: log.jsonl: %w", dir, err)
		}
	}
}

// MarkUndone records in a journal that it was undone.
func MarkUndone(dir string) error {
	f, err := rfile.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	j := &journal{dir: dir, log: f}
	return j.logEvent(event{Event: "undone"})
}

// Undo returns the change set that restores what the journal at dir
// changed: each file back to its backup, created files removed, renames
// reversed. It works on an incomplete journal too (a killed apply): each
// file is restored only if it holds what apply wrote.
func Undo(dir string) (*ChangeSet, error) {
	cs, err := loadJournalPlan(dir)
	if err != nil {
		return nil, err
	}
	ops, notes, err := undoOps(dir, cs, len(cs.Ops)-1)
	if err != nil {
		return nil, err
	}
	u := New(cs.Root, "undo")
	u.Scope = cs.Scope
	u.Masked = cs.Masked
	u.Own(dir) // the backups
	if p := filepath.Join(dir, undoRoomName); kept(p) > 0 {
		u.undoRoom = p
	}
	u.Ops = ops
	u.Notes = notes
	if err := u.confine(fromPlanner); err != nil {
		return nil, fmt.Errorf("journal %s: the undo: %w", dir, err)
	}
	return u, nil
}

func loadJournalPlan(dir string) (*ChangeSet, error) {
	cs, _, err := readJournal(dir)
	return cs, err
}

// missingFrom reports whether some file of the tree src is missing in dst.
func missingFrom(src, dst string) bool {
	missing := false
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || missing {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(src, p)
		if _, err := os.Lstat(filepath.Join(dst, rel)); err != nil {
			missing = true
		}
		return nil
	})
	return missing
}

// undoOps builds the ops that reverse ops 0..last of the journal, newest
// first, from what the log says happened and what is on disk now, and notes
// on what it leaves.
func undoOps(dir string, cs *ChangeSet, last int) ([]Op, []string, error) {
	_, events, err := readJournal(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := confineJournal(dir, cs, events); err != nil {
		return nil, nil, err
	}
	backups := map[int]string{}
	writes := map[int]int{} // "written" events by op: two after a carried append
	written := map[int]*Fingerprint{}
	started := map[int]bool{}
	done := map[int]bool{}
	renamed := map[int]bool{}
	cut := map[int]bool{}    // the backup holds the bytes cut off
	wasCut := map[int]bool{} // the ftruncate was made
	var made []string        // folders the apply made, in the order it made them
	creating := map[int]event{}
	rmdir := map[int]bool{} // the DeleteEmptyDir ops that ran
	var notes []string
	for _, e := range events {
		if e.Event == "mkdir" && e.Op <= last && e.Path != "" {
			made = append(made, e.Path)
		}
		switch e.Event {
		case "creating", "made":
			// What a CreateDir is about to make, then what it made
			// when that is not the same.
			creating[e.Op] = e
		case "renamed":
			renamed[e.Op] = true
		case "rmdir":
			rmdir[e.Op] = true
		case "done":
			done[e.Op] = true
			wasCut[e.Op] = true
		case "cut":
			wasCut[e.Op] = true
		case "backup":
			backups[e.Op] = filepath.Join(dir, e.Backup)
			cut[e.Op] = e.Cut
		case "written":
			written[e.Op] = e.New // the last one wins (after a carried append)
			writes[e.Op]++
		}
		started[e.Op] = true
	}
	// Backups the log does not name: it was cut or edited after the
	// apply, which names each backup before it makes it. What they hold
	// goes back where the plan's hashes verify it; what only the log
	// could say (the files the apply made, its renames) stays.
	inferred := map[int]bool{}
	if unnamed := unnamedBackups(dir, cs, events); len(unnamed) > 0 {
		for _, i := range unnamed {
			if i > last {
				continue
			}
			backups[i] = filepath.Join(dir, "backup", strconv.Itoa(i))
			started[i], inferred[i] = true, true
			if keep, ok := cs.Ops[i].cutAt(); ok && cs.Ops[i].Action == Rewrite {
				if fi, err := os.Lstat(backups[i]); err == nil && fi.Mode().IsRegular() && fi.Size() == cs.Ops[i].Expect.Size-keep {
					// The bytes cut off; a file changed since is refused.
					cut[i], wasCut[i] = true, true
				}
			}
		}
		notes = append(notes, fmt.Sprintf("journal %s: %s; undo puts back what those backups hold where the plan's hashes verify it, and leaves what only the log could say (files the apply made, its renames)", dir, damage(dir, unnamed)))
	}
	var out []Op
	var dirs []Op // the folders DeleteEmptyDir removed, made again last
	for i := last; i >= 0; i-- {
		op := cs.Ops[i]
		if !started[i] {
			continue
		}
		reason := "undo: " + op.Reason
		switch op.Action {
		case DeleteEmptyDir:
			if !rmdir[i] {
				continue
			}
			cur, err := Stat(op.Path)
			if err != nil {
				return nil, nil, err
			}
			if cur.Exists {
				continue // never removed (not empty), or made again since
			}
			dirs = append(dirs, Op{Action: RestoreDir, Path: op.Path, Reason: reason, Mode: op.Expect.Mode, ModTime: op.Expect.ModTime})
		case Rewrite:
			if cut[i] {
				keep, ok := op.cutAt()
				if !ok {
					return nil, nil, fmt.Errorf("journal %s: op %d: the backup holds cut bytes, the plan cuts nothing", dir, i+1)
				}
				u, err := undoCut(&op, keep, backups[i], reason, wasCut[i])
				if err != nil {
					return nil, nil, err
				}
				if u != nil {
					out = append(out, *u)
				}
				continue
			}
			nf := written[i]
			bk, ok := backups[i]
			if nf == nil && ok && inferred[i] {
				// What cfix wrote, as the plan makes it from the backup.
				nf = plannedFrom(&op, bk)
			}
			if nf == nil || !ok {
				if inferred[i] {
					if cur, err := FingerprintOf(op.Path); err == nil && cur.Exists && cur.SHA256 == op.Expect.SHA256 {
						continue // never replaced
					}
					return nil, nil, &RefusedError{Path: op.Path, Reason: fmt.Sprintf("the journal's log does not say what cfix wrote there, and the plan cannot tell: undo would lose what it holds (the old bytes are in %s)", bk)}
				}
				continue // never replaced
			}
			cur, err := FingerprintOf(op.Path)
			if err != nil {
				return nil, nil, err
			}
			bfp, err := FingerprintOf(bk)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case cur.Exists && cur.SHA256 == bfp.SHA256:
				continue // already restored (an undo run before)
			case cur.Exists && cur.SHA256 == nf.SHA256:
			case inferred[i]:
				return nil, nil, &RefusedError{Path: op.Path, Reason: fmt.Sprintf("holds neither what the plan read nor what cfix wrote, and the journal's log that would say more was cut: undo would lose those bytes (the old ones are in %s)", bk)}
			case !done[i] && !renamed[i]:
				continue // the rename never happened
			default:
				return nil, nil, &RefusedError{Path: op.Path, Reason: "changed since cfix wrote it; undo would lose those changes"}
			}
			if err := checkBackup(dir, i, &op, bk, bfp, writes[i] > 1); err != nil {
				return nil, nil, err
			}
			out = append(out, Op{Action: Rewrite, Path: op.Path, Reason: reason, Expect: cur,
				From: bk, FromExpect: &bfp, Restore: true, ModTime: op.Expect.ModTime, Mode: op.Expect.Mode, Session: op.Session})
		case Create:
			nf := written[i]
			if nf == nil {
				continue
			}
			cur, err := FingerprintOf(op.Path)
			if err != nil {
				return nil, nil, err
			}
			if !cur.Exists || (!done[i] && cur.SHA256 != nf.SHA256) {
				continue // never created
			}
			if cur.SHA256 != nf.SHA256 {
				return nil, nil, &RefusedError{Path: op.Path, Reason: "changed since cfix created it; undo would lose those changes"}
			}
			out = append(out, Op{Action: Delete, Path: op.Path, Reason: reason, Expect: cur, Session: op.Session, AsWritten: true})
		case Delete, DeleteDir:
			bk, ok := backups[i]
			if !ok {
				continue
			}
			cur, err := Stat(op.Path)
			if err != nil {
				return nil, nil, err
			}
			bfp, err := FingerprintOf(bk)
			if err != nil {
				return nil, nil, err
			}
			if op.Action == DeleteDir {
				// A removal killed half-way leaves the folder with part of
				// its files: put back what is missing.
				if missingFrom(bk, op.Path) {
					if changedBelow(cs, i) {
						// What the plan read is not what was backed up.
						notes = append(notes, fmt.Sprintf("%s: restored from backup/%d unchecked: the apply changed the folder before it removed it, and the journal holds no hash of what was left", op.Path, i))
					} else if err := checkBackup(dir, i, &op, bk, bfp, false); err != nil {
						return nil, nil, err
					}
					out = append(out, Op{Action: CreateDir, Path: op.Path, Reason: reason, From: bk, FromExpect: &bfp, Merge: cur.Exists, Restore: true, Expect: cur})
				}
				continue
			}
			if cur.Exists {
				continue // never removed
			}
			if err := checkBackup(dir, i, &op, bk, bfp, false); err != nil {
				return nil, nil, err
			}
			out = append(out, Op{Action: Create, Path: op.Path, Reason: reason, From: bk, FromExpect: &bfp, Restore: true,
				ModTime: op.Expect.ModTime, Mode: op.Expect.Mode, Session: op.Session})
		case Rename:
			src, err := Stat(op.Path)
			if err != nil {
				return nil, nil, err
			}
			dst, err := FingerprintOf(op.To)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case !dst.Exists:
				continue // never renamed
			case src.Exists:
				// Killed between link and remove: drop the new name.
				out = append(out, Op{Action: Delete, Path: op.To, Reason: reason, Expect: dst})
			default:
				out = append(out, Op{Action: Rename, Path: op.To, To: op.Path, Reason: reason, Expect: dst, Session: op.Session})
			}
		case CreateDir:
			// Only what the copy made goes: a file or folder that was there
			// before (a merge into a folder that existed) stays, and so
			// does what was added to the folder since.
			ev, ok := creating[i]
			if !ok {
				continue // the copy never started
			}
			if !ev.Listed {
				// A journal that does not list what the copy made.
				if op.Merge && op.Expect.Exists {
					notes = append(notes, fmt.Sprintf("%s: kept; it was there before the apply, and the journal does not say which files the apply added to it", op.Path))
					continue
				}
				cur, err := FingerprintOf(op.Path)
				if err != nil {
					return nil, nil, err
				}
				if cur.Exists {
					out = append(out, Op{Action: DeleteDir, Path: op.Path, Reason: reason, Expect: cur})
				}
				continue
			}
			for k := len(ev.Made) - 1; k >= 0; k-- {
				rel := ev.Made[k]
				if strings.HasSuffix(rel, "/") {
					continue // removed with the folders made, if empty
				}
				p := filepath.Join(op.Path, filepath.FromSlash(rel))
				cur, err := Stat(p)
				if err != nil {
					return nil, nil, err
				}
				if cur.Exists && !cur.Dir {
					out = append(out, Op{Action: Delete, Path: p, Reason: reason, Expect: cur, Session: op.Session})
				}
			}
		}
	}
	// A folder removed empty is made again after the files that go back
	// into it (which make it, and change its mtime): deepest first, so
	// that making one does not change the mtime of one given before.
	sort.SliceStable(dirs, func(a, b int) bool {
		return strings.Count(dirs[a].Path, string(filepath.Separator)) > strings.Count(dirs[b].Path, string(filepath.Separator))
	})
	out = append(out, dirs...)
	// The folders a CreateDir made go with those of mkdir: removed last,
	// deepest first, if empty.
	for i, e := range creating {
		if i < 0 || i > last || i >= len(cs.Ops) || cs.Ops[i].Action != CreateDir {
			continue
		}
		for _, rel := range e.Made {
			if strings.HasSuffix(rel, "/") {
				made = append(made, filepath.Join(cs.Ops[i].Path, filepath.FromSlash(rel)))
			}
		}
	}
	depth := func(p string) int { return strings.Count(p, string(filepath.Separator)) }
	sort.Slice(made, func(a, b int) bool {
		if da, db := depth(made[a]), depth(made[b]); da != db {
			return da < db
		}
		return made[a] < made[b]
	})
	made = slices.Compact(made)
	// Then the folders the apply made, deepest first, if they are empty;
	// one outside the store (an archive folder) stays.
	for k := len(made) - 1; k >= 0; k-- {
		if !below(cs.Root, made[k]) && !(made[k] == cs.Root && cs.Scope == ScopeProjectSettings) {
			continue
		}
		if fi, err := os.Stat(made[k]); err == nil && fi.IsDir() {
			out = append(out, Op{Action: RemoveEmptyDir, Path: made[k], Reason: "undo: remove a folder the apply made, if empty"})
		}
	}
	return out, notes, nil
}

// plannedFrom is the fingerprint (size and hash) of what a Rewrite op
// writes, made from its backup bk as the plan makes it (its data, or its
// edits of the old bytes); nil where the plan reads another file.
func plannedFrom(op *Op, bk string) *Fingerprint {
	h := NewHashWriter()
	var n int64
	switch {
	case op.HasData || op.Data != nil:
		h.Write(op.Data)
		n = int64(len(op.Data))
	case op.selfEdit():
		f, err := os.Open(bk)
		if err != nil {
			return nil
		}
		defer f.Close()
		cw := &countWriter{w: h}
		if err := applyEdits(cw, bufio.NewReaderSize(f, 256<<10), op.Edits); err != nil {
			return nil
		}
		n = cw.n
	default:
		return nil
	}
	return &Fingerprint{Exists: true, Size: n, SHA256: h.Sum()}
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
