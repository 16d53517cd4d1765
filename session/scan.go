package session

import (
	"fmt"
	"hash/maphash"
)

// scanBail aborts a Scan that leaves the line to Parse: a key with escapes,
// a key repeated in one object, an object with too many keys.
type scanBail struct{}

// scanMaxKeys is the most fields of one object Scan looks at for repeated
// keys (a linear search behind a 64-bit filter); bigger objects go to Parse.
const scanMaxKeys = 128

// Scan checks line as Parse does and, when it holds exactly one JSON object
// with valid UTF-8 and no lone surrogate escape, fills e as HeaderOf fills
// it from the tree Parse would build, and returns s's hash of that tree
// (Shaper.Shape), with ok true, without building the tree. The tree is the
// one Parse builds with the parser's TopKeys and Header unset; e.Content is
// left nil.
//
// Otherwise it returns ok false and the caller parses the line: a syntax
// error, a value that is not an object, records glued together, invalid
// UTF-8, lone surrogates, and a few rare forms Scan does not follow (a key
// with escapes, a key repeated in an object, an object of more than 128
// fields). e is then undefined.
func (p *Parser) Scan(line []byte, s *Shaper, e *Entry) (shape uint64, ok bool) {
	p.scanRes = Parsed{BadUTF8: -1, SurrogateOff: -1, GluedAt: -1}
	p.b, p.i, p.res, p.sh = line, 0, &p.scanRes, s
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case parseError, scanBail:
				shape, ok = 0, false
			default:
				panic(r)
			}
		}
		p.b, p.res, p.sh = nil, nil, nil
		p.keyStack = p.keyStack[:0]
	}()
	*e = Entry{Blocks: e.Blocks[:0]}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return 0, false
	}
	shape = p.scanEntry(e)
	p.ws()
	if p.i < len(p.b) || p.scanRes.BadUTF8 >= 0 || p.scanRes.Surrogates > 0 {
		return 0, false
	}
	return shape, true
}

// scanEntry scans the entry object (depth 0) at p.i.
func (p *Parser) scanEntry(e *Entry) uint64 {
	h := uint64(objectSeed)
	if p.open() {
		return endObject(h, 0)
	}
	mark, bloom := len(p.keyStack), uint64(0)
	for {
		k := p.key()
		if p.TopKeys != nil && !p.TopKeys[string(k)] {
			p.value(1, false, ShallowDepth) // checked, dropped
		} else {
			kh := p.fieldKey(k, mark, &bloom)
			h += field(kh, p.scanTop(k, kh, e))
		}
		if p.next() {
			p.keyStack = p.keyStack[:mark]
			return endObject(h, 0)
		}
	}
}

// scanTop scans the value of top-level field k and reads the header
// fields.
func (p *Parser) scanTop(k []byte, kh uint64, e *Entry) uint64 {
	p.expectEnd("value")
	c := p.b[p.i]
	if c == '"' {
		start, end, esc := p.strSpan()
		switch string(k) {
		case "type":
			e.Type = p.headerString(start, end, esc, true)
		case "subtype":
			e.Subtype = p.headerString(start, end, esc, true)
		case "uuid":
			e.UUID = p.headerString(start, end, esc, false)
		case "parentUuid":
			e.HasParent = true
			e.Parent = p.headerString(start, end, esc, false)
		case "logicalParentUuid":
			e.LogicalParent = p.headerString(start, end, esc, false)
		case "timestamp":
			e.Timestamp = p.headerString(start, end, esc, false)
		case "version":
			e.Version = p.headerString(start, end, esc, true)
		case "sessionId":
			e.SessionID = p.headerString(start, end, esc, true)
		case "cwd":
			e.CWD = p.headerString(start, end, esc, true)
		case "agentId":
			e.AgentID = p.headerString(start, end, esc, true)
		case "leafUuid":
			e.LeafUUID = p.headerString(start, end, esc, false)
		}
		return p.strShape(k, kh, start, end, esc)
	}
	switch string(k) {
	case "parentUuid":
		e.HasParent = true
	case "isSidechain":
		e.IsSidechain = c == 't'
	case "isMeta":
		e.IsMeta = c == 't'
	case "message":
		if c == '{' {
			return p.scanMessage(kh, e)
		}
		return p.scanValue(1, MaxDepth, kh)
	}
	return p.scanValue(1, ShallowDepth, kh)
}

