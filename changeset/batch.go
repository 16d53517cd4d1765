package changeset

import (
	"fmt"
	"os"
	"path/filepath"
)

// A batch apply is for a change set of many operations on distinct paths
// (an archive of thousands of sessions: a new file and a few removals
// each). Applied one by one, each operation costs several fsyncs (the log,
// the backup folder, the new file, its folder). A batch apply makes the
// same writes in two phases with one barrier after each: first every new
// file and folder (Create, CreateDir) and the backup of every file or
// folder to remove; a barrier (the log fsynced, and each file system
// written synced whole, syncfs); then the removals, and the other
// operations in order (each of those as an ordinary apply makes it); a
// barrier again. So nothing is removed before its backup, the new files
// and the log that says so are on disk, as in an ordinary apply. A crash
// in the first phase may leave new files the log does not name yet; the
// store itself is untouched until the first barrier.

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
		case Create, CreateDir, Delete, DeleteDir, Rewrite:
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
			if err := j.backup(i, op.Path); err != nil {
				return fail(err)
			}
			j.backedUp[i] = true
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
