package changeset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// A batch apply is for a change set of many operations on distinct paths
// (an archive of thousands of sessions: a new file and a few removals
// each). Applied one by one, each operation costs several fsyncs (the log,
// the backup folder, the new file, its folder). A batch apply makes the
// same writes in two phases with one barrier after each: first every new
// file and folder (Create, CreateDir), and the log's word of where the
// backup of every file or folder to remove goes; a barrier (the log
// fsynced, and each file system written synced whole, syncfs); then the
// removals, and the other operations in order (each of those as an
// ordinary apply makes it); a barrier again. A removal moves the file or
// folder into its backup by one rename, where the journal is on the same
// file system (else it is backed up, as a link or a copy, and removed):
// it is at its place or in the journal at every instant, and the log
// named the backup before. So the new files and the log are on disk
// before anything is removed, as in an ordinary apply. A crash in the
// first phase may leave new files the log does not name yet; the store
// itself is untouched until the first barrier.

// batchable reports whether cs may be applied in a batch: the planner
// asked for it, the platform can sync a file system, and no path is
// written by one op and read or written by another.
func batchable(cs *ChangeSet) bool {
	if !cs.Batch || !canSyncFS {
		return false
	}
	written := map[string]bool{}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Create, CreateDir, Delete, DeleteDir, Rewrite, DeleteEmptyDir:
		default:
			return false
		}
		if written[op.Path] {
			return false
		}
		written[op.Path] = true
	}
	for i := range cs.Ops {
		if from := cs.Ops[i].From; from != "" && written[from] {
			return false
		}
	}
	return true
}

// syncDir fsyncs a folder, or leaves it to the next barrier of a batch.
func (j *journal) syncDir(dir string) error {
	if j.lazy {
		return nil
	}
	return syncDir(dir)
}

// applyBatch applies cs in two phases (see above).
func (j *journal) applyBatch(cs *ChangeSet, res *Result, hook func(string, int)) (*Result, error) {
	j.lazy, j.backedUp = true, map[int]bool{}
	fail := func(err error) (*Result, error) {
		j.lazy = false
		j.log.Sync()
		if rbErr := j.rollback(len(cs.Ops) - 1); rbErr != nil {
			return res, fmt.Errorf("%v; rolling back failed too: %v (backups in %s)", err, rbErr, j.dir)
		}
		return res, fmt.Errorf("%v; everything applied was rolled back (journal %s)", err, j.dir)
	}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Create, CreateDir:
			hook("before", i)
			if _, err := j.applyOp(i, op, hook); err != nil {
				return fail(err)
			}
			res.Applied++
			hook("after", i)
		case Delete, DeleteDir:
			if op.Action == Delete {
				cur, err := os.Lstat(op.Path)
				if err != nil || (op.Expect.Exists && !op.Expect.Dir && (cur.Size() != op.Expect.Size || !cur.ModTime().Equal(op.Expect.ModTime))) {
					return fail(&RefusedError{Path: op.Path, Reason: "changed while applying; plan again"})
				}
			}
			// Where its backup goes; the rename comes after the barrier.
			if err := j.logEvent(event{Op: i, Event: "backup", Backup: filepath.Join("backup", strconv.Itoa(i))}); err != nil {
				return fail(err)
			}
			hook("backed-up", i)
		}
	}
	if err := j.barrier(cs); err != nil {
		return fail(err)
	}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Create, CreateDir:
			continue
		case Rewrite:
			j.lazy = false // its backup must be on disk before the rename
		}
		hook("before", i)
		if op.Action == Delete || op.Action == DeleteDir {
			moved, err := j.moveToBackup(i, op)
			if err != nil {
				return fail(err)
			}
			if moved {
				res.Applied++
				hook("after", i)
				continue
			}
		}
		appended, err := j.applyOp(i, op, hook)
		j.lazy = true
		if err != nil {
			return fail(err)
		}
		if appended {
			res.Appended = append(res.Appended, op.Path)
		}
		res.Applied++
		hook("after", i)
	}
	if err := j.barrier(cs); err != nil {
		return fail(err)
	}
	j.lazy = false
	if err := j.logEvent(event{Event: "applied"}); err != nil {
		return res, err
	}
	return res, nil
}

// barrier makes what the batch wrote durable: the log, and every file
// system holding the journal, the store or a path of the change set.
func (j *journal) barrier(cs *ChangeSet) error {
	if err := j.log.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.dir, err)
	}
	dirs := map[string]bool{j.dir: true}
	for i := range cs.Ops {
		dirs[filepath.Dir(cs.Ops[i].Path)] = true
	}
	synced := map[uint64]bool{}
	for d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			continue // a folder the batch removed
		}
		dev, _, _, ok := identity(fi)
		if ok && synced[dev] {
			continue
		}
		if err := syncFS(d); err != nil {
			return fmt.Errorf("syncing the file system of %s: %w", d, err)
		}
		synced[dev] = true
	}
	return nil
}

// moveToBackup removes the file or folder of a Delete or DeleteDir by a
// rename into its backup (which the log names already). It reports false,
// having moved nothing, where the rename cannot be made (the journal on
// another file system): applyOp then backs it up and removes it.
func (j *journal) moveToBackup(i int, op *Op) (bool, error) {
	cur, err := os.Lstat(op.Path)
	if err != nil || cur.IsDir() != (op.Action == DeleteDir) ||
		(op.Action == Delete && op.Expect.Exists && !op.Expect.Dir && (cur.Size() != op.Expect.Size || !cur.ModTime().Equal(op.Expect.ModTime))) {
		return false, &RefusedError{Path: op.Path, Reason: "changed while applying; plan again"}
	}
	if err := os.Rename(op.Path, filepath.Join(j.dir, "backup", strconv.Itoa(i))); err != nil {
		if errors.Is(err, syscall.EXDEV) {
			return false, nil
		}
		return false, fmt.Errorf("backing up %s: %w", op.Path, err)
	}
	return true, nil
}
