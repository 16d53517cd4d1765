package changeset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// A Transform is a streamed content source for a Create or Rewrite op: the
// bytes of From (Path for a Rewrite without From), read line by line with
// the session reader, each line rewritten by a pure function of the line
// and the Transform's fields. It is data (saved plans and journals hold
// it), deterministic (the diff, the apply and a replayed plan produce the
// same bytes) and never holds more than one line in memory, so a clone or
// move of a multi-GB transcript streams.
//
// When the op has a fingerprint of its source (FromExpect for From, Expect
// for a Rewrite in place), only that many bytes are read: the result is
// the file as planned, not whatever Claude Code appended since.
type Transform struct {
	Kind string `json:"kind"`
	// Retarget: a top-level "sessionId" equal to OldSession becomes
	// NewSession (both empty: ids stay).
	OldSession string `json:"old_session,omitempty"`
	NewSession string `json:"new_session,omitempty"`
	// Retarget: a top-level "cwd" that is OldDir, or a path under it
	// (whole path components), becomes the same path under NewDir.
	OldDir string `json:"old_dir,omitempty"`
	NewDir string `json:"new_dir,omitempty"`
	// RewritePaths also rewrites paths under OldDir inside strings of
	// message.content (text, tool inputs, tool results), never inside
	// thinking, redacted_thinking, image or document blocks.
	RewritePaths bool `json:"rewrite_paths,omitempty"`
	// Agents renames subagent ids: a top-level "agentId" and
	// "toolUseResult.agentId" found here take the mapped value.
	Agents map[string]string `json:"agents,omitempty"`
	// Trim edits lines of the source by number (cfix trim and fork): a
	// line goes, loses thinking, tool output or images, or gets another
	// parentUuid, before the fields above are rewritten. Sorted by line.
	Trim []LineTrim `json:"trim,omitempty"`
	// Saved is how many bytes the Trim edits take out of the source, as
	// the planner counted them (for the summary).
	Saved int64 `json:"saved,omitempty"`
	// Append holds whole lines (each ending in "\n") written after the
	// last line of the source: a title line for a trimmed or forked copy.
	Append []byte `json:"append,omitempty"`
}

// LineTrim is what a Transform does to one line of its source.
type LineTrim struct {
	Line int `json:"line"` // 1-based
	// Through, when set, makes the trim one of the lines from Line to
	// Through (a run of lines a fork leaves out, which hold no entry):
	// Drop only.
	Through int `json:"through,omitempty"`
	// Drop leaves the line out.
	Drop bool `json:"drop,omitempty"`
	// Parent, when set, is the line's new parentUuid ("" for null).
	Parent *string `json:"parent,omitempty"`
	// What session.TrimEntry takes out of the entry.
	Thinking   bool `json:"thinking,omitempty"`
	ToolOutput bool `json:"tool_output,omitempty"`
	Images     bool `json:"images,omitempty"`
}

// Last is the last line the trim is of.
func (lt *LineTrim) Last() int { return max(lt.Line, lt.Through) }

// options are the line's session.TrimOptions.
func (lt *LineTrim) options() session.TrimOptions {
	return session.TrimOptions{Thinking: lt.Thinking, ToolOutput: lt.ToolOutput, Images: lt.Images}
}

// Describe says what the trim does to its line, for a diff.
func (lt *LineTrim) Describe() string {
	if lt.Drop {
		return "drop the entry"
	}
	var parts []string
	if lt.Thinking {
		parts = append(parts, "drop thinking")
	}
	if lt.ToolOutput {
		parts = append(parts, "replace tool output by a marker")
	}
	if lt.Images {
		parts = append(parts, "replace images by a marker")
	}
	if lt.Parent != nil {
		parts = append(parts, "re-parent over a dropped entry")
	}
	return strings.Join(parts, "; ")
}

// apply returns the line with the trim applied (nil when it is dropped).
func (lt *LineTrim) apply(raw []byte) ([]byte, error) {
	if lt.Drop {
		return nil, nil
	}
	out := raw
	if o := lt.options(); o.Thinking || o.ToolOutput || o.Images {
		nb, _, err := session.TrimEntry(out, o)
		if err != nil {
			return nil, err
		}
		out = nb
	}
	if lt.Parent != nil {
		val := []byte("null")
		if *lt.Parent != "" {
			val = quote(*lt.Parent)
		}
		nb, err := session.SetField(out, "parentUuid", val)
		if err != nil {
			return nil, err
		}
		out = nb
	}
	return out, nil
}

