package session

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxLine is the longest line the reader hands over whole: 64 MiB. A
// longer line is measured as it streams past, never held: the reader
// hands over its skeleton (see Long), so a line of any length costs at
// most MaxLine bytes of buffer plus MaxSkeleton. Real transcripts hold
// lines of a few MB at most (a pasted file, a long tool output); a line
// of hundreds of MB is a crash's NUL bytes or hostile input.
const MaxLine = 64 << 20

// MaxSkeleton is the most bytes a long line's skeleton holds: a line whose
// structure alone (its keys, numbers and brackets, with every string cut
// to KeepString bytes) is longer is not read at all (Long.Partial).
const MaxSkeleton = 8 << 20

// KeepString is how many bytes of each string's body the skeleton of a
// long line keeps: more than MaxString, all the light tree keeps of a
// string, so the header and the schemas see what they would see in the
// whole line.
const KeepString = 8192

// keepBlanks is the longest run of whitespace between tokens the
// skeleton keeps as it is; a longer run becomes one space.
const keepBlanks = 16

// The kinds of faults of the cut part of a string that the skeleton
// writes into the string, the first of each kind, so that a check of the
// skeleton finds the line's faults (at other columns): a syntax error (a
// control byte, a bad escape), a lone surrogate escape, a \u0000 escape,
// a byte that is not UTF-8.
const (
	faultSyntax = 1 << iota
	faultSurrogate
	faultNUL
	faultUTF8
)

// lineLimit, keepString and skeletonLimit are MaxLine, KeepString and
// MaxSkeleton; tests lower them.
var (
	lineLimit     = MaxLine
	keepString    = KeepString
	skeletonLimit = MaxSkeleton
)

// bigBufs holds up to two buffers of lineLimit+1 bytes (the most a line
// read whole needs) readers are done with, for the next ones, for a few
// seconds: a command that reads a long line several times (a plan, its
// check, its diff) allocates one or two, not one per read, and a server
// that read one gives the memory back.
var bigBufs struct {
	sync.Mutex
	free  [][]byte
	timer *time.Timer
}

// bigKeep is how long bigBufs keeps a buffer no reader takes.
const bigKeep = 5 * time.Second

// bigBuf returns a buffer of lineLimit+1 bytes holding a copy of b.
func bigBuf(b []byte) []byte {
	var nb []byte
	bigBufs.Lock()
	if n := len(bigBufs.free); n > 0 {
		nb, bigBufs.free = bigBufs.free[n-1], bigBufs.free[:n-1]
	}
	bigBufs.Unlock()
	if len(nb) != lineLimit+1 {
		nb = make([]byte, lineLimit+1)
	}
	copy(nb, b)
	return nb
}

// BigBuffer returns a buffer of MaxLine+1 bytes, room for the longest
// line read whole and a byte, holding a copy of b: one a reader is done
// with, when there is one. PutBigBuffer gives it back.
func BigBuffer(b []byte) []byte { return bigBuf(b) }

// PutBigBuffer gives back a buffer BigBuffer returned, for the next
// reader (a buffer of another size is left alone).
func PutBigBuffer(b []byte) { putBig(b) }

// putBig gives back a buffer of lineLimit+1 bytes.
func putBig(b []byte) {
	if cap(b) != lineLimit+1 {
		return
	}
	bigBufs.Lock()
	defer bigBufs.Unlock()
	if len(bigBufs.free) < 2 {
		bigBufs.free = append(bigBufs.free, b[:cap(b)])
	}
	if bigBufs.timer == nil {
		bigBufs.timer = time.AfterFunc(bigKeep, func() {
			bigBufs.Lock()
			bigBufs.free, bigBufs.timer = nil, nil
			bigBufs.Unlock()
		})
	} else {
		bigBufs.timer.Reset(bigKeep)
	}
}

// Long is what the reader measured of a line longer than MaxLine. Such a
// line's Raw is not its bytes but its skeleton: the line with its NUL
// bytes left out, every string body longer than KeepString bytes cut to
// its first KeepString bytes (whole characters and escapes), and every
// run of more than 16 blanks between tokens made one space. A fault in a
// cut part of a string (a control byte, a bad escape, a lone surrogate,
// a \u0000 escape, a byte that is not UTF-8) is written into the kept part
// (the first of each kind in each string), so the skeleton is valid JSON exactly
// when the line without its NUL bytes is, and a check of it finds the
// line's faults, at other columns. The header fields (type, uuids, ids,
// content block types) are short strings: they are in the skeleton as
// in the line.
//
// A planner that writes a line back must never write a skeleton that is
// not Exact: it copies the line's bytes from the file (Offset and Size),
// or refuses.
type Long struct {
	// Size is the line's length in the file, without "\n".
	Size int64
	// NULs is the number of NUL bytes of the line, left out of Raw, and
	// FirstNUL the offset in the line of the first (-1: none).
	NULs, FirstNUL int64
	// Exact: nothing but NUL bytes was left out (Raw is the line without
	// them).
	Exact bool
	// Partial: the skeleton was longer than MaxSkeleton; Raw holds its
	// first MaxSkeleton bytes, and the line is not read at all.
	Partial bool

	skelLen int
	segs    []seg // nil: not mapped
}

