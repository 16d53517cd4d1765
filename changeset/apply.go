package changeset

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// ApplyOptions configure Apply.
type ApplyOptions struct {
	// Force applies to files of live sessions too.
	Force bool
	// JournalDir is where journals are kept (see DefaultJournalDir).
	JournalDir string
	// LiveWindow: a session file written to this recently counts as live.
	LiveWindow time.Duration
	// LiveSessions are the ids of sessions a running Claude Code holds.
	LiveSessions map[string]bool
	// Hook, when set, is called between the steps of applying op i (tests
	// kill the process there).
	Hook func(step string, i int)
	// Lock is the store's lock (LockStore) when the caller holds it: undo
	// holds it from before it picks a journal. Apply takes it itself
	// otherwise, and lets it go when it returns.
	Lock *Lock
}

// DefaultLiveWindow is how recently written a session file must be to
// count as live.
const DefaultLiveWindow = 60 * time.Second

// Result is what Apply did.
type Result struct {
	Journal  string   // the journal folder (backups and log)
	Applied  int      // operations applied
	Appended []string // files whose appends during apply were carried over
}

// RefusedError is returned when apply refuses the whole change set.
type RefusedError struct {
	Path   string
	Reason string
	// Untouched is set when apply refused before changing anything.
	Untouched bool
}

func (e *RefusedError) Error() string {
	if e.Untouched {
		return fmt.Sprintf("%s: %s; nothing was changed", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Reason)
}

// Apply checks every fingerprint, refuses live sessions, then applies the
// operations in order: each file is backed up into a journal and replaced
// atomically (temporary file, fsync, rename, fsync of the folder), keeping
// its mode and mtime. On the first failure it rolls back what it applied.
// It holds the store's lock throughout (see Lock).
func Apply(cs *ChangeSet, opts ApplyOptions) (*Result, error) {
	if opts.Lock == nil {
		l, err := LockStore(opts.JournalDir, cs.Root)
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	} else if !opts.Lock.Holds(cs.Root) {
		return nil, fmt.Errorf("store %s: apply holds the lock of %s, not of this store (a bug of cfix)", cs.Root, opts.Lock.root)
	}
	if opts.LiveWindow == 0 {
		opts.LiveWindow = DefaultLiveWindow
	}
	hook := opts.Hook
	if hook == nil {
		hook = func(string, int) {}
	}
	if err := verify(cs, opts); err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			re.Untouched = true
		}
		return nil, err
	}
	// The room this apply's undo will need (undoroom.go).
	keep := undoRoomFor(cs)
	if err := checkSpace(cs, opts.JournalDir, opts.Force, keep); err != nil {
		return nil, err
	}
	given := kept(cs.undoRoom)
	j, err := createJournal(opts.JournalDir, cs, keep)
	if err != nil {
		return nil, err
	}
	defer j.close()
	res, err := j.apply(cs, hook, opts.Force)
	switch {
	case err != nil && given > 0:
		// An undo that failed: the room it took is kept again for the
		// next, where there is room for it.
		keepRoom(filepath.Dir(cs.undoRoom), given)
	case err == nil && cs.undoRoom != "":
		// An undo that ran on the room kept for it keeps room for its
		// own undo only where there is plenty left (the journal it undid
		// is yet to be marked undone).
		if r, serr := statRoom(j.dir); serr == nil && r.free >= keep+spaceMargin {
			keepRoom(j.dir, keep)
		}
	}
	return res, err
}

// apply applies the ops of cs into the journal j (see Apply).
func (j *journal) apply(cs *ChangeSet, hook func(string, int), force bool) (*Result, error) {
	// With --force the session may be live: a rewrite carries an append
	// that lands while it works over, a cut could not.
	j.noCut = force
	res := &Result{Journal: j.dir}
	if batchable(cs) {
		return j.applyBatch(cs, res, hook)
	}
	for i := range cs.Ops {
		hook("before", i)
		appended, err := j.applyOp(i, &cs.Ops[i], hook)
		if err != nil {
			rbErr := j.rollback(i)
			if rbErr != nil {
				return res, fmt.Errorf("%v; rolling back failed too: %v (backups in %s)", err, rbErr, j.dir)
			}
			return res, fmt.Errorf("%v; everything applied was rolled back (journal %s)", err, j.dir)
		}
		if appended {
			res.Appended = append(res.Appended, cs.Ops[i].Path)
		}
		res.Applied++
		hook("after", i)
	}
	if err := j.logEvent(event{Event: "applied"}); err != nil {
		return res, err
	}
	return res, nil
}

