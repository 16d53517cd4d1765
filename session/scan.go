package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"reflect"
	"strings"
)

// scanBail aborts a Scan that leaves the line to Parse: a key with escapes,
// a key repeated in one object, an object with too many keys.
type scanBail struct{}

// scanMaxKeys is the most fields of one object Scan looks at for repeated
// keys (a linear search behind a 64-bit filter); bigger objects go to Parse.
const scanMaxKeys = 128

// Scan checks line as Parse does and, when it holds exactly one JSON object
// with valid UTF-8, no lone surrogate escape and no \u0000 escape, fills e as HeaderOf fills
// it from the tree Parse would build, and returns s's hash of that tree
// (Shaper.Shape), with ok true, without building the tree. The tree is the
// one Parse builds with the parser's TopKeys and Header unset; e.Content is
// left nil.
//
// Otherwise it returns ok false and the caller parses the line: a syntax
// error, a value that is not an object, records glued together, invalid
// UTF-8, lone surrogates, \u0000 escapes, and a few rare forms Scan does not follow (a key
// with escapes, a key repeated in an object, an object of more than 128
// fields). e is then undefined.
func (p *Parser) Scan(line []byte, s *Shaper, e *Entry) (shape uint64, ok bool) {
	p.scanRes = Parsed{BadUTF8: -1, SurrogateOff: -1, NULEscapeOff: -1, GluedAt: -1}
	p.b, p.i, p.res, p.sh = line, 0, &p.scanRes, s
	if of := reflect.ValueOf(p.TopKeys).Pointer(); p.kc == nil || p.kc.shaper != s || p.kc.of != of {
		p.kc = &keyCache{shaper: s, of: of}
	}
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
	shape = p.scanObject(0, MaxDepth, 0, atEntry, e, nil)
	p.ws()
	if p.i < len(p.b) || p.scanRes.BadUTF8 >= 0 || p.scanRes.Surrogates > 0 || p.scanRes.NULEscapes > 0 {
		return 0, false
	}
	return shape, true
}

// The objects whose fields Scan reads into the header.
const (
	atOther uint8 = iota
	atEntry
	atMessage
	atBlock
)

// The fields HeaderOf reads, by name (which object's field a name is
// depends on where it is found).
const (
	fOther uint8 = iota
	fType
	fSubtype
	fUUID
	fParent
	fLogical
	fTimestamp
	fVersion
	fSession
	fCWD
	fAgent
	fLeaf
	fSidechain
	fMeta
	fMessage
	fID
	fModel
	fRole
	fContent
	fToolUseID
	fThinking
	fSignature
	fText
	fRequest
)

var fieldIDs = map[string]uint8{
	"type": fType, "subtype": fSubtype, "uuid": fUUID, "parentUuid": fParent,
	"logicalParentUuid": fLogical, "timestamp": fTimestamp, "version": fVersion,
	"sessionId": fSession, "cwd": fCWD, "agentId": fAgent, "leafUuid": fLeaf,
	"isSidechain": fSidechain, "isMeta": fMeta, "message": fMessage,
	"id": fID, "model": fModel, "role": fRole, "content": fContent,
	"tool_use_id": fToolUseID, "thinking": fThinking, "signature": fSignature,
	"text": fText, "requestId": fRequest,
}

// keyInfo is what Scan knows of an object key, worked out once per parser
// and Shaper.
type keyInfo struct {
	key     string
	w0, w1  uint64 // keyWords of the key
	set     bool
	counted bool      // the Shaper counts the field
	value   bool      // and its string value
	keep    bool      // TopKeys keeps it in an entry
	id      uint8     // the header field of that name
	kh      uint64    // the Shaper's hash of the key
	leaf    [4]uint64 // what the field adds with a string, bool, null, number
}

// keyCache holds keyInfos by a quick hash of the key's bytes, two per set
// (the latest first): a store uses a few hundred keys, and a slot spares a
// hash of the key and the lookups by name.
type keyCache struct {
	shaper *Shaper
	of     uintptr // the TopKeys map it was filled from
	slots  [2 << keySetBits]keyInfo
	vals   [1 << keySetBits]string // header values (headerString)

	// The latest uuid and message id read: a parentUuid is mostly the
	// uuid of the line before, a message id that of the lines before.
	lastUUID, lastMessage string
}

const keySetBits = 10

