package search

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// where tells which field of an entry a string came from.
type where uint8

const (
	wMsgContent  where = iota // message.content as a string
	wBlockText                // message.content[].text
	wBlockThink               // message.content[].thinking
	wBlockInput               // a string anywhere in message.content[].input
	wBlockResult              // message.content[].content (a string, or its text blocks)
	wSummary                  // summary
	wCustomTitle              // customTitle
	wAITitle                  // aiTitle
	wContent                  // content (a transcript export's prompt or answer)
	wToolInput                // a string anywhere in tool_input (an export)
	wToolOutput               // a string anywhere in tool_output (an export)
	wDisplay                  // display (history.jsonl)
	wPasted                   // pastedContents.*.content (history.jsonl)
)

// rawSpan is a JSON string of a line: its bytes between the quotes.
type rawSpan struct {
	start, end int32
	escaped    bool
}

func (s rawSpan) ok() bool { return s.end > s.start || s.start > 0 }

// textSpan is a string a search may match, with what it belongs to.
type textSpan struct {
	rawSpan
	w     where
	block int32   // index into lineInfo.blocks, -1 for none
	key   rawSpan // the member name holding it, within an input or output
}

// blockInfo is what a content block says about itself.
type blockInfo struct {
	typ, id, name, toolUseID rawSpan
}

// lineInfo is what one walk of a line found: the header fields a hit
// needs and every string that may be searched. Spans index the line.
type lineInfo struct {
	typ, role, timestamp, sessionID, cwd, toolName, project rawSpan
	tsNumber                                                []byte // timestamp as a number (history.jsonl: ms)
	compactSummary                                          bool
	harness                                                 bool // rowSource "harness": the harness wrote the row
	pastedImage                                             bool // the pasted content at hand is an image
	hasMessage                                              bool
	spans                                                   []textSpan
	blocks                                                  []blockInfo
}

func (li *lineInfo) reset() {
	spans, blocks := li.spans[:0], li.blocks[:0]
	*li = lineInfo{spans: spans, blocks: blocks}
}

// walker walks one JSON line, keeping the spans a search needs and
// skipping the rest. It never builds a value.
type walker struct {
	b     []byte
	i     int
	li    *lineInfo
	depth int
	err   error
}

const maxDepth = 512

// walkError is a syntax error at a byte offset of the line.
type walkError struct {
	off int
	msg string
}

func (e *walkError) Error() string { return fmt.Sprintf("column %d: %s", e.off+1, e.msg) }

type walkAbort struct{}

func (w *walker) fail(msg string) {
	if w.err == nil {
		w.err = &walkError{off: w.i, msg: msg}
	}
	panic(walkAbort{})
}

// walk fills li from line. The spans found before a syntax error are kept.
func walk(line []byte, li *lineInfo) (err error) {
	li.reset()
	w := walker{b: line, li: li}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(walkAbort); !ok {
				panic(r)
			}
			err = w.err
		}
	}()
	w.ws()
	if w.i >= len(w.b) || w.b[w.i] != '{' {
		w.fail("not a JSON object")
	}
	w.object(ctxTop, 0, -1)
	w.ws()
	if w.i < len(w.b) {
		w.fail("data after the object")
	}
	return nil
}

// ctx says what the strings of a value are.
type ctx uint8

const (
	ctxSkip           ctx = iota // nothing in it is searched
	ctxTop                       // the entry
	ctxMessage                   // message
	ctxContent                   // message.content
	ctxBlock                     // an element of message.content
	ctxResult                    // a tool result's content
	ctxResultItem                // an element of a tool result's content
	ctxAll                       // every string (not member names): w
	ctxTopContent                // an export's content
	ctxPasted                    // history.jsonl pastedContents
	ctxPastedItem                // one pasted content
	ctxTopContentItem            // an element of an export's content array
)