// verify confines every path of the plan to its store (confine.go),
// re-checks every fingerprint, refuses live sessions and writes through a
// symbolic link (links.go).
func verify(cs *ChangeSet, opts ApplyOptions) error {
	if err := cs.confine(fromPlanner); err != nil {
		return &RefusedError{Path: "plan", Reason: err.Error()}
	}
	now := time.Now()
	links := newLinkGuard(cs.Root)
	changed := make(map[string]int, len(cs.Ops)) // path → its op
	for i := range cs.Ops {
		op := &cs.Ops[i]
		if j, twice := changed[op.Path]; twice && op.Action != RemoveEmptyDir {
			// Each op checks the path as the plan read it: a second would
			// find the first's work and the apply would roll back.
			return &RefusedError{Path: op.Path, Reason: fmt.Sprintf("the plan changes it twice (%s, then %s): plan again; if it happens again, it is a bug of cfix", cs.Ops[j].Action, op.Action)}
		}
		if op.Action != RemoveEmptyDir {
			changed[op.Path] = i
		}
		if err := op.check(); err != nil {
			return &RefusedError{Path: op.Path, Reason: err.Error()}
		}
		if l, ok := links.outside(op); ok {
			return &RefusedError{Path: op.Path, Reason: l.String()}
		}
		if op.Action == RemoveEmptyDir {
			continue
		}
		if op.Action == Rewrite && op.Expect.Link != "" {
			return &RefusedError{Path: op.Path, Reason: fmt.Sprintf("is a symbolic link to %s: cfix does not rewrite a link (the new file would replace the link, and its target would keep the old bytes); rewrite its target, or put the file in place of the link", op.Expect.Link)}
		}
		if err := checkExpect(op.Path, op.Expect, op.selfEdit(), false); err != nil {
			return err
		}
		if op.FromExpect != nil && op.From != "" {
			// An op reads the file its From leads to, unless the plan
			// fingerprinted From as a link: then it makes that link.
			if err := checkExpect(op.From, *op.FromExpect, op.adopts(), op.FromExpect.Link == ""); err != nil {
				return err
			}
		}
		if op.Action == Rename {
			if fp, err := Stat(op.To); err != nil || fp.Exists {
				return &RefusedError{Path: op.To, Reason: "rename target exists"}
			}
		}
		if r := liveReason(op, opts, now); r != "" {
			return &RefusedError{Path: op.Path, Reason: r}
		}
	}
	return nil
}

// checkExpect compares path on disk with what the planner read. The
// content is hashed again unless the file is the very one the planner
// hashed, unchanged since (sameFile), or deferHash leaves the hash to the
// write, which reads the file anyway (see selfEdit). With through, a
// symbolic link at path is looked through: the op reads what it leads to.
func checkExpect(path string, want Fingerprint, deferHash, through bool) error {
	got, err := Stat(path)
	viaLink := err == nil && through && got.Link != ""
	if viaLink {
		got, err = statThrough(path)
	}
	if err != nil {
		return &RefusedError{Path: path, Reason: err.Error()}
	}
	if got.Link != want.Link {
		if want.Link != "" {
			return &RefusedError{Path: path, Reason: fmt.Sprintf("was a symbolic link to %s when the plan was made, and is not now; plan again", want.Link)}
		}
		return &RefusedError{Path: path, Reason: fmt.Sprintf("is a symbolic link to %s now; it was not when the plan was made; plan again", got.Link)}
	}
	switch {
	case want.Exists && !got.Exists:
		return &RefusedError{Path: path, Reason: "removed since the plan was made"}
	case !want.Exists && got.Exists:
		return &RefusedError{Path: path, Reason: "exists now; it did not when the plan was made"}
	case !want.Exists:
		return nil
	case !want.Dir && (got.Size != want.Size || !got.ModTime.Equal(want.ModTime)):
		return &RefusedError{Path: path, Reason: fmt.Sprintf("changed since the plan was made (size %d → %d, modified %s); plan again", want.Size, got.Size, got.ModTime.Local().Format(time.RFC3339))}
	}
	if want.SHA256 == "" || deferHash || sameFile(got, want) {
		return nil
	}
	fingerprint := FingerprintOf
	if viaLink {
		fingerprint = FingerprintThrough
	}
	full, err := fingerprint(path)
	if err != nil {
		return &RefusedError{Path: path, Reason: err.Error()}
	}
	if full.SHA256 != want.SHA256 {
		return &RefusedError{Path: path, Reason: "content changed since the plan was made; plan again"}
	}
	return nil
}