// info returns what Scan knows of key k, of keyWords w0, w1.
func (p *Parser) info(k []byte, w0, w1 uint64) *keyInfo {
	set := setOf(k, w0, w1)
	slots := &p.kc.slots
	ki := &slots[2*set]
	if ki.w0 == w0 && ki.w1 == w1 && len(ki.key) == len(k) && ki.set && (len(k) <= 16 || ki.key == string(k)) {
		return ki
	}
	other := &slots[2*set+1]
	if other.w0 == w0 && other.w1 == w1 && len(other.key) == len(k) && other.set && (len(k) <= 16 || other.key == string(k)) {
		return other
	}
	*other = *ki
	key := string(k)
	s := p.sh
	kh := maphash.String(s.seed, key)
	*ki = keyInfo{key: key, w0: w0, w1: w1, set: true, counted: s.counted(key), value: s.values[key],
		keep: p.TopKeys == nil || p.TopKeys[key], id: fieldIDs[key], kh: kh}
	for i, kind := range []uint64{kindString, kindBool, kindNull, kindNumber} {
		ki.leaf[i] = field(kh, leaf(kh, kind))
	}
	return ki
}

// keyWords packs a key into two words: all of it up to 16 bytes (with its
// length, they tell keys apart; under 8 bytes, w0 holds them from its low
// end and w1 is 0), its first and last 8 bytes beyond.
func keyWords(k []byte) (w0, w1 uint64) {
	if n := len(k); n >= 8 {
		return binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:])
	}
	for i, c := range k {
		w0 |= uint64(c) << (8 * i)
	}
	return w0, 0
}

// setOf is the set of key k (of keyWords w0, w1) in a keyCache: a quick
// hash of its words, and of the bytes between them in a longer key.
func setOf(k []byte, w0, w1 uint64) uint64 {
	const m = 0x9e3779b97f4a7c15
	x := (w0*m ^ bits.RotateLeft64(w1, 29) ^ uint64(len(k))) * m
	if len(k) > 16 {
		for k = k[8:]; len(k) > 8; k = k[8:] {
			x = (x ^ binary.LittleEndian.Uint64(k)) * m
		}
	}
	return (x ^ x>>29) * m >> (64 - keySetBits)
}

// slotOf is the set of key b in a keyCache.
func slotOf(b []byte) uint64 {
	w0, w1 := keyWords(b)
	return setOf(b, w0, w1)
}

// valSlot is the slot of header value b in the table of interned values:
// a quick hash of its length and its first, middle and last 8 bytes (two
// values alike in all of them take turns in the slot).
func valSlot(b []byte) uint64 {
	const m = 0x9e3779b97f4a7c15
	w0, w1 := keyWords(b)
	if n := len(b); n > 16 {
		w1 ^= bits.RotateLeft64(binary.LittleEndian.Uint64(b[n/2-4:]), 17)
	}
	x := (w0*m ^ bits.RotateLeft64(w1, 29) ^ uint64(len(b))) * m
	return (x ^ x>>29) * m >> (64 - keySetBits)
}

// block holds what Scan found of a content block's header fields.
type block struct {
	typ, id, useID span
	thinking       bool // a non-empty string
	signature      bool
	text           bool // a string
	emptyText      bool // ""
	blankText      bool // whitespace only, as the tree keeps it
}

// span is a string body in the line.
type span struct {
	start, end int
	esc, ok    bool
}

// scanObject scans the object at p.i, of the given depth in the entry
// (containers from depth limit kept empty), and returns the hash of its
// tree with the given salt. at says whose header fields it holds; b
// collects a content block's.
func (p *Parser) scanObject(depth, limit int, salt uint64, at uint8, e *Entry, b *block) uint64 {
	h := uint64(objectSeed)
	if p.open() {
		return endObject(h, salt)
	}
	mark, bloom := len(p.keyStack), uint64(0)
	for {
		ki := p.field()
		lim := limit
		if at == atEntry && ki.id != fMessage {
			lim = ShallowDepth
		}
		switch {
		case at == atEntry && !ki.keep, !ki.counted:
			p.value(depth+1, false, lim) // checked, left out
		default:
			p.seen(ki.kh, mark, &bloom)
			h += p.scanField(ki, depth+1, lim, at, e, b)
		}
		if i := p.i; i < len(p.b) && p.b[i] == ',' { // another field
			p.i = i + 1
			continue
		}
		if p.next() {
			p.keyStack = p.keyStack[:mark]
			return endObject(h, salt)
		}
	}
}

