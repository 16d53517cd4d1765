package secrets

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/jsonline"
)

// Where tells what part of an entry (or of the store) a secret is in.
type Where string

const (
	WherePrompt     Where = "prompt"      // what the person wrote: a user message, a history.jsonl prompt
	WhereAnswer     Where = "answer"      // the model's text
	WhereThinking   Where = "thinking"    // the model's thinking
	WhereToolInput  Where = "tool input"  // a tool call's input
	WhereToolOutput Where = "tool output" // a tool's result (tool_result, toolUseResult)
	WhereSummary    Where = "summary"     // a compaction summary or a summary line
	WhereTitle      Where = "title"       // custom-title, ai-title
	WhereAttachment Where = "attachment"  // what the client attached to the conversation
	WhereSystem     Where = "system"      // a system entry's text
	WherePaste      Where = "paste"       // a pasted text (history.jsonl, paste-cache)
	WhereField      Where = "field"       // another field of an entry
	WhereLine       Where = "line"        // a line that is not JSON
	WhereFile       Where = "file"        // a file that is not JSON lines
	WhereBackup     Where = "file backup" // a file-history backup of a file Claude Code edited
)

// rawSpan is a JSON string of a line: its bytes between the quotes.
type rawSpan struct {
	start, end int32
	esc        bool
}

func (s rawSpan) ok() bool { return s.end > s.start }

// top says which member of the entry holds a string.
type top uint8

const (
	topOther top = iota
	topMessage
	topToolUseResult
	topContent
	topSummary
	topTitle
	topLastPrompt
	topDisplay
	topPasted
	topAttachment
)

// bkey says which member of a content block holds a string.
type bkey uint8

const (
	bOther bkey = iota
	bText
	bThinking
	bInput
	bResult
)

// span is one string value of a line that may hold a secret, with where
// it sits (ids, hashes, signatures, base64 data and strings too short for
// any match are never kept).
type span struct {
	rawSpan
	key   rawSpan // the member holding it (none for an array element)
	top   top
	msgC  bool  // in message.content
	block int32 // the content block holding it, -1 for none
	bkey  bkey
}

// blockInfo is what a content block says of itself.
type blockInfo struct {
	typ, name rawSpan
}

// lineInfo is what one walk of a line found.
type lineInfo struct {
	typ, role          rawSpan
	sessionID, project rawSpan // the entry's sessionId and project members
	spans              []span
	blocks             []blockInfo
	// min is the shortest string kept in spans (raw bytes): a shorter one
	// holds no secret (the shortest match of a rule).
	min int
}

func (li *lineInfo) reset() {
	*li = lineInfo{spans: li.spans[:0], blocks: li.blocks[:0], min: li.min}
}

// walker reads one JSON line, keeping every string value's span and what
// holds it. It builds no value.
type walker struct {
	jsonline.Scanner
	li   *lineInfo
	last rawSpan // the string value read last
}

// ctx is where in an entry a value is.
type ctx struct {
	top   top
	msg   bool  // the value of message
	msgC  bool  // in message.content
	block int32 // -1 for none
	blk   bool  // the block object itself
	bkey  bkey
	src   bool // the value of a member named source (an image's or a document's)
}

// walk fills li from line; err is a syntax error (li then holds what was
// read before it).
func walk(line []byte, li *lineInfo) error {
	li.reset()
	w := walker{li: li}
	return w.Walk(line, func() { w.object(ctx{block: -1}, true) })
}

// raw is the span of a string the scanner read.
func raw(s jsonline.Span) rawSpan {
	return rawSpan{start: s.Start, end: s.End, esc: s.Escaped}
}

// value walks one value in context c; key is the member holding it.
func (w *walker) value(c ctx, key rawSpan) {
	switch w.Next() {
	case '"':
		s := raw(w.Str())
		w.last = s
		if int(s.end-s.start) < w.li.min || key.ok() && skipKey(w.B[key.start:key.end], c.src) {
			return // never a finding
		}
		w.li.spans = append(w.li.spans, span{rawSpan: s, key: key, top: c.top, msgC: c.msgC, block: c.block, bkey: c.bkey})
	case '{':
		w.object(c, false)
	case '[':
		w.array(c)
	default:
		w.Scalar()
	}
}

