package session

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Limits of the light value tree that Parse builds. The checks and schemas
// never look deeper or at more of a string, and keeping tool outputs, file
// contents and whole API requests out of memory is what makes a whole-store
// check fast.
const (
	// MaxString is the number of bytes of a string value kept; longer
	// strings are cut to this length (still valid strings).
	MaxString = 1024
	// MaxDepth is the depth (the entry object is depth 0) from which
	// objects and arrays under the entry's "message" are checked but kept
	// as empty containers.
	MaxDepth = 5
	// ShallowDepth is that depth under every other field of the entry
	// (toolUseResult, attachment, api-request shapes...), which no check
	// or schema looks into.
	ShallowDepth = 2
)

// headerTop, headerMessage and headerBlock are the fields HeaderOf reads
// of an entry, of its message and of a content block.
var (
	headerTop     = map[string]bool{}
	headerMessage = map[string]bool{"id": true, "role": true, "content": true, "model": true}
	headerBlock   = map[string]bool{"type": true, "id": true, "tool_use_id": true, "thinking": true, "signature": true, "text": true}
)

func init() {
	for _, k := range HeaderKeys {
		headerTop[k] = true
	}
}

// SyntaxError is a JSON syntax error at a byte offset of the line.
type SyntaxError struct {
	Offset int // 0-based byte offset in the line
	Msg    string
	// Deep is set when the line is valid JSON that nests deeper than
	// MaxNesting: Offset is where it passes the limit. The rest of the
	// line was checked without recursion, so any other syntax error is
	// reported instead.
	Deep bool
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Offset+1, e.Msg) }

// Parsed is the result of parsing one line.
type Parsed struct {
	// Value is the light tree of the first JSON value on the line:
	// map[string]any, []any, string, json.Number, bool or nil.
	Value any
	// Err is set when the line is not valid JSON.
	Err *SyntaxError
	// BadUTF8 is the offset of the first invalid UTF-8 byte, or -1.
	BadUTF8 int
	// Surrogates counts \uD800-\uDFFF escapes that are not part of a valid
	// surrogate pair; SurrogateOff is the offset of the first one, or -1.
	Surrogates   int
	SurrogateOff int
	// NULEscapes counts \u0000 escapes; NULEscapeOff is the offset of the
	// first one, or -1.
	NULEscapes   int
	NULEscapeOff int
	// More holds the light trees of further values on the line: records
	// glued together. GluedAt is the offset of the second one, or -1.
	More    []any
	GluedAt int
	// Spans holds the [start, end) byte range of each value on the line.
	Spans [][2]int
}

// Parser parses lines into light trees. It keeps scratch space and a key
// cache between calls; it is not safe for concurrent use.
type Parser struct {
	// TopKeys, when set, names the fields of a top-level object that are
	// kept in the tree; others are checked but dropped. Scan remembers
	// what it read of the map: give the parser a new map rather than
	// change this one.
	TopKeys map[string]bool
	// Header keeps only what HeaderOf reads (a far smaller tree, for
	// planners that need no schema check); it overrides TopKeys.
	Header bool

	b       []byte
	i       int
	res     *Parsed
	scratch []byte
	keys    map[string]string

	// Scan's state: the shaper, the result its checks fill, the hashes of
	// the keys of the objects open, what it knows of keys and interned
	// header values.
	sh       *Shaper
	scanRes  Parsed
	keyStack []uint64
	kc       *keyCache
	held     strings.Builder // header strings (hold)

	// Salvage's state: while marks is set, the parser marks in it the
	// offset (plus markBase) of every object it opens, and keeps the span
	// of the container it closed last (lastStart is -1 for an array).
	marks              *bitset
	markBase           int
	lastStart, lastEnd int
}

// NewParser returns a Parser.
func NewParser() *Parser {
	return &Parser{keys: make(map[string]string, 256)}
}

type parseError struct{ e *SyntaxError }

