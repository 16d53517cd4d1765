package secrets

import (
	"bytes"
	"sort"
	"strings"
	"sync"
)

// Redactor takes secrets out of lines and texts: each secret the rules
// find (but for the allowed rules and the ignored fingerprints), and each
// known secret wherever it is, is replaced by [REDACTED:<rule>]. In a JSON
// line only the bytes of string values change: every member, every entry's
// uuid and parentUuid, and the line's structure stay. A Redactor is not
// safe for use by several goroutines at once (each makes its own).
type Redactor struct {
	eng    *Engine
	filter *filter
	known  []known
	needle *keywords // the known secrets' raw forms, to find lines holding one
	sc     scratch
	li     lineInfo
	dec    []byte
	hits   []int
	ids    []int
}

// known is a secret found before, replaced wherever it is.
type known struct {
	secret, rule string
}

// RedactorOptions configure a Redactor.
type RedactorOptions struct {
	// Allow are rules whose findings stay.
	Allow []string
	// Ignore holds fingerprints of findings that stay.
	Ignore map[string]bool
	// Known are secrets found elsewhere (a scan), by rule: each is
	// replaced wherever it is, whether or not a rule finds it there.
	Known map[string]string
}

// NewRedactor returns a Redactor of the default rules.
func NewRedactor(opts RedactorOptions) (*Redactor, error) {
	eng, err := Default()
	if err != nil {
		return nil, err
	}
	ig := opts.Ignore
	if ig == nil {
		ig = map[string]bool{}
	}
	f, err := newFilter(eng, Options{Allow: opts.Allow, Ignore: ig})
	if err != nil {
		return nil, err
	}
	r := &Redactor{eng: eng, filter: f}
	var words []string
	for s, rule := range opts.Known {
		if s == "" {
			continue
		}
		r.known = append(r.known, known{secret: s, rule: rule})
	}
	// Longest first: a secret holding another is replaced whole.
	sort.Slice(r.known, func(i, j int) bool {
		if len(r.known[i].secret) != len(r.known[j].secret) {
			return len(r.known[i].secret) > len(r.known[j].secret)
		}
		return r.known[i].secret < r.known[j].secret
	})
	for _, k := range r.known {
		words = append(words, needle(k.secret))
	}
	if len(words) > 0 {
		r.needle = newKeywords(lowerAll(words))
	}
	return r, nil
}

func lowerAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		b := []byte(w)
		for k, c := range b {
			b[k] = lower[c]
		}
		out[i] = string(b)
	}
	return out
}

// needle is the longest piece of a secret that every JSON encoder writes
// as it is (printable ASCII but " \ / < > &), and at least two bytes long
// when the secret has such a piece: a line holding the secret, raw or in a
// JSON string, holds it.
func needle(s string) string {
	best, cur := "", 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && !strings.ContainsRune(`"\/<>&`, rune(s[i])) {
			cur++
			continue
		}
		if cur > len(best) {
			best = s[start:i]
		}
		cur, start = 0, i+1
	}
	if len(best) < 2 {
		if len(s) >= 2 {
			return s[:2] // a piece that may be escaped: candidates are checked
		}
		return s + s
	}
	return best
}

// HoldsKnown reports whether raw bytes may hold one of the known secrets
// (raw or JSON-escaped): a line that does not is left as it is by the known
// secrets.
func (r *Redactor) HoldsKnown(raw []byte) bool {
	if r.needle == nil {
		return false
	}
	r.hits, r.ids = r.needle.scan(str(raw), r.hits[:0], r.ids[:0])
	return len(r.hits) > 0
}

// repl is one replacement in a text: [start, end) becomes the marker of
// rule.
type repl struct {
	start, end int
	rule       string
}

// marker is what a secret found by rule is replaced by.
func marker(rule string) string { return "[REDACTED:" + rule + "]" }

// find returns the replacements of text: what the rules find and the known
// secrets, overlapping ones merged (the first keeps its rule).
func (r *Redactor) find(text string, out []repl) []repl {
	start := len(out)
	r.eng.find(text, &r.sc, func(m Match) {
		if r.filter.allow[m.Rule] || r.filter.ignore[fingerprint(m.Rule, text[m.Start:m.End])] {
			return
		}
		out = append(out, repl{m.Start, m.End, m.Rule})
	})
	for _, k := range r.known {
		for at := 0; ; {
			i := strings.Index(text[at:], k.secret)
			if i < 0 {
				break
			}
			out = append(out, repl{at + i, at + i + len(k.secret), k.rule})
			at += i + len(k.secret)
		}
	}
	rs := out[start:]
	if len(rs) < 2 {
		return out
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].start != rs[j].start {
			return rs[i].start < rs[j].start
		}
		return rs[i].end > rs[j].end
	})
	merged := rs[:1]
	for _, x := range rs[1:] {
		last := &merged[len(merged)-1]
		if x.start < last.end {
			last.end = max(last.end, x.end)
			continue
		}
		merged = append(merged, x)
	}
	return out[:start+len(merged)]
}

// Text returns text with its secrets replaced, and how many were.
func (r *Redactor) Text(text string) (string, int) { return r.TextRules(text, nil) }

