package session

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Byte-preserving edits of one JSON entry: the planners change a field or a
// content block and keep every other byte of the line as Claude Code wrote
// it (field order, escapes, unknown fields).

// Field is one field of a JSON object: its key and the byte range of its
// value.
type Field struct {
	Key        string
	Start, End int // the value's bytes: raw[Start:End]
	KeyStart   int // the opening quote of the key
}

// scanAt runs scan with a parser positioned at raw[at], turning a syntax
// error into an error. The parser has no key cache: planners call this once
// per line.
func scanAt(raw []byte, at int, scan func(p *Parser) error) (err error) {
	p := &Parser{}
	res := Parsed{BadUTF8: -1, SurrogateOff: -1, GluedAt: -1}
	p.b, p.i, p.res = raw, at, &res
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.e
		}
	}()
	return scan(p)
}

// Fields lists the fields of the JSON object that starts at raw[at].
func Fields(raw []byte, at int) (fields []Field, end int, err error) {
	err = scanAt(raw, at, func(p *Parser) error {
		f, e, err := fieldsOf(p, raw)
		fields, end = f, e
		return err
	})
	return fields, end, err
}

func fieldsOf(p *Parser, raw []byte) (fields []Field, end int, err error) {
	p.ws()
	if p.i >= len(raw) || raw[p.i] != '{' {
		return nil, 0, &SyntaxError{Offset: p.i, Msg: "not an object"}
	}
	p.i++
	p.ws()
	if p.i < len(raw) && raw[p.i] == '}' {
		return nil, p.i + 1, nil
	}
	for {
		p.ws()
		p.expectEnd("object")
		if p.b[p.i] != '"' {
			p.fail("expected a string key in object")
		}
		ks := p.i
		key, _ := p.str(true, 1<<30).(string)
		p.ws()
		p.expectEnd("object")
		if raw[p.i] != ':' {
			p.fail("expected ':' after object key")
		}
		p.i++
		p.ws()
		vs := p.i
		p.value(1, false, 0)
		fields = append(fields, Field{Key: key, Start: vs, End: p.i, KeyStart: ks})
		p.ws()
		p.expectEnd("object")
		switch raw[p.i] {
		case ',':
			p.i++
		case '}':
			return fields, p.i + 1, nil
		default:
			p.fail("expected ',' or '}' in object")
		}
	}
}

// Elements lists the byte ranges of the elements of the JSON array that
// starts at raw[at].
func Elements(raw []byte, at int) (elems [][2]int, end int, err error) {
	err = scanAt(raw, at, func(p *Parser) error {
		e, n, err := elementsOf(p, raw)
		elems, end = e, n
		return err
	})
	return elems, end, err
}

func elementsOf(p *Parser, raw []byte) (elems [][2]int, end int, err error) {
	p.ws()
	if p.i >= len(raw) || raw[p.i] != '[' {
		return nil, 0, &SyntaxError{Offset: p.i, Msg: "not an array"}
	}
	p.i++
	p.ws()
	if p.i < len(raw) && raw[p.i] == ']' {
		return nil, p.i + 1, nil
	}
	for {
		p.ws()
		s := p.i
		p.value(1, false, 0)
		elems = append(elems, [2]int{s, p.i})
		p.ws()
		p.expectEnd("array")
		switch raw[p.i] {
		case ',':
			p.i++
		case ']':
			return elems, p.i + 1, nil
		default:
			p.fail("expected ',' or ']' in array")
		}
	}
}

// Find returns the byte range of the value at path (object keys) in the
// JSON object raw.
func Find(raw []byte, path ...string) (start, end int, ok bool) {
	at := 0
	for i, key := range path {
		fields, _, err := Fields(raw, at)
		if err != nil {
			return 0, 0, false
		}
		found := false
		for _, f := range fields {
			if f.Key == key {
				if i == len(path)-1 {
					return f.Start, f.End, true
				}
				at, found = f.Start, true
				break
			}
		}
		if !found {
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// Replace returns raw with raw[start:end] replaced by val.
func Replace(raw []byte, start, end int, val []byte) []byte {
	out := make([]byte, 0, len(raw)-(end-start)+len(val))
	out = append(out, raw[:start]...)
	out = append(out, val...)
	return append(out, raw[end:]...)
}

// SetField sets the value of a top-level field of the JSON object raw
// (which must have it) to val, keeping every other byte.
func SetField(raw []byte, key string, val []byte) ([]byte, error) {
	s, e, ok := Find(raw, key)
	if !ok {
		return nil, fmt.Errorf("no field %q", key)
	}
	return Replace(raw, s, e, val), nil
}

// FixSurrogates replaces every \uD800-\uDFFF escape that is not part of a
// valid pair with \ufffd. It reports how many it replaced.
func FixSurrogates(raw []byte) ([]byte, int) {
	var out []byte
	n := 0
	last := 0
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			continue
		}
		switch c {
		case '"':
			inStr = false
		case '\\':
			if i+1 < len(raw) && raw[i+1] == 'u' && i+6 <= len(raw) {
				r := hexAt(raw[i+2:])
				pair := false
				if r >= 0xD800 && r < 0xDC00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					if r2 := hexAt(raw[i+8:]); r2 >= 0xDC00 && r2 < 0xE000 {
						pair = true
					}
				}
				if pair {
					i += 11
					continue
				}
				if r >= 0xD800 && r < 0xE000 {
					out = append(out, raw[last:i]...)
					out = append(out, `\ufffd`...)
					last = i + 6
					n++
				}
				i += 5
				continue
			}
			i++ // skip the escaped byte
		}
	}
	if n == 0 {
		return raw, 0
	}
	return append(out, raw[last:]...), n
}

// FixUTF8 replaces invalid UTF-8 bytes with U+FFFD.
func FixUTF8(raw []byte) []byte {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}

// FixNULEscapes replaces every \u0000 escape in a string with \ufffd (as
// long: the line keeps its length). It reports how many it replaced.
func FixNULEscapes(raw []byte) ([]byte, int) {
	var out []byte
	n := 0
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			continue
		}
		switch c {
		case '"':
			inStr = false
		case '\\':
			if i+6 <= len(raw) && raw[i+1] == 'u' && hexAt(raw[i+2:]) == 0 && isHex4(raw[i+2:i+6]) {
				if out == nil {
					out = append([]byte(nil), raw...)
				}
				copy(out[i:], `\ufffd`)
				n++
				i += 5
				continue
			}
			i++ // skip the escaped byte
		}
	}
	if n == 0 {
		return raw, 0
	}
	return out, n
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
