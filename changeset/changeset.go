// Package changeset holds what planners return: a list of file operations,
// each with the fingerprint of what it expects on disk. A change set is
// shown (a summary and a unified diff), saved, or applied atomically with a
// backup journal that undo restores. Nothing else in cfix writes to a store.
package changeset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// Action is what an operation does.
type Action string

const (
	// Create makes a new file; Path must not exist.
	Create Action = "create"
	// Rewrite replaces the bytes of the file at Path.
	Rewrite Action = "rewrite"
	// Delete removes the file at Path.
	Delete Action = "delete"
	// Rename moves the file at Path to To; To must not exist.
	Rename Action = "rename"
	// DeleteDir removes the folder at Path and all it holds.
	DeleteDir Action = "delete-dir"
	// CreateDir makes the folder Path (and its parents) from the tree at From.
	CreateDir Action = "create-dir"
	// RemoveEmptyDir removes the folder Path if it is empty, and does
	// nothing otherwise (undo removes the folders an apply made this way).
	RemoveEmptyDir Action = "remove-empty-dir"
	// DeleteEmptyDir removes the folder Path (a project folder, below
	// projects/) once the ops before it have emptied it; a folder that is
	// not empty then (something was written into it since the plan) stays
	// as it is. Undo makes it again with the mode and mtime of Expect
	// (RestoreDir), after the files that go back into it.
	DeleteEmptyDir Action = "delete-empty-dir"
	// RestoreDir makes the folder Path if it is missing and gives it Mode
	// and ModTime: the undo of a DeleteEmptyDir.
	RestoreDir Action = "restore-dir"
)