// applyOp applies one op: backup, write, rename. It reports whether bytes
// appended to the old file while it was being replaced were carried over.
func (j *journal) applyOp(i int, op *Op, hook func(string, int)) (appended bool, err error) {
	switch op.Action {
	case Create, Rewrite:
		if op.makesLink() {
			return false, j.makeLink(i, op, hook)
		}
		if at, ok := op.appendAt(); ok && j.log == nil {
			// A rollback puts the bytes a cut removed back in place.
			return false, appendInPlace(op, at)
		}
		if keep, ok := op.cutAt(); ok && op.Action == Rewrite && !j.noCut {
			if err := j.cutFile(i, op, keep, hook); err != errNoCut {
				return false, err
			}
		}
		return j.writeFile(i, op, hook)
	case Delete:
		if cur, err := os.Lstat(op.Path); err != nil || (op.Expect.Exists && !op.Expect.Dir && (cur.Size() != op.Expect.Size || !cur.ModTime().Equal(op.Expect.ModTime))) {
			return false, &RefusedError{Path: op.Path, Reason: "changed while applying; plan again"}
		}
		if !j.backedUp[i] {
			if err := j.backup(i, op.Path); err != nil {
				return false, err
			}
			hook("backed-up", i)
		}
		if err := os.Remove(op.Path); err != nil {
			return false, err
		}
		return false, j.syncDir(filepath.Dir(op.Path))
	case DeleteDir:
		if !j.backedUp[i] {
			if err := j.backup(i, op.Path); err != nil {
				return false, err
			}
			hook("backed-up", i)
		}
		if err := os.RemoveAll(op.Path); err != nil {
			return false, err
		}
		return false, j.syncDir(filepath.Dir(op.Path))
	case RemoveEmptyDir:
		if err := os.Remove(op.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if fi, serr := os.Stat(op.Path); serr == nil && fi.IsDir() {
				return false, nil // not empty: something else lives there now
			}
			return false, err
		}
		return false, syncDir(filepath.Dir(op.Path))
	case DeleteEmptyDir:
		fi, err := os.Lstat(op.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.IsDir() {
			return false, &RefusedError{Path: op.Path, Reason: "is no longer a folder; plan again"}
		}
		// Said before the removal: undo makes again a folder it finds
		// missing after this event, and none other.
		if err := j.logEvent(event{Op: i, Event: "rmdir"}); err != nil {
			return false, err
		}
		if err := os.Remove(op.Path); err != nil {
			if ents, rerr := os.ReadDir(op.Path); rerr == nil && len(ents) > 0 {
				return false, nil // written into since the plan: it stays
			}
			return false, err
		}
		return false, j.syncDir(filepath.Dir(op.Path))
	case RestoreDir:
		if err := j.mkdirs(i, op.Path); err != nil {
			return false, err
		}
		if fi, err := os.Lstat(op.Path); err != nil || !fi.IsDir() {
			return false, &RefusedError{Path: op.Path, Reason: "is not a folder; nothing was put back"}
		}
		if op.Mode != 0 {
			if err := os.Chmod(op.Path, op.Mode); err != nil {
				return false, err
			}
		}
		if !op.ModTime.IsZero() {
			if err := os.Chtimes(op.Path, time.Now(), op.ModTime); err != nil {
				return false, err
			}
		}
		return false, j.syncDir(filepath.Dir(op.Path))
	case CreateDir:
		if err := j.mkdirs(i, filepath.Dir(op.Path)); err != nil {
			return false, err
		}
		// What the copy will make is logged before it starts: undo removes
		// those and nothing else, never a folder or file that was there.
		made, err := missingIn(op.From, op.Path)
		if err != nil {
			return false, err
		}
		if err := j.logEvent(event{Op: i, Event: "creating", Made: made, Listed: true}); err != nil {
			return false, err
		}
		hook("listed", i)
		// A file that appeared since the listing is not the copy's: what
		// the copy made, when it is not the list, corrects it (before a
		// failure's rollback reads it).
		var did []string
		err = copyTree(op.From, op.Path, op.Restore, op.Merge, func(rel string) { did = append(did, rel) })
		if !slices.Equal(did, made) {
			if lerr := j.logEvent(event{Op: i, Event: "made", Made: did, Listed: true}); lerr != nil && err == nil {
				err = lerr
			}
		}
		if err != nil {
			return false, err
		}
		if err := stampMade(op.Path, did, op.ModTime); err != nil {
			return false, err
		}
		return false, j.syncDir(filepath.Dir(op.Path))
	case Rename:
		if err := j.logEvent(event{Op: i, Event: "renaming"}); err != nil {
			return false, err
		}
		if err := j.mkdirs(i, filepath.Dir(op.To)); err != nil {
			return false, err
		}
		if err := os.Link(op.Path, op.To); err != nil {
			// Not on one file system, or links refused: copy, then remove.
			if err := copyFile(op.Path, op.To); err != nil {
				return false, err
			}
		}
		if err := syncDir(filepath.Dir(op.To)); err != nil {
			return false, err
		}
		hook("linked", i)
		if err := os.Remove(op.Path); err != nil {
			return false, err
		}
		return false, syncDir(filepath.Dir(op.Path))
	}
	return false, fmt.Errorf("%s: unknown action %q", op.Path, op.Action)
}

// writeFile writes the new content of a Create or Rewrite op atomically.
func (j *journal) writeFile(i int, op *Op, hook func(string, int)) (bool, error) {
	var old fs.FileInfo
	var oldFile *os.File
	if op.Action == Rewrite {
		f, err := rfile.Open(op.Path)
		if err != nil {
			return false, err
		}
		defer f.Close()
		oldFile = f
		if old, err = f.Stat(); err != nil {
			return false, err
		}
		// The file must still be what the plan read: earlier ops take time,
		// and Claude Code may have appended meanwhile.
		if op.Expect.Exists && (old.Size() != op.Expect.Size || !old.ModTime().Equal(op.Expect.ModTime)) {
			return false, &RefusedError{Path: op.Path, Reason: "changed while applying (Claude Code appended to it?); plan again"}
		}
		if err := j.backup(i, op.Path); err != nil {
			return false, err
		}
		hook("backed-up", i)
	}
	mode := op.Mode
	if mode == 0 {
		mode = 0o600
		if old != nil {
			mode = old.Mode().Perm()
		}
	}
	if err := j.mkdirs(i, filepath.Dir(op.Path)); err != nil {
		return false, err
	}
	if op.adopts() {
		if done, err := j.adopt(i, op, mode, hook); done || err != nil {
			return false, err
		}
	}
	var nf *newFile
	if op.restores() {
		// A backup put back by a link: no byte is written, so a full file
		// system does not stop it (a rollback after ENOSPC).
		var err error
		if nf, err = linkBackup(op, mode); err != nil {
			return false, err
		}
	}
	if nf == nil {
		var err error
		if nf, err = j.writeTemp(op, mode, oldFile, old); err != nil {
			return false, err
		}
	}
	defer nf.cleanup()
	mtime := op.ModTime
	if mtime.IsZero() && old != nil {
		mtime = old.ModTime()
	}
	// The new bytes are known before the rename: undo after a crash can
	// tell which version a file holds.
	if err := j.logEvent(event{Op: i, Event: "written", New: &nf.fp}); err != nil {
		return false, err
	}
	hook("written", i)
	// Last look before the rename: an append since verify means the plan
	// is stale for this file.
	if op.Action == Rewrite {
		if cur, err := os.Stat(op.Path); err != nil || !os.SameFile(cur, old) || cur.Size() != old.Size() || !cur.ModTime().Equal(old.ModTime()) {
			return false, &RefusedError{Path: op.Path, Reason: "changed while applying (Claude Code appended to it?); plan again"}
		}
	}
	hook("checked", i)
	err := nf.place(op.Path, op.Action == Create, j.lazy)
	if nf.linked != "" && errors.Is(err, syscall.EXDEV) {
		// The backup's link lies on another file system (another mount
		// of the same one): copy it, the same bytes the log names.
		var cp *newFile
		if cp, err = j.writeTemp(op, mode, oldFile, old); err != nil {
			return false, err
		}
		defer cp.cleanup()
		err = cp.place(op.Path, op.Action == Create, j.lazy)
	}
	if err != nil {
		return false, err
	}
	if err := j.logEvent(event{Op: i, Event: "renamed"}); err != nil {
		return false, err
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(op.Path, time.Now(), mtime); err != nil {
			return false, err
		}
	}
	if err := j.syncDir(filepath.Dir(op.Path)); err != nil {
		return false, err
	}
	hook("renamed", i)
	// Bytes appended to the old file between the last look and the rename
	// went to the old inode: carry them over, so no append is lost.
	appended := false
	if oldFile != nil {
		if cur, err := oldFile.Stat(); err == nil && cur.Size() > old.Size() {
			if err := appendTail(op.Path, oldFile, old.Size()); err != nil {
				return false, fmt.Errorf("%s: carrying over an append: %w (the appended bytes are in %s)", op.Path, err, j.dir)
			}
			appended = true
			// A backup that is a copy, not a link to the old file, lacks
			// the tail: give it the tail, so undo keeps those lines.
			bk := filepath.Join(j.dir, "backup", strconv.Itoa(i))
			if bi, err := os.Stat(bk); err == nil && !os.SameFile(bi, cur) {
				if err := appendTail(bk, oldFile, old.Size()); err != nil {
					return false, err
				}
			}
			fp, err := FingerprintOf(op.Path)
			if err != nil {
				return false, err
			}
			if err := j.logEvent(event{Op: i, Event: "written", New: &fp}); err != nil {
				return false, err
			}
		}
	}
	return appended, j.logEvent(event{Op: i, Event: "done"})
}

// makesLink reports whether a Create puts back a symbolic link: its From
// (a backup) was fingerprinted as a link, so the op makes a link that
// says the same, never a file of what it leads to.
func (op *Op) makesLink() bool {
	return op.Action == Create && op.From != "" && op.FromExpect != nil && op.FromExpect.Link != ""
}

// makeLink makes the symbolic link of a Create whose From is a link (see
// makesLink), with the log events of a write.
func (j *journal) makeLink(i int, op *Op, hook func(string, int)) error {
	target := op.FromExpect.Link
	if err := j.mkdirs(i, filepath.Dir(op.Path)); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(target))
	if err := j.logEvent(event{Op: i, Event: "written", New: &Fingerprint{Exists: true, Link: target, SHA256: hex.EncodeToString(sum[:])}}); err != nil {
		return err
	}
	hook("written", i)
	hook("checked", i)
	// Like a link of a new file into place, it fails if a file appeared
	// at the path since verify.
	err := os.Symlink(target, op.Path)
	if errors.Is(err, fs.ErrExist) {
		return &RefusedError{Path: op.Path, Reason: "appeared while applying; plan again"}
	}
	if err != nil {
		return err
	}
	if err := j.logEvent(event{Op: i, Event: "renamed"}); err != nil {
		return err
	}
	if err := j.syncDir(filepath.Dir(op.Path)); err != nil {
		return err
	}
	hook("renamed", i)
	return j.logEvent(event{Op: i, Event: "done"})
}

