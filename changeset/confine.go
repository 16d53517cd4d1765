package changeset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// Confinement: every path a change set names is checked before anything
// is written, whether the plan comes from a planner, a saved file (cfix
// apply) or a journal (undo). A path an op writes (Path, To) lies below
// the store's root, with two exceptions that planners make:
//
//   - the settings file beside a store named .claude ($HOME/.claude.json),
//     rewritten by move-project;
//   - a session archive (a file named *.tar.zst) outside the store,
//     created by archive and deleted by restore (and by their undo); a
//     plan loaded from a file never holds one (neither planner saves its
//     plan).
//
// A path an op reads (From) lies below the root too, or in a folder the
// change set owns (Own): the staging folder of an archive or restore, the
// journal folder of an undo. Ownership is not saved: a plan loaded from a
// file owns nothing.
//
// A change set of ScopeProjectSettings has no store: its root is the
// .claude folder of a project (Claude Code's own folder of that project's
// settings), a real folder (not a link), or one to make in a folder that
// exists; it writes <root>/settings.json and nothing else (and its undo
// removes the root again if the apply made it and it is left empty). A
// plan loaded from a file is never one. Every path is absolute and clean (no "..", no "."),
// so the check on the path's text is the check on where it leads; the
// links on the way are checked on disk (linkGuard), and the writes open
// no link (copyTree).

// ArchiveExt is how the name of a session archive ends (archive.Ext).
const ArchiveExt = ".tar.zst"

// ConfineError says which op of a plan or journal names a path where cfix
// may not write or read.
type ConfineError struct {
	Op     int // 1-based; 0: the plan as a whole (its root)
	Reason string
}

func (e *ConfineError) Error() string {
	if e.Op == 0 {
		return e.Reason
	}
	return fmt.Sprintf("op %d: %s", e.Op, e.Reason)
}

// Own lets the change set read (and adopt) files below dir, a folder
// outside the store that cfix made for this plan. It is not saved.
func (cs *ChangeSet) Own(dir string) {
	if dir != "" {
		cs.owned = append(cs.owned, filepath.Clean(dir))
	}
}

// source says where a change set comes from, for confine.
type source int

const (
	fromPlanner source = iota // made by a planner of this process
	fromFile                  // loaded from a file (cfix apply): no archive outside the store
	fromJournal               // a journal's plan.json: its From paths are never read again
)

// confine checks every path of cs (see above), and drops the executable
// bits from the mode of a transcript or of a file outside the store
// (Claude Code writes its transcripts 0600 or 0644; a store on a file
// system that shows every file as 0777 makes a clone carry 0777).
func (cs *ChangeSet) confine(src source) error {
	if !filepath.IsAbs(cs.Root) || filepath.Clean(cs.Root) != cs.Root {
		return &ConfineError{Reason: fmt.Sprintf("store root %q is not an absolute, clean path", cs.Root)}
	}
	switch cs.Scope {
	case "":
	case ScopeProjectSettings:
		return cs.confineProject(src)
	default:
		return &ConfineError{Reason: fmt.Sprintf("scope %q is not one cfix knows", cs.Scope)}
	}
	if fi, err := os.Stat(filepath.Join(cs.Root, "projects")); err != nil || !fi.IsDir() {
		return &ConfineError{Reason: fmt.Sprintf("store root %s is not a Claude Code store (it has no projects folder)", cs.Root)}
	}
	for i := range cs.Ops {
		if err := cs.confineOp(&cs.Ops[i], src); err != nil {
			return &ConfineError{Op: i + 1, Reason: err.Error()}
		}
	}
	return nil
}