// Fingerprint is what a planner read: enough to tell that a file changed.
type Fingerprint struct {
	Exists  bool        `json:"exists"`
	Dir     bool        `json:"dir,omitempty"`
	Size    int64       `json:"size,omitempty"`
	ModTime time.Time   `json:"mtime,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	SHA256  string      `json:"sha256,omitempty"` // of the bytes, or of a folder's listing, or of a link's target
	// Link is what a symbolic link says (its target) when the path is
	// one: the fingerprint is then of the link itself, never of what it
	// leads to (Size and Mode are the link's, SHA256 that of Link).
	Link string `json:"link,omitempty"`
	// Dev, Ino and Ctime identify a file whose change time had settled
	// when it was looked at (see Settled); they are zero otherwise. A
	// file's change time moves on every write, truncate, chmod or utimes
	// and no program can set it back, so a file with the same device,
	// inode, size, mtime and change time still holds the bytes SHA256 was
	// taken of: apply then trusts the hash without reading the file again.
	Dev   uint64    `json:"dev,omitempty"`
	Ino   uint64    `json:"ino,omitempty"`
	Ctime time.Time `json:"ctime,omitzero"`
}

// Settled is how long ago a file's change time must lie for its identity
// to be kept in a fingerprint. File systems stamp change times from a clock
// that ticks in steps of a few milliseconds at most; a change made within
// the same step as the one before could keep the change time, and a
// settled change time rules that out (as git's "racily clean" check does).
const Settled = time.Second

// settle is Settled; tests shorten it.
var settle = Settled

// sameFile reports whether got, stat'ed now, is the very file want
// fingerprinted, unchanged since (see Fingerprint.Ctime).
func sameFile(got, want Fingerprint) bool {
	return !want.Ctime.IsZero() && got.Exists && !got.Dir && got.Dev == want.Dev && got.Ino == want.Ino &&
		got.Ctime.Equal(want.Ctime) && got.Size == want.Size && got.ModTime.Equal(want.ModTime)
}

// Edit replaces Count whole lines, starting at byte Offset (line Line), by
// New. Count 0 inserts New before that line; Offset at the end of the file
// appends. Length is the number of bytes replaced, line terminators
// included.
type Edit struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Count  int    `json:"count"`
	New    []byte `json:"new,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Op is one operation of a change set.
type Op struct {
	Action Action      `json:"action"`
	Path   string      `json:"path"`
	To     string      `json:"to,omitempty"`
	Reason string      `json:"reason"`
	Expect Fingerprint `json:"expect"`
	// The new content of a Create or Rewrite: Data when set; else the bytes
	// of From (Path when From is empty, for a Rewrite) with Edits applied.
	From       string       `json:"from,omitempty"`
	FromExpect *Fingerprint `json:"from_expect,omitempty"`
	Edits      []Edit       `json:"edits,omitempty"`
	Data       []byte       `json:"data,omitempty"`
	HasData    bool         `json:"has_data,omitempty"`
	// Transform, when set, is a streamed line-by-line rewrite of From (or
	// Path) used instead of Edits (see transform.go): clone and move
	// rewrite nearly every line, so edits would hold the whole file.
	Transform *Transform `json:"transform,omitempty"`
	// Mode and ModTime of the result. Zero keeps those of the file replaced
	// (Rewrite) or uses 0600 and now (Create). A CreateDir's ModTime, when
	// set, is given to every file the copy makes (else each keeps its
	// source's).
	Mode    fs.FileMode `json:"mode,omitempty"`
	ModTime time.Time   `json:"mtime,omitempty"`
	// Merge makes a CreateDir fill in the files missing from a folder that
	// exists, keeping those it has.
	Merge bool `json:"merge,omitempty"`
	// Adopt makes a Create put the file From itself into place, by a
	// rename or a hard link (From may be gone afterwards), instead of a
	// copy of its bytes: From is a file the planner wrote for this op
	// alone, in a folder of its own on the file system of Path, with
	// FromExpect its size, mtime and sha256 (taken as the new file's,
	// unread). Where neither can be made, it is copied.
	Adopt bool `json:"adopt,omitempty"`
	// Restore makes a Create, Rewrite or CreateDir of undo put a journal's
	// backup From back by hard links where the file system allows (the
	// backup is kept): it writes no byte, so it needs no free space.
	// Elsewhere From is copied.
	Restore bool `json:"restore,omitempty"`
	// Session is the id of the session the file belongs to, if any: apply
	// refuses files of live sessions.
	Session string `json:"session,omitempty"`
	// AsWritten marks an undo's removal of a file that holds, byte for
	// byte, what the apply it undoes wrote (a copy's transcript, made with
	// the time of the copy): no Claude Code has written it since, and its
	// recent mtime is cfix's, so the live window does not hold (a running
	// Claude Code that names the session still does). Set by Undo only,
	// never read from a saved plan.
	AsWritten bool `json:"-"`
	// Counts for the summary.
	EntriesRemoved int `json:"entries_removed,omitempty"`
	EntriesAdded   int `json:"entries_added,omitempty"`
}

// ChangeSet is a plan: operations in the order they are applied.
type ChangeSet struct {
	Version int       `json:"version"`
	Root    string    `json:"root"`
	Command string    `json:"command"`
	Created time.Time `json:"created"`
	Ops     []Op      `json:"ops"`
	// Notes are findings a planner could not fix safely, for the summary.
	Notes []string `json:"notes,omitempty"`
	// Batch lets apply make the writes in two phases with one sync each
	// (see batch.go), when no path is written twice.
	Batch bool `json:"batch,omitempty"`
	// Scope, when ScopeProjectSettings, makes Root a project's .claude
	// folder, not a store: the plan writes its settings.json and nothing
	// else (see confine.go).
	Scope string `json:"scope,omitempty"`
	// Masked says the lines the plan changes hold secrets (cfix redact):
	// its diff, and that of its undo, shows where lines change and why,
	// never what they hold.
	Masked bool `json:"masked,omitempty"`
	// owned are the folders outside the store the plan reads from (see
	// Own); never saved.
	owned []string
	// undoRoom, in the change set of an undo, is the undo-room file of
	// the journal it undoes (see undoroom.go); never saved.
	undoRoom string
}

// FormatVersion is the version of saved change sets this cfix reads.
const FormatVersion = 1

// New returns an empty change set for the store at root.
func New(root, command string) *ChangeSet {
	return &ChangeSet{Version: FormatVersion, Root: root, Command: command, Created: time.Now().UTC()}
}

// ScopeProjectSettings is the Scope of a change set of a project's
// .claude/settings.json (cfix guard install --project).
const ScopeProjectSettings = "project-settings"

// NewProjectSettings returns an empty change set of the settings.json in
// the .claude folder of the project at dir (see ScopeProjectSettings).
func NewProjectSettings(dir, command string) *ChangeSet {
	cs := New(filepath.Join(dir, ".claude"), command)
	cs.Scope = ScopeProjectSettings
	return cs
}

// Add appends an operation.
func (cs *ChangeSet) Add(op Op) { cs.Ops = append(cs.Ops, op) }

// Empty reports whether the change set changes nothing.
func (cs *ChangeSet) Empty() bool { return len(cs.Ops) == 0 }

// Save writes the change set as JSON to path.
func (cs *ChangeSet) Save(path string) error {
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// Load reads a change set saved by Save.
func Load(path string) (*ChangeSet, error) {
	b, err := rfile.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once
		}
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	var cs ChangeSet
	if err := json.Unmarshal(b, &cs); err != nil || cs.Version == 0 {
		return nil, fmt.Errorf("%s is not a plan saved by cfix --plan-out (cfix repair --plan-out plan.json makes one)", path)
	}
	if cs.Version != FormatVersion {
		return nil, fmt.Errorf("plan %s: format version %d, this cfix reads %d", path, cs.Version, FormatVersion)
	}
	// Every path is confined to the store before anything is shown or
	// written; a plan from a file owns no folder outside it.
	if err := cs.confine(fromFile); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return &cs, nil
}

// check validates the shape of an op.
func (op *Op) check() error {
	if !filepath.IsAbs(op.Path) {
		return fmt.Errorf("path %q is not absolute", op.Path)
	}
	switch op.Action {
	case Create, Rewrite:
		if op.From != "" && !filepath.IsAbs(op.From) {
			return fmt.Errorf("from %q is not absolute", op.From)
		}
		last := int64(-1)
		for _, e := range op.Edits {
			if e.Offset < last || e.Length < 0 {
				return fmt.Errorf("edits of %s overlap or are out of order", op.Path)
			}
			last = e.Offset + e.Length
		}
	case Rename:
		if !filepath.IsAbs(op.To) {
			return fmt.Errorf("rename target %q is not absolute", op.To)
		}
	case Delete, DeleteDir, RemoveEmptyDir, DeleteEmptyDir, RestoreDir:
	case CreateDir:
		if !filepath.IsAbs(op.From) {
			return fmt.Errorf("from %q is not absolute", op.From)
		}
	default:
		return fmt.Errorf("unknown action %q", op.Action)
	}
	return nil
}

// Stat fingerprints path without reading it (no hash). Planners that hash
// a file stat it first, so a change during their read moves its change
// time past the one they keep.
func Stat(path string) (Fingerprint, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Fingerprint{}, nil
	}
	if err != nil {
		return Fingerprint{}, err
	}
	fp := infoFingerprint(fi, time.Now())
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fp.Link, err = os.Readlink(path); err != nil {
			return Fingerprint{}, err
		}
	}
	return fp, nil
}