// scanField scans the value of field ki, of the given depth, in an object
// of kind at, and returns what the field adds to the object's hash. ki
// points into the key cache, which the fields of a nested object may
// change: what the field needs after scanning one is copied first.
func (p *Parser) scanField(ki *keyInfo, depth, limit int, at uint8, e *Entry, b *block) uint64 {
	p.expectEnd("value")
	c := p.b[p.i]
	kh, id := ki.kh, ki.id
	if at == atEntry && id == fParent {
		e.HasParent = true
	}
	var vh uint64
	switch c {
	case '"':
		start, end, esc := p.strSpan()
		if id != fOther && at != atOther {
			p.headerField(id, at, start, end, esc, e, b)
		}
		if ki.value {
			return field(kh, maphash.Bytes(p.sh.seed, p.strBytes(start, end, esc))^valueSalt)
		}
		return ki.leaf[0]
	case '{':
		switch {
		case depth >= limit:
			p.object(depth, false, limit)
			vh = endObject(objectSeed, kh)
		case at == atEntry && id == fMessage:
			vh = p.scanObject(depth, limit, kh, atMessage, e, nil)
		default:
			vh = p.scanObject(depth, limit, kh, atOther, e, nil)
		}
		return field(kh, vh)
	case '[':
		switch {
		case depth >= limit:
			p.array(depth, false, limit)
			vh = endArray(arraySeed, kh)
		case at == atMessage && id == fContent:
			vh = p.scanContent(depth, limit, kh, e)
		default:
			vh = p.scanArray(depth, limit, kh)
		}
		return field(kh, vh)
	}
	if at == atEntry {
		switch id {
		case fSidechain:
			e.IsSidechain = c == 't'
		case fMeta:
			e.IsMeta = c == 't'
		}
	}
	return ki.leaf[p.literal(c)]
}

// literal checks a true, false, null or number at p.i and returns its kind
// (1 bool, 2 null, 3 number).
func (p *Parser) literal(c byte) int {
	switch c {
	case 't':
		p.lit("true")
		return 1
	case 'f':
		p.lit("false")
		return 1
	case 'n':
		p.lit("null")
		return 2
	}
	if c == '-' || (c >= '0' && c <= '9') {
		p.number(false)
		return 3
	}
	p.fail(fmt.Sprintf("invalid character %s looking for beginning of value", quoteChar(c)))
	return 0
}

// headerField reads header field id of an object of kind at from the
// string body [start, end).
func (p *Parser) headerField(id, at uint8, start, end int, esc bool, e *Entry, b *block) {
	switch at {
	case atEntry:
		switch id {
		case fType:
			e.Type = p.headerString(start, end, esc, true)
		case fSubtype:
			e.Subtype = p.headerString(start, end, esc, true)
		case fUUID:
			e.UUID = p.headerString(start, end, esc, false)
			p.kc.lastUUID = e.UUID
		case fParent:
			e.Parent = p.recentString(start, end, esc, &p.kc.lastUUID)
		case fLogical:
			e.LogicalParent = p.headerString(start, end, esc, false)
		case fTimestamp:
			e.Timestamp = p.headerString(start, end, esc, false)
		case fVersion:
			e.Version = p.headerString(start, end, esc, true)
		case fSession:
			e.SessionID = p.headerString(start, end, esc, true)
		case fCWD:
			e.CWD = p.headerString(start, end, esc, true)
		case fAgent:
			e.AgentID = p.headerString(start, end, esc, true)
		case fLeaf:
			e.LeafUUID = p.headerString(start, end, esc, false)
		case fRequest:
			e.RequestID = p.headerString(start, end, esc, false)
		}
	case atMessage:
		switch id {
		case fID:
			e.MessageID = p.recentString(start, end, esc, &p.kc.lastMessage)
		case fModel:
			e.Model = p.headerString(start, end, esc, true)
		case fRole:
			e.Role = p.headerString(start, end, esc, true)
		case fContent:
			if p.blank(start, end, esc) {
				e.BlankString, e.EmptyString = true, end == start
			}
		}
	case atBlock:
		sp := span{start, end, esc, true}
		switch id {
		case fType:
			b.typ = sp
		case fID:
			b.id = sp
		case fToolUseID:
			b.useID = sp
		case fThinking:
			b.thinking = end > start
		case fSignature:
			b.signature = end > start
		case fText:
			b.text, b.emptyText = true, end == start
			b.blankText = p.blank(start, end, esc)
		}
	}
}