// confineOp checks the paths and mode of one op.
func (cs *ChangeSet) confineOp(op *Op, src source) error {
	if err := op.check(); err != nil {
		return err
	}
	// Restore puts a journal's backup back by a hard link: only an undo
	// (whose journal it owns, or whose own journal replays it) may.
	if op.Restore && src != fromJournal && !cs.owns(op.From) {
		return fmt.Errorf("restore from %q: only an undo puts back a journal's backup", op.From)
	}
	outside := false
	for _, p := range []struct{ field, path string }{{"path", op.Path}, {"to", op.To}, {"from", op.From}} {
		if p.path == "" {
			if p.field == "path" {
				return fmt.Errorf("no path")
			}
			continue
		}
		if !filepath.IsAbs(p.path) || filepath.Clean(p.path) != p.path {
			return fmt.Errorf("%s %q is not an absolute, clean path (no . or .. components)", p.field, p.path)
		}
		if p.path == cs.Root {
			return fmt.Errorf("%s %s is the store itself", p.field, p.path)
		}
		in := below(cs.Root, p.path)
		switch p.field {
		case "from":
			if src == fromJournal {
				continue
			}
			if op.adopts() && !cs.owns(p.path) {
				// An adopted file is moved away from where it was.
				return fmt.Errorf("from %s is not a file cfix staged for this plan: it adopts none other", p.path)
			}
			if !in && !cs.owns(p.path) {
				return fmt.Errorf("from %s is outside the store %s", p.path, cs.Root)
			}
		case "to":
			if !in {
				return fmt.Errorf("to %s is outside the store %s", p.path, cs.Root)
			}
		default:
			if !in {
				if !cs.outsideAllowed(op, src) {
					return fmt.Errorf("path %s is outside the store %s", p.path, cs.Root)
				}
				outside = true
			}
		}
	}
	if (op.Action == DeleteEmptyDir || op.Action == RestoreDir) && !below(filepath.Join(cs.Root, "projects"), op.Path) {
		return fmt.Errorf("%s of %s: only a folder below %s is removed empty or made again", op.Action, op.Path, filepath.Join(cs.Root, "projects"))
	}
	if op.Mode&^fs.ModePerm != 0 {
		return fmt.Errorf("mode %#o of %s has bits beyond rwx (setuid, setgid, sticky or a file type): cfix writes none", uint32(op.Mode), op.Path)
	}
	if outside || strings.HasSuffix(op.Path, ".jsonl") {
		op.Mode &^= 0o111
	}
	return nil
}

// confineProject checks a change set of ScopeProjectSettings (see above).
func (cs *ChangeSet) confineProject(src source) error {
	if src == fromFile {
		return &ConfineError{Reason: "a plan of a project's settings is never saved: plan it again (cfix guard install --project)"}
	}
	if filepath.Base(cs.Root) != ".claude" {
		return &ConfineError{Reason: fmt.Sprintf("%s is not a project's .claude folder", cs.Root)}
	}
	if err := ProjectFolderOK(cs.Root); err != nil {
		return &ConfineError{Reason: err.Error()}
	}
	settings := filepath.Join(cs.Root, "settings.json")
	for i := range cs.Ops {
		op := &cs.Ops[i]
		if err := op.check(); err != nil {
			return &ConfineError{Op: i + 1, Reason: err.Error()}
		}
		var err error
		switch {
		case op.Action == RemoveEmptyDir && op.Path == cs.Root:
		case op.Action != Create && op.Action != Rewrite && op.Action != Delete:
			err = fmt.Errorf("%s of %s: a plan of a project's settings only writes its settings.json", op.Action, op.Path)
		case op.Path != settings:
			err = fmt.Errorf("path %s is not %s: a plan of a project's settings writes nothing else", op.Path, settings)
		case op.To != "" || op.Transform != nil || op.Adopt || op.Mode&^fs.ModePerm != 0:
			err = fmt.Errorf("%s: a plan of a project's settings only writes bytes into it", op.Path)
		case op.From != "" && !(op.Restore && (src == fromJournal || cs.owns(op.From))):
			err = fmt.Errorf("from %s: a plan of a project's settings reads no other file", op.From)
		}
		if err != nil {
			return &ConfineError{Op: i + 1, Reason: err.Error()}
		}
		op.Mode &^= 0o111
	}
	return nil
}

