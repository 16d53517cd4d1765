package search

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/jsonline"
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
	jsonline.Scanner
	li *lineInfo
}

// walk fills li from line. The spans found before a syntax error are kept.
func walk(line []byte, li *lineInfo) error {
	li.reset()
	w := walker{li: li}
	return w.Walk(line, func() { w.object(ctxTop, 0, -1) })
}

// raw is the span of a string the scanner read.
func raw(s jsonline.Span) rawSpan {
	return rawSpan{start: s.Start, end: s.End, escaped: s.Escaped}
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

// value walks one value in context c; strings in a searched context are
// added with where w and member name key.
func (w *walker) value(c ctx, wh where, key rawSpan, block int32) {
	switch w.Next() {
	case '"':
		s := raw(w.Str())
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
	default:
		w.Scalar()
	}
}

func (w *walker) add(s rawSpan, wh where, block int32, key rawSpan) {
	w.li.spans = append(w.li.spans, textSpan{rawSpan: s, w: wh, block: block, key: key})
}

func (w *walker) array(c ctx, wh where, block int32) {
	for more := w.Array(); more; more = w.NextElem() {
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
	}
}

func (w *walker) object(c ctx, wh where, block int32) {
	for ks, more := w.Object(); more; ks, more = w.NextKey() {
		k := raw(ks)
		w.member(c, wh, w.B[k.start:k.end], k, block)
	}
}

// field reads a member's value as a string span, if it is one.
func (w *walker) field(dst *rawSpan) {
	w.WS()
	if w.I < len(w.B) && w.B[w.I] == '"' {
		*dst = raw(w.Str())
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
			w.WS()
			if w.I < len(w.B) && (w.B[w.I] == '-' || w.B[w.I] >= '0' && w.B[w.I] <= '9') {
				s := w.Number()
				li.tsNumber = w.B[s:w.I]
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
			w.WS()
			li.compactSummary = bytes.HasPrefix(w.B[w.I:], []byte("true"))
			w.value(ctxSkip, 0, rawSpan{}, -1)
		case "rowSource":
			w.WS()
			li.harness = bytes.HasPrefix(w.B[w.I:], []byte(`"harness"`))
			w.value(ctxSkip, 0, rawSpan{}, -1)
		case "message":
			w.WS()
			li.hasMessage = w.I < len(w.B) && w.B[w.I] == '{'
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
			li.pastedImage = string(w.B[t.start:t.end]) == "image"
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
			r, ok := jsonline.Hex4(raw[i:])
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok2 = jsonline.Hex4(raw[i+2:])
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