// newFile is the new content of a Create or Rewrite, under a temporary
// name, ready to be put into place.
type newFile struct {
	fp      Fingerprint
	pending *pendingFile // a file written with the new bytes
	linked  string       // or a second name of a backup (linkBackup)
}

// writeTemp writes the new content of op to a temporary file.
func (j *journal) writeTemp(op *Op, mode fs.FileMode, oldFile *os.File, old fs.FileInfo) (*newFile, error) {
	var src io.ReadCloser
	var readHash *HashWriter
	var err error
	if op.selfEdit() {
		// The old bytes are hashed as they are copied, unless the file is
		// the one the planner hashed, unchanged since.
		src, readHash, err = op.editedContent(oldFile, !sameFile(infoFingerprint(old, time.Now()), op.Expect))
	} else {
		src, err = op.content()
	}
	if err != nil {
		return nil, err
	}
	defer src.Close()
	t, err := newPendingFile(op.Path, mode)
	if err != nil {
		return nil, err
	}
	nf := &newFile{pending: t}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(t, h), src)
	if err != nil {
		t.Cleanup()
		return nil, fmt.Errorf("%s: writing new content: %w", op.Path, err)
	}
	if err := t.Chmod(mode); err != nil {
		t.Cleanup()
		return nil, err
	}
	if readHash != nil && readHash.Sum() != op.Expect.SHA256 {
		t.Cleanup()
		return nil, &RefusedError{Path: op.Path, Reason: "content changed since the plan was made; plan again"}
	}
	nf.fp = Fingerprint{Exists: true, Size: n, Mode: mode, SHA256: hex.EncodeToString(h.Sum(nil))}
	return nf, nil
}

