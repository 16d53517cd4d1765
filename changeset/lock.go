package changeset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockWait is how long LockStore waits for another cfix to let a store go
// before it refuses.
var LockWait = 3 * time.Second

// A Lock is the exclusive lock of one store: every command that writes
// into the store holds it from before it reads the journals until it is
// done, so no two cfix processes change one store at once. It is a
// flock(2) on a file in the journal folder: the kernel lets it go when
// the process ends, however it ends.
type Lock struct {
	f    *os.File
	root string // the store's real path
	path string
}

// BusyError is returned by LockStore when another cfix holds the store.
type BusyError struct {
	Root   string
	Holder string // "pid N: command line", as the holder wrote it
}

func (e *BusyError) Error() string {
	who := "another cfix"
	if e.Holder != "" {
		who += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("store %s is being changed by %s; try again when it ends", e.Root, who)
}

// storeKey is the real path of a store, cleaned: the name of its lock.
func storeKey(root string) string {
	p, err := filepath.Abs(root)
	if err != nil {
		p = root
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// LockPath returns the lock file of the store at root in the journal
// folder base: one per store, named by a hash of its real path.
func LockPath(base, root string) string {
	sum := sha256.Sum256([]byte(storeKey(root)))
	return filepath.Join(base, "store-"+hex.EncodeToString(sum[:8])+".lock")
}

// LockStore takes the lock of the store at root, in the journal folder
// base (DefaultJournalDir when ""). When another cfix holds it, it waits
// up to LockWait, then returns a *BusyError naming the holder. Once it
// has the lock, it writes its own pid and command line into the lock
// file, for the message of the next one.
func LockStore(base, root string) (*Lock, error) {
	if base == "" {
		var err error
		if base, err = DefaultJournalDir(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", base, err)
	}
	path := LockPath(base, root)
	f, err := openLock(path)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return nil, &RefusedError{Path: storeKey(root), Untouched: true, Reason: "too many files are open to take the store's lock (the limit of open files, ulimit -n, is reached)"}
	}
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(LockWait)
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			holder := readHolder(f)
			f.Close()
			return nil, &BusyError{Root: storeKey(root), Holder: holder}
		}
		time.Sleep(50 * time.Millisecond)
	}
	l := &Lock{f: f, root: storeKey(root), path: path}
	// Who holds it, for the message of a second writer; the lock itself
	// is the flock, not these bytes. The line is written over the one
	// before, never truncated: the reader stops at its newline.
	holder := "pid " + strconv.Itoa(os.Getpid()) + ": " + commandLine()
	if len(holder) > holderMax {
		holder = holder[:holderMax]
	}
	f.WriteAt([]byte(holder+"\n"), 0)
	return l, nil
}

// holderMax bounds the holder's line in the lock file (readHolder reads
// 4096 bytes).
const holderMax = 4000

// openLock opens (or makes) the lock file at path for reading and
// writing. It follows no symbolic link (O_NOFOLLOW), does not wait on a
// FIFO (O_NONBLOCK), and refuses what is not a regular file of one name:
// the bytes it writes there would land in the file a link or a second
// name leads to.
func openLock(path string) (*os.File, error) {
	refuse := func(why string) error {
		return fmt.Errorf("lock %s %s: cfix takes its lock only in a regular file of its own; remove it and run the command again", path, why)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|lockFlags, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(path)
			return nil, refuse("is a symbolic link to " + dest)
		} else if lerr == nil && !fi.Mode().IsRegular() {
			return nil, refuse("is not a regular file (" + kind(fi.Mode()) + ")")
		}
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, refuse("is not a regular file (" + kind(fi.Mode()) + ")")
	case nlink(fi) > 1:
		f.Close()
		return nil, refuse(fmt.Sprintf("has %d names (hard links)", nlink(fi)))
	}
	return f, nil
}

// kind names the type of a file that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a plain file"
}

// commandLine is this process's command line, as one line.
func commandLine() string {
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	return strings.Join(strings.Fields(strings.Join(args, " ")), " ")
}

// readHolder reads the holder's line from the lock file.
func readHolder(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, line)
}

// Root returns the real path of the store the lock is for.
func (l *Lock) Root() string { return l.root }

// Holds reports whether l is the held lock of the store at root.
func (l *Lock) Holds(root string) bool { return l != nil && l.f != nil && l.root == storeKey(root) }

// Unlock lets the store go.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// The holder's line goes first: a stale one would name a process that
	// holds nothing. An empty line takes its place (the file is never
	// truncated).
	l.f.WriteAt([]byte("\n"), 0)
	err := errors.Join(unlock(l.f), l.f.Close())
	l.f = nil
	return err
}
