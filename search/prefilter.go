package search

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// prefilter finds, in the raw bytes of a JSONL file, where a line that can
// match may be: every match of the pattern in decoded text holds a piece
// of it (the needle) whose raw form is known. A character JSON lets an
// encoder write two ways (/, <, >, & and other characters some encoders
// escape, non-ASCII ones, control characters but \n, \r and \t) ends a
// piece; a newline, tab, carriage return, quote or backslash is looked for
// as every encoder writes it (\n, \t, \r, \", \\). A run of non-ASCII
// characters is looked for raw and as \u escapes (either case of hex), as
// an encoder writes all non-ASCII text one way or the other, but for the
// characters written either way in the same text (see twoWays), which end
// a run.
type prefilter struct {
	finders []*finder // a line holding one of the needles may match
}

// newPrefilter returns the prefilter for a pattern that must contain
// runes (case-insensitively with fold), or nil when no piece of it has a
// raw form to look for.
func newPrefilter(runes []rune, fold bool) *prefilter {
	var best, cur []byte
	var bestRun []rune
	flush := func() {
		if len(cur) > len(best) {
			best = append(best[:0], cur...)
		}
		cur = cur[:0]
	}
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if esc := canonicalEscape(r); esc != "" {
			cur = append(cur, esc...)
			continue
		}
		if safeRaw(r, fold) {
			if fold && r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			cur = append(cur, byte(r))
			continue
		}
		flush()
		if fold || r < utf8.RuneSelf || twoWays(r) {
			continue
		}
		j := i
		for j < len(runes) && runes[j] >= utf8.RuneSelf && !twoWays(runes[j]) {
			j++
		}
		if run := runes[i:j]; len(string(run)) > len(string(bestRun)) {
			bestRun = run
		}
		i = j - 1
	}
	flush()
	if len(bestRun) > 0 && len(best) < 4 && len(string(bestRun)) > len(best) {
		raw := []byte(string(bestRun))
		return &prefilter{finders: []*finder{newFinder(raw, false),
			newFinder(uEscapes(bestRun, "%04x"), false), newFinder(uEscapes(bestRun, "%04X"), false)}}
	}
	if len(best) == 0 {
		return nil
	}
	return &prefilter{finders: []*finder{newFinder(best, fold)}}
}

// canonicalEscape returns how every JSON encoder writes r in a string, when
// it is escaped one way only.
func canonicalEscape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	case '"':
		return `\"`
	case '\\':
		return `\\`
	}
	return ""
}

// safeRaw reports whether r is written as itself by every JSON encoder:
// printable ASCII but the characters some escape (/ < > &). Case-
// insensitively, k and s are not: K (U+212A) and ſ (U+017F) fold to them.
func safeRaw(r rune, fold bool) bool {
	if r < 0x20 || r > 0x7e {
		return false
	}
	switch r {
	case '"', '\\', '/', '<', '>', '&':
		return false
	case 'k', 'K', 's', 'S':
		return !fold
	}
	return true
}

// twoWays reports whether non-ASCII r is written escaped by an encoder
// that writes the rest of the text raw: U+2028 and U+2029 (Go's
// encoding/json, which cfix writes with, and others for JavaScript's
// sake), and U+FFFD, which a lone surrogate escape and bytes that are not
// UTF-8 (written \ufffd by Go) decode to.
func twoWays(r rune) bool {
	return r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}