// Parse parses line. It never panics on any input.
func (p *Parser) Parse(line []byte) (res Parsed) {
	res = Parsed{BadUTF8: -1, SurrogateOff: -1, NULEscapeOff: -1, GluedAt: -1}
	p.b, p.i, p.res = line, 0, &res
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			res.Err = pe.e
			if pe.e.Deep {
				// Too deep to build: check the whole line without
				// recursion; a syntax error anywhere is the error.
				if e := p.checkFlat(); e != nil {
					res.Err = e
				}
			}
		}
		p.b, p.res = nil, nil
	}()
	p.ws()
	if p.i >= len(p.b) {
		p.fail("unexpected end of line: no JSON value")
	}
	start := p.i
	res.Value = p.value(0, true, MaxDepth)
	res.Spans = append(res.Spans, [2]int{start, p.i})
	for {
		p.ws()
		if p.i >= len(p.b) {
			break
		}
		c := p.b[p.i]
		if c != '{' && c != '[' {
			p.fail(fmt.Sprintf("invalid character %s after top-level value", quoteChar(c)))
		}
		if res.GluedAt < 0 {
			res.GluedAt = p.i
		}
		start := p.i
		res.More = append(res.More, p.value(0, true, MaxDepth))
		res.Spans = append(res.Spans, [2]int{start, p.i})
	}
	return res
}

func (p *Parser) fail(msg string) {
	panic(parseError{&SyntaxError{Offset: p.i, Msg: msg}})
}

func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return "'" + string(c) + "'"
}

func (p *Parser) ws() {
	for p.i < len(p.b) {
		// One comparison for the usual case: no whitespace at all.
		if c := p.b[p.i]; c > ' ' || c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return
		}
		p.i++
	}
}

// closes moves past what follows a member of an object ('}') or an element
// of an array (']'): a ',' (false: another follows) or the closing byte
// (true). Anything else is a syntax error.
func (p *Parser) closes(end byte) bool {
	// The usual case first: the byte right after the value.
	if p.i < len(p.b) {
		if c := p.b[p.i]; c == ',' || c == end {
			p.i++
			return c == end
		}
	}
	return p.closesSpaced(end)
}

// closesSpaced is closes after whitespace, or at a syntax error.
func (p *Parser) closesSpaced(end byte) bool {
	kind, after := "array", "array element"
	if end == '}' {
		kind, after = "object", "object key:value pair"
	}
	p.ws()
	p.expectEnd(kind)
	switch p.b[p.i] {
	case ',':
		p.i++
		return false
	case end:
		p.i++
		return true
	}
	p.fail(fmt.Sprintf("invalid character %s after %s", quoteChar(p.b[p.i]), after))
	return false
}

func (p *Parser) expectEnd(what string) {
	if p.i >= len(p.b) {
		p.fail("unexpected end of line in " + what)
	}
}

// value parses one value. With build false it only checks.
func (p *Parser) value(depth int, build bool, limit int) any {
	p.expectEnd("value")
	switch c := p.b[p.i]; c {
	case '{':
		return p.object(depth, build, limit)
	case '[':
		return p.array(depth, build, limit)
	case '"':
		return p.str(build, MaxString)
	case 't':
		p.lit("true")
		return true
	case 'f':
		p.lit("false")
		return false
	case 'n':
		p.lit("null")
		return nil
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number(build)
		}
		p.fail(fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)))
	}
	return nil
}

func (p *Parser) lit(s string) {
	if i := p.i; len(p.b)-i >= len(s) && string(p.b[i:i+len(s)]) == s {
		p.i = i + len(s)
		return
	}
	p.litBad(s)
}

// litBad fails on a literal that is not s.
func (p *Parser) litBad(s string) {
	if len(p.b)-p.i < len(s) {
		p.i = len(p.b)
		p.fail("unexpected end of line in literal " + s)
	}
	for k := 0; k < len(s); k++ {
		if p.b[p.i] != s[k] {
			p.fail(fmt.Sprintf("invalid character %s in literal %s", quoteChar(p.b[p.i]), s))
		}
		p.i++
	}
}

// MaxNesting is how many objects and arrays may nest on a line, as in
// encoding/json: Parse reports a deeper line as a SyntaxError with
// Deep set, never a stack overflow. Real transcripts nest under 10 levels;
// Claude Code's JSON.stringify fails on a few thousand.
const MaxNesting = 10000