// ProjectFolderOK says why the .claude folder of a project at dir is no
// place to write a settings.json into: it is a symbolic link (which could
// lead anywhere) or no folder, or it is missing and so is the project.
func ProjectFolderOK(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pfi, perr := os.Stat(filepath.Dir(dir))
		if perr != nil || !pfi.IsDir() {
			return fmt.Errorf("%s: the project folder %s does not exist", dir, filepath.Dir(dir))
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s: %v", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		dest, _ := os.Readlink(dir)
		return fmt.Errorf("%s is a symbolic link to %s: cfix writes nothing through it", dir, dest)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// outsideAllowed reports whether op may write its Path outside the store
// (see above).
func (cs *ChangeSet) outsideAllowed(op *Op, src source) bool {
	if op.Action == Rewrite && filepath.Base(cs.Root) == ".claude" && op.Path == filepath.Join(filepath.Dir(cs.Root), ".claude.json") {
		return true
	}
	name := filepath.Base(op.Path)
	return src != fromFile && (op.Action == Create || op.Action == Delete) && strings.HasSuffix(name, ArchiveExt) && name != ArchiveExt
}

// owns reports whether p is or lies in a folder the change set owns.
func (cs *ChangeSet) owns(p string) bool {
	for _, d := range cs.owned {
		if p == d || below(d, p) {
			return true
		}
	}
	return false
}

// below reports whether the clean path p lies below the clean folder dir.
func below(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && local(rel)
}

// confineJournal checks a journal before undo reads or writes anything it
// names: its plan as confine does; each backup the log names is
// backup/<op> in the journal folder; each folder it says the apply made
// lies in the store (or on the way to an archive its op wrote outside
// it); each path a CreateDir made lies below the op's folder.
func confineJournal(dir string, cs *ChangeSet, events []event) error {
	if err := cs.confine(fromJournal); err != nil {
		return fmt.Errorf("journal %s: plan.json: %w", dir, err)
	}
	for n, e := range events {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("journal %s: log.jsonl: event %d (%s): %s", dir, n+1, e.Event, fmt.Sprintf(format, a...))
		}
		switch e.Event {
		case "backup", "mkdir", "creating", "made", "renaming", "written", "renamed", "done", "cut", "rmdir":
		default:
			continue // of the apply as a whole (applied, rolled-back, undone)
		}
		if e.Op < 0 || e.Op >= len(cs.Ops) {
			return bad("op %d: the plan has %d ops", e.Op+1, len(cs.Ops))
		}
		op := &cs.Ops[e.Op]
		switch e.Event {
		case "backup":
			if want := filepath.Join("backup", strconv.Itoa(e.Op)); e.Backup != want {
				return bad("backup %q is not %s, in the journal folder", e.Backup, want)
			}
		case "mkdir":
			p := e.Path
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				return bad("folder %q is not an absolute, clean path", p)
			}
			target := op.Path
			if op.Action == Rename {
				target = op.To
			}
			if p == cs.Root && cs.Scope == ScopeProjectSettings {
				continue // the project's .claude folder, made by the apply
			}
			if !below(cs.Root, p) && (below(cs.Root, target) || !below(p, target)) {
				return bad("folder %s is outside the store %s", p, cs.Root)
			}
		case "creating", "made":
			for _, rel := range e.Made {
				if r := strings.TrimSuffix(rel, "/"); rel != "./" && (path.Clean(r) != r || !filepath.IsLocal(filepath.FromSlash(r))) {
					return bad("%q is not a path below %s", rel, op.Path)
				}
			}
		}
	}
	return nil
}