// place puts the new file at path: a Create by a link (unlike a rename, a
// link fails if a file appeared at the path since verify), a Rewrite by a
// rename over the old file. With lazy the fsync of a written file is left
// to the batch's barrier.
func (nf *newFile) place(path string, create, lazy bool) error {
	var tmp string
	if nf.pending != nil {
		if !create {
			return nf.pending.CloseAtomicallyReplace()
		}
		if !lazy {
			if err := nf.pending.Sync(); err != nil {
				return err
			}
		}
		tmp = nf.pending.Name()
		if err := nf.pending.File.Close(); err != nil {
			return err
		}
	} else {
		tmp = nf.linked
		if !create {
			return os.Rename(tmp, path)
		}
	}
	err := renameNoReplace(tmp, path)
	if err == errNoRename {
		err = os.Link(tmp, path)
		if err == nil {
			os.Remove(tmp)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return &RefusedError{Path: path, Reason: "appeared while applying; plan again"}
	}
	return err
}

// cleanup removes the temporary file, if it was not put into place.
func (nf *newFile) cleanup() {
	if nf.pending != nil {
		nf.pending.Cleanup()
	} else if nf.linked != "" {
		os.Remove(nf.linked)
	}
}

// restores reports whether a Create or Rewrite puts a journal's backup
// back (Restore).
func (op *Op) restores() bool {
	return op.Restore && (op.Action == Create || op.Action == Rewrite) && op.From != "" && op.FromExpect != nil &&
		len(op.Edits) == 0 && op.Transform == nil && !op.HasData && op.Data == nil
}

// linkBackup gives the backup op.From a second name beside it in the
// journal, to be renamed into place: the backup is kept (undo may run
// again), the restore needs no free space, and a restore killed half-way
// leaves nothing in the store. It returns nil, having done nothing, where
// no link can be made: the caller copies (as it does where the rename
// fails, the journal on another file system).
func linkBackup(op *Op, mode fs.FileMode) (*newFile, error) {
	fi, err := os.Lstat(op.From)
	if err != nil {
		return nil, err
	}
	want := op.FromExpect
	if !fi.Mode().IsRegular() || fi.Size() != want.Size || !fi.ModTime().Equal(want.ModTime) {
		return nil, &RefusedError{Path: op.From, Reason: "changed since the plan was made; plan again"}
	}
	// One name per backup, so a restore killed half-way leaves no more
	// than one, which the next restore replaces.
	tmp := op.From + ".restore"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.Link(op.From, tmp); err != nil {
		return nil, nil
	}
	if fi.Mode().Perm() != mode {
		if err := os.Chmod(tmp, mode); err != nil {
			os.Remove(tmp)
			return nil, err
		}
	}
	return &newFile{linked: tmp, fp: Fingerprint{Exists: true, Size: want.Size, Mode: mode, SHA256: want.SHA256}}, nil
}

// adopts reports whether a Create links its From into place (Adopt).
func (op *Op) adopts() bool {
	return op.Adopt && op.Action == Create && op.From != "" && op.FromExpect != nil && op.FromExpect.SHA256 != "" &&
		len(op.Edits) == 0 && op.Transform == nil && !op.HasData && op.Data == nil
}

// errNoRename: the file system cannot rename without replacing.
var errNoRename = errors.New("no rename that replaces none")

// adopt makes a Create with Adopt: the file From, still of the size and
// mtime the plan gives, is moved (or linked) into place, with the same log
// events and steps as a write. It reports false, having done nothing,
// where neither can be made (another file system): the caller copies From
// instead.
func (j *journal) adopt(i int, op *Op, mode fs.FileMode, hook func(string, int)) (bool, error) {
	f, err := rfile.Open(op.From)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	want := op.FromExpect
	if !fi.Mode().IsRegular() || fi.Size() != want.Size || !fi.ModTime().Equal(want.ModTime) {
		return false, &RefusedError{Path: op.From, Reason: "changed since the plan was made; plan again"}
	}
	if fi.Mode().Perm() != mode {
		if err := f.Chmod(mode); err != nil {
			return false, err
		}
	}
	if !j.lazy {
		if err := f.Sync(); err != nil {
			return false, err
		}
	}
	if err := j.logEvent(event{Op: i, Event: "written", New: &Fingerprint{Exists: true, Size: want.Size, Mode: mode, SHA256: want.SHA256}}); err != nil {
		return false, err
	}
	hook("written", i)
	hook("checked", i)
	// Moved into place, where a file that appeared at the path since
	// makes it fail (a rename that replaces none), else linked.
	err = renameNoReplace(op.From, op.Path)
	if err == errNoRename {
		err = os.Link(op.From, op.Path)
	}
	if errors.Is(err, fs.ErrExist) {
		return false, &RefusedError{Path: op.Path, Reason: "appeared while applying; plan again"}
	}
	if err != nil {
		return false, nil
	}
	if err := j.logEvent(event{Op: i, Event: "renamed"}); err != nil {
		return false, err
	}
	if !op.ModTime.IsZero() {
		if err := os.Chtimes(op.Path, time.Now(), op.ModTime); err != nil {
			return false, err
		}
	}
	if err := j.syncDir(filepath.Dir(op.Path)); err != nil {
		return false, err
	}
	hook("renamed", i)
	return true, j.logEvent(event{Op: i, Event: "done"})
}

// TempPrefix begins the name of every temporary file an apply makes: the
// new content of a file is written beside it, as TempPrefix plus random
// digits, and renamed into place. A cfix killed before the rename leaves
// it; the next writer removes it (RemoveTemps). No other file of a store
// is probed or made.
const TempPrefix = ".cfix-tmp-"

// pendingFile is the temporary file of a write, renamed over its path when
// complete.
type pendingFile struct {
	*os.File
	path string
	done bool
}

// newPendingFile makes the temporary file of a write of path, in path's
// folder, with mode.
func newPendingFile(path string, mode fs.FileMode) (*pendingFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), TempPrefix+"*")
	if err != nil {
		return nil, err
	}
	t := &pendingFile{File: f, path: path}
	if err := f.Chmod(mode); err != nil {
		t.Cleanup()
		return nil, err
	}
	return t, nil
}