// statThrough is Stat of the file path leads to, through any symbolic
// link; a link that leads nowhere is a file that does not exist.
func statThrough(path string) (Fingerprint, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Fingerprint{}, nil
	}
	if err != nil {
		return Fingerprint{}, err
	}
	return infoFingerprint(fi, time.Now()), nil
}

// StatFile fingerprints the open file f without reading it (no hash): the
// file a path leads to, through any symbolic link, as a planner that copies
// its bytes reads it. It refuses what is not a regular file.
func StatFile(f *os.File) (Fingerprint, error) {
	fi, err := f.Stat()
	if err != nil {
		return Fingerprint{}, err
	}
	if !fi.Mode().IsRegular() {
		return Fingerprint{}, fmt.Errorf("%s is not a regular file", f.Name())
	}
	return infoFingerprint(fi, time.Now()), nil
}

// FingerprintThrough fingerprints the file path leads to, through any
// symbolic link, hashing its bytes: what an op that reads path (its From)
// reads. It refuses what is not a regular file.
func FingerprintThrough(path string) (Fingerprint, error) {
	f, err := rfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Fingerprint{}, nil
	}
	if err != nil {
		return Fingerprint{}, err
	}
	defer f.Close()
	fp, err := StatFile(f)
	if err != nil {
		return fp, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fp, err
	}
	fp.SHA256 = hex.EncodeToString(h.Sum(nil))
	return fp, nil
}

// infoFingerprint is the fingerprint (no hash) of a file stat'ed at now.
func infoFingerprint(fi fs.FileInfo, now time.Time) Fingerprint {
	fp := Fingerprint{Exists: true, Dir: fi.IsDir(), Size: fi.Size(), ModTime: fi.ModTime().UTC(), Mode: fi.Mode().Perm()}
	if dev, ino, ctime, ok := identity(fi); ok && fi.Mode().IsRegular() && ctime.Before(now.Add(-settle)) {
		fp.Dev, fp.Ino, fp.Ctime = dev, ino, ctime
	}
	return fp
}