// scanMessage scans the entry's message object (depth 1).
func (p *Parser) scanMessage(salt uint64, e *Entry) uint64 {
	h := uint64(objectSeed)
	if p.open() {
		return endObject(h, salt)
	}
	mark, bloom := len(p.keyStack), uint64(0)
	for {
		k := p.key()
		kh := p.fieldKey(k, mark, &bloom)
		var vh uint64
		p.expectEnd("value")
		switch c := p.b[p.i]; {
		case c == '"':
			start, end, esc := p.strSpan()
			switch string(k) {
			case "id":
				e.MessageID = p.headerString(start, end, esc, false)
			case "model":
				e.Model = p.headerString(start, end, esc, true)
			case "role":
				e.Role = p.headerString(start, end, esc, true)
			}
			vh = p.strShape(k, kh, start, end, esc)
		case c == '[' && string(k) == "content":
			vh = p.scanContent(kh, e)
		default:
			vh = p.scanValue(2, MaxDepth, kh)
		}
		h += field(kh, vh)
		if p.next() {
			p.keyStack = p.keyStack[:mark]
			return endObject(h, salt)
		}
	}
}

// scanContent scans message.content as an array of blocks (depth 2).
func (p *Parser) scanContent(salt uint64, e *Entry) uint64 {
	p.i++ // '['
	h := uint64(arraySeed)
	p.ws()
	p.expectEnd("array")
	if p.b[p.i] == ']' {
		p.i++
		return endArray(h, salt)
	}
	for {
		p.ws()
		p.expectEnd("value")
		if p.b[p.i] == '{' {
			h = element(h, p.scanBlock(e))
		} else {
			e.Blocks = append(e.Blocks, Block{})
			h = element(h, p.scanValue(3, MaxDepth, 0))
		}
		p.ws()
		p.expectEnd("array")
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return endArray(h, salt)
		default:
			p.fail(fmt.Sprintf("invalid character %s after array element", quoteChar(p.b[p.i])))
		}
	}
}

// span is a string body in the line.
type span struct {
	start, end int
	esc, ok    bool
}

// scanBlock scans one content block object (depth 3) and adds its Block.
func (p *Parser) scanBlock(e *Entry) uint64 {
	h := uint64(objectSeed)
	var typ, id, useID span
	var thinking, signature bool // a non-empty string
	if !p.open() {
		mark, bloom := len(p.keyStack), uint64(0)
		for {
			k := p.key()
			kh := p.fieldKey(k, mark, &bloom)
			p.expectEnd("value")
			var vh uint64
			if p.b[p.i] == '"' {
				start, end, esc := p.strSpan()
				sp := span{start, end, esc, true}
				switch string(k) {
				case "type":
					typ = sp
				case "id":
					id = sp
				case "tool_use_id":
					useID = sp
				case "thinking":
					thinking = end > start
				case "signature":
					signature = end > start
				}
				vh = p.strShape(k, kh, start, end, esc)
			} else {
				vh = p.scanValue(4, MaxDepth, kh)
			}
			h += field(kh, vh)
			if p.next() {
				p.keyStack = p.keyStack[:mark]
				break
			}
		}
	}
	var b Block
	if typ.ok {
		b.Type = p.headerString(typ.start, typ.end, typ.esc, true)
	}
	switch b.Type {
	case "tool_use", "server_tool_use":
		if id.ok {
			b.ID = p.headerString(id.start, id.end, id.esc, false)
		}
	case "tool_result":
		if useID.ok {
			b.ToolUseID = p.headerString(useID.start, useID.end, useID.esc, false)
		}
	case "thinking":
		b.EmptyText = !thinking
		b.EmptySig = !signature
	}
	e.Blocks = append(e.Blocks, b)
	return endObject(h, 0)
}

// scanValue checks the value at p.i, of the given depth in the entry, and
// returns the hash of its light tree (containers from depth limit kept
// empty).
func (p *Parser) scanValue(depth, limit int, salt uint64) uint64 {
	p.expectEnd("value")
	switch c := p.b[p.i]; c {
	case '{':
		if depth >= limit {
			p.object(depth, false, limit)
			return endObject(objectSeed, salt)
		}
		return p.scanObject(depth, limit, salt)
	case '[':
		if depth >= limit {
			p.array(depth, false, limit)
			return endArray(arraySeed, salt)
		}
		return p.scanArray(depth, limit, salt)
	case '"':
		p.strSpan()
		return mix(salt ^ 4)
	case 't':
		p.lit("true")
		return mix(salt ^ 5)
	case 'f':
		p.lit("false")
		return mix(salt ^ 5)
	case 'n':
		p.lit("null")
		return mix(salt ^ 6)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			p.number(false)
			return mix(salt ^ 7)
		}
		p.fail(fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)))
	}
	return 0
}