// Span returns where the skeleton's bytes [a, b) are in the line: the
// offsets of the same bytes, when they are the line's bytes as they are
// (nothing cut, added or left out between them). A planner that rewrites
// a long line replaces such spans, copying the rest from the file.
func (lg *Long) Span(a, b int) (start, end int64, ok bool) {
	if lg.segs == nil || a < 0 || b <= a || b > lg.skelLen {
		return 0, 0, false
	}
	i := sort.Search(len(lg.segs), func(i int) bool { return int(lg.segs[i].skel) > a }) - 1
	if i < 0 || lg.segs[i].orig < 0 {
		return 0, 0, false
	}
	segEnd := lg.skelLen
	if i+1 < len(lg.segs) {
		segEnd = int(lg.segs[i+1].skel)
	}
	if b > segEnd {
		return 0, 0, false
	}
	sg := lg.segs[i]
	return sg.orig + int64(a-int(sg.skel)), sg.orig + int64(b-int(sg.skel)), true
}

// Len is the line's length in the file, without "\n": len(Raw), or
// Long.Size for a long line.
func (l Line) Len() int64 {
	if l.Long != nil {
		return l.Long.Size
	}
	return int64(len(l.Raw))
}

// End is the offset just past the line and its "\n".
func (l Line) End() int64 {
	e := l.Offset + l.Len()
	if l.Terminated {
		e++
	}
	return e
}

// Describe says what a long line is, for a message: "line of 512.0 MB
// (536870912 bytes; 536870912 NUL bytes)".
func (lg *Long) Describe() string {
	s := fmt.Sprintf("line of %s (%d bytes", MB(lg.Size), lg.Size)
	if lg.NULs > 0 {
		s += fmt.Sprintf(", %d of them NUL bytes", lg.NULs)
	}
	return s + ")"
}

