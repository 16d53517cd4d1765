package changeset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// An undo puts files back by links and renames, which take no room; what
// it writes is its own journal (its plan and log) and, on most file
// systems, a block for each folder it makes again. So that it runs on a
// full disk, every apply keeps that room for it in its journal: a file,
// undo-room, allocated when the journal is made (its size is counted in
// the apply's space check). Undo removes it just before it writes its own
// journal, which then takes the blocks it gave back; the space check of
// an undo counts them as free. An undo that writes more than that room
// (a copy: the undo of a cut, a backup on another file system) needs free
// space for it, and its space check says so before it starts.

// undoRoomName is the file of a journal that keeps room for its undo.
const undoRoomName = "undo-room"

// roomBlock is the block a file system gives a new folder, counted for
// each folder an undo makes.
const roomBlock = 4 << 10

// undoRoomFor estimates the room the undo of cs writes beyond links and
// renames: its journal (plan.json and log, at most 2 KB an op, the paths
// a folder's restore lists), its folders (a block each) and a slack of
// 16 KB for the directory blocks a name may need.
func undoRoomFor(cs *ChangeSet) int64 {
	ops := int64(len(cs.Ops))
	var listed, folders int64 = 0, 2 // the journal's folder and its backup folder
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case DeleteDir:
			// Made again: a block a folder, and its log lists each path.
			filepath.WalkDir(op.Path, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				listed += int64(len(p)-len(op.Path)) + 8
				if d.IsDir() {
					folders++
				}
				return nil
			})
		case DeleteEmptyDir:
			folders++ // made again
		case CreateDir:
			// Each file the copy makes is removed by an op of its own.
			filepath.WalkDir(op.From, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					ops++
				}
				return nil
			})
		}
	}
	room := 4<<10 + ops*(2<<10) + listed + folders*roomBlock + 16<<10
	return (room + roomBlock - 1) / roomBlock * roomBlock
}

// keepRoom makes the file undo-room of n bytes in the journal folder dir,
// allocated (not a sparse file). It does nothing where that fails: the
// undo then needs free space, which its space check asks for.
func keepRoom(dir string, n int64) {
	p := filepath.Join(dir, undoRoomName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	err = allocate(f, n)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
	}
}

// kept is the room the undo-room file at p holds (0 when there is none).
func kept(p string) int64 {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return allocated(fi)
}

// giveRoom removes the undo-room file at p, giving its blocks back.
func giveRoom(p string) error {
	if p == "" {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeZeros writes n zero bytes to f.
func writeZeros(f *os.File, n int64) error {
	buf := make([]byte, 64<<10)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
