package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
)

// The cache's bounds: a cache file bigger than MaxCacheBytes is not read
// (and none that big is written), one holds at most MaxEntries files, and
// the cache folder holds the caches of at most MaxStores stores (the
// least recently written go first).
const (
	MaxCacheBytes = 64 << 20
	MaxEntries    = 100_000
	MaxStores     = 32
)

// settle is how long before a listing a file must have been modified
// last for the cache to keep what it read of it: a file written within
// the same tick of the clock as it was read could change again without
// its modification time changing.
const settle = 2 * time.Second

// cacheMagic opens a cache file; cacheFormat is the version of its
// layout (the glances in it carry their own, and the program's identity
// is checked too: a cache another build wrote is not read).
const (
	cacheMagic  = "cfix catalog cache\n"
	cacheFormat = 1
)

// Cache keeps what reading the transcripts of one store gave a listing,
// by file identity (path, device, inode, size, modification and change
// times): the glance at a main transcript or an extra, the session a flat
// subagent transcript names, the messages of a transcript too big to
// glance at whole. A file whose identity changed is read again, and one
// the listing no longer finds is dropped. It is a store.Memo.
//
// It lives in one file per store under $XDG_CACHE_HOME/cfix/catalog/ (0600
// in a 0700 folder), written whole to a temporary file and renamed over
// the old one, and only when something changed. A cache file that is not
// one (cut short, corrupt, of another format, another build of cfix or
// another store) is ignored and written anew: never trusted. What is live
// (which sessions a running Claude Code has open) is never kept.
type Cache struct {
	path, root, program string
	now                 time.Time

	mu      sync.Mutex
	m       map[string]*entry
	used    map[string]bool
	scopes  []string // folders listed whole: an entry under one not used is of a removed file
	changed bool
	// Loaded reports whether the cache file was read and trusted.
	Loaded bool
}

// entry is what the cache keeps of one file.
type entry struct {
	dev, ino           uint64
	size, mtime, ctime int64
	glance             []byte // store.Glance.AppendBinary; nil: none
	export             bool   // the glance is of a transcript export
	flat               string // the session a flat subagent transcript names
	hasFlat            bool
	messages           int // the messages of the whole file, when counted
	counted            bool
	end                [16]byte // endMark of the file, when counted
	usage              []byte   // what Usage's read gave of the file; nil: none
	usageEnd           [16]byte // endMark of the file when usage was read
}

func (e *entry) of(f store.File) bool {
	return e.dev == f.Dev && e.ino == f.Ino && e.size == f.Size && e.mtime == f.ModTime.UnixNano() && e.ctime == f.CTime
}

// CacheDir is the folder of the caches: catalog in store.CacheDir
// ($XDG_CACHE_HOME/cfix, else ~/.cache/cfix); "" when there is none.
func CacheDir() string {
	dir := store.CacheDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "catalog")
}

// CacheFile is the cache file of the store at root in dir.
func CacheFile(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".cache")
}

// program is what identifies the running cfix: a cache written by another
// build (whose glances may differ) is not read.
var program = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	var f store.File
	f.Identify(fi)
	return fmt.Sprintf("%s %d %d %d %d", exe, f.Dev, f.Ino, f.Size, f.ModTime.UnixNano())
})

