package e2e

import (
	"encoding/json"
	"fmt"
)

// jnode is one JSON value of a line, with its byte span, so that a value
// can be replaced while every other byte of the line stays as it was.
type jnode struct {
	start, end int      // the value is line[start:end]
	kind       byte     // '{', '[', '"', or 'v' (number, true, false, null)
	keys       []string // object keys, in order
	kids       []*jnode // object values or array elements, in order
}

// get returns the value of key in an object node, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.kids[i]
		}
	}
	return nil
}

// str decodes a string node of line; ok is false for any other node.
func (n *jnode) str(line []byte) (s string, ok bool) {
	if n == nil || n.kind != '"' {
		return "", false
	}
	if json.Unmarshal(line[n.start:n.end], &s) != nil {
		return "", false
	}
	return s, true
}

// parseSpans parses one JSON value that makes up the whole of line.
func parseSpans(line []byte) (*jnode, error) {
	p := &spanParser{b: line}
	p.ws()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("e2e: trailing bytes at %d", p.i)
	}
	return n, nil
}

type spanParser struct {
	b []byte
	i int
}

func (p *spanParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *spanParser) value(depth int) (*jnode, error) {
	if depth > 500 {
		return nil, fmt.Errorf("e2e: JSON nested too deep")
	}
	if p.i >= len(p.b) {
		return nil, fmt.Errorf("e2e: unexpected end of JSON")
	}
	n := &jnode{start: p.i}
	switch c := p.b[p.i]; c {
	case '{', '[':
		n.kind = c
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == close {
			p.i++
			n.end = p.i
			return n, nil
		}
		for {
			p.ws()
			if c == '{' {
				k, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				key, ok := k.str(p.b)
				if !ok {
					return nil, fmt.Errorf("e2e: object key at %d is not a string", k.start)
				}
				p.ws()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return nil, fmt.Errorf("e2e: want ':' at %d", p.i)
				}
				p.i++
				p.ws()
				n.keys = append(n.keys, key)
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, v)
			p.ws()
			if p.i >= len(p.b) {
				return nil, fmt.Errorf("e2e: unexpected end of JSON")
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] != close {
				return nil, fmt.Errorf("e2e: want ',' or %q at %d", close, p.i)
			}
			p.i++
			n.end = p.i
			return n, nil
		}
	case '"':
		n.kind = '"'
		p.i++
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '\\':
				p.i += 2
				continue
			case '"':
				p.i++
				n.end = p.i
				return n, nil
			}
			p.i++
		}
		return nil, fmt.Errorf("e2e: unterminated string at %d", n.start)
	default:
		n.kind = 'v'
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				n.end = p.i
				return n, nil
			}
			p.i++
		}
		n.end = p.i
		return n, nil
	}
}