// MB writes n bytes as MB (2^20 bytes) with one decimal.
func MB(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// skeleton builds the skeleton of a long line from its bytes, written in
// pieces of any size (the result does not depend on where they are cut).
type skeleton struct {
	out     []byte
	size    int64
	nuls    int64
	first   int64 // offset of the first NUL byte, -1: none
	cut     bool
	partial bool

	str     bool // inside a string
	skip    bool // past the kept part of the string
	kept    int  // bytes of the string's body kept
	faults  int  // the kinds of faults written into the string
	lastHi  bool // the kept part ends with a high surrogate escape
	esc     [6]byte
	escN    int     // bytes of an escape read (from the backslash)
	hi      [6]byte // a high surrogate escape read in the cut part, its pair not yet seen
	hasHi   bool
	u8      [4]byte
	u8n     int // bytes of a UTF-8 sequence read in the cut part
	u8want  int
	blanks  int // length of the run of blanks outside strings
	blank   [keepBlanks]byte
	blankAt int64 // where the run starts in the line

	base     int64 // offset in the line of the bytes feed has
	segs     []seg // where the skeleton's bytes are in the line
	next     int64 // offset in the line of the byte after the last one written
	injected bool  // the last byte written is none of the line's
	unmapped bool  // more segments than maxSegs
}

// seg says that the skeleton's bytes from skel on are the line's from
// orig on (orig -1: bytes the skeleton adds), up to the next seg.
type seg struct {
	skel int32
	orig int64
}

// maxSegs is the most segments a skeleton maps (4 MB); a line of more
// pieces is not mapped back to the line (Long.Span says no).
const maxSegs = 1 << 18

func (s *skeleton) reset() {
	*s = skeleton{out: s.out[:0], first: -1, segs: s.segs[:0]}
}

// long is what s measured, once the line is written.
func (s *skeleton) long() *Long {
	s.flushBlanks()
	lg := &Long{Size: s.size, NULs: s.nuls, FirstNUL: s.first, Exact: !s.cut && !s.partial, Partial: s.partial, skelLen: len(s.out)}
	if !s.unmapped && !s.partial {
		lg.segs = append([]seg(nil), s.segs...)
	}
	return lg
}

// emit appends b, the line's bytes from offset at on (-1: bytes the
// skeleton adds), to the skeleton, up to MaxSkeleton bytes.
func (s *skeleton) emit(at int64, b ...byte) {
	if s.partial || len(b) == 0 {
		return
	}
	if len(s.out)+len(b) > skeletonLimit {
		s.partial = true
		return
	}
	if at < 0 || at != s.next || s.injected || len(s.segs) == 0 {
		if len(s.segs) < maxSegs {
			s.segs = append(s.segs, seg{int32(len(s.out)), at})
		} else {
			s.unmapped = true
		}
	}
	s.injected = at < 0
	if at >= 0 {
		s.next = at + int64(len(b))
	}
	s.out = append(s.out, b...)
}

// flushBlanks writes the run of blanks read last: as it is, or, longer
// than keepBlanks, as one space.
func (s *skeleton) flushBlanks() {
	switch {
	case s.blanks == 0:
		return
	case s.blanks <= keepBlanks:
		s.emit(s.blankAt, s.blank[:s.blanks]...)
	default:
		s.cut = true
		s.emit(-1, ' ')
	}
	s.blanks = 0
}

// fault writes a fault of the cut part of a string into the skeleton,
// the first of its kind in the string.
func (s *skeleton) fault(kind int, b ...byte) {
	if s.faults&kind == 0 {
		s.faults |= kind
		s.emit(-1, b...)
	}
}

// write takes in the next bytes of the line.
func (s *skeleton) write(b []byte) {
	at := s.size
	s.size += int64(len(b))
	for len(b) > 0 {
		if b[0] == 0 {
			if s.first < 0 {
				s.first = at
			}
			s.flushBlanks() // the blanks around NUL bytes are not one run of the line
			i := nulRun(b)
			s.nuls += int64(i)
			b, at = b[i:], at+int64(i)
			continue
		}
		j := nextNUL(b)
		if !s.partial {
			s.base = at
			s.feed(b[:j])
		}
		b, at = b[j:], at+int64(j)
	}
}

// nulRun returns how many NUL bytes b starts with.
func nulRun(b []byte) int {
	i := 0
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0 {
		i += 8
	}
	for i < len(b) && b[i] == 0 {
		i++
	}
	return i
}

// nextNUL returns the index of the first NUL byte of b, or len(b).
func nextNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// feed takes in bytes that hold no NUL byte.
func (s *skeleton) feed(b []byte) {
	for i := 0; i < len(b); {
		if s.partial {
			return
		}
		if !s.str {
			c := b[i]
			switch c {
			case ' ', '\t', '\r', '\n':
				if s.blanks == 0 {
					s.blankAt = s.base + int64(i)
				}
				if s.blanks < keepBlanks {
					s.blank[s.blanks] = c
				}
				s.blanks++
				i++
				continue
			case '"':
				s.str, s.skip, s.kept, s.faults, s.lastHi, s.escN, s.hasHi, s.u8n = true, false, 0, 0, false, 0, false, 0
			}
			s.flushBlanks()
			s.emit(s.base+int64(i), c)
			i++
			continue
		}
		if !s.skip {
			i = s.keep(b, i)
		} else {
			i = s.cutPart(b, i)
		}
	}
}

// keep copies the kept part of a string body from b[i:] and returns where
// it stopped: the string's end, the end of b, or where the kept part ends
// (then s.skip is set).
func (s *skeleton) keep(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if s.escN > 0 {
			s.esc[s.escN] = c
			s.escN++
			s.emit(s.base+int64(i), c)
			i++
			s.kept++
			if s.escN == 2 && c != 'u' || s.escN == 6 {
				s.lastHi = s.escN == 6 && isHighSurrogate(s.esc[2:6])
				s.escN = 0
			}
			continue
		}
		if c == '"' {
			s.emit(s.base+int64(i), c)
			s.str = false
			return i + 1
		}
		if s.kept >= keepString && c&0xC0 != 0x80 && !(s.lastHi && c == '\\') {
			s.skip, s.cut = true, true
			return i
		}
		switch {
		case c == '\\':
			s.esc[0], s.escN = c, 1
			s.emit(s.base+int64(i), c)
			s.kept++
			i++
			continue
		}
		s.lastHi = false
		if s.kept >= keepString {
			// The last bytes of a character the kept part ends with.
			s.emit(s.base+int64(i), c)
			s.kept++
			i++
			continue
		}
		j := plainRun(b, i+1)
		if n := keepString - s.kept; j-i > n {
			j = i + n
		}
		s.emit(s.base+int64(i), b[i:j]...)
		s.kept += j - i
		i = j
	}
	return i
}