// OpenCache reads the cache of the store at root from file ("": a cache
// that keeps nothing between runs).
func OpenCache(file, root string) *Cache {
	c := &Cache{path: file, root: root, program: program(), now: time.Now(), m: map[string]*entry{}, used: map[string]bool{}}
	if file == "" || c.program == "" {
		c.path = ""
		return c
	}
	fh, err := rfile.OpenFile(file, os.O_RDONLY|rfile.NoFollow, 0) // cfix writes no link here
	if err != nil {
		return c
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxCacheBytes {
		return c
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(fh, b); err != nil {
		return c
	}
	if m, err := decode(b, c.program, root); err == nil {
		c.m, c.Loaded = m, true
	}
	return c
}

// decode reads a cache file's bytes; anything that is not a cache of
// this program for this store is an error.
func decode(b []byte, program, root string) (map[string]*entry, error) {
	if len(b) < len(cacheMagic)+4 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("not a cache")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("corrupt")
	}
	r := &reader{b: body[len(cacheMagic):]}
	if r.uvarint() != cacheFormat || r.string() != program || r.string() != root {
		return nil, errors.New("of another format, build or store")
	}
	n := r.uvarint()
	if n > MaxEntries {
		return nil, errors.New("too many entries")
	}
	m := make(map[string]*entry, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		path := r.string()
		e := &entry{dev: r.uvarint(), ino: r.uvarint(), size: r.varint(), mtime: r.varint(), ctime: r.varint()}
		flags := r.uvarint()
		if flags&1 != 0 {
			e.glance = r.bytes()
			e.export = flags&2 != 0
		}
		if flags&4 != 0 {
			e.flat, e.hasFlat = r.string(), true
		}
		if flags&8 != 0 {
			e.messages, e.counted = int(r.varint()), true
			copy(e.end[:], r.fixed(len(e.end)))
		}
		if flags&16 != 0 {
			e.usage = r.bytes()
			copy(e.usageEnd[:], r.fixed(len(e.usageEnd)))
		}
		if flags>>5 != 0 || !filepath.IsAbs(path) || e.size < 0 || e.messages < 0 || int64(e.messages) > e.size || m[path] != nil {
			r.fail()
		}
		m[path] = e
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errors.New("corrupt")
	}
	return m, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode writes the cache's bytes.
func (c *Cache) encode() []byte {
	paths := make([]string, 0, len(c.m))
	for p := range c.m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b := []byte(cacheMagic)
	b = binary.AppendUvarint(b, cacheFormat)
	b = appendString(b, c.program)
	b = appendString(b, c.root)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		e := c.m[p]
		b = appendString(b, p)
		b = binary.AppendUvarint(b, e.dev)
		b = binary.AppendUvarint(b, e.ino)
		b = binary.AppendVarint(b, e.size)
		b = binary.AppendVarint(b, e.mtime)
		b = binary.AppendVarint(b, e.ctime)
		var flags uint64
		if e.glance != nil {
			flags |= 1
			if e.export {
				flags |= 2
			}
		}
		if e.hasFlat {
			flags |= 4
		}
		if e.counted {
			flags |= 8
		}
		if e.usage != nil {
			flags |= 16
		}
		b = binary.AppendUvarint(b, flags)
		if e.glance != nil {
			b = appendString(b, string(e.glance))
		}
		if e.hasFlat {
			b = appendString(b, e.flat)
		}
		if e.counted {
			b = binary.AppendVarint(b, int64(e.messages))
			b = append(b, e.end[:]...)
		}
		if e.usage != nil {
			b = appendString(b, string(e.usage))
			b = append(b, e.usageEnd[:]...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// lookup returns the entry of f when it is of f as it is now, and marks
// the file seen.
func (c *Cache) lookup(f store.File) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used[f.Path] = true
	if e := c.m[f.Path]; e != nil && e.of(f) {
		return e
	}
	return nil
}

// keep returns the entry of f to fill in (a new one when the file
// changed), or nil when the file changed too lately to be kept; the
// caller holds c.mu.
func (c *Cache) keep(f store.File) *entry {
	if !f.ModTime.Before(c.now.Add(-settle)) {
		return nil
	}
	e := c.m[f.Path]
	if e == nil || !e.of(f) {
		e = &entry{dev: f.Dev, ino: f.Ino, size: f.Size, mtime: f.ModTime.UnixNano(), ctime: f.CTime}
		c.m[f.Path] = e
	}
	c.used[f.Path] = true
	c.changed = true
	return e
}

// has reports whether the cache holds what a listing reads of f as it is
// (nothing is read of a subagent transcript under its session, or of an
// empty file).
func (c *Cache) has(f store.File) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[f.Path]
	switch {
	case f.Kind == store.KindAgent || f.Size == 0 && f.Kind == store.KindSession:
		return true
	case e == nil || !e.of(f):
		return false
	case f.Kind == store.KindAgentFlat:
		return e.hasFlat
	}
	return e.glance != nil && !e.export
}

// Glance is store.Memo's.
func (c *Cache) Glance(f store.File, export bool) ([]byte, bool) {
	if e := c.lookup(f); e != nil && e.glance != nil && e.export == export {
		return e.glance, true
	}
	return nil, false
}

// KeepGlance is store.Memo's.
func (c *Cache) KeepGlance(f store.File, export bool, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.keep(f); e != nil {
		e.glance, e.export = b, export
	}
}

// FlatSession is store.Memo's.
func (c *Cache) FlatSession(f store.File) (string, bool) {
	if e := c.lookup(f); e != nil && e.hasFlat {
		return e.flat, true
	}
	return "", false
}

// KeepFlatSession is store.Memo's.
func (c *Cache) KeepFlatSession(f store.File, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.keep(f); e != nil {
		e.flat, e.hasFlat = id, true
	}
}

// Listed says that the listing found every file there is under dir: the
// entries of files under it it did not meet are of removed files.
func (c *Cache) Listed(dir string) {
	c.mu.Lock()
	c.scopes = append(c.scopes, dir)
	c.mu.Unlock()
}

// Save drops the entries of removed files, and writes the cache when it
// changed.
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := range c.m {
		if c.used[p] {
			continue
		}
		for _, s := range c.scopes {
			if strings.HasPrefix(p, s+string(filepath.Separator)) {
				delete(c.m, p)
				c.changed = true
				break
			}
		}
	}
	if c.path == "" || !c.changed {
		return nil
	}
	// Over its bound, the entries of files this run did not meet go
	// first; a cache still too big is not written.
	for p := range c.m {
		if len(c.m) <= MaxEntries {
			break
		}
		if !c.used[p] {
			delete(c.m, p)
		}
	}
	b := c.encode()
	if len(c.m) > MaxEntries || len(b) > MaxCacheBytes {
		return fmt.Errorf("cache %s: %d entries, %d bytes: over its bound, not written", c.path, len(c.m), len(b))
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	tmp, err := os.CreateTemp(dir, ".catalog-*.tmp")
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	c.changed = false
	pruneStores(dir, c.path)
	// The message counts of earlier versions, which this cache holds now.
	os.Remove(filepath.Join(filepath.Dir(dir), "message-counts.json"))
	return nil
}

// pruneStores removes the caches of the least recently written stores
// beyond MaxStores (never keep, the one just written).
func pruneStores(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type cf struct {
		path string
		mod  time.Time
	}
	var all []cf
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".cache") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			all = append(all, cf{filepath.Join(dir, e.Name()), fi.ModTime()})
		}
	}
	if len(all) <= MaxStores {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	for _, f := range all[MaxStores:] {
		if f.path != keep {
			os.Remove(f.path)
		}
	}
}

// Count returns the messages of the transcript f (one a glance did not
// read whole), from the cache when it counted the file as it is. A file
// that has grown by appends since (the bytes before its old end
// unchanged, as far as the last 4 KB of them tell, and its old end the
// end of a line) is counted from its old end only.
func (c *Cache) Count(f store.File) (int, error) {
	if e := c.lookup(f); e != nil && e.counted {
		return e.messages, nil
	}
	fh, err := rfile.Open(f.Path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	c.mu.Lock()
	old := c.m[f.Path]
	var o entry
	if old != nil {
		o = *old
	}
	c.mu.Unlock()
	n, from := 0, int64(0)
	if old != nil && o.counted && o.dev == f.Dev && o.ino == f.Ino && o.size < f.Size && o.size > 0 {
		if m, err := endMark(fh, o.size); err == nil && m == o.end {
			var b [1]byte
			if _, err := fh.ReadAt(b[:], o.size-1); err == nil && b[0] == '\n' {
				n, from = o.messages, o.size
			}
		}
	}
	more, err := store.CountMessages(f.Path, from)
	if err != nil {
		return 0, err
	}
	n += more
	// Kept only when the file is still as listed (it may have grown
	// while it was read).
	if fi, err := fh.Stat(); err != nil || fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) {
		return n, nil
	}
	end, err := endMark(fh, f.Size)
	if err != nil {
		return n, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.keep(f); e != nil {
		e.messages, e.counted, e.end = n, true, end
	}
	return n, nil
}

// Usage returns what read gives of the file f (the usage of its replies,
// encoded by the caller), from the cache when it read the file as it is.
// A file that has grown by appends since (as Count tells them) is read
// from its old end only: read gets that offset and what the cache kept
// of the bytes before it, and returns what the whole file gives.
func (c *Cache) Usage(f store.File, read func(fh *os.File, from int64, old []byte) ([]byte, error)) ([]byte, error) {
	if e := c.lookup(f); e != nil && e.usage != nil {
		return e.usage, nil
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	c.mu.Lock()
	old := c.m[f.Path]
	var o entry
	if old != nil {
		o = *old
	}
	c.mu.Unlock()
	var from int64
	var prev []byte
	if old != nil && o.usage != nil && o.dev == f.Dev && o.ino == f.Ino && o.size < f.Size && o.size > 0 {
		if m, err := endMark(fh, o.size); err == nil && m == o.usageEnd {
			var b [1]byte
			if _, err := fh.ReadAt(b[:], o.size-1); err == nil && b[0] == '\n' {
				from, prev = o.size, o.usage
			}
		}
	}
	got, err := read(fh, from, prev)
	if err != nil {
		return nil, err
	}
	if got == nil {
		got = []byte{}
	}
	// Kept only when the file is still as listed.
	if fi, err := fh.Stat(); err != nil || fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) {
		return got, nil
	}
	end, err := endMark(fh, f.Size)
	if err != nil {
		return got, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.keep(f); e != nil {
		e.usage, e.usageEnd = got, end
	}
	return got, nil
}

// UsageCacheFile is the file of the cache of usage (Usage) of the store
// at root in dir, beside its catalog cache.
func UsageCacheFile(dir, root string) string {
	return strings.TrimSuffix(CacheFile(dir, root), ".cache") + "-usage.cache"
}

// markLen is how many bytes before a file's end endMark hashes.
const markLen = 4096

// endMark hashes the last markLen bytes of fh before size.
func endMark(fh *os.File, size int64) ([16]byte, error) {
	start := max(size-markLen, 0)
	b := make([]byte, size-start)
	if _, err := fh.ReadAt(b, start); err != nil {
		return [16]byte{}, err
	}
	sum := sha256.Sum256(b)
	return [16]byte(sum[:16]), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader reads a cache file; its first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errors.New("corrupt")
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) fixed(n int) []byte {
	if len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// bytes reads a length-prefixed run of bytes (a slice of the file's
// bytes, not a copy).
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	return r.fixed(int(n))
}

func (r *reader) string() string { return string(r.bytes()) }

var _ store.Memo = (*Cache)(nil)

// Len is how many files the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
