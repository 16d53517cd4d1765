package changeset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// A rewrite that only removes the end of a file (a torn last line, the
// commonest repair after a kill) is applied in place: the bytes cut off go
// to the journal, then one ftruncate shortens the file. A truncate is as
// atomic as a rename (the file has its old or its new length, never
// something between, after a kill or a crash), it writes no copy of a
// file that may hold hundreds of megabytes, and the file keeps its inode
// and mode. Undo appends the cut bytes again, through a normal rewrite.

// cutAt reports whether op only removes the end of its file, and the
// length it keeps.
func (op *Op) cutAt() (int64, bool) {
	if !op.selfEdit() || len(op.Edits) == 0 || !op.Expect.Exists || (op.Mode != 0 && op.Mode != op.Expect.Mode) {
		return 0, false
	}
	end := op.Edits[0].Offset
	for _, e := range op.Edits {
		if len(e.New) > 0 || e.Offset != end {
			return 0, false
		}
		end += e.Length
	}
	if end != op.Expect.Size {
		return 0, false
	}
	return op.Edits[0].Offset, true
}

// errNoCut says a file cannot be cut in place; it is rewritten instead.
var errNoCut = errors.New("not cut in place")

// cutFile applies a rewrite that cutAt accepts. It returns errNoCut, having
// changed nothing, for a file it may not open for writing (a rename can
// still replace it) or one with other names (hard links), which a cut in
// place would shorten too.
func (j *journal) cutFile(i int, op *Op, keep int64, hook func(string, int)) error {
	f, err := rfile.OpenFile(op.Path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return errNoCut
		}
		return err
	}
	defer f.Close()
	old, err := f.Stat()
	if err != nil {
		return err
	}
	if n, ok := links(old); !ok || n != 1 {
		return errNoCut
	}
	if old.Size() != op.Expect.Size || !old.ModTime().Equal(op.Expect.ModTime) {
		return &RefusedError{Path: op.Path, Reason: "changed while applying (Claude Code appended to it?); plan again"}
	}
	if !sameFile(infoFingerprint(old, time.Now()), op.Expect) {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, old.Size())); err != nil {
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != op.Expect.SHA256 {
			return &RefusedError{Path: op.Path, Reason: "content changed since the plan was made; plan again"}
		}
	}
	if err := j.backupCut(i, f, keep, old.Size()); err != nil {
		return fmt.Errorf("backing up %s: %w", op.Path, err)
	}
	hook("backed-up", i)
	// Last look, right before the cut: an append since verify means the
	// plan is stale for this file. (An append landing in the microseconds
	// between the two would be cut too; the live-session checks keep
	// cfix away from files Claude Code writes to.)
	if cur, err := os.Stat(op.Path); err != nil || !os.SameFile(cur, old) {
		return &RefusedError{Path: op.Path, Reason: "replaced while applying; plan again"}
	}
	if cur, err := f.Stat(); err != nil || cur.Size() != old.Size() || !cur.ModTime().Equal(old.ModTime()) {
		return &RefusedError{Path: op.Path, Reason: "changed while applying (Claude Code appended to it?); plan again"}
	}
	hook("checked", i)
	if err := f.Truncate(keep); err != nil {
		return err
	}
	if err := j.logEvent(event{Op: i, Event: "cut"}); err != nil {
		return err
	}
	mtime := op.ModTime
	if mtime.IsZero() {
		mtime = old.ModTime()
	}
	if err := os.Chtimes(op.Path, time.Now(), mtime); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	hook("cut", i)
	return j.logEvent(event{Op: i, Event: "done"})
}