func (w *walker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// str reads a string starting at its opening quote.
func (w *walker) str() rawSpan {
	w.i++ // the quote
	start := w.i
	escaped := false
	for {
		j := bytes.IndexByte(w.b[w.i:], '"')
		if j < 0 {
			w.i = len(w.b)
			w.fail("string not terminated")
		}
		end := w.i + j
		// An odd run of backslashes before the quote escapes it.
		k := end
		for k > start && w.b[k-1] == '\\' {
			k--
		}
		if k < end {
			escaped = true
		}
		w.i = end + 1
		if (end-k)%2 == 0 {
			if !escaped && bytes.IndexByte(w.b[start:end], '\\') >= 0 {
				escaped = true
			}
			return rawSpan{start: int32(start), end: int32(end), escaped: escaped}
		}
	}
}

// value walks one value in context c; strings in a searched context are
// added with where w and member name key.
func (w *walker) value(c ctx, wh where, key rawSpan, block int32) {
	w.ws()
	if w.i >= len(w.b) {
		w.fail("unexpected end of line")
	}
	switch w.b[w.i] {
	case '"':
		s := w.str()
		switch c {
		case ctxAll:
			w.add(s, wh, block, key)
		case ctxContent:
			w.add(s, wMsgContent, -1, rawSpan{})
		case ctxResult:
			w.add(s, wBlockResult, block, rawSpan{})
		case ctxTopContent, ctxTopContentItem:
			w.add(s, wContent, -1, rawSpan{})
		}
	case '{':
		w.object(c, wh, block)
	case '[':
		w.array(c, wh, block)
	case 't':
		w.lit("true")
	case 'f':
		w.lit("false")
	case 'n':
		w.lit("null")
	default:
		w.number()
	}
}

func (w *walker) add(s rawSpan, wh where, block int32, key rawSpan) {
	w.li.spans = append(w.li.spans, textSpan{rawSpan: s, w: wh, block: block, key: key})
}

func (w *walker) lit(s string) {
	if !bytes.HasPrefix(w.b[w.i:], []byte(s)) {
		w.fail("invalid literal")
	}
	w.i += len(s)
}

func (w *walker) number() int {
	start := w.i
	for w.i < len(w.b) {
		switch c := w.b[w.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			w.i++
			continue
		}
		break
	}
	if w.i == start {
		w.fail(fmt.Sprintf("invalid character %q", w.b[w.i]))
	}
	return start
}

func (w *walker) enter() {
	w.depth++
	if w.depth > maxDepth {
		w.fail("nested too deep")
	}
}

func (w *walker) array(c ctx, wh where, block int32) {
	w.enter()
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		w.depth--
		return
	}
	for {
		ec, eb := ctxSkip, block
		switch c {
		case ctxAll:
			ec = ctxAll
		case ctxContent:
			ec = ctxBlock
			eb = int32(len(w.li.blocks))
			w.li.blocks = append(w.li.blocks, blockInfo{})
		case ctxResult:
			ec = ctxResultItem
		case ctxTopContent:
			ec = ctxTopContentItem
		}
		w.value(ec, wh, rawSpan{}, eb)
		if w.closes(']', "an array") {
			return
		}
	}
}

func (w *walker) object(c ctx, wh where, block int32) {
	w.enter()
	w.i++
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		w.depth--
		return
	}
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			w.fail("expected a member name")
		}
		k := w.str()
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			w.fail("expected : after a member name")
		}
		w.i++
		w.member(c, wh, w.b[k.start:k.end], k, block)
		if w.closes('}', "an object") {
			return
		}
	}
}

// closes reads what follows a member of an object or an element of an
// array (what names which): a comma (false: another follows) or the
// closer, which ends the container (true).
func (w *walker) closes(closer byte, what string) bool {
	w.ws()
	if w.i >= len(w.b) {
		w.fail("unexpected end of line in " + what)
	}
	if w.b[w.i] == ',' {
		w.i++
		return false
	}
	if w.b[w.i] != closer {
		w.fail("expected , or " + string(closer) + " in " + what)
	}
	w.i++
	w.depth--
	return true
}

// field reads a member's value as a string span, if it is one.
func (w *walker) field(dst *rawSpan) {
	w.ws()
	if w.i < len(w.b) && w.b[w.i] == '"' {
		*dst = w.str()
		return
	}
	w.value(ctxSkip, 0, rawSpan{}, -1)
}

