package export

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
)

// IndexMin is the size from which Write keeps the reading of a main
// transcript in Options.Index: a smaller one is read in less time than
// its index takes to write.
const IndexMin = 4 << 20

// indexMin is IndexMin; tests lower it.
var indexMin int64 = IndexMin

// indexVersion names the layout of an index and what open puts in it:
// bump it when either changes, and every index written before is read
// again from its transcript.
const indexVersion = 1

// indexMagic starts every index file.
const indexMagic = "cfix export index\n"

// maxIndexes is how many index files the folder keeps: writing one more
// removes the least recently used.
const maxIndexes = 32

// markLen is how many bytes at the end of a transcript its index hashes,
// beside its identity (device, inode, size, modification time).
const markLen = 4096

// An index is what open reads of a main transcript, kept between runs so
// that the first page of a big session costs a page's reading: the
// header, the chain to write and the graph's nodes with the fields the
// writing uses. It is one file in Options.Index named after the
// transcript's path, and is used only when the transcript's identity is
// the one it was written for; one that cannot be read, or names offsets
// the transcript does not have, is read again from the transcript, never
// trusted.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// indexPath is the index file of the transcript at path.
func indexPath(dir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".idx")
}

// identity is what names a transcript's bytes as they are.
type identity struct {
	dev, ino      uint64
	size, modTime int64
	mark          string // SHA-256 of the last markLen bytes, hex
}

func identityOf(fh *os.File) (identity, error) {
	fi, err := fh.Stat()
	if err != nil {
		return identity{}, err
	}
	id := identity{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
	id.dev, id.ino = store.FileID(fi)
	start := max(id.size-markLen, 0)
	b := make([]byte, id.size-start)
	if _, err := fh.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return identity{}, err
	}
	sum := sha256.Sum256(b)
	id.mark = hex.EncodeToString(sum[:16])
	return id, nil
}

// openIndexed is open for a main transcript of a session, through the
// index in dir: read from it when it is of the transcript as it is, else
// read from the transcript and written to it.
func (x *exporter) openIndexed(f store.File, dir string) (*transcript, error) {
	fh, err := rfile.Open(f.Path)
	if err != nil {
		return nil, err
	}
	id, err := identityOf(fh)
	if err != nil || id.size < indexMin {
		fh.Close()
		return x.open(f, false)
	}
	ip := indexPath(dir, f.Path)
	if t := readIndex(ip, f.Path, id); t != nil {
		t.fh = fh
		now := time.Now()
		os.Chtimes(ip, now, now) // used now: the last to go
		return t, nil
	}
	fh.Close()
	t, err := x.open(f, false)
	if err != nil {
		return nil, err
	}
	// Written only when the transcript did not change while it was read.
	if after, err := identityOf(t.fh); err == nil && after == id {
		writeIndex(dir, ip, f.Path, id, t, x.header(t))
	}
	return t, nil
}