// FingerprintOf fingerprints path, hashing its bytes (or a folder's
// listing, or a symbolic link's target: a link is fingerprinted as itself).
func FingerprintOf(path string) (Fingerprint, error) {
	fp, err := Stat(path)
	if err != nil || !fp.Exists {
		return fp, err
	}
	if fp.Link != "" {
		sum := sha256.Sum256([]byte(fp.Link))
		fp.SHA256 = hex.EncodeToString(sum[:])
		return fp, nil
	}
	if fp.Dir {
		fp.Size = 0
		fp.ModTime = time.Time{}
		fp.SHA256, err = hashTree(path)
		return fp, err
	}
	f, err := rfile.Open(path)
	if err != nil {
		return fp, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fp, err
	}
	fp.SHA256 = hex.EncodeToString(h.Sum(nil))
	return fp, nil
}

// HashWriter wraps a hash of the bytes a planner reads while it streams a
// file, so fingerprinting costs no second read.
type HashWriter struct{ h hashState }

type hashState interface {
	io.Writer
	Sum([]byte) []byte
}

// NewHashWriter returns a writer that hashes what is written to it.
func NewHashWriter() *HashWriter { return &HashWriter{h: sha256.New()} }

func (w *HashWriter) Write(p []byte) (int, error) { return w.h.Write(p) }

// Sum returns the hex hash of the bytes written so far.
func (w *HashWriter) Sum() string { return hex.EncodeToString(w.h.Sum(nil)) }

// hashTree hashes the names, kinds, sizes and contents of a folder's tree.
func hashTree(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, d.Type())
		if d.Type().IsRegular() {
			f, err := rfile.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t, _ := os.Readlink(p)
			fmt.Fprintf(h, "%s\x00", t)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// Content opens the content a Create or Rewrite op will write, as a
// stream, so a planner can read a file as it will be after the op.
func (op *Op) Content() (io.ReadCloser, error) { return op.content() }

// content opens the new content of a Create or Rewrite op as a stream.
func (op *Op) content() (io.ReadCloser, error) {
	if op.HasData || op.Data != nil {
		return io.NopCloser(bytes.NewReader(op.Data)), nil
	}
	// A Transform streams its source line by line (transform.go).
	if op.Transform != nil {
		return op.transformed()
	}
	base := op.From
	if base == "" {
		base = op.Path
	}
	f, err := rfile.Open(base)
	if err != nil {
		return nil, err
	}
	if len(op.Edits) == 0 {
		return f, nil
	}
	return editPipe(f, f, op.Edits), nil
}

// editPipe streams r with the edits applied, closing c when done.
func editPipe(r io.Reader, c io.Closer, edits []Edit) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := applyEdits(bw, r, edits)
		if err == nil {
			err = bw.Flush()
		}
		c.Close()
		pw.CloseWithError(err)
	}()
	return pr
}

// applyEdits copies r to w with the edits applied.
func applyEdits(w io.Writer, r io.Reader, edits []Edit) error {
	var pos int64
	for _, e := range edits {
		if e.Offset < pos {
			return fmt.Errorf("edits overlap at offset %d", e.Offset)
		}
		if n, err := io.CopyN(w, r, e.Offset-pos); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("edit at offset %d is past the end of the file (%d bytes)", e.Offset, pos+n)
			}
			return err
		}
		if _, err := w.Write(e.New); err != nil {
			return err
		}
		if n, err := io.CopyN(io.Discard, r, e.Length); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("edit at offset %d replaces %d bytes past the end of the file", e.Offset, e.Length-n)
			}
			return err
		}
		pos = e.Offset + e.Length
	}
	_, err := io.Copy(w, r)
	return err
}

// plainEdits reports whether the op's new content is its base with Edits
// applied and nothing else (no other content source).
func (op *Op) plainEdits() bool { return op.Transform == nil }

// SortEdits orders edits by offset; inserts before replacements at the
// same offset.
func SortEdits(edits []Edit) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].Offset != edits[j].Offset {
			return edits[i].Offset < edits[j].Offset
		}
		return edits[i].Length < edits[j].Length
	})
}

// TreeSize is the number of bytes of the regular files under dir, for the
// size a DeleteDir shows; what cannot be read counts as nothing.
func TreeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