// cutPart reads the cut part of a string body from b[i:] and returns
// where it stopped: past the string's closing quote (written), or the
// end of b. Faults are written into the skeleton.
func (s *skeleton) cutPart(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if s.escN > 0 {
			s.esc[s.escN] = c
			s.escN++
			i++
			s.escape()
			continue
		}
		if s.u8n > 0 {
			if c&0xC0 == 0x80 {
				s.u8[s.u8n] = c
				s.u8n++
				i++
				if s.u8n == s.u8want {
					if !utf8.Valid(s.u8[:s.u8n]) {
						s.fault(faultUTF8, 0xFF)
					}
					s.u8n = 0
				}
				continue
			}
			// Cut short: not UTF-8; c starts anew.
			s.fault(faultUTF8, 0xFF)
			s.u8n = 0
		}
		if c != '\\' && s.hasHi {
			s.loneHigh()
		}
		switch {
		case c == '"':
			s.emit(s.base+int64(i), c)
			s.str, s.skip = false, false
			return i + 1
		case c == '\\':
			s.esc[0], s.escN = c, 1
			i++
			continue
		case c < 0x20:
			s.fault(faultSyntax, c)
			i++
			continue
		case c >= 0x80:
			switch {
			case c >= 0xC2 && c <= 0xDF:
				s.u8want = 2
			case c >= 0xE0 && c <= 0xEF:
				s.u8want = 3
			case c >= 0xF0 && c <= 0xF4:
				s.u8want = 4
			default:
				s.fault(faultUTF8, 0xFF)
				i++
				continue
			}
			s.u8[0], s.u8n = c, 1
			i++
			continue
		}
		i = plainRun(b, i+1)
	}
	return i
}

// escape looks at the escape read so far in the cut part of a string,
// once it is whole or wrong.
func (s *skeleton) escape() {
	e := s.esc[:s.escN]
	if s.escN == 2 {
		switch e[1] {
		case 'u':
			return
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			if s.hasHi {
				s.loneHigh()
			}
			s.escN = 0
			return
		}
		s.fault(faultSyntax, e...)
		s.escN = 0
		return
	}
	if !hexDigit(e[s.escN-1]) {
		s.fault(faultSyntax, e...)
		s.escN = 0
		return
	}
	if s.escN < 6 {
		return
	}
	s.escN = 0
	v := hexValue(e[2:6])
	switch {
	case v >= 0xDC00 && v <= 0xDFFF:
		if s.hasHi {
			s.hasHi = false // a pair
			return
		}
		// A lone low surrogate, after a byte that pairs with nothing.
		s.fault(faultSurrogate, append([]byte{'?'}, e...)...)
		return
	case s.hasHi:
		s.loneHigh()
	}
	switch {
	case v >= 0xD800 && v <= 0xDBFF:
		copy(s.hi[:], e)
		s.hasHi = true
	case v == 0:
		s.fault(faultNUL, e...)
	}
}

// loneHigh writes the high surrogate escape s.hi, which no low one
// follows, as a fault, with a byte after it that pairs with nothing.
func (s *skeleton) loneHigh() {
	s.fault(faultSurrogate, append(s.hi[:], '?')...)
	s.hasHi = false
}

func hexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(h []byte) int {
	v := 0
	for _, c := range h {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		default:
			v |= int(c-'A') + 10
		}
	}
	return v
}

func isHighSurrogate(h []byte) bool {
	for _, c := range h {
		if !hexDigit(c) {
			return false
		}
	}
	v := hexValue(h)
	return v >= 0xD800 && v <= 0xDBFF
}

// ReadSkeleton reads the line of size bytes at off in r again, as it
// streams past, and returns its skeleton (a long line, whose bytes are
// never held).
func ReadSkeleton(r io.ReaderAt, off, size int64) ([]byte, *Long, error) {
	var s skeleton
	s.reset()
	buf := make([]byte, 1<<20)
	for done := int64(0); done < size; {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-done)], off+done)
		s.write(buf[:n])
		done += int64(n)
		if err != nil && done < size {
			return nil, nil, err
		}
	}
	return s.out, s.long(), nil
}

// Skeleton returns the skeleton of line as the reader makes it of a line
// longer than MaxLine, with what it measured.
func Skeleton(line []byte) ([]byte, *Long) {
	var s skeleton
	s.reset()
	s.write(line)
	return s.out, s.long()
}