// writeIndex writes the index of transcript t (its header h) at ip,
// through a temporary file renamed over it, and removes the least
// recently used indexes past maxIndexes. It is a cache: what fails is
// left undone.
func writeIndex(dir, ip, path string, id identity, t *transcript, h header) {
	e := &enc{b: make([]byte, 0, 64+len(t.g.Nodes)*96)}
	e.b = append(e.b, indexMagic...)
	e.u(indexVersion)
	e.s(path)
	e.u(id.dev)
	e.u(id.ino)
	e.u(uint64(id.size))
	e.u(uint64(id.modTime))
	e.s(id.mark)
	e.s(h.Title)
	e.s(h.Session)
	e.s(h.Path)
	e.s(h.What)
	e.u(uint64(len(h.Facts)))
	for _, f := range h.Facts {
		e.s(f[0])
		e.s(f[1])
	}
	e.u(uint64(t.loaded))
	e.s(t.version)
	e.s(t.loader)
	e.bool(t.cut)
	e.u(uint64(len(t.g.Nodes)))
	for i := range t.g.Nodes {
		n := &t.g.Nodes[i]
		e.s(n.UUID)
		e.s(n.Parent)
		e.u(uint64(n.Line))
		e.u(uint64(n.Off))
		e.u(uint64(n.Len))
		e.s(n.Type)
		e.s(n.MsgID)
		e.bool(n.Sidechain)
		var ids []string
		for _, b := range n.Blocks {
			if b.Type == "tool_result" {
				ids = append(ids, b.ToolUseID)
			}
		}
		e.u(uint64(len(ids)))
		for _, id := range ids {
			e.s(id)
		}
	}
	e.ints(t.sel)
	e.u(uint64(len(t.results)))
	for _, k := range sortedKeys(t.results) {
		e.s(k)
		e.u(uint64(t.results[k]))
	}
	e.u(uint64(len(t.agentOf)))
	for _, k := range sortedKeys(t.agentOf) {
		e.s(k)
		e.s(t.agentOf[k])
	}
	e.u(uint64(len(t.roots)))
	for _, k := range sortedKeys(t.roots) {
		e.s(k)
		e.ints(t.roots[k])
	}
	turns := make([]int, 0, len(t.turns))
	for k := range t.turns {
		turns = append(turns, k)
	}
	sort.Ints(turns)
	e.u(uint64(len(turns)))
	for _, k := range turns {
		e.u(uint64(k))
		e.u(uint64(t.turns[k]))
	}

	e.b = binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))

	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".idx-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(e.b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), ip) != nil {
		os.Remove(tmp.Name())
		return
	}
	pruneIndexes(dir)
}