// member walks the value of member k of an object in context c.
func (w *walker) member(c ctx, wh where, k []byte, ks rawSpan, block int32) {
	li := w.li
	switch c {
	case ctxTop:
		switch string(k) {
		case "type":
			w.field(&li.typ)
		case "timestamp":
			w.ws()
			if w.i < len(w.b) && (w.b[w.i] == '-' || w.b[w.i] >= '0' && w.b[w.i] <= '9') {
				s := w.number()
				li.tsNumber = w.b[s:w.i]
				return
			}
			w.field(&li.timestamp)
		case "sessionId":
			w.field(&li.sessionID)
		case "cwd":
			w.field(&li.cwd)
		case "project":
			w.field(&li.project)
		case "tool_name":
			w.field(&li.toolName)
		case "isCompactSummary":
			w.ws()
			li.compactSummary = bytes.HasPrefix(w.b[w.i:], []byte("true"))
			w.value(ctxSkip, 0, rawSpan{}, -1)
		case "rowSource":
			w.ws()
			li.harness = bytes.HasPrefix(w.b[w.i:], []byte(`"harness"`))
			w.value(ctxSkip, 0, rawSpan{}, -1)
		case "message":
			w.ws()
			li.hasMessage = w.i < len(w.b) && w.b[w.i] == '{'
			w.value(ctxMessage, 0, rawSpan{}, -1)
		case "summary":
			w.value(ctxAll, wSummary, rawSpan{}, -1)
		case "customTitle":
			w.value(ctxAll, wCustomTitle, rawSpan{}, -1)
		case "aiTitle":
			w.value(ctxAll, wAITitle, rawSpan{}, -1)
		case "content":
			w.value(ctxTopContent, 0, rawSpan{}, -1)
		case "tool_input":
			w.value(ctxAll, wToolInput, rawSpan{}, -1)
		case "tool_output":
			w.value(ctxAll, wToolOutput, rawSpan{}, -1)
		case "display":
			w.value(ctxAll, wDisplay, rawSpan{}, -1)
		case "pastedContents":
			w.value(ctxPasted, 0, rawSpan{}, -1)
		default:
			w.value(ctxSkip, 0, rawSpan{}, -1)
		}
	case ctxMessage:
		switch string(k) {
		case "role":
			w.field(&li.role)
		case "content":
			w.value(ctxContent, 0, rawSpan{}, -1)
		default:
			w.value(ctxSkip, 0, rawSpan{}, -1)
		}
	case ctxBlock:
		b := &li.blocks[block]
		switch string(k) {
		case "type":
			w.field(&b.typ)
		case "id":
			w.field(&b.id)
		case "name":
			w.field(&b.name)
		case "tool_use_id":
			w.field(&b.toolUseID)
		case "text":
			w.value(ctxAll, wBlockText, rawSpan{}, block)
		case "thinking":
			w.value(ctxAll, wBlockThink, rawSpan{}, block)
		case "input":
			w.value(ctxAll, wBlockInput, rawSpan{}, block)
		case "content":
			w.value(ctxResult, 0, rawSpan{}, block)
		default:
			w.value(ctxSkip, 0, rawSpan{}, -1)
		}
	case ctxResultItem:
		if string(k) == "text" {
			w.value(ctxAll, wBlockResult, rawSpan{}, block)
			return
		}
		w.value(ctxSkip, 0, rawSpan{}, -1)
	case ctxTopContentItem:
		if string(k) == "text" {
			w.value(ctxAll, wContent, rawSpan{}, -1)
			return
		}
		w.value(ctxSkip, 0, rawSpan{}, -1)
	case ctxAll:
		// An object inside an input or output: its values, named by
		// their member.
		w.value(ctxAll, wh, ks, block)
	case ctxPasted:
		// A pasted image (1.0.x and 2.0.x keep a small one) holds
		// base64, not text: its content is dropped once its type is
		// known, which may come after it.
		n := len(li.spans)
		li.pastedImage = false
		w.value(ctxPastedItem, 0, rawSpan{}, -1)
		if li.pastedImage {
			li.spans = li.spans[:n]
		}
	case ctxPastedItem:
		switch string(k) {
		case "content":
			w.value(ctxAll, wPasted, rawSpan{}, -1)
		case "type":
			var t rawSpan
			w.field(&t)
			li.pastedImage = string(w.b[t.start:t.end]) == "image"
		default:
			w.value(ctxSkip, 0, rawSpan{}, -1)
		}
	default:
		w.value(ctxSkip, 0, rawSpan{}, -1)
	}
}

// unescape appends the decoded form of a JSON string's raw bytes to dst.
// A lone surrogate escape becomes U+FFFD; bytes that are not UTF-8 are
// kept as they are.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		if i+1 >= len(raw) {
			return append(dst, raw[i:]...)
		}
		c := raw[i+1]
		i += 2
		switch c {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := hex4(raw[i:])
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok2 = hex4(raw[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); ok2 && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // " \ / and anything else stand for themselves
			dst = append(dst, c)
		}
	}
	return dst
}

func hex4(b []byte) (rune, bool) {
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