// CloseAtomicallyReplace fsyncs and closes the file and renames it over
// its path.
func (t *pendingFile) CloseAtomicallyReplace() error {
	if err := t.Sync(); err != nil {
		return err
	}
	if err := t.File.Close(); err != nil {
		return err
	}
	if err := os.Rename(t.Name(), t.path); err != nil {
		return err
	}
	t.done = true
	return nil
}

// Cleanup removes the file unless it was renamed into place.
func (t *pendingFile) Cleanup() {
	if t.done {
		return
	}
	t.File.Close()
	os.Remove(t.Name())
	t.done = true
}

// mkdirs makes dir and its missing parents, logging each folder it makes
// so undo can remove them again.
func (j *journal) mkdirs(i int, dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	for k := len(missing) - 1; k >= 0; k-- {
		if err := j.logEvent(event{Op: i, Event: "mkdir", Path: missing[k]}); err != nil {
			return err
		}
	}
	return os.MkdirAll(dir, 0o700)
}

// appendTail appends the bytes of old from offset on to path.
func appendTail(path string, old *os.File, from int64) error {
	return copySync(path, os.O_WRONLY|os.O_APPEND, 0, io.NewSectionReader(old, from, 1<<62))
}

// syncDir fsyncs a folder so a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, os.ErrInvalid) {
		return nil
	}
	return err
}

