package usage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Tokens is what the API billed for one reply: every field of its usage
// object Claude Code writes. CacheWrite is cache_creation_input_tokens,
// of which CacheWrite1h were written for an hour
// (cache_creation.ephemeral_1h_input_tokens); the rest for five minutes.
type Tokens struct {
	Input        int64
	Output       int64
	CacheWrite   int64
	CacheWrite1h int64
	CacheRead    int64
	WebSearch    int64 // server_tool_use.web_search_requests
	WebFetch     int64 // server_tool_use.web_fetch_requests
}

// CacheWrite5m is the part of the cache writes written for five minutes.
func (t Tokens) CacheWrite5m() int64 { return t.CacheWrite - t.CacheWrite1h }

// Total is every token of t: input, output, cache writes and reads.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheWrite + t.CacheRead }

// Prompt is the size of the prompt t was billed for: input, cache writes
// and cache reads (what long-context tiers are decided by).
func (t Tokens) Prompt() int64 { return t.Input + t.CacheWrite + t.CacheRead }

// Add adds u to t.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheWrite += u.CacheWrite
	t.CacheWrite1h += u.CacheWrite1h
	t.CacheRead += u.CacheRead
	t.WebSearch += u.WebSearch
	t.WebFetch += u.WebFetch
}

// more reports whether t is a later state of a reply than u: streamed
// entries of one reply repeat its usage and grow its output count, and
// the last one carries the server tool counts; a copy carries the same.
func (t Tokens) more(u Tokens) bool {
	if t.Output != u.Output {
		return t.Output > u.Output
	}
	a, b := t.Total()+t.WebSearch+t.WebFetch, u.Total()+u.WebSearch+u.WebFetch
	return a > b
}

// Reply is one reply of the API as a transcript holds it: the usage of
// its last written entry.
type Reply struct {
	ID      string // message.id ("" when the entry has none)
	Time    int64  // the timestamp of its first entry, Unix milliseconds
	Model   string
	Session string // the entry's sessionId (a subagent's: its parent session)
	Tier    string // usage.service_tier, where written
	Speed   string // usage.speed, where written
	Tokens
}

// entry is what parseLine reads of one line.
type entry struct {
	assistant, apiError bool
	hasUsage            bool
	id, model, session  string
	tier, speed         string
	time                int64
	tokens              Tokens
}

var usageKey = []byte(`"usage"`)

// parseLine reads the reply an assistant entry's line holds; ok is false
// for any other line (other entry types, lines that are not JSON, entries
// without usage, <synthetic> and API error entries).
func parseLine(raw []byte, in *interner) (r Reply, ok bool) {
	if !bytes.Contains(raw, usageKey) {
		return r, false
	}
	var e entry
	l := lex{b: raw}
	if !l.object(func(k []byte) bool { return l.top(k, &e, in) }) {
		return r, false
	}
	if !e.assistant || !e.hasUsage || e.apiError || e.model == "<synthetic>" {
		return r, false
	}
	e.tokens.CacheWrite1h = min(e.tokens.CacheWrite1h, e.tokens.CacheWrite)
	return Reply{ID: e.id, Time: e.time, Model: e.model, Session: e.session, Tier: e.tier, Speed: e.speed, Tokens: e.tokens}, true
}

// lex reads one JSON text, skipping what it does not need.
type lex struct {
	b []byte
	i int
}

func (l *lex) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\r', '\n':
			l.i++
		default:
			return
		}
	}
}