// backupCut copies the bytes of f from keep to size into the journal.
func (j *journal) backupCut(i int, f *os.File, keep, size int64) error {
	if j.log == nil {
		return nil
	}
	rel := filepath.Join("backup", strconv.Itoa(i))
	// Named before it is made, as every backup (see journal.backup).
	if err := j.logEvent(event{Op: i, Event: "backup", Backup: rel, Cut: true}); err != nil {
		return err
	}
	if err := copySync(filepath.Join(j.dir, rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, io.NewSectionReader(f, keep, size-keep)); err != nil {
		return err
	}
	return syncDir(filepath.Join(j.dir, "backup"))
}

// undoCut returns the op that puts the cut bytes (in the backup bk) back at
// the end of the file, or nil when there is nothing to put back: the file
// holds them still, or it was never cut (wasCut: the log says the ftruncate
// was made) and holds what someone else wrote. It refuses when the file was
// cut and changed since.
func undoCut(op *Op, keep int64, bk, reason string, wasCut bool) (*Op, error) {
	tail, err := rfile.ReadFile(bk)
	if n := int64(len(tail)); (err != nil || n != op.Expect.Size-keep) && !wasCut && intact(op) {
		// The backup is named before it is made: a kill before it was
		// whole leaves it so, beside the file never cut.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if n := int64(len(tail)); n != op.Expect.Size-keep {
		return nil, fmt.Errorf("journal %s: %s does not hold what was cut off (%d bytes, expected %d): refusing to undo",
			filepath.Dir(filepath.Dir(bk)), filepath.Join(filepath.Base(filepath.Dir(bk)), filepath.Base(bk)), n, op.Expect.Size-keep)
	}
	cur, err := Stat(op.Path)
	if err != nil {
		return nil, err
	}
	if !cur.Exists {
		if !wasCut {
			return nil, nil
		}
		return nil, &RefusedError{Path: op.Path, Reason: "removed since cfix cut it; the bytes cut off are in " + bk}
	}
	f, err := rfile.Open(op.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One read gives the hash of the file as it is, of its first
	// Expect.Size bytes, and of the file with the rest of the cut bytes
	// appended: all of them to the cut file, those missing to a file a
	// rollback killed half-way through putting them back (appendInPlace).
	rest := tail
	if cur.Size > keep && cur.Size < op.Expect.Size && cur.Size-keep <= int64(len(tail)) {
		rest = tail[cur.Size-keep:]
	}
	h, head, joined := sha256.New(), sha256.New(), sha256.New()
	if _, err := io.Copy(io.MultiWriter(h, joined, &prefixWriter{w: head, n: op.Expect.Size}), f); err != nil {
		return nil, err
	}
	cur.SHA256 = hex.EncodeToString(h.Sum(nil))
	joined.Write(rest)
	switch {
	case cur.Size >= op.Expect.Size && hex.EncodeToString(head.Sum(nil)) == op.Expect.SHA256:
		return nil, nil // never cut, or restored already (and maybe appended to since)
	case cur.Size+int64(len(rest)) == op.Expect.Size && hex.EncodeToString(joined.Sum(nil)) == op.Expect.SHA256:
		// The cut file, or one with part of the bytes back: put the rest back.
	case !wasCut:
		return nil, nil // never cut; changed by someone else
	default:
		return nil, &RefusedError{Path: op.Path, Reason: "changed since cfix wrote it; undo would lose those changes"}
	}
	return &Op{Action: Rewrite, Path: op.Path, Reason: reason, Expect: cur, Session: op.Session,
		Edits:   []Edit{{Line: op.Edits[0].Line, Offset: cur.Size, New: rest, Reason: "put back the bytes cut off"}},
		ModTime: op.Expect.ModTime, Mode: op.Expect.Mode}, nil
}

// appendAt reports whether op only appends to its file (the undo of a
// cut), and the offset it appends at.
func (op *Op) appendAt() (int64, bool) {
	if !op.selfEdit() || len(op.Edits) != 1 || !op.Expect.Exists || (op.Mode != 0 && op.Mode != op.Expect.Mode) {
		return 0, false
	}
	e := op.Edits[0]
	if e.Length != 0 || e.Offset != op.Expect.Size {
		return 0, false
	}
	return e.Offset, true
}

// appendInPlace applies a rewrite that appendAt accepts by writing at the
// end of the file, for a rollback: the bytes a cut removed go back into
// the room the cut freed, where a rewrite would need a copy of the whole
// file. A write that fails is cut off again.
func appendInPlace(op *Op, at int64) error {
	f, err := rfile.OpenFile(op.Path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != at || !fi.ModTime().Equal(op.Expect.ModTime) {
		return &RefusedError{Path: op.Path, Reason: "changed while applying (Claude Code appended to it?); plan again"}
	}
	if !sameFile(infoFingerprint(fi, time.Now()), op.Expect) {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, at)); err != nil {
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != op.Expect.SHA256 {
			return &RefusedError{Path: op.Path, Reason: "content changed since the plan was made; plan again"}
		}
	}
	if _, err := f.WriteAt(op.Edits[0].New, at); err != nil {
		f.Truncate(at)
		return fmt.Errorf("%s: putting back the bytes cut off: %w", op.Path, err)
	}
	if !op.ModTime.IsZero() {
		if err := os.Chtimes(op.Path, time.Now(), op.ModTime); err != nil {
			return err
		}
	}
	return f.Sync()
}

// prefixWriter passes the first n bytes written to w and drops the rest.
type prefixWriter struct {
	w io.Writer
	n int64
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if k := min(int64(len(b)), p.n); k > 0 {
		p.w.Write(b[:k])
		p.n -= k
	}
	return len(b), nil
}

// intact reports whether the file of op begins with the bytes the plan
// read (op.Expect): it was never cut, or its cut bytes are back.
func intact(op *Op) bool {
	f, err := os.Open(op.Path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < op.Expect.Size {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, op.Expect.Size)); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == op.Expect.SHA256
}