// TransformRetarget is the Kind of a transform that moves entries to
// another session id and working directory.
const TransformRetarget = "retarget"

// Check validates the shape of a transform.
func (t *Transform) Check() error {
	switch t.Kind {
	case TransformRetarget:
	default:
		return fmt.Errorf("unknown transform kind %q", t.Kind)
	}
	if (t.OldSession == "") != (t.NewSession == "") {
		return errors.New("transform: old_session and new_session go together")
	}
	if (t.OldDir == "") != (t.NewDir == "") {
		return errors.New("transform: old_dir and new_dir go together")
	}
	if t.OldDir != "" && !MappableDir(t.OldDir) {
		return fmt.Errorf("transform: old_dir %q must be an absolute path other than a root", t.OldDir)
	}
	if t.RewritePaths && t.OldDir == "" {
		return errors.New("transform: rewrite_paths needs old_dir")
	}
	if t.RewritePaths && WindowsDir(t.OldDir) {
		return fmt.Errorf("transform: rewrite_paths cannot map a Windows old_dir (%s) inside text", t.OldDir)
	}
	for i, lt := range t.Trim {
		if lt.Line < 1 || i > 0 && lt.Line <= t.Trim[i-1].Last() {
			return errors.New("transform: trim lines out of order")
		}
		if lt.Through != 0 && (lt.Through <= lt.Line || !lt.Drop || lt.Parent != nil || lt.Thinking || lt.ToolOutput || lt.Images) {
			return errors.New("transform: a trim of a run of lines only drops them")
		}
	}
	if len(t.Append) > 0 {
		// Whole lines, each a JSON object: a transcript gains no line
		// Claude Code could not read.
		for _, l := range bytes.SplitAfter(t.Append, nl) {
			if len(l) == 0 {
				continue
			}
			if l[len(l)-1] != '\n' || !json.Valid(l) || bytes.TrimSpace(l)[0] != '{' {
				return errors.New("transform: append holds a line that is not one whole JSON object")
			}
		}
	}
	return nil
}