// closed notes, for Salvage, the container that ends at p.i; start is
// where an object starts, -1 for an array.
func (p *Parser) closed(start int) {
	if p.marks != nil {
		p.lastStart, p.lastEnd = start, p.i
	}
}

// checkFlat checks the whole line as Parse does, with a stack of bytes
// instead of recursion: any depth, in linear time. It returns the first
// syntax error, or nil.
func (p *Parser) checkFlat() (err *SyntaxError) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.e
		}
	}()
	p.i = 0
	var open []byte // '}' or ']' for each container open
	var starts []int
	p.ws()
	if p.i >= len(p.b) {
		p.fail("unexpected end of line: no JSON value")
	}
	for {
		// A value.
		p.ws()
		p.expectEnd("value")
		switch c := p.b[p.i]; c {
		case '{':
			start := p.i
			if p.marks != nil {
				p.marks.set(p.markBase + start)
			}
			p.i++
			p.ws()
			p.expectEnd("object")
			if p.b[p.i] == '}' {
				p.i++
				p.closed(start)
				break
			}
			open, starts = append(open, '}'), append(starts, start)
			p.member()
			continue
		case '[':
			p.i++
			p.ws()
			p.expectEnd("array")
			if p.b[p.i] == ']' {
				p.i++
				p.closed(-1)
				break
			}
			open, starts = append(open, ']'), append(starts, -1)
			continue
		default:
			p.value(0, false, 0)
		}
		// After a value: close what ends here, then the next member,
		// element or top-level value.
		for len(open) > 0 {
			end := open[len(open)-1]
			if !p.closes(end) {
				if end == '}' {
					p.member()
				}
				break
			}
			p.closed(starts[len(starts)-1])
			open, starts = open[:len(open)-1], starts[:len(starts)-1]
		}
		if len(open) == 0 {
			p.ws()
			if p.i >= len(p.b) {
				return nil
			}
			if c := p.b[p.i]; c != '{' && c != '[' {
				p.fail(fmt.Sprintf("invalid character %s after top-level value", quoteChar(c)))
			}
		}
	}
}

// member reads an object key and the colon after it, for checkFlat.
func (p *Parser) member() {
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] != '"' {
		p.fail(fmt.Sprintf("invalid character %s looking for beginning of object key string", quoteChar(p.b[p.i])))
	}
	p.strSpan()
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] != ':' {
		p.fail(fmt.Sprintf("invalid character %s after object key", quoteChar(p.b[p.i])))
	}
	p.i++
}

// failDeep fails at a value that passes MaxNesting.
func (p *Parser) failDeep() {
	panic(parseError{&SyntaxError{Offset: p.i, Msg: fmt.Sprintf("values nest deeper than %d levels", MaxNesting), Deep: true}})
}

func (p *Parser) object(depth int, build bool, limit int) any {
	if depth >= MaxNesting {
		p.failDeep()
	}
	start := p.i
	p.i++ // '{'
	if p.marks != nil {
		p.marks.set(p.markBase + start)
	}
	// wanted: the caller keeps the value (past limit, an empty object).
	wanted := build
	build = build && depth < limit
	var m map[string]any
	if build {
		m = make(map[string]any, 8)
	}
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] == '}' {
		p.i++
		p.closed(start)
		return emptyObject(m, wanted)
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			p.ws()
			p.expectEnd("object")
			if p.b[p.i] != '"' {
				p.fail(fmt.Sprintf("invalid character %s looking for beginning of object key string", quoteChar(p.b[p.i])))
			}
		}
		// The key's bytes decide what is kept; only a kept key becomes a
		// string.
		var key string
		var kb []byte
		if build {
			ks, ke, escaped := p.strSpan()
			kb = p.b[ks:ke]
			if escaped {
				key = p.unescape(kb, 1<<30)
				kb = []byte(key)
			}
		} else {
			p.strSpan()
		}
		if i := p.i; i+1 < len(p.b) && p.b[i] == ':' && p.b[i+1] > ' ' {
			p.i = i + 1 // the usual case: the colon, the value right after it
		} else {
			p.ws()
			p.expectEnd("object")
			if p.b[p.i] != ':' {
				p.fail(fmt.Sprintf("invalid character %s after object key", quoteChar(p.b[p.i])))
			}
			p.i++
			p.ws()
		}
		lim, keep := limit, build
		if depth == 0 {
			if string(kb) != "message" {
				lim = ShallowDepth
			}
			keep = build && (p.TopKeys == nil || p.TopKeys[string(kb)])
		}
		if p.Header && build {
			switch depth {
			case 0:
				keep = headerTop[string(kb)]
			case 1:
				keep = string(kb) == "id" || string(kb) == "role" || string(kb) == "content" || string(kb) == "model"
			case 3:
				keep = headerBlock[string(kb)]
			default:
				keep = false
			}
		}
		v := p.value(depth+1, keep, lim)
		if keep {
			if key == "" {
				key = p.intern(kb)
			}
			m[key] = v
		}
		if i := p.i; i < len(p.b) && p.b[i] == ',' { // another member
			p.i = i + 1
			continue
		}
		if p.closes('}') {
			p.closed(start)
			return emptyObject(m, wanted)
		}
	}
}