func (w *walker) array(c ctx) {
	for more := w.Array(); more; more = w.NextElem() {
		ec := c
		ec.blk = false
		if c.msg && !c.msgC {
			// message.content: each element is a block.
			ec.msgC = true
			ec.msg = false
			ec.block = int32(len(w.li.blocks))
			ec.blk = true
			w.li.blocks = append(w.li.blocks, blockInfo{})
		}
		w.value(ec, rawSpan{})
	}
}

func (w *walker) object(c ctx, isTop bool) {
	for k, more := w.Object(); more; k, more = w.NextKey() {
		w.member(c, isTop, raw(k))
	}
}

// member walks the value of member k of an object in context c.
func (w *walker) member(c ctx, isTop bool, k rawSpan) {
	name := w.B[k.start:k.end]
	li := w.li
	mc := c
	mc.msg, mc.blk, mc.src = false, false, string(name) == "source"
	switch {
	case isTop:
		switch string(name) {
		case "type":
			w.field(&li.typ, c, k)
			return
		case "sessionId":
			w.field(&li.sessionID, c, k)
			return
		case "project":
			w.field(&li.project, c, k)
			return
		case "message":
			mc.top, mc.msg = topMessage, true
		case "toolUseResult":
			mc.top = topToolUseResult
		case "content":
			mc.top = topContent
		case "summary":
			mc.top = topSummary
		case "customTitle", "aiTitle":
			mc.top = topTitle
		case "lastPrompt":
			mc.top = topLastPrompt
		case "display":
			mc.top = topDisplay
		case "pastedContents":
			mc.top = topPasted
		case "attachment", "rendered":
			mc.top = topAttachment
		default:
			mc.top = topOther
		}
	case c.msg:
		switch string(name) {
		case "role":
			w.field(&li.role, c, k)
			return
		case "content":
			mc.msg = true // its elements are blocks; a string is the text
			mc.msgC = false
			w.WS()
			if w.I < len(w.B) && w.B[w.I] == '"' {
				mc.msg, mc.msgC = false, true
			}
		}
	case c.blk:
		b := &li.blocks[c.block]
		switch string(name) {
		case "type":
			w.field(&b.typ, c, k)
			return
		case "name":
			w.field(&b.name, c, k)
			return
		case "text":
			mc.bkey = bText
		case "thinking":
			mc.bkey = bThinking
		case "input":
			mc.bkey = bInput
		case "content":
			mc.bkey = bResult
		default:
			mc.bkey = bOther
		}
	}
	w.value(mc, k)
}

// field reads a member's value into dst when it is a string, and keeps it
// as a span too.
func (w *walker) field(dst *rawSpan, c ctx, k rawSpan) {
	w.WS()
	isStr := w.I < len(w.B) && w.B[w.I] == '"'
	w.value(c, k)
	if isStr {
		*dst = w.last
	}
}

// skipKey reports whether the string value of member name is never a
// finding: ids, uuids, hashes and signatures, and base64 data.
func skipKey(name []byte, inSource bool) bool {
	n := len(name)
	if n < 2 {
		return false
	}
	// Looked at by the last byte first: most members end otherwise.
	switch name[n-1] {
	case 'd', 'D', 'h', 'a', 'e', 'g', '4', '6':
	default:
		return false
	}
	switch string(name) {
	case "id", "uuid", "signature", "sig", "base64", "media_type", "timestamp", "type":
		return true
	case "data":
		return inSource
	}
	for _, suf := range idSuffixes {
		if n > len(suf) && string(name[n-len(suf):]) == suf {
			return true
		}
	}
	return false
}

// idSuffixes end the names of members that hold ids, hashes, signatures.
var idSuffixes = []string{"Id", "ID", "_id", "Uuid", "UUID", "uuid", "Hash", "hash", "_sha", "sha256", "Signature"}