// TextRules is Text that also adds to rules (when not nil) how many
// secrets of each rule it replaced.
func (r *Redactor) TextRules(text string, rules map[string]int) (string, int) {
	rs := r.find(text, nil)
	if len(rs) == 0 {
		return text, 0
	}
	if rules != nil {
		for _, x := range rs {
			rules[x.rule]++
		}
	}
	var b strings.Builder
	last := 0
	for _, x := range rs {
		b.WriteString(text[last:x.start])
		b.WriteString(marker(x.rule))
		last = x.end
	}
	b.WriteString(text[last:])
	return b.String(), len(rs)
}

// rawRepl is a replacement in a line's raw bytes.
type rawRepl struct {
	start, end int
	rule       string
	secret     string // what it takes out (decoded)
	where      Where
	tool       string
}

// Line returns the JSON line raw with the secrets of its string values
// replaced, and how many were (raw itself when none). A line that is not
// JSON is redacted as text.
func (r *Redactor) Line(raw []byte) ([]byte, int) { return r.LineRules(raw, nil) }

// LineRules is Line that also adds to rules (when not nil) how many
// secrets of each rule it replaced.
func (r *Redactor) LineRules(raw []byte, rules map[string]int) ([]byte, int) {
	rr := r.lineRepls(raw, false)
	if len(rr) == 0 {
		return raw, 0
	}
	if rules != nil {
		for _, x := range rr {
			rules[x.rule]++
		}
	}
	return applyRaw(raw, rr), len(rr)
}

// lineRepls returns the replacements of a line's raw bytes, in order;
// history says the line is history.jsonl's (for where).
func (r *Redactor) lineRepls(raw []byte, history bool) []rawRepl {
	var out []rawRepl
	if err := walk(raw, &r.li); err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil
		}
		for _, x := range r.find(str(raw), nil) {
			out = append(out, rawRepl{x.start, x.end, x.rule, string(raw[x.start:x.end]), WhereLine, ""})
		}
		return out
	}
	li := &r.li
	var rs []repl
	for k := range li.spans {
		sp := &li.spans[k]
		if sp.end == sp.start {
			continue
		}
		b := raw[sp.start:sp.end]
		text := b
		if sp.esc {
			r.dec = unescape(r.dec[:0], b)
			text = r.dec
		}
		rs = r.find(str(text), rs[:0])
		if len(rs) == 0 {
			continue
		}
		where, tool, ok := li.where(raw, sp, history)
		if !ok {
			// A member a finding is never in (an id, a signature,
			// base64 data): a known secret there stays too, so that
			// the entry keeps its structure.
			continue
		}
		offs := make([]int, 0, 2*len(rs))
		for _, x := range rs {
			offs = append(offs, x.start, x.end)
		}
		ro := offs
		if sp.esc {
			ro = rawOffsets(b, offs)
		}
		for i, x := range rs {
			out = append(out, rawRepl{int(sp.start) + ro[2*i], int(sp.start) + ro[2*i+1], x.rule, string(text[x.start:x.end]), where, tool})
		}
	}
	return out
}

// applyRaw replaces the ranges of raw (in order, apart) by their markers.
func applyRaw(raw []byte, rr []rawRepl) []byte {
	out := make([]byte, 0, len(raw))
	last := 0
	for _, x := range rr {
		out = append(out, raw[last:x.start]...)
		out = append(out, marker(x.rule)...)
		last = x.end
	}
	return append(out, raw[last:]...)
}

// Filter is a Redactor for use by several goroutines at once: each call
// takes a Redactor of its own from a pool.
type Filter struct {
	pool sync.Pool
}

// NewFilter returns a Filter of Redactors made with opts.
func NewFilter(opts RedactorOptions) (*Filter, error) {
	r, err := NewRedactor(opts)
	if err != nil {
		return nil, err
	}
	f := &Filter{}
	f.pool.New = func() any {
		r, _ := NewRedactor(opts)
		return r
	}
	f.pool.Put(r)
	return f, nil
}

// Line is Redactor.Line.
func (f *Filter) Line(raw []byte) ([]byte, int) {
	r := f.pool.Get().(*Redactor)
	defer f.pool.Put(r)
	return r.Line(raw)
}

// Text is Redactor.Text.
func (f *Filter) Text(s string) (string, int) {
	r := f.pool.Get().(*Redactor)
	defer f.pool.Put(r)
	return r.Text(s)
}

// LineRules is Redactor.LineRules.
func (f *Filter) LineRules(raw []byte, rules map[string]int) ([]byte, int) {
	r := f.pool.Get().(*Redactor)
	defer f.pool.Put(r)
	return r.LineRules(raw, rules)
}

// TextRules is Redactor.TextRules.
func (f *Filter) TextRules(s string, rules map[string]int) (string, int) {
	r := f.pool.Get().(*Redactor)
	defer f.pool.Put(r)
	return r.TextRules(s, rules)
}

// Bytes is Text of a text held in bytes: b itself when nothing goes.
func (f *Filter) Bytes(b []byte) []byte {
	out, n := f.Text(str(b))
	if n == 0 {
		return b
	}
	return []byte(out)
}