// pruneIndexes removes the least recently used index files of dir past
// maxIndexes.
func pruneIndexes(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type used struct {
		name string
		at   time.Time
	}
	var idx []used
	for _, d := range ents {
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".idx") {
			continue
		}
		if fi, err := d.Info(); err == nil {
			idx = append(idx, used{d.Name(), fi.ModTime()})
		}
	}
	if len(idx) <= maxIndexes {
		return
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i].at.Before(idx[j].at) })
	for _, u := range idx[:len(idx)-maxIndexes] {
		os.Remove(filepath.Join(dir, u.name))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// maxIndexBytes bounds the index file read: an index is a few dozen
// bytes a line, never larger than its transcript.
func maxIndexBytes(size int64) int64 { return size + 1<<20 }

// readIndex reads the index at ip of the transcript at path, whose
// identity is id: nil when there is none, it is of another file or of
// the file as it was, or it does not hold together.
func readIndex(ip, path string, id identity) *transcript {
	fh, err := rfile.OpenFile(ip, os.O_RDONLY|rfile.NoFollow, 0) // cfix writes no link here
	if err != nil {
		return nil
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes(id.size) {
		return nil
	}
	// The last 4 bytes are the CRC-32C of the others: a file cut or
	// changed since it was written is not read.
	body := fi.Size() - 4
	if body < int64(len(indexMagic)) {
		return nil
	}
	var sb strings.Builder
	sb.Grow(int(body))
	sum := crc32.New(castagnoli)
	if n, err := io.Copy(&sb, io.TeeReader(io.LimitReader(fh, body), sum)); err != nil || n != body {
		return nil
	}
	var want [4]byte
	if _, err := io.ReadFull(fh, want[:]); err != nil || sum.Sum32() != binary.LittleEndian.Uint32(want[:]) {
		return nil
	}
	b := sb.String()
	if !strings.HasPrefix(b, indexMagic) {
		return nil
	}
	d := &dec{s: b, i: len(indexMagic)}
	if d.u() != indexVersion || d.str() != path || d.u() != id.dev || d.u() != id.ino ||
		d.u() != uint64(id.size) || d.u() != uint64(id.modTime) || d.str() != id.mark || d.bad {
		return nil
	}
	t := &transcript{path: path, results: map[string]int{}, agentOf: map[string]string{}, roots: map[string][]int{},
		shown: map[string]bool{}, pending: map[int]*entry{}, turns: map[int]int{}}
	h := &header{Title: d.str(), Session: d.str(), Path: d.str(), What: d.str()}
	for k := d.count(2); k > 0; k-- {
		h.Facts = append(h.Facts, [2]string{d.str(), d.str()})
	}
	t.head = h
	t.loaded, t.version, t.loader, t.cut = d.int(), d.str(), d.str(), d.bool()
	n := d.count(9)
	t.g = session.NewGraphSize(n)
	for i := 0; i < n && !d.bad; i++ {
		nd := session.Node{UUID: d.str(), Parent: d.str(), Line: d.int(), Off: int64(d.u()), Len: d.int(),
			Type: d.str(), MsgID: d.str(), Sidechain: d.bool()}
		nd.Long = nd.Len > session.MaxLine // a line never read whole
		for k := d.count(1); k > 0; k-- {
			nd.Blocks = append(nd.Blocks, session.Block{Type: "tool_result", ToolUseID: d.str()})
		}
		if nd.Off < 0 || nd.Off+int64(nd.Len) > id.size || !t.g.AddNode(nd) {
			return nil
		}
	}
	node := func() int {
		if k := d.int(); k < len(t.g.Nodes) {
			return k
		}
		d.bad = true
		return 0
	}
	nodes := func() []int {
		k := d.count(1)
		out := make([]int, 0, k)
		for ; k > 0; k-- {
			out = append(out, node())
		}
		return out
	}
	t.sel = nodes()
	for k := d.count(2); k > 0; k-- {
		t.results[d.str()] = node()
	}
	for k := d.count(2); k > 0; k-- {
		t.agentOf[d.str()] = d.str()
	}
	for k := d.count(2); k > 0; k-- {
		t.roots[d.str()] = nodes()
	}
	for k := d.count(2); k > 0; k-- {
		i := node()
		t.turns[i] = d.int()
	}
	if d.bad || d.i != len(b) {
		return nil
	}
	return t
}

// enc writes an index: unsigned varints, strings as a length and bytes.
type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) bool(v bool) {
	if v {
		e.u(1)
	} else {
		e.u(0)
	}
}
func (e *enc) ints(v []int) {
	e.u(uint64(len(v)))
	for _, k := range v {
		e.u(uint64(k))
	}
}

// dec reads what enc wrote; bad says it did not hold together (a read
// past the end, a number out of range), and every read after returns
// zero. Strings are slices of s, the one copy of the index kept.
type dec struct {
	s   string
	i   int
	bad bool
}

func (d *dec) u() uint64 {
	var v uint64
	for shift := 0; !d.bad; shift += 7 {
		if d.i >= len(d.s) || shift > 63 {
			d.bad = true
			break
		}
		c := d.s[d.i]
		d.i++
		if shift == 63 && c > 1 {
			d.bad = true
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	return 0
}

// int reads a number that must fit an int32.
func (d *dec) int() int {
	v := d.u()
	if v > 1<<31-1 {
		d.bad = true
		return 0
	}
	return int(v)
}

func (d *dec) bool() bool { return d.u() == 1 }

// count reads a count of items of at least per bytes each, which must
// fit in what is left.
func (d *dec) count(per int) int {
	v := d.u()
	if v > uint64((len(d.s)-d.i)/per) {
		d.bad = true
		return 0
	}
	return int(v)
}

func (d *dec) str() string {
	k := d.u()
	if d.bad || k > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(k)]
	d.i += int(k)
	return s
}

// Prepare writes the index of the family's main transcript in dir when
// the transcript is big enough to have one (IndexMin) and its index is
// missing or of other bytes, so that a later Write with Options.Index
// set reads its start without a pass over the whole file. A subagent's
// transcript or a lost one has none: Prepare does nothing.
func Prepare(fam *show.Family, dir string) error {
	if dir == "" {
		return nil
	}
	if _, ok := leftOf(fam); ok {
		return nil
	}
	main, err := mainFile(fam)
	if err != nil || main.Kind != store.KindSession || fam.Loose != "" {
		return err
	}
	x := &exporter{fam: fam, opts: Options{Format: "md", Index: dir}}
	t, err := x.openIndexed(main, dir)
	if err != nil {
		return err
	}
	t.close()
	return nil
}

// IndexFile is the file in dir that holds the index of the transcript at
// path.
func IndexFile(dir, path string) string { return indexPath(dir, path) }
