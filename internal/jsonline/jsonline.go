// Package jsonline reads the tokens of one JSON line in place: the part the
// line walkers of search and secrets share. A walker embeds a Scanner and
// decides itself which members it keeps; the Scanner checks the syntax,
// bounds the nesting and builds no value.
package jsonline

import (
	"bytes"
	"fmt"
)

// MaxDepth bounds the nesting a line may have.
const MaxDepth = 512

// Span is a JSON string of a line: its bytes between the quotes, and
// whether they hold an escape.
type Span struct {
	Start, End int32
	Escaped    bool
}

// Error is a syntax error at a byte offset of the line.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("column %d: %s", e.Off+1, e.Msg) }

type abort struct{}

// Scanner reads the line B from offset I.
type Scanner struct {
	B     []byte
	I     int
	Depth int
	err   error
}

// Walk sets s to read line and runs object over the JSON object it must
// be (called at its opening brace); err is the first syntax error, what
// object kept before it stays kept.
func (s *Scanner) Walk(line []byte, object func()) (err error) {
	*s = Scanner{B: line}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abort); !ok {
				panic(r)
			}
			err = s.err
		}
	}()
	s.WS()
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		s.Fail("not a JSON object")
	}
	object()
	s.WS()
	if s.I < len(s.B) {
		s.Fail("data after the object")
	}
	return nil
}

// Fail stops the walk with a syntax error at the offset read to.
func (s *Scanner) Fail(msg string) {
	if s.err == nil {
		s.err = &Error{Off: s.I, Msg: msg}
	}
	panic(abort{})
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Next skips white space and returns the byte a value starts with.
func (s *Scanner) Next() byte {
	s.WS()
	if s.I >= len(s.B) {
		s.Fail("unexpected end of line")
	}
	return s.B[s.I]
}

// Str reads a string starting at its opening quote.
func (s *Scanner) Str() Span {
	s.I++ // the quote
	start := s.I
	escaped := false
	for {
		j := bytes.IndexByte(s.B[s.I:], '"')
		if j < 0 {
			s.I = len(s.B)
			s.Fail("string not terminated")
		}
		end := s.I + j
		// An odd run of backslashes before the quote escapes it.
		k := end
		for k > start && s.B[k-1] == '\\' {
			k--
		}
		if k < end {
			escaped = true
		}
		s.I = end + 1
		if (end-k)%2 == 0 {
			if !escaped && bytes.IndexByte(s.B[start:end], '\\') >= 0 {
				escaped = true
			}
			return Span{Start: int32(start), End: int32(end), Escaped: escaped}
		}
	}
}

// Scalar reads a value that is not a string, an object or an array: a
// literal or a number.
func (s *Scanner) Scalar() {
	switch s.B[s.I] {
	case 't':
		s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	default:
		start := s.I
		for s.I < len(s.B) {
			switch c := s.B[s.I]; {
			case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
				s.I++
				continue
			}
			break
		}
		if s.I == start {
			s.Fail(fmt.Sprintf("invalid character %q", s.B[s.I]))
		}
	}
}

func (s *Scanner) lit(l string) {
	if !bytes.HasPrefix(s.B[s.I:], []byte(l)) {
		s.Fail("invalid literal")
	}
	s.I += len(l)
}

// Number reads a number (at a digit or a minus sign) and returns the
// offset it starts at.
func (s *Scanner) Number() int {
	start := s.I
	s.Scalar()
	return start
}

// open reads the opening of an object or an array (at its brace or
// bracket) and reports whether members or elements follow; an empty one
// is read whole (false).
func (s *Scanner) open(closer byte) bool {
	s.Depth++
	if s.Depth > MaxDepth {
		s.Fail("nested too deep")
	}
	s.I++
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == closer {
		s.I++
		s.Depth--
		return false
	}
	return true
}

// Object reads the opening of an object (at its brace) and its first
// member's name and the colon after it (false: the object is empty, and
// read whole).
func (s *Scanner) Object() (Span, bool) {
	if !s.open('}') {
		return Span{}, false
	}
	return s.key(true)
}

// NextKey reads what follows a member of an object: a comma and the next
// member's name and colon, or the closing brace, which ends the object
// (false).
func (s *Scanner) NextKey() (Span, bool) { return s.key(false) }

// key reads a member's name and its colon, after the comma before it
// unless first.
func (s *Scanner) key(first bool) (Span, bool) {
	if !first {
		s.WS()
		if s.I >= len(s.B) {
			s.Fail("unexpected end of line in an object")
		}
		switch s.B[s.I] {
		case ',':
			s.I++
		case '}':
			s.I++
			s.Depth--
			return Span{}, false
		default:
			s.Fail("expected , or } in an object")
		}
	}
	s.WS()
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		s.Fail("expected a member name")
	}
	k := s.Str()
	s.WS()
	if s.I >= len(s.B) || s.B[s.I] != ':' {
		s.Fail("expected : after a member name")
	}
	s.I++
	return k, true
}

// Array reads the opening of an array (at its bracket) and reports
// whether elements follow (false: it is empty, and read whole).
func (s *Scanner) Array() bool { return s.open(']') }

// NextElem reads what follows an element of an array: a comma (true:
// another element follows) or the closing bracket, which ends the array.
func (s *Scanner) NextElem() bool {
	s.WS()
	if s.I >= len(s.B) {
		s.Fail("unexpected end of line in an array")
	}
	switch s.B[s.I] {
	case ',':
		s.I++
		return true
	case ']':
		s.I++
		s.Depth--
		return false
	}
	s.Fail("expected , or ] in an array")
	return false
}

// Hex4 decodes the four hex digits of a \u escape.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