func (p *Parser) array(depth int, build bool, limit int) any {
	if depth >= MaxNesting {
		p.failDeep()
	}
	p.i++ // '['
	wanted := build
	build = build && depth < limit
	var a []any
	if build {
		a = make([]any, 0, 4)
	}
	p.ws()
	p.expectEnd("array")
	if p.b[p.i] == ']' {
		p.i++
		p.closed(-1)
		return emptyArray(a, wanted)
	}
	for {
		p.ws()
		v := p.value(depth+1, build, limit)
		if build {
			a = append(a, v)
		}
		if p.closes(']') {
			p.closed(-1)
			return emptyArray(a, wanted)
		}
	}
}

func (p *Parser) number(build bool) any {
	b, i := p.b, p.i
	start := i
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		p.i = i
		p.fail("unexpected end of line in number")
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digits(b, i+1)
	default:
		p.i = i
		p.fail(fmt.Sprintf("invalid character %s in numeric literal", quoteChar(c)))
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digits(b, d); i == d {
			p.i = i
			p.expectEnd("number")
			p.fail(fmt.Sprintf("invalid character %s after decimal point in numeric literal", quoteChar(b[i])))
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, d); i == d {
			p.i = i
			p.expectEnd("number")
			p.fail(fmt.Sprintf("invalid character %s in exponent of numeric literal", quoteChar(b[i])))
		}
	}
	p.i = i
	if !build {
		return nil
	}
	return json.Number(b[start:i])
}

// digits returns the index of the first byte of b from i on that is not a
// decimal digit, or len(b).
func digits(b []byte, i int) int {
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	return i
}

// emptyObject returns m, or for an object not built, an empty one when
// the caller keeps it and nil (no allocation) when it does not.
func emptyObject(m map[string]any, wanted bool) any {
	if m != nil {
		return m
	}
	if wanted {
		return map[string]any{}
	}
	return nil
}

// emptyArray is emptyObject for arrays.
func emptyArray(a []any, wanted bool) any {
	if a != nil {
		return a
	}
	if wanted {
		return []any{}
	}
	return nil
}

// intern returns the key raw as a string, interning short keys: a key seen
// before costs no allocation.
func (p *Parser) intern(raw []byte) string {
	if len(raw) > 64 || p.keys == nil {
		return string(raw)
	}
	if k, ok := p.keys[string(raw)]; ok {
		return k
	}
	ks := string(raw)
	if len(p.keys) < 4096 {
		p.keys[ks] = ks
	}
	return ks
}

// safe marks bytes that need no attention inside a string.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	t['"'] = false
	t['\\'] = false
	return t
}()

// special8 reports whether any of the 8 bytes packed in x needs attention
// inside a string: '"', '\\', a control byte or a non-ASCII byte.
func special8(x uint64) bool { return specialMask(x) != 0 }