// copyFile copies src to dst (which must not exist), keeping mode and
// mtime; a symbolic link is copied as a link that says the same.
func copyFile(src, dst string) error {
	if fi, err := os.Lstat(src); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := rfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := copySync(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm(), in); err != nil {
		return err
	}
	return os.Chtimes(dst, time.Now(), fi.ModTime())
}

// stampMade gives the files a CreateDir made in dst (made: as missingIn
// names them) the modification time mtime, when it is set: the files of
// a new session (a clone's tool-results) have the time they were made.
// Each is changed inside an os.Root of dst, through no link.
func stampMade(dst string, made []string, mtime time.Time) error {
	if mtime.IsZero() {
		return nil
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range made {
		if strings.HasSuffix(rel, "/") {
			continue
		}
		fi, err := root.Lstat(filepath.FromSlash(rel))
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if err := root.Chtimes(filepath.FromSlash(rel), time.Now(), mtime); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies the folder src to dst, keeping modes and mtimes. With
// link, files are hard links where the file system allows (backups); with
// merge, what dst already has is kept. made, when set, is told each file
// and folder it makes, as missingIn names them. It writes through no link:
// dst and each folder it descends into must be a real folder, and the
// files it copies are made inside dst by an os.Root, each new (O_EXCL,
// which opens no link either); a file it links (a backup, or an undo's
// restore) is linked by its path, after its folder was found real.
func copyTree(src, dst string, link, merge bool, made func(rel string)) error {
	if made == nil {
		made = func(string) {}
	}
	var root *os.Root
	defer func() {
		if root != nil {
			root.Close()
		}
	}()
	// realDir checks that what is at rel (in dst) is a real folder.
	realDir := func(rel string, err error) error {
		var fi fs.FileInfo
		var serr error
		if rel == "." {
			fi, serr = os.Lstat(dst)
		} else {
			fi, serr = root.Lstat(rel)
		}
		switch {
		case serr != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: cfix writes nothing through it", filepath.Join(dst, rel))
		case !fi.IsDir():
			return err
		}
		return nil
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if rel == "." && !d.IsDir() {
			return fmt.Errorf("%s is not a folder", src)
		}
		if d.IsDir() {
			if rel == "." {
				if err := os.Mkdir(dst, info.Mode().Perm()|0o700); err == nil {
					made("./")
				} else if err := realDir(rel, err); err != nil {
					return err
				}
				root, err = os.OpenRoot(dst)
				return err
			}
			err := root.Mkdir(rel, info.Mode().Perm()|0o700)
			if err == nil {
				made(name + "/")
				return nil
			}
			return realDir(rel, err)
		}
		if _, err := root.Lstat(rel); merge && err == nil {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := root.Symlink(l, rel); err != nil {
				return err
			}
			made(name)
			return nil
		}
		if link && os.Link(p, filepath.Join(dst, rel)) == nil {
			made(name)
			return nil
		}
		if err := copyInto(root, rel, p); err != nil {
			return err
		}
		made(name)
		return nil
	})
}

// copyInto copies the file src to rel in root (which must not exist),
// keeping mode and mtime.
func copyInto(root *os.Root, rel, src string) error {
	in, err := rfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return root.Chtimes(rel, time.Now(), fi.ModTime())
}

// missingIn lists what of the tree src is missing in dst, as paths relative
// to dst in slash form, parents before what they hold, a folder with a
// trailing slash ("./" for dst itself).
func missingIn(src, dst string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if _, err := os.Lstat(filepath.Join(dst, rel)); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	return out, err
}

// selfEdit reports whether an op rewrites a file from its own bytes with
// edits: then the write reads every byte of the old file, and checks its
// hash there instead of in a separate pass first.
func (op *Op) selfEdit() bool {
	return op.Action == Rewrite && !op.HasData && op.Data == nil && op.From == "" && op.Expect.SHA256 != "" && op.plainEdits()
}

// editedContent streams f, the open file at Path that was checked against
// the plan, with the edits applied; with hash, it hashes the old bytes as
// they are read.
func (op *Op) editedContent(f *os.File, hash bool) (io.ReadCloser, *HashWriter, error) {
	r := io.NewSectionReader(f, 0, 1<<62)
	if !hash {
		return editPipe(r, io.NopCloser(nil), op.Edits), nil, nil
	}
	hw := NewHashWriter()
	in := io.TeeReader(bufio.NewReaderSize(r, 256<<10), hw)
	return editPipe(in, io.NopCloser(nil), op.Edits), hw, nil
}
