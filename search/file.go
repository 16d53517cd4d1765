package search

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// Buffer sizes: a search reads chunks of bufSize and keeps at most
// restSize between files (a line longer than a chunk grows the buffer).
const (
	bufSize  = 1 << 20
	restSize = 4 << 20
	batchLen = 256
)

// fileSearcher searches files one after the other; each core has one.
type fileSearcher struct {
	opts Options
	pat  *Pattern
	buf  []byte
	sc   scanner
	li   lineInfo
	dec  []byte

	// the file at hand
	j       *job
	f       *os.File
	modTime time.Time
	cntOff  int64             // lines are counted up to this offset
	cntLine int               // the number of the line there
	tools   map[string]string // tool_use id → tool name, of the lines read
	back    []byte            // for looking back for a tool's name
	li2     lineInfo
	out     chan result
	stop    chan struct{}
	batch   []*Hit
	stopped bool
}

func newFileSearcher(opts Options, pat *Pattern) *fileSearcher {
	return &fileSearcher{opts: opts, pat: pat, buf: make([]byte, bufSize)}
}

func (s *fileSearcher) send(r result) bool {
	if s.stopped {
		return false
	}
	select {
	case s.out <- r:
		return true
	case <-s.stop:
		s.stopped = true
		return false
	}
}

func (s *fileSearcher) flush() {
	if len(s.batch) > 0 {
		s.send(result{hits: s.batch})
		s.batch = nil
	}
}

// run searches one file, sending its hits to out in batches and then its
// end.
func (s *fileSearcher) run(j *job, out chan result, stop chan struct{}) {
	s.j, s.out, s.stop, s.stopped = j, out, stop, false
	s.tools = nil
	size, err := s.search()
	s.flush()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if len(s.buf) > restSize {
		session.PutBigBuffer(s.buf)
		s.buf = make([]byte, bufSize)
	}
	if cap(s.back) > restSize {
		s.back = nil
	}
	s.send(result{done: true, err: err, size: size})
}

func (s *fileSearcher) search() (int64, error) {
	f, err := rfile.Open(s.j.path)
	if err != nil {
		return 0, err
	}
	s.f = f
	s.modTime = time.Time{}
	var off int64 // file offset of buf[0]
	n := 0
	s.cntOff, s.cntLine = 0, 1
	for !s.stopped {
		if n == len(s.buf) && n > session.MaxLine {
			// The line at off is longer than cfix reads whole: searched
			// in its skeleton, read again as it streams past.
			end, err := s.long(off)
			if err != nil {
				return off, fmt.Errorf("%s: %w", s.j.path, err)
			}
			if _, err := f.Seek(end, io.SeekStart); err != nil {
				return off, fmt.Errorf("%s: %w", s.j.path, err)
			}
			off, n = end, 0
			continue
		}
		if n == len(s.buf) {
			// Twice, up to 16 MB; then room for the longest line read
			// whole, and a byte.
			if size := 2 * len(s.buf); size <= 16<<20 {
				nb := make([]byte, size)
				copy(nb, s.buf[:n])
				s.buf = nb
			} else {
				s.buf = session.BigBuffer(s.buf[:n])
			}
		}
		m, rerr := f.Read(s.buf[n:])
		n += m
		eof := rerr == io.EOF
		if rerr != nil && !eof {
			return off + int64(n), fmt.Errorf("%s: %w", s.j.path, rerr)
		}
		end := n
		if !eof {
			end = bytes.LastIndexByte(s.buf[:n], '\n') + 1
			if end == 0 {
				continue // no whole line yet
			}
		}
		s.region(s.buf[:end], off)
		copy(s.buf, s.buf[end:n])
		n -= end
		off += int64(end)
		if eof {
			return off, nil
		}
	}
	return off, nil
}