// transformed opens the new content of an op with a Transform.
func (op *Op) transformed() (io.ReadCloser, error) {
	t := op.Transform
	if err := t.Check(); err != nil {
		return nil, err
	}
	if len(op.Edits) > 0 {
		return nil, errors.New("an op cannot have both edits and a transform")
	}
	base, limit := op.From, int64(-1)
	switch {
	case base == "":
		base = op.Path
		if op.Expect.Exists {
			limit = op.Expect.Size
		}
	case op.FromExpect != nil && op.FromExpect.Exists:
		limit = op.FromExpect.Size
	}
	f, err := rfile.Open(base)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		var r io.Reader = f
		if limit >= 0 {
			r = io.LimitReader(f, limit)
		}
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := t.Stream(bw, r, f)
		if err == nil {
			err = bw.Flush()
		}
		f.Close()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// Stream copies r to w, line by line, with the transform applied. Line
// terminators are kept as they were (a last line without "\n" stays so).
// src, when not nil, reads what r reads: a line longer than
// session.MaxLine, which cfix never holds whole, is copied from it as it
// streams past, its values rewritten in place (see longLine); without
// src such a line is refused.
func (t *Transform) Stream(w io.Writer, r io.Reader, src io.ReaderAt) error {
	rd := session.NewReader(r, nil)
	var buf []byte
	ti := 0
	ended := true // the last line written ended with "\n"
	for rd.Next() {
		l := rd.Line()
		raw := l.Raw
		for ti < len(t.Trim) && t.Trim[ti].Last() < l.N {
			ti++
		}
		if ti < len(t.Trim) && t.Trim[ti].Through != 0 && t.Trim[ti].Line <= l.N {
			continue // in a run of lines dropped
		}
		if l.Long != nil {
			var lt *LineTrim
			if ti < len(t.Trim) && t.Trim[ti].Line == l.N {
				lt = &t.Trim[ti]
			}
			if lt != nil && lt.Drop {
				continue
			}
			if err := t.longLine(w, l, lt, src); err != nil {
				return fmt.Errorf("line %d: %w", l.N, err)
			}
			ended = l.Terminated
			if l.Terminated {
				if _, err := w.Write(nl); err != nil {
					return err
				}
			}
			continue
		}
		if ti < len(t.Trim) && t.Trim[ti].Line == l.N {
			nb, err := t.Trim[ti].apply(raw)
			if err != nil {
				return fmt.Errorf("line %d: %w", l.N, err)
			}
			if nb == nil {
				continue
			}
			raw = nb
		}
		out, changed := t.appendLine(buf, raw)
		if changed && cap(out) <= 4<<20 {
			buf = out // keep the buffer, unless a long line grew it
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		ended = l.Terminated
		if l.Terminated {
			if _, err := w.Write(nl); err != nil {
				return err
			}
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if len(t.Append) > 0 {
		if !ended {
			// A torn last line stays as it was, on a line of its own.
			if _, err := w.Write(nl); err != nil {
				return err
			}
		}
		if _, err := w.Write(t.Append); err != nil {
			return err
		}
	}
	return nil
}

var nl = []byte("\n")

// longLine writes line l, longer than session.MaxLine, with the transform
// and its trim lt applied, copying its bytes from src as they stream past:
// the values the transform replaces (sessionId, cwd, agentId, parentUuid:
// short values, whole in the line's skeleton) are found in the skeleton
// and mapped back to the line (session.Long.Span). A trim of its content
// (thinking, tool output, images) would rewrite strings the skeleton cut:
// refused, as a value that does not map back is.
func (t *Transform) longLine(w io.Writer, l session.Line, lt *LineTrim, src io.ReaderAt) error {
	lg := l.Long
	refuse := func(why string) error {
		return fmt.Errorf("%s, over the %s cfix reads whole: %s", lg.Describe(), session.MB(session.MaxLine), why)
	}
	switch {
	case src == nil || lg.Partial:
		return refuse("cfix does not copy it")
	case lt != nil && (lt.Thinking || lt.ToolOutput || lt.Images):
		return refuse("cfix does not trim it")
	}
	reps := t.reps(l.Raw)
	if lt != nil && lt.Parent != nil {
		s, e, ok := session.Find(l.Raw, "parentUuid")
		if !ok {
			return refuse("its parentUuid is not found")
		}
		val := []byte("null")
		if *lt.Parent != "" {
			val = quote(*lt.Parent)
		}
		reps = append(reps, repl{s, e, val})
		sort.Slice(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	}
	pos, end := l.Offset, l.Offset+lg.Size
	for _, r := range reps {
		s, e, ok := lg.Span(r.start, r.end)
		if !ok || l.Offset+s < pos {
			return refuse(fmt.Sprintf("a value it rewrites (at column %d of its skeleton) is not whole there", r.start+1))
		}
		if _, err := io.Copy(w, io.NewSectionReader(src, pos, l.Offset+s-pos)); err != nil {
			return err
		}
		if _, err := w.Write(r.val); err != nil {
			return err
		}
		pos = l.Offset + e
	}
	n, err := io.Copy(w, io.NewSectionReader(src, pos, end-pos))
	if err == nil && n != end-pos {
		err = io.ErrUnexpectedEOF
	}
	return err
}

type repl struct {
	start, end int
	val        []byte
}

// Line returns the line with the transform applied, and whether it
// changed. Only the bytes of the values it changes are rewritten; a line
// that is not one JSON object (torn, glued, empty) is returned as it is.
func (t *Transform) Line(raw []byte) ([]byte, bool) { return t.appendLine(nil, raw) }

// appendLine is Line writing a changed line into dst[:0] (reused by
// Stream, so a long transcript costs no allocation per line).
func (t *Transform) appendLine(dst, raw []byte) ([]byte, bool) {
	reps := t.reps(raw)
	if len(reps) == 0 {
		return raw, false
	}
	out := dst[:0]
	last := 0
	for _, r := range reps {
		if r.start < last {
			continue // values are disjoint; never happens
		}
		out = append(out, raw[last:r.start]...)
		out = append(out, r.val...)
		last = r.end
	}
	out = append(out, raw[last:]...)
	return out, true
}

// reps are the values of line raw the transform replaces, in line order.
func (t *Transform) reps(raw []byte) []repl {
	at := skipWS(raw, 0)
	if at >= len(raw) || raw[at] != '{' {
		return nil
	}
	var fbuf [32]jsonField
	fields, end, ok := objectFields(raw, at, fbuf[:0])
	if !ok || skipWS(raw, end) != len(raw) {
		return nil
	}
	var reps []repl
	for _, f := range fields {
		v := raw[f.start:f.end]
		switch string(f.key) {
		case "sessionId":
			if t.OldSession != "" && len(v) == len(t.OldSession)+2 && v[0] == '"' && string(v[1:len(v)-1]) == t.OldSession {
				reps = append(reps, repl{f.start, f.end, quote(t.NewSession)})
			}
		case "cwd":
			if t.OldDir == "" {
				continue
			}
			if s, ok := jsonString(v); ok {
				if ns, ok := MapPath(t.OldDir, t.NewDir, s); ok {
					reps = append(reps, repl{f.start, f.end, quote(ns)})
				}
			}
		case "agentId":
			if len(t.Agents) == 0 {
				continue
			}
			if s, ok := jsonString(v); ok {
				if na, ok := t.Agents[s]; ok {
					reps = append(reps, repl{f.start, f.end, quote(na)})
				}
			}
		case "toolUseResult":
			if len(t.Agents) == 0 || v[0] != '{' {
				continue
			}
			sub, _, ok := objectFields(raw, f.start, nil)
			if !ok {
				continue
			}
			for _, sf := range sub {
				if string(sf.key) != "agentId" {
					continue
				}
				if s, ok := jsonString(raw[sf.start:sf.end]); ok {
					if na, ok := t.Agents[s]; ok {
						reps = append(reps, repl{sf.start, sf.end, quote(na)})
					}
				}
			}
		case "message":
			if !t.RewritePaths || v[0] != '{' {
				continue
			}
			sub, _, ok := objectFields(raw, f.start, nil)
			if !ok {
				continue
			}
			for _, sf := range sub {
				if string(sf.key) == "content" {
					t.walk(raw, sf.start, sf.end, &reps, 0)
				}
			}
		}
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	return reps
}

// Blocks whose strings are never rewritten: thinking text is signed, and
// images and documents hold base64 data.
var skipBlockTypes = map[string]bool{"thinking": true, "redacted_thinking": true, "image": true, "document": true}

// Keys whose values are ids or signatures, never paths.
var skipKeys = map[string]bool{"type": true, "id": true, "tool_use_id": true, "signature": true}

// walk rewrites paths in the strings of the JSON value raw[start:end].
func (t *Transform) walk(raw []byte, start, end int, reps *[]repl, depth int) {
	if start >= end || depth > 64 {
		return
	}
	switch raw[start] {
	case '"':
		s, ok := jsonString(raw[start:end])
		if !ok {
			return
		}
		if ns, n := MapPathsInText(t.OldDir, t.NewDir, s); n > 0 {
			*reps = append(*reps, repl{start, end, quote(ns)})
		}
	case '{':
		fields, _, ok := objectFields(raw, start, nil)
		if !ok {
			return
		}
		for _, f := range fields {
			if string(f.key) == "type" {
				if typ, ok := jsonString(raw[f.start:f.end]); ok && skipBlockTypes[typ] {
					return
				}
			}
		}
		for _, f := range fields {
			if !skipKeys[string(f.key)] {
				t.walk(raw, f.start, f.end, reps, depth+1)
			}
		}
	case '[':
		scanArray(raw, start, 0, func(s, e int) { t.walk(raw, s, e, reps, depth+1) })
	}
}

// MapPath maps the path p from under old to under new: p == old gives new,
// old/x gives new/x. Only whole path components match: /a/foo never maps
// /a/foobar. It reports whether p was under old.
func MapPath(old, new, p string) (string, bool) {
	if WindowsDir(old) {
		return mapWindowsPath(old, new, p)
	}
	o := strings.TrimRight(old, "/")
	if o == "" || p == "" {
		return p, false
	}
	if p == o || p == old {
		return new, true
	}
	if strings.HasPrefix(p, o+"/") {
		return strings.TrimRight(new, "/") + p[len(o):], true
	}
	return p, false
}

// MappableDir reports whether a retarget can map cwd fields from dir: an
// absolute POSIX path other than /, or a Windows one below a drive's or a
// share's root (WindowsDir).
func MappableDir(dir string) bool {
	return strings.HasPrefix(dir, "/") && strings.TrimRight(dir, "/") != "" || WindowsDir(dir)
}

// WindowsDir reports whether dir is an absolute Windows path below a
// drive's or a share's root: C:\Users\x (either slash, any letter case) or
// \\server\share\x, as a session run on Windows names its cwd.
func WindowsDir(dir string) bool {
	d := strings.TrimRight(dir, `\/`)
	switch {
	case len(d) > 3 && (d[0]|0x20 >= 'a' && d[0]|0x20 <= 'z') && d[1] == ':' && (d[2] == '\\' || d[2] == '/'):
		return true
	case strings.HasPrefix(d, `\\`):
		server, rest, ok := strings.Cut(d[2:], `\`)
		share, sub, ok2 := strings.Cut(rest, `\`)
		return ok && ok2 && server != "" && share != "" && sub != ""
	}
	return false
}

// mapWindowsPath is MapPath for a Windows old (see WindowsDir): Windows
// compares paths without regard to letter case and takes either slash,
// and the separators of the part under old become slashes.
func mapWindowsPath(old, new, p string) (string, bool) {
	slash := func(s string) string { return strings.ReplaceAll(s, `\`, "/") }
	o := strings.TrimRight(old, `\/`)
	if len(p) < len(o) || !strings.EqualFold(slash(p[:len(o)]), slash(o)) {
		return p, false
	}
	rest := slash(p[len(o):])
	if rest != "" && rest[0] != '/' {
		return p, false
	}
	rest = strings.TrimRight(rest, "/")
	if rest == "" {
		return new, true
	}
	return strings.TrimRight(new, "/") + rest, true
}

// MapPathsInText maps every occurrence of a path under old inside the
// text s (a command line, a message, a tool input) to new. An occurrence
// counts only when it is a whole path: not preceded by a path character
// and followed by the end, "/" or a character that cannot continue a file
// name (space, quote, bracket, punctuation other than . _ - ~ + @ %). It
// returns the new text and the number of paths mapped.
func MapPathsInText(old, new, s string) (string, int) {
	o := strings.TrimRight(old, "/")
	if o == "" || !strings.Contains(s, o) {
		return s, 0
	}
	nt := strings.TrimRight(new, "/")
	var b strings.Builder
	n, last := 0, 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], o)
		if j < 0 {
			break
		}
		j += i
		end := j + len(o)
		if (j == 0 || !pathByte(s[j-1])) && (end == len(s) || s[end] == '/' || !nameByte(s[end])) {
			b.WriteString(s[last:j])
			if end < len(s) && s[end] == '/' {
				b.WriteString(nt)
			} else {
				b.WriteString(new)
			}
			last, i = end, end
			n++
			continue
		}
		i = j + 1
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// nameByte reports whether c can continue a file name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c >= 0x80 || strings.IndexByte("._-~+@%", c) >= 0
}

// pathByte reports whether c can precede a path component inside a path.
func pathByte(c byte) bool { return nameByte(c) || c == '/' || c == '\\' }

// jsonString decodes a JSON string value. It refuses strings whose decoding
// would lose bytes (invalid UTF-8, lone surrogate escapes), so they are
// never rewritten.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if !utf8.Valid(inner) {
			return "", false
		}
		return string(inner), true
	}
	if !utf8.Valid(inner) || hasSurrogateEscape(inner) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

func hasSurrogateEscape(b []byte) bool {
	for i := 0; i+5 < len(b); i++ {
		if b[i] == '\\' {
			if b[i+1] == 'u' && (b[i+2] == 'd' || b[i+2] == 'D') && strings.IndexByte("89abcdefABCDEF", b[i+3]) >= 0 {
				return true
			}
			i++ // skip the escaped byte
		}
	}
	return false
}

// quote encodes s as a JSON string the way JavaScript's JSON.stringify
// does (what Claude Code writes): only '"', '\\' and control characters
// are escaped; "/", "<", ">", "&" and non-ASCII stay as they are.
func quote(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < 0x20 {
				b = append(b, fmt.Sprintf(`\u%04x`, c)...)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// QuoteJSON encodes s as a JSON string as JSON.stringify does.
func QuoteJSON(s string) []byte { return quote(s) }

// DecodeJSONString decodes the JSON string value v; false when v is not a
// string or its decoding would lose bytes.
func DecodeJSONString(v []byte) (string, bool) { return jsonString(v) }