// checkBackup compares the backup bk of op i, fingerprinted as bfp, with
// what the journal says was backed up (op.Expect), before undo restores a
// byte of it. carried tells that an append was carried over into the
// backup after it was made (it then begins with those bytes).
func checkBackup(dir string, i int, op *Op, bk string, bfp Fingerprint, carried bool) error {
	name := filepath.Join("backup", strconv.Itoa(i))
	if !bfp.Exists {
		return fmt.Errorf("journal %s: %s is missing: refusing to undo", dir, name)
	}
	got, want := bfp.SHA256, op.Expect.SHA256
	if fi, err := os.Lstat(bk); err == nil && fi.Mode()&fs.ModeSymlink != 0 && op.Expect.Link != "" {
		// A plan that fingerprinted the link itself (what it says):
		// bfp is the backup's, fingerprinted the same way (got).
	} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A link is fingerprinted through it, from where it was.
		got = ""
		if t, err := os.Readlink(bk); err == nil {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(op.Path), t)
			}
			got, _ = hashFile(t, -1)
		}
	} else if carried && !bfp.Dir && bfp.Size > op.Expect.Size {
		got, _ = hashFile(bk, op.Expect.Size)
	}
	switch {
	case bfp.Dir != op.Expect.Dir:
	case want == "":
		// A plan that kept no hash: the size is all there is to compare.
		if bfp.Dir || bfp.Size == op.Expect.Size || carried {
			return nil
		}
	case got == want:
		return nil
	}
	return fmt.Errorf("journal %s: %s does not hold what was backed up (sha256 %s, expected %s): refusing to undo", dir, name, orNone(got), orNone(want))
}

// hashFile returns the hex sha256 of the first n bytes of the file at p
// (all of them when n < 0).
func hashFile(p string, n int64) (string, error) {
	f, err := rfile.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// changedBelow reports whether an op of cs before op i changes a path
// below op i's folder: then the folder's fingerprint in the plan is not
// that of its backup (move-project moves the files out of a project
// folder, then removes what is left).
func changedBelow(cs *ChangeSet, i int) bool {
	dir := cs.Ops[i].Path
	for k := 0; k < i; k++ {
		if below(dir, cs.Ops[k].Path) || (cs.Ops[k].To != "" && below(dir, cs.Ops[k].To)) {
			return true
		}
	}
	return false
}

// A saved plan (cfix apply) or a journal (cfix undo JOURNAL) comes from
// outside: it applies only to the store the command was given (--root,
// $CLAUDE_CONFIG_DIR or ~/.claude), whatever root it names. Confinement
// keeps its paths below the root it names; CheckStore makes that root
// the store given. A plan or journal of a project's settings
// (ScopeProjectSettings) applies only to the .claude folder of the
// project the command runs in.

// SameStore reports whether a and b are one folder: each made absolute,
// its symbolic links resolved and cleaned, as the store's lock names it.
func SameStore(a, b string) bool { return storeKey(a) == storeKey(b) }

// StoreError refuses a saved plan or a journal whose root is not the
// store the command was given.
type StoreError struct {
	What    string // "plan FILE" or "journal DIR"
	Root    string // the root it names, resolved
	Given   string // the store (or project .claude folder) the command was given, resolved
	Project bool   // it is of a project's settings (ScopeProjectSettings)
}

func (e *StoreError) Error() string {
	if e.Project {
		return fmt.Sprintf("%s is of the settings of the project %s, not of %s: run the command in that project's folder, without --root; nothing was written",
			e.What, filepath.Dir(e.Root), e.Given)
	}
	return fmt.Sprintf("%s is of the store %s, not of %s, the store this command was given (--root, $CLAUDE_CONFIG_DIR or ~/.claude); nothing was written",
		e.What, e.Root, e.Given)
}

// CheckStore refuses cs, the plan of what ("plan FILE", "journal DIR"),
// with a *StoreError unless its root is given (SameStore): the store the
// command was given, or for a plan of ScopeProjectSettings the .claude
// folder of the project it runs in.
func (cs *ChangeSet) CheckStore(what, given string) error {
	return checkStore(what, cs.Root, cs.Scope, given)
}

// CheckStore refuses the journal as (*ChangeSet).CheckStore does its plan.
func (j JournalInfo) CheckStore(given string) error {
	return checkStore("journal "+j.Dir, j.Root, j.Scope, given)
}

func checkStore(what, root, scope, given string) error {
	if root != "" && SameStore(root, given) {
		return nil
	}
	return &StoreError{What: what, Root: storeKey(root), Given: storeKey(given), Project: scope == ScopeProjectSettings}
}