// where classifies span sp of a line of a JSON lines file of kind k, and
// names the tool of a tool input.
func (li *lineInfo) where(line []byte, sp *span, history bool) (Where, string, bool) {
	typ := string(line[li.typ.start:li.typ.end])
	if history {
		switch sp.top {
		case topDisplay:
			return WherePrompt, "", true
		case topPasted:
			return WherePaste, "", true
		}
		return WhereField, "", true
	}
	role := typ
	if li.role.ok() {
		role = string(line[li.role.start:li.role.end])
	}
	switch sp.top {
	case topMessage:
		if !sp.msgC {
			return WhereField, "", true
		}
		if sp.block < 0 {
			return textOf(role), "", true
		}
		b := li.blocks[sp.block]
		bt := string(line[b.typ.start:b.typ.end])
		switch bt {
		case "image", "document", "redacted_thinking":
			return "", "", false
		}
		switch sp.bkey {
		case bText:
			if bt == "text" {
				return textOf(role), "", true
			}
		case bThinking:
			return WhereThinking, "", true
		case bInput:
			return WhereToolInput, string(line[b.name.start:b.name.end]), true
		case bResult:
			return WhereToolOutput, "", true
		}
		if bt == "tool_result" {
			return WhereToolOutput, "", true
		}
		return WhereField, "", true
	case topToolUseResult:
		return WhereToolOutput, "", true
	case topContent:
		switch typ {
		case "system":
			return WhereSystem, "", true
		case "queue-operation", "user":
			return WherePrompt, "", true
		}
		return WhereField, "", true
	case topSummary:
		return WhereSummary, "", true
	case topTitle:
		return WhereTitle, "", true
	case topLastPrompt, topDisplay:
		return WherePrompt, "", true
	case topPasted:
		return WherePaste, "", true
	case topAttachment:
		return WhereAttachment, "", true
	}
	return WhereField, "", true
}

func textOf(role string) Where {
	if role == "user" {
		return WherePrompt
	}
	return WhereAnswer
}

// unescape appends the decoded form of a JSON string's raw bytes to dst,
// as encoding/json decodes it (a lone surrogate escape becomes U+FFFD).
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		n, r := escape(raw[i:])
		i += n
		if r < 0 {
			dst = append(dst, raw[i-n:i]...)
			continue
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// escape decodes the escape at the start of b: its length in b and the
// character it stands for (-1: not an escape, kept as it is).
func escape(b []byte) (int, rune) {
	if len(b) < 2 {
		return len(b), -1
	}
	switch b[1] {
	case 'n':
		return 2, '\n'
	case 't':
		return 2, '\t'
	case 'r':
		return 2, '\r'
	case 'b':
		return 2, '\b'
	case 'f':
		return 2, '\f'
	case 'u':
		r, ok := jsonline.Hex4(b[2:])
		if !ok {
			return 2, -1
		}
		if utf16.IsSurrogate(r) {
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				if r2, ok := jsonline.Hex4(b[8:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return 12, d
					}
				}
			}
			return 6, utf8.RuneError
		}
		return 6, r
	}
	return 2, rune(b[1])
}

// rawOffsets maps offsets of the decoded form of raw (ascending) to
// offsets of raw: each decoded offset lies at the start of the raw bytes
// of a character (or at the end).
func rawOffsets(raw []byte, decoded []int) []int {
	out := make([]int, len(decoded))
	d, k := 0, 0 // decoded offset at raw offset i; next offset to map
	for i := 0; i <= len(raw) && k < len(decoded); {
		for k < len(decoded) && decoded[k] <= d {
			out[k] = i
			k++
		}
		if i == len(raw) {
			break
		}
		if raw[i] != '\\' {
			d++
			i++
			continue
		}
		n, r := escape(raw[i:])
		if r < 0 {
			d += n
		} else {
			d += utf8.RuneLen(r)
		}
		i += n
	}
	for ; k < len(decoded); k++ {
		out[k] = len(raw)
	}
	return out
}
