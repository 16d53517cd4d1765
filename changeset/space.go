package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cfix-dev/cfix/internal/plural"
)

// Before an apply writes anything, checkSpace compares what the plan
// writes on each file system (new files, copies, backups that cannot be
// links, the journal) with the room there, and the open files the apply
// needs with the limit. Running out half-way is still safe (the rollback
// puts backups back by renames and links, which take no room), but a
// plan refused up front leaves the store untouched and says why.

// spaceMargin is the room kept free on each file system beyond what a
// plan writes: the folders and log events the estimate leaves out.
const spaceMargin = 64 << 10

// handlesNeeded is how many files an apply holds open at once beyond
// those open when it starts: the journal's log, those kept for a rollback
// (rollbackHandles), the file replaced, the new file, its source, a folder
// being synced or walked (a few levels).
const handlesNeeded = 12 + rollbackHandles

// fsRoom is what the platform says of a file system (see statRoom).
type fsRoom struct {
	dev   uint64
	free  int64 // bytes an unprivileged writer may still use
	files int64 // inodes free; -1 when the file system does not say
	name  string
}

// spaceNeed is what a plan writes on one file system.
type spaceNeed struct {
	room  fsRoom
	bytes int64
	files int64
	where string // a path of the plan on it, for the message
}

// checkSpace refuses cs (with nothing changed) when a file system it
// writes lacks room for it, or the limit of open files is too low to
// apply it. The room its undo needs (keep bytes, kept in the journal) is
// counted in; the room kept for an undo (cs.undoRoom) is counted as free,
// and stands for the margin there.
func checkSpace(cs *ChangeSet, journalDir string, noCut bool, keep int64) error {
	if err := checkHandles(cs.Root); err != nil {
		return err
	}
	needs := map[uint64]*spaceNeed{}
	rooms := map[string]fsRoom{} // by folder
	roomOf := func(path string) (fsRoom, bool) {
		dir := filepath.Dir(path)
		if r, ok := rooms[dir]; ok {
			return r, true
		}
		// The nearest folder that exists: a plan makes folders too.
		for d := dir; ; d = filepath.Dir(d) {
			r, err := statRoom(d)
			if err == nil {
				rooms[dir] = r
				return r, true
			}
			if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
				return fsRoom{}, false
			}
		}
	}
	add := func(path string, bytes, files int64) {
		r, ok := roomOf(path)
		if !ok {
			return
		}
		n := needs[r.dev]
		if n == nil {
			n = &spaceNeed{room: r, where: path}
			needs[r.dev] = n
		}
		n.bytes += bytes
		n.files += files
	}
	same := func(a, b string) bool {
		ra, oka := roomOf(a)
		rb, okb := roomOf(b)
		return oka && okb && ra.dev == rb.dev
	}
	if journalDir == "" {
		journalDir, _ = DefaultJournalDir()
	}
	journal := filepath.Join(journalDir, "log.jsonl") // a file in the journal folder
	// The journal: plan.json holds every op and its new bytes (base64),
	// the log a few events per op.
	var planBytes int64 = 4 << 10
	for i := range cs.Ops {
		op := &cs.Ops[i]
		planBytes += 1<<10 + int64(len(op.Data))*4/3
		for _, e := range op.Edits {
			planBytes += 256 + int64(len(e.New))*4/3
		}
	}
	add(journal, planBytes, 3)
	if cs.undoRoom == "" {
		add(journal, keep, 1)
	}
	var rollback int64 // the largest copy a rollback makes
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Create, Rewrite:
			if op.Action == Rewrite {
				if keep, ok := op.cutAt(); ok && !noCut {
					// Cut in place: the bytes cut off go to the journal.
					add(journal, op.Expect.Size-keep, 1)
					continue
				}
				if !same(op.Path, journal) {
					add(journal, op.Expect.Size, 1)
					rollback = max(rollback, op.Expect.Size)
				}
			}
			if (op.adopts() || op.restores()) && same(op.From, op.Path) {
				continue // linked or renamed into place
			}
			add(op.Path, newSize(op), 1)
		case Delete:
			if !same(op.Path, journal) {
				add(journal, op.Expect.Size, 1)
				rollback = max(rollback, op.Expect.Size)
			}
		case DeleteDir:
			if !same(op.Path, journal) {
				n := TreeSize(op.Path)
				add(journal, n, 1)
				rollback = max(rollback, n)
			}
		case CreateDir:
			if !op.Restore || !same(op.From, op.Path) {
				add(op.Path, TreeSize(op.From), 1)
			}
		case Rename:
			if !same(op.Path, op.To) {
				add(op.To, op.Expect.Size, 1)
			}
		}
	}
	add(cs.Root, rollback, 0)
	var given fsRoom // where the room kept for this undo lies
	if n := kept(cs.undoRoom); n > 0 {
		if r, ok := roomOf(cs.undoRoom); ok {
			given = r
			given.free = n
		}
	}
	for _, n := range needs {
		want, free := n.bytes+spaceMargin+n.bytes/32, n.room.free
		if given.free > 0 && n.room.dev == given.dev {
			// The room kept for this undo stands for the margin.
			free += given.free
			want = n.bytes + n.bytes/32
		}
		if free < want {
			have := Size(n.room.free) + " free there"
			if free != n.room.free {
				have += " and " + Size(given.free) + " kept for this undo in its journal"
			}
			return &RefusedError{Path: cs.Root, Untouched: true, Reason: fmt.Sprintf("the plan writes %s on %s (%s with a margin), %s",
				Size(n.bytes), n.room.name, Size(want), have)}
		}
		if n.room.files >= 0 && n.room.files < n.files+16 {
			return &RefusedError{Path: cs.Root, Untouched: true, Reason: fmt.Sprintf("the plan makes %s on %s, %s free there",
				plural.Count(n.files, "file"), n.room.name, plural.Count(n.room.files, "inode"))}
		}
	}
	return nil
}

// newSize estimates the size of the file a Create or Rewrite writes.
func newSize(op *Op) int64 {
	if op.HasData || op.Data != nil {
		return int64(len(op.Data))
	}
	var base int64
	switch {
	case op.From != "" && op.FromExpect != nil:
		base = op.FromExpect.Size
	case op.From != "":
		if fi, err := os.Stat(op.From); err == nil {
			base = fi.Size()
		}
	default:
		base = op.Expect.Size
	}
	if op.Transform != nil {
		// A transform rewrites paths on nearly every line: room to grow.
		return base + base/4
	}
	for _, e := range op.Edits {
		base += int64(len(e.New)) - e.Length
	}
	return max(base, 0)
}