// object reads an object, calling field for each key with l at its
// value, which field must read whole.
func (l *lex) object(field func(k []byte) bool) bool {
	l.ws()
	if l.i >= len(l.b) || l.b[l.i] != '{' {
		return false
	}
	l.i++
	l.ws()
	if l.i < len(l.b) && l.b[l.i] == '}' {
		l.i++
		return true
	}
	for {
		l.ws()
		k, esc, ok := l.str()
		if !ok {
			return false
		}
		if esc {
			k = nil // no key cfix reads has an escape
		}
		l.ws()
		if l.i >= len(l.b) || l.b[l.i] != ':' {
			return false
		}
		l.i++
		l.ws()
		if !field(k) {
			return false
		}
		l.ws()
		if l.i >= len(l.b) {
			return false
		}
		switch l.b[l.i] {
		case ',':
			l.i++
		case '}':
			l.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string; s is its bytes between the quotes (escapes left as
// they are: esc says whether there is one).
func (l *lex) str() (s []byte, esc, ok bool) {
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		return nil, false, false
	}
	start := l.i + 1
	j := start
	for {
		k := bytes.IndexByte(l.b[j:], '"')
		if k < 0 {
			return nil, false, false
		}
		j += k
		n := 0
		for m := j - 1; m >= start && l.b[m] == '\\'; m-- {
			n++
		}
		if n > 0 {
			esc = true
		}
		if n%2 == 0 {
			break
		}
		j++
	}
	if !esc && bytes.IndexByte(l.b[start:j], '\\') >= 0 {
		esc = true
	}
	l.i = j + 1
	return l.b[start:j], esc, true
}

// text reads a string value, decoded; null is "".
func (l *lex) text(in *interner) (string, bool) {
	if l.null() {
		return "", true
	}
	at := l.i
	s, esc, ok := l.str()
	if !ok {
		return "", l.skip()
	}
	if esc {
		var v string
		if json.Unmarshal(l.b[at:l.i], &v) != nil {
			return "", false
		}
		return in.of([]byte(v)), true
	}
	return in.of(s), true
}

func (l *lex) null() bool {
	if bytes.HasPrefix(l.b[l.i:], []byte("null")) {
		l.i += 4
		return true
	}
	return false
}

// number reads a whole number (null, or anything else, is 0 and skipped).
func (l *lex) number() (int64, bool) {
	j := l.i
	for j < len(l.b) && (l.b[j] >= '0' && l.b[j] <= '9' || l.b[j] == '-') {
		j++
	}
	if j == l.i || j < len(l.b) && (l.b[j] == '.' || l.b[j] == 'e' || l.b[j] == 'E') {
		return 0, l.skip()
	}
	n, err := strconv.ParseInt(string(l.b[l.i:j]), 10, 64)
	l.i = j
	if err != nil || n < 0 {
		return 0, true
	}
	return n, true
}

// skip passes over one value of any kind.
func (l *lex) skip() bool {
	if l.i >= len(l.b) {
		return false
	}
	switch c := l.b[l.i]; c {
	case '"':
		_, _, ok := l.str()
		return ok
	case '{', '[':
		depth := 0
		for l.i < len(l.b) {
			switch l.b[l.i] {
			case '"':
				if _, _, ok := l.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					l.i++
					return true
				}
			}
			l.i++
		}
		return false
	default:
		for l.i < len(l.b) {
			switch l.b[l.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return true
			}
			l.i++
		}
		return true
	}
}

// top reads a top-level field of an entry.
func (l *lex) top(k []byte, e *entry, in *interner) bool {
	switch string(k) {
	case "type":
		s, ok := l.text(in)
		e.assistant = s == "assistant"
		return ok
	case "timestamp":
		s, ok := l.text(in)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			e.time = t.UnixMilli()
		}
		return ok
	case "sessionId":
		var ok bool
		e.session, ok = l.text(in)
		return ok
	case "isApiErrorMessage":
		if bytes.HasPrefix(l.b[l.i:], []byte("true")) {
			e.apiError = true
		}
		return l.skip()
	case "message":
		if l.i < len(l.b) && l.b[l.i] != '{' {
			return l.skip()
		}
		return l.object(func(k []byte) bool { return l.message(k, e, in) })
	}
	return l.skip()
}

// message reads a field of an entry's message.
func (l *lex) message(k []byte, e *entry, in *interner) bool {
	var ok bool
	switch string(k) {
	case "id":
		e.id, ok = l.text(nil)
		return ok
	case "model":
		e.model, ok = l.text(in)
		return ok
	case "usage":
		if l.i < len(l.b) && l.b[l.i] != '{' {
			return l.skip()
		}
		e.hasUsage = true
		return l.object(func(k []byte) bool { return l.usage(k, e, in) })
	}
	return l.skip()
}

// usage reads a field of a message's usage.
func (l *lex) usage(k []byte, e *entry, in *interner) bool {
	t := &e.tokens
	var ok bool
	switch string(k) {
	case "input_tokens":
		t.Input, ok = l.number()
	case "output_tokens":
		t.Output, ok = l.number()
	case "cache_creation_input_tokens":
		t.CacheWrite, ok = l.number()
	case "cache_read_input_tokens":
		t.CacheRead, ok = l.number()
	case "service_tier":
		e.tier, ok = l.text(in)
	case "speed":
		e.speed, ok = l.text(in)
	case "cache_creation":
		if l.i < len(l.b) && l.b[l.i] != '{' {
			return l.skip()
		}
		return l.object(func(k []byte) bool {
			if string(k) == "ephemeral_1h_input_tokens" {
				var ok bool
				t.CacheWrite1h, ok = l.number()
				return ok
			}
			return l.skip()
		})
	case "server_tool_use":
		if l.i < len(l.b) && l.b[l.i] != '{' {
			return l.skip()
		}
		return l.object(func(k []byte) bool {
			var ok bool
			switch string(k) {
			case "web_search_requests":
				t.WebSearch, ok = l.number()
			case "web_fetch_requests":
				t.WebFetch, ok = l.number()
			default:
				ok = l.skip()
			}
			return ok
		})
	default:
		return l.skip()
	}
	return ok
}

// interner keeps one copy of the strings that repeat (models, sessions,
// tiers).
type interner map[string]string

func (in *interner) of(b []byte) string {
	if in == nil {
		return string(b)
	}
	if *in == nil {
		*in = interner{}
	}
	if s, ok := (*in)[string(b)]; ok {
		return s
	}
	if len(b) > 64 || len(*in) > 4096 {
		return string(b) // message ids and the like: not kept
	}
	s := string(b)
	(*in)[s] = s
	return s
}