// specialMask flags with its high bit each byte packed in x (little
// endian) that needs attention inside a string. Bytes above a flagged one
// may be flagged too (borrows); the lowest flag is always the first such
// byte, so bits.TrailingZeros64(m)/8 is its index: below it every byte is
// ASCII from 0x20 on and no quote or backslash, so no subtraction borrows
// and none sets a high bit; at it, a quote or backslash gives 0 - 1, a
// control byte b - 0x20 < 0, a non-ASCII byte its own high bit.
func specialMask(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(lo*'"'), x^(lo*'\\')
	return ((q - lo) | (bs - lo) | (x - lo*0x20) | x) & hi
}

// plainRun returns the index of the first byte of b from i on that needs
// attention inside a string, or len(b): 8 bytes at a time, then byte by
// byte.
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := specialMask(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && safe[b[i]] {
		i++
	}
	return i
}

// str parses a string starting at the opening quote. With build it returns
// the unescaped string cut to limit bytes.
func (p *Parser) str(build bool, limit int) any {
	start, end, escaped := p.strSpan()
	if !build {
		return nil
	}
	if !escaped {
		if end-start > limit {
			end = start + limit
		}
		return string(p.b[start:end])
	}
	return p.unescape(p.b[start:end], limit)
}

// strSpan checks a string starting at the opening quote and moves past its
// closing quote. It returns the bounds of the body and whether it holds
// escapes.
func (p *Parser) strSpan() (start, end int, escaped bool) {
	b := p.b
	i := p.i + 1 // opening quote
	start = i
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			p.i = i
			p.fail("unexpected end of line in string literal")
		}
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return start, i, escaped
		case c == '\\':
			escaped = true
			p.i = i
			p.escape()
			i = p.i
		case c < 0x20:
			p.i = i
			p.fail(fmt.Sprintf("invalid character %s in string literal", quoteChar(c)))
		default: // >= 0x80
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				if p.res.BadUTF8 < 0 {
					p.res.BadUTF8 = i
				}
				size = 1
			}
			i += size
		}
	}
}

// escape checks one escape sequence at p.i and advances past it; it counts
// lone surrogate escapes and \u0000 escapes.
func (p *Parser) escape() {
	b := p.b
	if p.i+1 >= len(b) {
		p.i = len(b)
		p.fail("unexpected end of line in string escape")
	}
	switch b[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return
	case 'u':
	default:
		p.i++
		p.fail(fmt.Sprintf("invalid character %s in string escape code", quoteChar(b[p.i])))
	}
	at := p.i
	r := p.hex4()
	switch {
	case r >= 0xD800 && r < 0xDC00:
		// High surrogate: must be followed by \uDC00-\uDFFF.
		if p.i+1 < len(b) && b[p.i] == '\\' && b[p.i+1] == 'u' {
			save := p.i
			r2 := p.hex4()
			if r2 >= 0xDC00 && r2 < 0xE000 {
				return
			}
			p.i = save
		}
		p.lone(at)
	case r >= 0xDC00 && r < 0xE000:
		p.lone(at)
	case r == 0:
		p.res.NULEscapes++
		if p.res.NULEscapeOff < 0 {
			p.res.NULEscapeOff = at
		}
	}
}

func (p *Parser) lone(at int) {
	p.res.Surrogates++
	if p.res.SurrogateOff < 0 {
		p.res.SurrogateOff = at
	}
}

// hex4 reads "\uXXXX" at p.i and returns its value.
func (p *Parser) hex4() rune {
	b := p.b
	p.i += 2
	if len(b)-p.i < 4 {
		p.i = len(b)
		p.fail("unexpected end of line in \\u escape")
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := b[p.i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			p.fail(fmt.Sprintf("invalid character %s in \\u hexadecimal character escape", quoteChar(c)))
		}
		r = r<<4 | rune(v)
		p.i++
	}
	return r
}

// unescape decodes an already checked string body, cut to limit bytes.
func (p *Parser) unescape(s []byte, limit int) string {
	return string(p.unescapeBytes(s, limit))
}

