package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cfix-dev/cfix/session"
)

// CountMessages counts the messages of the transcript at path from byte
// offset from (0: the whole file) to its end, by the glance's rules: user
// and assistant entries of the chain, as validate counts them; a line that
// is not JSON, glued records and a torn last line count nothing.
func CountMessages(path string, from int64) (int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	gl := counters.Get().(*glancer)
	defer counters.Put(gl)
	rd := session.NewReader(io.NewSectionReader(fh, from, 1<<62), gl.buf)
	n := 0
	for rd.Next() {
		if gl.isMessage(rd.Line().Raw) {
			n++
		}
	}
	gl.buf = rd.Buffer()
	if err := rd.Err(); err != nil {
		return 0, err
	}
	return n, nil
}

var counters = sync.Pool{New: func() any { return newGlancer() }}

// isMessage reports whether a line is a message as the glance counts it.
func (gl *glancer) isMessage(raw []byte) bool {
	if bytes.IndexByte(raw, 0) >= 0 {
		raw = bytes.ReplaceAll(raw, []byte{0}, nil)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return false
	}
	e := &gl.e
	if _, ok := gl.p.Scan(raw, gl.sh, e); !ok {
		r := gl.p.Parse(raw)
		if r.Err != nil || r.GluedAt >= 0 || !session.HeaderOf(r.Value, e) {
			return false
		}
	}
	return e.IsChain() && (e.Type == "user" || e.Type == "assistant")
}

// MessageCache keeps the message counts of big transcripts (those a glance
// does not read whole) between runs, by file identity: path, device and
// inode, size and modification time. A transcript that has grown since by
// appends (the bytes before its old end unchanged, as far as the last 4 KB
// of them tell) is counted from its old end only. The cache is one small
// JSON file (CacheFile); one that cannot be read or parsed is ignored and
// written anew, never trusted: an entry is used only when its identity
// matches the file's.
type MessageCache struct {
	path string
	mu   sync.Mutex
	m    map[string]countEntry
	used map[string]bool
	gone bool // an entry changed: Save writes
}

type countEntry struct {
	Dev      uint64 `json:"dev"`
	Ino      uint64 `json:"ino"`
	Size     int64  `json:"size"`
	ModTime  int64  `json:"mtime_ns"`
	Messages int    `json:"messages"`
	// End is the SHA-256 (hex, first 16 bytes) of the last markLen bytes
	// before Size.
	End string `json:"end"`
}

const (
	cacheVersion = 1
	markLen      = 4096
	// cacheMax is the most entries the cache keeps: entries of files not
	// seen by the run that saves go first.
	cacheMax = 20000
)

// CacheFile is where the message cache lives: $XDG_CACHE_HOME/cfix, else
// ~/.cache/cfix; "" when neither is set.
func CacheFile() string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := os.Getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "cfix", "message-counts.json")
}

// OpenMessageCache reads the cache at path ("" : a cache that keeps
// nothing).
func OpenMessageCache(path string) *MessageCache {
	c := &MessageCache{path: path, m: map[string]countEntry{}, used: map[string]bool{}}
	if path == "" {
		return c
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	var v struct {
		Version int                   `json:"version"`
		Entries map[string]countEntry `json:"entries"`
	}
	if json.Unmarshal(b, &v) != nil || v.Version != cacheVersion {
		return c
	}
	for p, e := range v.Entries {
		if filepath.IsAbs(p) && e.Size > 0 && e.Messages >= 0 && e.Messages <= int(e.Size) {
			c.m[p] = e
		}
	}
	return c
}

// Count returns the messages of the transcript at path, from the cache
// when its entry is of the file as it is now.
func (c *MessageCache) Count(path string) (int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	dev, ino := fileID(fi)
	now := countEntry{Dev: dev, Ino: ino, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	c.mu.Lock()
	old, ok := c.m[path]
	c.used[path] = true
	c.mu.Unlock()
	if ok && old.Dev == dev && old.Ino == ino && old.Size == now.Size && old.ModTime == now.ModTime && old.End != "" {
		return old.Messages, nil
	}
	var n, from int
	if ok && old.Dev == dev && old.Ino == ino && old.Size < now.Size && old.End != "" {
		// Grown: the old end must end a line and its last bytes be the same.
		if m, err := endMark(fh, old.Size); err == nil && m == old.End {
			var b [1]byte
			if _, err := fh.ReadAt(b[:], old.Size-1); err == nil && b[0] == '\n' {
				n, from = old.Messages, int(old.Size)
			}
		}
	}
	more, err := CountMessages(path, int64(from))
	if err != nil {
		return 0, err
	}
	now.Messages = n + more
	// The file may have grown while it was read: keep the size read to.
	if fi, err := fh.Stat(); err != nil || fi.Size() != now.Size || fi.ModTime().UnixNano() != now.ModTime {
		return now.Messages, nil
	}
	if now.End, err = endMark(fh, now.Size); err != nil {
		return now.Messages, nil
	}
	c.mu.Lock()
	c.m[path], c.gone = now, true
	c.mu.Unlock()
	return now.Messages, nil
}

// endMark hashes the last markLen bytes of fh before size.
func endMark(fh *os.File, size int64) (string, error) {
	start := max(size-markLen, 0)
	b := make([]byte, size-start)
	if _, err := fh.ReadAt(b, start); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// Save writes the cache when an entry changed: to a temporary file in
// its folder (made 0700 when missing), renamed over it.
func (c *MessageCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.gone {
		return nil
	}
	if len(c.m) > cacheMax {
		for p := range c.m {
			if len(c.m) <= cacheMax {
				break
			}
			if !c.used[p] {
				delete(c.m, p)
			}
		}
	}
	b, err := json.Marshal(struct {
		Version int                   `json:"version"`
		Entries map[string]countEntry `json:"entries"`
	}{cacheVersion, c.m})
	if err != nil {
		return err
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".message-counts-*.json")
	if err != nil {
		return err
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
		return errors.Join(errors.New("message cache "+c.path), err)
	}
	return nil
}

// CountSessions counts the messages of every session a glance did not
// read whole (MessagesKnown false, or known only from a sessions index),
// on every core, through the cache c.
func CountSessions(ss []SessionInfo, c *MessageCache) {
	var todo []int
	for i := range ss {
		if !ss[i].Whole && ss[i].Err == nil {
			todo = append(todo, i)
		}
	}
	parallel(len(todo), func(_ *glancer, k int) {
		s := &ss[todo[k]]
		if n, err := c.Count(s.Path); err == nil {
			s.Messages, s.MessagesKnown = n, true
		}
	})
}