// scanContent scans message.content as an array of blocks and adds their
// Blocks to e.
func (p *Parser) scanContent(depth, limit int, salt uint64, e *Entry) uint64 {
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
		if p.b[p.i] == '{' && depth+1 < limit {
			var b block
			h = element(h, p.scanObject(depth+1, limit, 0, atBlock, e, &b))
			e.Blocks = append(e.Blocks, p.blockOf(&b))
		} else {
			e.Blocks = append(e.Blocks, Block{})
			h = element(h, p.scanValue(depth+1, limit, 0))
		}
		if p.closes(']') {
			return endArray(h, salt)
		}
	}
}

// blockOf is the Block HeaderOf makes of a content block.
func (p *Parser) blockOf(b *block) Block {
	var blk Block
	if b.typ.ok {
		blk.Type = p.headerString(b.typ.start, b.typ.end, b.typ.esc, true)
	}
	switch blk.Type {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		if b.id.ok {
			blk.ID = p.headerString(b.id.start, b.id.end, b.id.esc, false)
		}
	case "tool_result":
		if b.useID.ok {
			blk.ToolUseID = p.headerString(b.useID.start, b.useID.end, b.useID.esc, false)
		}
	case "thinking":
		blk.EmptyText = !b.thinking
		blk.EmptySig = !b.signature
	case "text":
		blk.EmptyText, blk.Blank = b.text && b.emptyText, b.text && b.blankText
	default:
		if ServerResult(blk.Type) && b.useID.ok {
			blk.ToolUseID = p.headerString(b.useID.start, b.useID.end, b.useID.esc, false)
		}
	}
	return blk
}