// uEscapes writes runs as \u escapes (surrogate pairs beyond the BMP).
func uEscapes(run []rune, format string) []byte {
	var b []byte
	for _, r := range run {
		if r >= 0x10000 {
			r -= 0x10000
			b = fmt.Appendf(b, `\u`+format+`\u`+format, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			continue
		}
		b = fmt.Appendf(b, `\u`+format, r)
	}
	return b
}

// scanner finds the prefilter's needles in one region of bytes, left to
// right; it remembers where each needle occurs next, so that a region is
// read once per needle whatever the number of lines asked about.
type scanner struct {
	b     []byte
	finds []*finder
	next  []int // per finder: next index, -1 none, -2 not looked for yet
}

func (s *scanner) reset(p *prefilter, b []byte) {
	s.b = b
	s.finds = p.finders
	s.next = s.next[:0]
	for range s.finds {
		s.next = append(s.next, -2)
	}
}

// index returns the first index at or after from where a needle starts,
// or -1.
func (s *scanner) index(from int) int {
	best := -1
	for i, f := range s.finds {
		at := s.next[i]
		if at == -2 || at >= 0 && at < from {
			at = -1
			if from <= len(s.b) {
				if j := f.index(s.b[from:]); j >= 0 {
					at = from + j
				}
			}
			s.next[i] = at
		}
		if at >= 0 && (best < 0 || at < best) {
			best = at
		}
	}
	return best
}

// finder looks for one needle: bytes.IndexByte (vector instructions) for
// its rarest byte, then a look at its next rarest, then the whole needle.
// With fold, letters match either case.
type finder struct {
	nd     []byte // lower case with fold
	fold   bool
	o1, o2 int // offsets of the rarest byte and the next rarest
}

func newFinder(nd []byte, fold bool) *finder {
	f := &finder{nd: nd, fold: fold}
	if len(nd) > 0 {
		f.o1 = rarest(nd, -1)
		f.o2 = f.o1
		if len(nd) > 1 {
			f.o2 = rarest(nd, f.o1)
		}
	}
	return f
}

// index returns the first index of the needle in b, or -1.
func (f *finder) index(b []byte) int {
	n := len(f.nd)
	if n == 0 {
		return 0
	}
	if len(b) < n {
		return -1
	}
	if pairSIMD {
		return f.indexPair(b)
	}
	return f.indexByte(b)
}

// indexByte is index with bytes.IndexByte for the rarest byte, then a
// look at the next rarest, then the needle; len(b) >= len(f.nd) > 0.
func (f *finder) indexByte(b []byte) int {
	n := len(f.nd)
	c1 := f.nd[f.o1]
	if !f.fold || c1 < 'a' || c1 > 'z' {
		for j := f.o1; j < len(b); j++ {
			k := bytes.IndexByte(b[j:], c1)
			if k < 0 {
				return -1
			}
			j += k
			s := j - f.o1
			if s+n > len(b) {
				return -1
			}
			if f.check(b[s : s+n]) {
				return s
			}
		}
		return -1
	}
	// Either case of a letter: two streams of IndexByte, the nearer first.
	up := c1 - ('a' - 'A')
	lo, hi := -2, -2 // next index of c1 and of up at or after j; -1 none
	for j := f.o1; j < len(b); j++ {
		if lo != -1 && lo < j {
			lo = -1
			if k := bytes.IndexByte(b[j:], c1); k >= 0 {
				lo = j + k
			}
		}
		if hi != -1 && hi < j {
			hi = -1
			if k := bytes.IndexByte(b[j:], up); k >= 0 {
				hi = j + k
			}
		}
		switch {
		case lo < 0 && hi < 0:
			return -1
		case hi < 0 || lo >= 0 && lo < hi:
			j = lo
		default:
			j = hi
		}
		s := j - f.o1
		if s+n > len(b) {
			return -1
		}
		if f.check(b[s : s+n]) {
			return s
		}
	}
	return -1
}

// indexPair is index with pairIndex: the two rare bytes tested together,
// sixteen positions at a time.
func (f *finder) indexPair(b []byte) int {
	n := len(f.nd)
	a, z := min(f.o1, f.o2), max(f.o1, f.o2)
	d := z - a
	ca, cz := f.nd[a], f.nd[z]
	var oa, oz byte
	if f.fold && ca >= 'a' && ca <= 'z' {
		oa = 0x20
	}
	if f.fold && cz >= 'a' && cz <= 'z' {
		oz = 0x20
	}
	last := len(b) - n // the last start
	bb := b[a:]        // position s of bb is a start s of the needle
	for s := 0; s <= last; {
		if m := (len(bb) - s - d) &^ 15; m > 0 {
			k := pairIndex(bb[s:], ca, cz, oa, oz, d, m)
			if k < 0 {
				s += m
				continue
			}
			s += k
			if s > last {
				return -1
			}
			if f.equal(b[s : s+n]) {
				return s
			}
			s++
			continue
		}
		for ; s <= last; s++ {
			if f.check(b[s : s+n]) {
				return s
			}
		}
	}
	return -1
}

// check compares a candidate: the second byte first, then the needle.
func (f *finder) check(c []byte) bool {
	if f.fold {
		d := c[f.o2]
		if d >= 'A' && d <= 'Z' {
			d += 'a' - 'A'
		}
		return d == f.nd[f.o2] && equalFoldASCII(c, f.nd)
	}
	return c[f.o2] == f.nd[f.o2] && bytes.Equal(c, f.nd)
}

func (f *finder) equal(b []byte) bool {
	if f.fold {
		return equalFoldASCII(b, f.nd)
	}
	return bytes.Equal(b, f.nd)
}

// equalFoldASCII reports whether b equals lower (ASCII lower case) but for
// the case of ASCII letters.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// contains reports whether raw holds a needle.
func (p *prefilter) contains(raw []byte) bool {
	for _, f := range p.finders {
		if f.index(raw) >= 0 {
			return true
		}
	}
	return false
}

// rarest returns the index of the byte of a needle (lower case letters
// standing for both cases) that text holds least often, other than at
// skip, by a rough table of byte frequencies in transcripts: English prose
// and code, inside JSON full of ids and timestamps.
func rarest(nd []byte, skip int) int {
	best, bestF := -1, 1e9
	for i, c := range nd {
		if i == skip {
			continue
		}
		f := byteFreq(c)
		if skip >= 0 && c == nd[skip] {
			f *= 4 // the same byte tells less
		}
		if f < bestF {
			best, bestF = i, f
		}
	}
	return best
}

// byteFreq is a rough frequency (percent) of byte c.
func byteFreq(c byte) float64 {
	switch {
	case c >= 'a' && c <= 'z':
		f := letterFreq[c-'a']
		if c <= 'f' {
			f += 2 // hex digits of ids
		}
		return f
	case c >= 'A' && c <= 'Z':
		return letterFreq[c-'A'] / 8
	case c >= '0' && c <= '9':
		return 2.5
	case c == ' ':
		return 15
	case c == '"', c == ',', c == ':', c == '-':
		return 4
	case c == '.', c == '_', c == '/', c == '\\', c == '\n':
		return 1.5
	case c >= 0x80:
		return 0.5
	}
	return 0.5
}

var letterFreq = [26]float64{8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4,
	6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 0.98, 2.4, 0.15, 2.0, 0.07}