// unescapeBytes is unescape into the parser's scratch space, valid until
// the next call.
func (p *Parser) unescapeBytes(s []byte, limit int) []byte {
	out := appendUnescaped(p.scratch[:0], s, limit)
	p.scratch = out
	return out
}

// Unquote decodes raw, one JSON string with its quotes, as encoding/json
// does (a lone surrogate escape becomes U+FFFD), in one pass.
// ok is false when raw is not one valid JSON string, and when it holds
// invalid UTF-8, which encoding/json replaces byte by byte: ask it then.
func (p *Parser) Unquote(raw []byte) (s string, ok bool) {
	res := Parsed{BadUTF8: -1, SurrogateOff: -1, NULEscapeOff: -1, GluedAt: -1}
	p.b, p.i, p.res = raw, 0, &res
	defer func() {
		if r := recover(); r != nil {
			if _, isParse := r.(parseError); !isParse {
				panic(r)
			}
			s, ok = "", false
		}
		p.b, p.res = nil, nil
	}()
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	start, end, esc := p.strSpan()
	if p.i != len(raw) || res.BadUTF8 >= 0 {
		return "", false
	}
	if !esc {
		return string(raw[start:end]), true
	}
	// Decoded, a body is never longer.
	return string(appendUnescaped(make([]byte, 0, end-start), raw[start:end], end-start)), true
}

// Field returns the bytes of the value at path in line, a JSON object
// (keys from the top: "message", "content"; the last of repeated keys,
// in any of repeated objects on the way), and whether it is there. It builds nothing and reads the line once; a
// key matches exactly (encoding/json also takes one that differs in case).
func (p *Parser) Field(line []byte, path ...string) (raw []byte, ok bool) {
	res := Parsed{BadUTF8: -1, SurrogateOff: -1, NULEscapeOff: -1, GluedAt: -1}
	p.b, p.i, p.res = line, 0, &res
	defer func() {
		if r := recover(); r != nil {
			if _, isParse := r.(parseError); !isParse {
				panic(r)
			}
			raw, ok = nil, false
		}
		p.b, p.res = nil, nil
	}()
	p.ws()
	return p.fieldIn(path, 0)
}

// fieldIn is Field of the value at p.i, at the given depth.
func (p *Parser) fieldIn(path []string, depth int) (found []byte, ok bool) {
	p.expectEnd("value")
	if p.b[p.i] != '{' || len(path) == 0 {
		p.value(depth, false, 0)
		return nil, false
	}
	if p.open() {
		return nil, false
	}
	for {
		p.ws()
		p.expectEnd("object")
		if p.b[p.i] != '"' {
			p.fail(fmt.Sprintf("invalid character %s looking for beginning of object key string", quoteChar(p.b[p.i])))
		}
		ks, ke, esc := p.strSpan()
		key := p.b[ks:ke]
		if esc {
			key = p.unescapeBytes(key, len(key))
		}
		match := string(key) == path[0]
		p.ws()
		p.expectEnd("object")
		if p.b[p.i] != ':' {
			p.fail(fmt.Sprintf("invalid character %s after object key", quoteChar(p.b[p.i])))
		}
		p.i++
		p.ws()
		start := p.i
		switch {
		case match && len(path) > 1:
			// A repeated object adds to the one before, as encoding/json
			// decodes it into one struct.
			if f, k := p.fieldIn(path[1:], depth+1); k {
				found, ok = f, true
			}
		case match:
			p.value(depth+1, false, 0)
			found, ok = p.b[start:p.i], true
		default:
			p.value(depth+1, false, 0)
		}
		if p.closes('}') {
			return found, ok
		}
	}
}

// appendUnescaped appends the already checked string body s, decoded, to
// out, up to about limit bytes, and returns it cut to limit.
func appendUnescaped(out, s []byte, limit int) []byte {
	for i := 0; i < len(s) && len(out) < limit; {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexAt(s[i+2:])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if r2 := hexAt(s[i+2:]); r2 >= 0xDC00 && r2 < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
					i += 6
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, s[i+1])
		}
		i += 2
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func hexAt(b []byte) rune {
	var r rune
	for k := 0; k < 4; k++ {
		c := b[k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