// scanValue checks the value at p.i, an array element of the given depth
// in the entry, and returns the hash of its tree.
func (p *Parser) scanValue(depth, limit int, salt uint64) uint64 {
	p.expectEnd("value")
	switch c := p.b[p.i]; c {
	case '{':
		if depth >= limit {
			p.object(depth, false, limit)
			return endObject(objectSeed, salt)
		}
		return p.scanObject(depth, limit, salt, atOther, nil, nil)
	case '[':
		if depth >= limit {
			p.array(depth, false, limit)
			return endArray(arraySeed, salt)
		}
		return p.scanArray(depth, limit, salt)
	case '"':
		p.strSpan()
		return leaf(salt, kindString)
	default:
		return leaf(salt, uint64(kindString+p.literal(c)))
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
		if p.closes(']') {
			return endArray(h, salt)
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

// field reads an object key and the colon after it, and returns what Scan
// knows of the key. The usual key, of plain bytes and under 16 of them,
// right before its colon and the value, is read in place; any other goes
// through key.
func (p *Parser) field() *keyInfo {
	b, i := p.b, p.i
	if i+17 > len(b) || b[i] != '"' {
		return p.info(p.key())
	}
	start := i + 1
	w0, w1, end := binary.LittleEndian.Uint64(b[start:start+8]), uint64(0), -1
	if m := specialMask(w0); m != 0 {
		n := bits.TrailingZeros64(m) >> 3
		end, w0 = start+n, w0&(1<<(8*n)-1)
	} else if m := specialMask(binary.LittleEndian.Uint64(b[start+8 : start+16])); m != 0 {
		end = start + 8 + bits.TrailingZeros64(m)>>3
		w1 = binary.LittleEndian.Uint64(b[end-8 : end])
	}
	if end < 0 || end+2 >= len(b) {
		return p.info(p.key())
	}
	if c := b[end : end+3]; c[0] != '"' || c[1] != ':' || c[2] <= ' ' {
		return p.info(p.key())
	}
	p.i = end + 2
	k := b[start:end]
	// The latest key of its set, as info finds it first.
	if ki := &p.kc.slots[2*setOf(k, w0, w1)]; ki.w0 == w0 && ki.w1 == w1 && len(ki.key) == len(k) && ki.set {
		return ki
	}
	return p.info(k, w0, w1)
}

// key reads an object key and the colon after it, and returns the key's
// bytes and keyWords. A key with escapes ends the Scan.
func (p *Parser) key() (k []byte, w0, w1 uint64) {
	b := p.b
	if p.i >= len(b) || b[p.i] != '"' {
		p.ws()
		p.expectEnd("object")
		if b[p.i] != '"' {
			p.fail(fmt.Sprintf("invalid character %s looking for beginning of object key string", quoteChar(b[p.i])))
		}
	}
	start, end := p.i+1, -1
	// A key of plain bytes and under 16 of them: found and packed from
	// the same two loads.
	if start+16 <= len(b) {
		w0 = binary.LittleEndian.Uint64(b[start : start+8])
		if m := specialMask(w0); m != 0 {
			if n := bits.TrailingZeros64(m) >> 3; b[start+n] == '"' {
				end, w0 = start+n, w0&(1<<(8*n)-1)
			}
		} else if m := specialMask(binary.LittleEndian.Uint64(b[start+8 : start+16])); m != 0 {
			if n := 8 + bits.TrailingZeros64(m)>>3; b[start+n] == '"' {
				end = start + n
				w1 = binary.LittleEndian.Uint64(b[end-8 : end])
			}
		}
	}
	if end >= 0 {
		p.i = end + 1
	} else {
		var esc bool
		if start, end, esc = p.strSpan(); esc {
			panic(scanBail{})
		}
		w0, w1 = keyWords(b[start:end])
	}
	// The usual case: the colon right after the key, the value right
	// after it.
	if i := p.i; i+1 < len(b) && b[i] == ':' && b[i+1] > ' ' {
		p.i = i + 1
		return b[start:end], w0, w1
	}
	p.ws()
	p.expectEnd("object")
	if b[p.i] != ':' {
		p.fail(fmt.Sprintf("invalid character %s after object key", quoteChar(b[p.i])))
	}
	p.i++
	p.ws()
	return b[start:end], w0, w1
}

// next moves past the ',' or '}' after a field and reports whether it was
// the '}'.
func (p *Parser) next() bool { return p.closes('}') }

// seen adds key hash kh to the object whose keys start at mark on the key
// stack, and ends the Scan when the object already had it (the tree keeps
// only the last value) or has too many keys to tell cheaply.
func (p *Parser) seen(kh uint64, mark int, bloom *uint64) {
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
}

// strBytes is the string body as the tree keeps it: unescaped and cut to
// MaxString bytes. It is valid until the next call.
func (p *Parser) strBytes(start, end int, esc bool) []byte {
	if esc {
		return p.unescapeBytes(p.b[start:end], MaxString)
	}
	return p.b[start:min(end, start+MaxString)]
}

// blank reports whether the string body [start, end) is empty or
// whitespace only, as the tree keeps it. Most strings are told by their
// first byte; only whitespace that is not ASCII or is \u-escaped takes
// the unescaped body.
func (p *Parser) blank(start, end int, esc bool) bool {
	b := p.b
	for i, n := start, 0; i < end && n < MaxString; i, n = i+1, n+1 {
		switch c := b[i]; {
		case c == ' ':
		case c == '\\' && i+1 < end && (b[i+1] == 'n' || b[i+1] == 't' || b[i+1] == 'r' || b[i+1] == 'f'):
			i++
		case c == '\\' && i+1 < end && b[i+1] == 'u', c >= 0x80:
			return len(bytes.TrimSpace(p.strBytes(start, end, esc))) == 0
		default:
			return false
		}
	}
	return true
}

// recentString is headerString, given as *last when it is the same, and
// kept there.
func (p *Parser) recentString(start, end int, esc bool, last *string) string {
	if b := p.strBytes(start, end, esc); string(b) != *last {
		*last = p.hold(b)
	}
	return *last
}

// headerString is the string body as the tree keeps it, interned when
// asked (values that repeat from line to line: types, versions, paths), in
// a table of the latest value per quick hash.
func (p *Parser) headerString(start, end int, esc, intern bool) string {
	b := p.strBytes(start, end, esc)
	if !intern || len(b) > 256 {
		return p.hold(b)
	}
	slot := &p.kc.vals[valSlot(b)]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// hold returns b as a string copied into the parser's block of header
// strings: the uuids, timestamps and ids Scan reads differ from line to
// line, and one allocation for a block of them costs far less than one
// each (in time and in the collector's work). A block lives as long as
// any string in it.
func (p *Parser) hold(b []byte) string {
	if len(b) == 0 || len(b) > holdMax {
		return string(b)
	}
	sb := &p.held
	if sb.Cap()-sb.Len() < len(b) {
		*sb = strings.Builder{}
		sb.Grow(holdBlock)
	}
	n := sb.Len()
	sb.Write(b)
	return sb.String()[n:]
}

// holdMax is the longest string hold copies into a block; holdBlock is
// the size of a block.
const holdMax, holdBlock = 128, 4096