// long searches the line at file offset off, longer than session.MaxLine,
// in its skeleton (the first session.KeepString bytes of each string),
// and returns the offset of the line after it.
func (s *fileSearcher) long(off int64) (int64, error) {
	if cap(s.back) < bufSize {
		s.back = make([]byte, bufSize)
	}
	size, term := int64(0), false
	for !term {
		m, err := s.f.ReadAt(s.back[:bufSize], off+size)
		if i := bytes.IndexByte(s.back[:m], '\n'); i >= 0 {
			size += int64(i)
			term = true
			break
		}
		size += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	sk, lg, err := session.ReadSkeleton(s.f, off, size)
	if err != nil {
		return 0, err
	}
	n := s.lineAt(off, nil, off)
	if s.opts.Warn != nil && !lg.Exact {
		s.opts.Warn(fmt.Sprintf("%s:%d: %s, over the %s cfix reads whole: searched in the first %d KB of each of its strings", s.j.path, n,
			lg.Describe(), session.MB(session.MaxLine), session.KeepString>>10))
	}
	s.line(sk, n, off)
	end := off + size
	if term {
		end++
	}
	s.cntOff, s.cntLine = end, n+1
	return end, nil
}

// region searches the whole lines of b, which starts at file offset off.
func (s *fileSearcher) region(b []byte, off int64) {
	pre := s.pat.pre
	if pre == nil {
		s.lineAt(off, b, off)
		for i := 0; i < len(b) && !s.stopped; {
			e := bytes.IndexByte(b[i:], '\n')
			if e < 0 {
				e = len(b) - i
			}
			s.line(b[i:i+e], s.cntLine, off+int64(i))
			i += e + 1
			s.cntOff, s.cntLine = off+int64(i), s.cntLine+1
		}
		return
	}
	s.sc.reset(pre, b)
	for i := 0; !s.stopped; {
		at := s.sc.index(i)
		if at < 0 {
			break
		}
		ls := i + bytes.LastIndexByte(b[i:at], '\n') + 1
		le := bytes.IndexByte(b[at:], '\n')
		if le < 0 {
			le = len(b)
		} else {
			le += at
		}
		s.line(b[ls:le], s.lineAt(off+int64(ls), b, off), off+int64(ls))
		i = le + 1
	}
}

// lineAt returns the number of the line starting at file offset pos, in
// b (at offset off). Lines are counted only up to where a hit is: a file
// without one is never counted, and what went by in chunks without one is
// counted again from the file.
func (s *fileSearcher) lineAt(pos int64, b []byte, off int64) int {
	if s.cntOff < off {
		s.cntLine += s.countFile(s.cntOff, off)
		s.cntOff = off
	}
	s.cntLine += bytes.Count(b[s.cntOff-off:pos-off], []byte{'\n'})
	s.cntOff = pos
	return s.cntLine
}

// countFile counts the newlines of the file between offsets from and to.
func (s *fileSearcher) countFile(from, to int64) int {
	if cap(s.back) < bufSize {
		s.back = make([]byte, bufSize)
	}
	n := 0
	for from < to {
		buf := s.back[:min(int64(cap(s.back)), to-from)]
		m, err := s.f.ReadAt(buf, from)
		n += bytes.Count(buf[:m], []byte{'\n'})
		from += int64(m)
		if err != nil && m == 0 {
			break
		}
	}
	return n
}

// isBlank reports whether a line holds only white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func spanBytes(line []byte, sp rawSpan) []byte { return line[sp.start:sp.end] }

// text returns a span's decoded text (in s.dec when escaped).
func (s *fileSearcher) text(line []byte, sp rawSpan) []byte {
	raw := line[sp.start:sp.end]
	if !sp.escaped {
		return raw
	}
	s.dec = unescape(s.dec[:0], raw)
	return s.dec
}

func (s *fileSearcher) str(line []byte, sp rawSpan) string {
	if !sp.escaped {
		return string(line[sp.start:sp.end])
	}
	return string(unescape(nil, line[sp.start:sp.end]))
}

// line searches one line that may hold a hit.
func (s *fileSearcher) line(b []byte, n int, off int64) {
	li := &s.li
	if err := walk(b, li); err != nil {
		if isBlank(b) {
			return
		}
		if s.opts.Warn != nil {
			s.opts.Warn(fmt.Sprintf("%s:%d: not valid JSON (%v); the text before that is searched (run cfix validate)", s.j.path, n, err))
		}
	}
	s.remember(b, li)
	if len(li.spans) == 0 {
		return
	}
	j := s.j
	// What the line says of itself.
	if j.lineSessions != nil && !j.lineSessions[s.str(b, li.sessionID)] {
		return
	}
	if j.lineFolder != "" {
		dir := li.cwd
		if j.source == SourceHistory {
			dir = li.project
		}
		if d := s.str(b, dir); d == "" || !store.FolderMatches(j.lineFolder, d) {
			return
		}
	}
	typ := spanBytes(b, li.typ)
	var when time.Time
	whenDone := false
	for k := range li.spans {
		sp := &li.spans[k]
		kind, role := s.classify(b, typ, sp)
		if kind == "" || s.opts.Role != "" && role != s.opts.Role {
			continue
		}
		tooly := kind == KindToolInput || kind == KindToolOutput
		if s.opts.Tool != "" && !tooly {
			continue
		}
		raw := b[sp.start:sp.end]
		if s.pat.pre != nil && !s.pat.pre.contains(raw) {
			continue
		}
		text := s.text(b, sp.rawSpan)
		if s.opts.Redact != nil {
			text = s.opts.Redact(text)
		}
		ms, me := s.pat.find(text)
		if ms < 0 {
			continue
		}
		tool := ""
		if tooly {
			tool = s.toolOf(b, typ, sp, off)
			if s.opts.Tool != "" && !strings.EqualFold(tool, s.opts.Tool) {
				continue
			}
		}
		if !whenDone {
			whenDone = true
			when = s.when(b)
			t := when
			if t.IsZero() && (!s.opts.Since.IsZero() || !s.opts.Until.IsZero()) {
				t = s.mtime() // titles and summaries carry no time
			}
			if !s.opts.Since.IsZero() && t.Before(s.opts.Since) || !s.opts.Until.IsZero() && t.After(s.opts.Until) {
				return
			}
		}
		h := &Hit{Source: j.source, Path: j.path, Line: n, Session: j.session, Agent: j.agent, Project: j.project,
			Time: when, Role: role, Tool: tool, Kind: kind, Count: s.pat.count(text)}
		if h.Session == "" || j.source == SourcePreCompact || j.source == SourceHistory {
			if id := s.str(b, li.sessionID); id != "" {
				h.Session = id
			}
		}
		if tooly && sp.key.end > sp.key.start {
			h.Field = s.str(b, sp.key)
		}
		s.snippet(h, text, ms, me)
		s.batch = append(s.batch, h)
		if len(s.batch) >= batchLen {
			s.flush()
		}
	}
}

// mtime returns the file's modification time.
func (s *fileSearcher) mtime() time.Time {
	if s.modTime.IsZero() {
		if fi, err := s.f.Stat(); err == nil {
			s.modTime = fi.ModTime()
		}
	}
	return s.modTime
}

// when returns the line's time, zero when it has none.
func (s *fileSearcher) when(b []byte) time.Time {
	li := &s.li
	if li.tsNumber != nil {
		var ms int64
		for _, c := range li.tsNumber {
			if c < '0' || c > '9' {
				return time.Time{}
			}
			ms = ms*10 + int64(c-'0')
		}
		return time.UnixMilli(ms)
	}
	if li.timestamp.end > li.timestamp.start {
		t, err := time.Parse(time.RFC3339Nano, s.str(b, li.timestamp))
		if err == nil {
			return t
		}
	}
	return time.Time{}
}

// classify says what a span is: its kind and role, or "" when it is not
// searched.
func (s *fileSearcher) classify(b, typ []byte, sp *textSpan) (kind, role string) {
	li := &s.li
	src := s.j.source
	if src == SourceHistory {
		if sp.w == wDisplay || sp.w == wPasted {
			return KindPrompt, "user"
		}
		return "", ""
	}
	if src == SourceExport && !li.hasMessage {
		switch string(typ) {
		case "user", "assistant":
			if sp.w == wContent {
				return KindText, string(typ)
			}
		case "tool_use":
			if sp.w == wToolInput {
				return KindToolInput, "tool"
			}
		case "tool_result":
			if sp.w == wToolOutput {
				return KindToolOutput, "tool"
			}
		}
		return "", ""
	}
	switch string(typ) {
	case "user", "assistant":
		role := string(typ)
		if r := spanBytes(b, li.role); len(r) > 0 {
			role = string(r)
		}
		switch sp.w {
		case wMsgContent, wBlockText:
			if li.compactSummary {
				return KindSummary, "summary"
			}
			if li.harness && role == "user" {
				// 2.1.331+: a row the harness wrote, not the person
				// (rowSource "harness"): not --role user.
				return KindText, "harness"
			}
			return KindText, role
		case wBlockThink:
			return KindThinking, "assistant"
		case wBlockInput:
			return KindToolInput, "tool"
		case wBlockResult:
			return KindToolOutput, "tool"
		}
	case "summary":
		if sp.w == wSummary {
			return KindSummary, "summary"
		}
	case "custom-title":
		if sp.w == wCustomTitle {
			return KindTitle, "title"
		}
	case "ai-title":
		if sp.w == wAITitle {
			return KindTitle, "title"
		}
	}
	return "", ""
}

// toolOf names the tool of a tool input or output span.
func (s *fileSearcher) toolOf(b, typ []byte, sp *textSpan, off int64) string {
	li := &s.li
	if s.j.source == SourceExport && !li.hasMessage {
		return s.str(b, li.toolName)
	}
	if sp.block < 0 {
		return ""
	}
	blk := li.blocks[sp.block]
	if sp.w == wBlockInput {
		return s.str(b, blk.name)
	}
	id := s.str(b, blk.toolUseID)
	if id == "" {
		return ""
	}
	return s.toolName(id, off)
}

// remember notes the tool calls of a walked line.
func (s *fileSearcher) remember(b []byte, li *lineInfo) {
	for _, blk := range li.blocks {
		if blk.id.end > blk.id.start && blk.name.end > blk.name.start {
			if s.tools == nil {
				s.tools = map[string]string{}
			}
			s.tools[s.str(b, blk.id)] = s.str(b, blk.name)
		}
	}
}

// toolName finds the name of the tool call id answers: a call written
// before off, looked for backwards from there a chunk at a time. What is
// found (or not) is remembered for the rest of the file.
func (s *fileSearcher) toolName(id string, off int64) string {
	if name, ok := s.tools[id]; ok {
		return name
	}
	if s.tools == nil {
		s.tools = map[string]string{}
	}
	s.tools[id] = "" // not found, unless found below
	needle := []byte(`"` + id + `"`)
	chunk := int64(256 << 10)
	pos := off // a line start: everything before it is whole lines
	for pos > 0 {
		lo := pos - chunk
		if lo < 0 {
			lo = 0
		}
		n := int(pos - lo)
		if cap(s.back) < n {
			s.back = make([]byte, n)
		}
		buf := s.back[:n]
		if _, err := s.f.ReadAt(buf, lo); err != nil {
			return ""
		}
		first := 0 // the first whole line of buf
		if lo > 0 {
			// buf ends with the newline before pos; a whole line needs
			// another one before it.
			nl := bytes.IndexByte(buf[:n-1], '\n')
			if nl < 0 {
				if chunk > session.MaxLine {
					return "" // behind a line longer than cfix reads whole
				}
				chunk *= 2 // a line longer than the chunk
				continue
			}
			first = nl + 1
		}
		whole := buf[first:]
		for end := len(whole); end > 0; {
			at := bytes.LastIndex(whole[:end], needle)
			if at < 0 {
				break
			}
			ls := bytes.LastIndexByte(whole[:at], '\n') + 1
			le := bytes.IndexByte(whole[at:], '\n')
			if le < 0 {
				le = len(whole)
			} else {
				le += at
			}
			if walk(whole[ls:le], &s.li2) == nil {
				s.remember(whole[ls:le], &s.li2)
				if name := s.tools[id]; name != "" {
					return name
				}
			}
			end = ls
		}
		pos = lo + int64(first)
		if lo == 0 {
			break
		}
	}
	return ""
}

// snippet fills the hit's text around the match [ms, me) of text.
func (s *fileSearcher) snippet(h *Hit, text []byte, ms, me int) {
	c := s.opts.Context
	start := ms - c
	if start < 0 {
		start = 0
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	mEnd, cut := me, false
	if mEnd-ms > 8*c { // a long match is cut
		mEnd, cut = ms+8*c, true
		for mEnd > ms && !utf8.RuneStart(text[mEnd]) {
			mEnd--
		}
	}
	end := mEnd
	if !cut {
		end = min(mEnd+c, len(text))
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
	}
	// Start and end at a space near the cut, if there is one, not in a word.
	if start > 0 {
		if k := bytes.IndexByte(text[start:ms], ' '); k >= 0 && k < c/3 {
			start += k + 1
		}
	}
	if end < len(text) && end > mEnd {
		if k := bytes.LastIndexByte(text[mEnd:end], ' '); k >= 0 && end-(mEnd+k) < c/3 {
			end = mEnd + k
		}
	}
	h.Before = string(text[start:ms])
	h.Match = string(text[ms:mEnd])
	h.After = string(text[mEnd:end])
	h.CutBefore = start > 0
	h.CutAfter = end < len(text)
}