func (p *Parser) scanObject(depth, limit int, salt uint64) uint64 {
	h := uint64(objectSeed)
	if p.open() {
		return endObject(h, salt)
	}
	mark, bloom := len(p.keyStack), uint64(0)
	for {
		k := p.key()
		kh := p.fieldKey(k, mark, &bloom)
		p.expectEnd("value")
		var vh uint64
		if p.b[p.i] == '"' {
			start, end, esc := p.strSpan()
			vh = p.strShape(k, kh, start, end, esc)
		} else {
			vh = p.scanValue(depth+1, limit, kh)
		}
		h += field(kh, vh)
		if p.next() {
			p.keyStack = p.keyStack[:mark]
			return endObject(h, salt)
		}
	}
}

func (p *Parser) scanArray(depth, limit int, salt uint64) uint64 {
	p.i++ // '['
	h := uint64(arraySeed)
	p.ws()
	p.expectEnd("array")
	if p.b[p.i] == ']' {
		p.i++
		return endArray(h, salt)
	}
	for {
		p.ws()
		h = element(h, p.scanValue(depth+1, limit, 0))
		p.ws()
		p.expectEnd("array")
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return endArray(h, salt)
		default:
			p.fail(fmt.Sprintf("invalid character %s after array element", quoteChar(p.b[p.i])))
		}
	}
}

// open moves past the '{' at p.i and reports whether the object is empty
// (then also past its '}').
func (p *Parser) open() bool {
	p.i++
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] == '}' {
		p.i++
		return true
	}
	return false
}

// key reads an object key and the colon after it, and returns the key's
// bytes. A key with escapes ends the Scan.
func (p *Parser) key() []byte {
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] != '"' {
		p.fail(fmt.Sprintf("invalid character %s looking for beginning of object key string", quoteChar(p.b[p.i])))
	}
	start, end, esc := p.strSpan()
	if esc {
		panic(scanBail{})
	}
	p.ws()
	p.expectEnd("object")
	if p.b[p.i] != ':' {
		p.fail(fmt.Sprintf("invalid character %s after object key", quoteChar(p.b[p.i])))
	}
	p.i++
	p.ws()
	return p.b[start:end]
}

// next moves past the ',' or '}' after a field and reports whether it was
// the '}'.
func (p *Parser) next() bool {
	p.ws()
	p.expectEnd("object")
	switch p.b[p.i] {
	case ',':
		p.i++
		return false
	case '}':
		p.i++
		return true
	}
	p.fail(fmt.Sprintf("invalid character %s after object key:value pair", quoteChar(p.b[p.i])))
	return false
}

// fieldKey hashes key k of the object whose keys start at mark on the key
// stack, and ends the Scan when the object already had it (the tree keeps
// only the last value) or has too many keys to tell cheaply.
func (p *Parser) fieldKey(k []byte, mark int, bloom *uint64) uint64 {
	kh := maphash.Bytes(p.sh.seed, k)
	bit := uint64(1) << (kh >> 58)
	if *bloom&bit != 0 {
		if len(p.keyStack)-mark >= scanMaxKeys {
			panic(scanBail{})
		}
		for _, x := range p.keyStack[mark:] {
			if x == kh {
				panic(scanBail{})
			}
		}
	}
	*bloom |= bit
	p.keyStack = append(p.keyStack, kh)
	return kh
}

// strShape is the hash of a string value of field k as the tree keeps it.
func (p *Parser) strShape(k []byte, kh uint64, start, end int, esc bool) uint64 {
	if !p.sh.values[string(k)] {
		return mix(kh ^ 4)
	}
	return maphash.Bytes(p.sh.seed, p.strBytes(start, end, esc)) ^ valueSalt
}

// strBytes is the string body as the tree keeps it: unescaped and cut to
// MaxString bytes. It is valid until the next call.
func (p *Parser) strBytes(start, end int, esc bool) []byte {
	if esc {
		return p.unescapeBytes(p.b[start:end], MaxString)
	}
	if end-start > MaxString {
		end = start + MaxString
	}
	return p.b[start:end]
}

// headerString is the string body as the tree keeps it, interned when
// asked (values that repeat from line to line: types, versions, paths).
func (p *Parser) headerString(start, end int, esc, intern bool) string {
	b := p.strBytes(start, end, esc)
	if !intern || len(b) > 64 {
		return string(b)
	}
	if s, ok := p.vals[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.vals == nil || len(p.vals) >= 4096 {
		p.vals = make(map[string]string, 256)
	}
	p.vals[s] = s
	return s
}
