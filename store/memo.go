package store

import (
	"encoding/binary"
	"errors"
	"time"
)

// Memo keeps what reading transcripts gave a listing, by file identity
// (see File.Identify), so that a listing of files that have not changed
// reads none of them (the catalog package keeps one on disk). A memo
// answers only for a file whose identity is the one it kept; its methods
// are called from several goroutines at once.
type Memo interface {
	// Glance returns what KeepGlance kept for f as it is now (export: a
	// glance of a transcript export), and whether there is one.
	Glance(f File, export bool) ([]byte, bool)
	// KeepGlance keeps the glance of f (see Glance.AppendBinary).
	KeepGlance(f File, export bool, b []byte)
	// FlatSession returns the session id a flat subagent transcript f
	// names, as kept, and whether one was kept.
	FlatSession(f File) (string, bool)
	KeepFlatSession(f File, id string)
}

// glanceVersion is the version of what AppendBinary writes; it changes
// whenever a glance's rules or fields change.
const glanceVersion = 3

// AppendBinary appends g, all a glance read but its File, its Title and
// Err, to b: what a Memo keeps. A glance that could not read its file, or
// read it at another size than its File's, is not kept (an error).
func (g *Glance) AppendBinary(b []byte) ([]byte, error) {
	if g.Err != nil {
		return b, errors.New("glance " + g.Path + ": not read")
	}
	b = append(b, glanceVersion)
	b = binary.AppendVarint(b, g.Size)
	var flags uint64
	for i, f := range []bool{g.Timed, g.MessagesKnown, g.Whole, g.Empty, g.MetaOnly, g.Warmup, g.titled} {
		if f {
			flags |= 1 << i
		}
	}
	b = binary.AppendUvarint(b, flags)
	for _, s := range []string{g.lines.customTail, g.lines.customHead, g.lines.aiTail, g.lines.aiHead, g.lines.summary,
		g.FirstPrompt, g.Version, g.OtherID} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(g.CWDs)))
	for _, c := range g.CWDs {
		b = appendString(b, c)
	}
	for _, t := range []time.Time{g.Started, g.LastActive} {
		tb, err := t.MarshalBinary()
		if err != nil {
			return b, err
		}
		b = appendString(b, string(tb))
	}
	b = binary.AppendVarint(b, int64(g.Messages))
	b = binary.AppendUvarint(b, uint64(len(g.Quick)))
	for _, q := range g.Quick {
		b = appendString(b, q.Code)
		b = appendString(b, q.Severity)
		b = binary.AppendVarint(b, int64(q.Line))
		b = appendString(b, q.Message)
	}
	return b, nil
}

// quickNotice reports a quick finding a glance gives at a lower severity
// than its code's: a Desktop fork's session-id-mismatch, a copy of another
// session's first lines (session-unwritten) as notices, a lone surrogate
// a file's client sends as U+FFFD as a warning.
func quickNotice(q QuickFinding) bool {
	return q.Severity == "notice" && (q.Code == "session-id-mismatch" || q.Code == "session-unwritten") ||
		q.Severity == "warning" && q.Code == "surrogate-lone"
}

// SurrogateSentTo is the first Claude Code version that sends U+FFFD in
// place of a lone surrogate escape; older ones send the escape and the
// API answers 400 (measured, see validate.Sends).
const SurrogateSentTo = "2.1.132"

// glanceMax bounds what a kept glance may hold: a kept glance that holds
// more than a glance can is not one (never trusted).
const (
	cwdMax     = 16
	quickMax   = 2*GlanceReach + 1
	stringMax  = 1 << 20
	messageMax = 1 << 20
)

// UnmarshalBinary reads what AppendBinary wrote into g, whose File is set:
// the glance of that file. What is not a glance AppendBinary writes (of
// another version, cut short, out of bounds) is an error, and g is then
// left as it was.
func (g *Glance) UnmarshalBinary(b []byte) error {
	r := &memoReader{b: b}
	var v Glance
	v.File = g.File
	if r.byte() != glanceVersion {
		return errors.New("kept glance: another version")
	}
	if size := r.varint(); size != g.Size {
		r.fail("of another size")
	}
	flags := r.uvarint()
	for i, f := range []*bool{&v.Timed, &v.MessagesKnown, &v.Whole, &v.Empty, &v.MetaOnly, &v.Warmup, &v.titled} {
		*f = flags&(1<<i) != 0
	}
	if flags>>7 != 0 {
		r.fail("unknown flags")
	}
	for _, s := range []*string{&v.lines.customTail, &v.lines.customHead, &v.lines.aiTail, &v.lines.aiHead, &v.lines.summary,
		&v.FirstPrompt} {
		*s = r.string(TitleMax)
	}
	v.Version = r.string(stringMax)
	v.OtherID = r.string(64)
	n := r.uvarint()
	if n > cwdMax {
		r.fail("too many cwds")
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		v.CWDs = append(v.CWDs, r.string(stringMax))
	}
	for _, t := range []*time.Time{&v.Started, &v.LastActive} {
		if err := t.UnmarshalBinary([]byte(r.string(32))); err != nil {
			r.fail("a time")
		}
	}
	m := r.varint()
	if m < 0 || m > g.Size {
		r.fail("messages out of bounds")
	}
	v.Messages = int(m)
	n = r.uvarint()
	if n > quickMax {
		r.fail("too many findings")
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		q := QuickFinding{Code: r.string(64), Severity: r.string(16)}
		line := r.varint()
		q.Message = r.string(messageMax)
		if sev, ok := QuickCodes[q.Code]; !ok || line < 0 || line > g.Size || q.Severity != sev && !quickNotice(q) {
			r.fail("a finding")
		}
		q.Line = int(line)
		v.Quick = append(v.Quick, q)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("bytes after it")
	}
	if r.err != nil {
		return r.err
	}
	*g = v
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// memoReader reads what a memo kept; its first error sticks, and every
// read after it gives zero values.
type memoReader struct {
	b   []byte
	err error
}

func (r *memoReader) fail(what string) {
	if r.err == nil {
		r.err = errors.New("kept glance: " + what)
	}
	r.b = nil
}

func (r *memoReader) byte() byte {
	if len(r.b) == 0 {
		r.fail("cut short")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *memoReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("cut short")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *memoReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("cut short")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// string reads a string of at most max bytes.
func (r *memoReader) string(max int) string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(max) || n > uint64(len(r.b)) {
		r.fail("a string out of bounds")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
