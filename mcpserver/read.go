package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/show"
)

const readDescription = `Read one past Claude Code session as Markdown ("cfix export" of it): the conversation a resume loads, with its turns numbered ("### Turn N"), tool calls folded with their inputs and the first lines of their results, what Claude Code attached to a turn one line each, and compactions shown. A long session is read a page at a time: the answer's first line names the session, then come at most max_chars characters of Markdown from offset, and, when more follows, a last line "(next_offset N ...)": call again with offset N.

Name the session by id (from search_sessions or list_sessions), a unique prefix of one, or "latest" (the newest session of the project). from_turn/to_turn read only those turns. Thinking and subagent conversations are left out unless asked for (include_thinking, include_subagents); include_tool_output shows whole results; attachments "all" shows every attachment with all it holds.`

// Results show at most resultLines lines and resultBytes bytes of a tool's
// output unless ReadInput.IncludeToolOutput asks for all of it.
const (
	resultLines = 5
	resultBytes = 500
)

// ReadInput is what read_session takes.
type ReadInput struct {
	Session           string `json:"session" jsonschema:"a session id, a unique prefix of one (at least 4 characters), or \"latest\" for the newest session of the project"`
	Project           string `json:"project,omitempty" jsonschema:"for \"latest\": the project's directory (default: the client's current project)"`
	Offset            int    `json:"offset,omitempty" jsonschema:"where the page starts, in bytes of the Markdown (the next_offset of the previous page); default 0"`
	MaxChars          int    `json:"max_chars,omitempty" jsonschema:"the most bytes of Markdown to return (default 8000, at most 100000)"`
	FromTurn          int    `json:"from_turn,omitempty" jsonschema:"read from this turn on (turns are numbered from 1; the header is left out)"`
	ToTurn            int    `json:"to_turn,omitempty" jsonschema:"read up to this turn (included)"`
	IncludeThinking   bool   `json:"include_thinking,omitempty" jsonschema:"also show the model's thinking"`
	IncludeToolOutput bool   `json:"include_tool_output,omitempty" jsonschema:"show what the tools returned whole (by default the first 5 lines of each result, at most 500 characters)"`
	IncludeSubagents  bool   `json:"include_subagents,omitempty" jsonschema:"also show the conversations of subagents under the calls that started them"`
	Attachments       string `json:"attachments,omitempty" jsonschema:"what Claude Code attached to the turns: \"summary\" (the default: one line each, its own bookkeeping such as prompt snapshots and tool listings left out), \"all\" (every attachment with all it holds) or \"none\""`
}

// ReadOutput is what read_session answers, written as text (Text): a
// line naming the session, the page of Markdown, and a last line with
// the offset of the next page or a note.
type ReadOutput struct {
	Session string
	Offset  int
	// Turns is "turns A to B" when the read asked for turns.
	Turns string
	// Text is the page of Markdown.
	Text string
	// NextOffset is where the next page starts; nil at the end.
	NextOffset *int
	Note       string
}

// nextMark starts the last line of a page that more follows; noteMark
// the last line of one that ends with a note.
const (
	nextMark = "(next_offset "
	noteMark = "(note: "
)

// String is the answer as the model reads it: no JSON, whose escapes
// (every newline and quote of the Markdown) would cost characters and
// make it harder to read.
func (o ReadOutput) String() string {
	var b strings.Builder
	b.WriteString("session " + o.Session)
	if o.Turns != "" {
		b.WriteString(", " + o.Turns)
	}
	if o.Offset > 0 {
		fmt.Fprintf(&b, ", from offset %d", o.Offset)
	}
	b.WriteString("\n\n")
	b.WriteString(o.Text)
	switch {
	case o.NextOffset != nil:
		fmt.Fprintf(&b, "\n%s%d: more follows; read_session with offset %d reads it)", nextMark, *o.NextOffset, *o.NextOffset)
	case o.Note != "":
		b.WriteString("\n" + noteMark + o.Note + ")")
	}
	return b.String()
}

func (s *server) read(ctx context.Context, req *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, any, error) {
	out, err := s.readPage(ctx, req, in)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.String()}}}, nil, nil
}

// readPage reads the page of a session in asks for.
func (s *server) readPage(ctx context.Context, req *mcp.CallToolRequest, in ReadInput) (ReadOutput, error) {
	var out ReadOutput
	if err := bounded(arg{"session", in.Session, maxName}, arg{"project", in.Project, maxName}); err != nil {
		return out, err
	}
	if in.Offset < 0 {
		return out, toolError("offset %d is negative: give 0 or the next_offset of the previous page", in.Offset)
	}
	if in.FromTurn < 0 || in.ToTurn < 0 || in.ToTurn > 0 && in.FromTurn > in.ToTurn {
		return out, toolError("turns %d to %d: give from_turn <= to_turn, both from 1", in.FromTurn, in.ToTurn)
	}
	switch in.Attachments {
	case "", export.AttachSummary, export.AttachAll, export.AttachNone:
	default:
		return out, toolError("attachments: give \"summary\" (the default), \"all\" or \"none\"")
	}
	fam, err := s.resolveSession(ctx, req, in.Session, in.Project)
	if err != nil {
		return out, err
	}
	out.Session, out.Offset = fam.Session, in.Offset
	if out.Session == "" {
		out.Session = strings.TrimSpace(in.Session) // a transcript named with no session id
	}
	switch {
	case in.FromTurn > 0 && in.ToTurn > 0:
		out.Turns = fmt.Sprintf("turns %d to %d", in.FromTurn, in.ToTurn)
	case in.FromTurn > 0:
		out.Turns = fmt.Sprintf("turns %d on", in.FromTurn)
	case in.ToTurn > 0:
		out.Turns = fmt.Sprintf("turns up to %d", in.ToTurn)
	}
	w := window{off: in.Offset, max: clamp(in.MaxChars, defaultMaxChars, maxMaxChars)}
	key := readKey(fam, in)
	r := s.pager.take(key, in.Offset)
	if r != nil {
		r.win <- w
	} else {
		f := &filter{from: in.FromTurn, to: in.ToTurn, thinking: in.IncludeThinking, output: in.IncludeToolOutput, subagents: in.IncludeSubagents}
		r = s.pager.start(key, f, w, func(f *filter) error {
			eo := export.Options{Format: "md", Index: s.opts.Index, Attachments: in.Attachments}
			if s.opts.Redact != nil {
				eo.Redact = s.opts.Redact
			}
			if err := export.Write(f, fam, eo); err != nil {
				return err
			}
			return f.flush()
		})
	}
	var res pageResult
	select {
	case res = <-r.res:
	case <-ctx.Done():
		r.stop()
		return out, ctx.Err()
	}
	if res.err != nil {
		return out, toolError("session %s cannot be read: %v", in.Session, res.err)
	}
	out.Text = res.text
	switch {
	case res.more:
		n := in.Offset + res.kept
		out.NextOffset = &n
		r.next = n
		s.pager.put(r)
	case res.pos <= in.Offset && in.Offset > 0:
		out.Note = "offset " + strconv.Itoa(in.Offset) + " is past the end (" + strconv.Itoa(res.pos) + " bytes): this is the end of the session"
	case res.turnsSeen == 0 && in.FromTurn > 1:
		out.Note = "the session has no numbered turns: read it without from_turn"
	case in.FromTurn > res.last && in.FromTurn > 0:
		out.Note = fmt.Sprintf("the session has %s: turn %d is past the end", plural.Count(res.last, "turn"), in.FromTurn)
	}
	return out, nil
}

// readKey names a read of a session: its files as they are, and what the
// read shows. A page continues a paused read of the same key.
func readKey(fam *show.Family, in ReadInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%d %d %t %t %t %q", fam.Session, fam.Loose, in.FromTurn, in.ToTurn, in.IncludeThinking, in.IncludeToolOutput, in.IncludeSubagents, in.Attachments)
	if fam.Layout != nil {
		for _, f := range fam.Layout.Files {
			fmt.Fprintf(&b, "\x00%s %d %d", f.Path, f.Size, f.ModTime.UnixNano())
		}
	}
	if fam.Loose != "" {
		if fi, err := os.Stat(fam.Loose); err == nil {
			fmt.Fprintf(&b, "\x00%d %d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// stop is what a page writer panics with to stop an export: export.Write
// reads on while its writes fail, and a page of a long session should
// cost a page's reading.
type stop struct{}

// window is the bytes [off, off+max) of an export a page asks for.
type window struct{ off, max int }

// pageResult is a page of a read: its text, how many bytes of the export
// it holds (kept), and whether more follows; at the end, how many bytes
// the export had (pos) and the turns the filter saw.
type pageResult struct {
	text            string
	kept            int
	more            bool
	pos             int
	turnsSeen, last int
	err             error
}

// A reading is an export of a session written through a filter to a
// stream, on a goroutine of its own, that stops at the end of each page
// and waits: for the next page (win), which it continues, or to be given
// up (quit). Paging through a session so costs a page's writing each
// time, where a read from the start writes all that comes before its
// offset.
type reading struct {
	key  string
	next int // the offset of the next page
	win  chan window
	res  chan pageResult
	quit chan struct{}
	once sync.Once
	idle *time.Timer
}

func (r *reading) stop() { r.once.Do(func() { close(r.quit) }) }

// pager keeps the readings paused at the end of a page: at most
// maxPaused, each for pausedFor at most.
type pager struct {
	mu     sync.Mutex
	paused []*reading
	// started counts the exports started (tests).
	started int
}

const (
	maxPaused = 2
	pausedFor = 5 * time.Minute
)

// take returns the paused reading of key whose next page starts at off,
// or nil.
func (p *pager) take(key string, off int) *reading {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.paused {
		if r.key == key && r.next == off {
			p.paused = append(p.paused[:i], p.paused[i+1:]...)
			r.idle.Stop()
			return r
		}
	}
	return nil
}

// put pauses r; the reading paused longest goes past maxPaused.
func (p *pager) put(r *reading) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = append(p.paused, r)
	r.idle = time.AfterFunc(pausedFor, func() { p.drop(r) })
	if len(p.paused) > maxPaused {
		old := p.paused[0]
		p.paused = p.paused[1:]
		old.idle.Stop()
		old.stop()
	}
}

// drop gives up a paused reading.
func (p *pager) drop(r *reading) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.paused {
		if q == r {
			p.paused = append(p.paused[:i], p.paused[i+1:]...)
			r.stop()
			return
		}
	}
}

// start starts a reading whose first page is w: write writes the export
// through the filter, which writes to the reading's stream.
func (p *pager) start(key string, f *filter, w window, write func(*filter) error) *reading {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	r := &reading{key: key, win: make(chan window), res: make(chan pageResult, 1), quit: make(chan struct{})}
	st := &stream{r: r, f: f, win: w}
	f.w = st
	go func() {
		err := func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					if _, ok := v.(stop); !ok {
						err = fmt.Errorf("internal error: %v", v)
					}
				}
			}()
			return write(f)
		}()
		if st.quitting {
			return // given up: nobody waits for it
		}
		res := st.page(false)
		res.pos, res.turnsSeen, res.last, res.err = st.pos, f.turnsSeen, f.last, err
		r.res <- res
	}()
	return r
}

// stream passes on the bytes of the current window of a reading; when a
// byte past it comes, it hands the page over and waits for the next.
type stream struct {
	r        *reading
	f        *filter
	win      window
	pos      int    // bytes written so far
	buf      []byte // the window's bytes written so far
	quitting bool
}

func (s *stream) Write(b []byte) (int, error) {
	n := len(b)
	select {
	case <-s.r.quit:
		s.quitting = true
		panic(stop{})
	default:
	}
	for len(b) > 0 {
		end := s.win.off + s.win.max
		switch {
		case s.pos < s.win.off:
			k := min(len(b), s.win.off-s.pos)
			s.pos, b = s.pos+k, b[k:]
		case s.pos < end:
			k := min(len(b), end-s.pos)
			s.buf = append(s.buf, b[:k]...)
			s.pos, b = s.pos+k, b[k:]
		default:
			// More than the page: hand it over, and wait.
			res := s.page(true)
			carry := append([]byte(nil), s.buf[res.kept:]...)
			s.r.res <- res
			select {
			case w := <-s.r.win:
				s.win = w
				s.buf = append(s.buf[:0], carry...)
			case <-s.r.quit:
				s.quitting = true
				panic(stop{})
			}
		}
	}
	return n, nil
}

// page is the current window's page; more says more follows, and a rune
// cut by the window's end goes to the next page. A rune cut at its start
// (an offset that is no page's) is left out.
func (s *stream) page(more bool) pageResult {
	b := s.buf
	if more {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	kept := len(b)
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return pageResult{text: string(b), kept: kept, more: more}
}

// filter passes on the lines of an export's Markdown that a read asks for:
// the turns from..to, thinking and subagent conversations only when asked,
// and of each tool's output its first lines (resultLines, resultBytes)
// unless all is asked for. It follows the structure export's
// Markdown has: fenced code (whose lines are data), <details> blocks
// (thinking, a tool call, a note), a tool's "**Result**" and its fenced
// block, "**Subagent conversation**" up to its end, "### Turn N" at the
// top level. Text is escaped by the export, so none of these lines comes
// from what people or the model wrote. It classifies a line by its first
// bytes, so a long line is passed on as it comes, never held.
type filter struct {
	w                           io.Writer
	from, to                    int
	thinking, output, subagents bool
	head                        []byte // the start of the current line, up to headLen
	decided                     bool   // the current line is classified
	keep                        bool   // and passed on
	fence                       int    // the open fence's length, 0 outside code
	depth                       int    // open <details> blocks
	dropAt                      int    // depth at which a dropped block ends; -1 none
	// res is where a result whose output is cut stands: 1 after its
	// "**Result**", 2 on its fence's first line, 3 in its output.
	res int
	// resLines and resBytes are what is left to show of the output;
	// cutLines counts its lines left out whole, cut says some of it is
	// left out, lineCut that the current line is cut.
	resLines, resBytes, cutLines int
	cut, lineCut                 bool
	subAt                        int // depth of a dropped subagent conversation; -1 none
	turn, last, turnsSeen        int
	started                      bool
}

const headLen = 64

func (f *filter) Write(b []byte) (int, error) {
	if !f.started {
		f.started, f.dropAt, f.subAt = true, -1, -1
	}
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i+1]
		}
		b = b[len(chunk):]
		if !f.decided {
			room := headLen - len(f.head)
			take := min(room, len(chunk))
			f.head = append(f.head, chunk[:take]...)
			chunk = chunk[take:]
			if len(f.head) < headLen && !bytes.HasSuffix(f.head, []byte("\n")) {
				continue // need more of the line
			}
			f.keep = f.classify(bytes.TrimSuffix(f.head, []byte("\n")), bytes.HasSuffix(f.head, []byte("\n")))
			f.decided = true
			if f.keep {
				f.pass(f.head)
			}
		}
		if f.keep && len(chunk) > 0 {
			f.pass(chunk)
		}
		if i >= 0 {
			f.head, f.decided = f.head[:0], false
			if f.lineCut {
				f.w.Write([]byte("…\n"))
				f.lineCut = false
			}
			if f.res == 2 {
				f.res = 3
			}
		}
	}
	return n, nil
}

// pass writes b, bytes of a line passed on: in a result's output that is
// cut, no more than is left to show of it (whole characters).
func (f *filter) pass(b []byte) {
	if f.res != 3 || f.lineCut {
		if !f.lineCut {
			f.w.Write(b)
		}
		return
	}
	k := min(len(b), f.resBytes)
	for k < len(b) && k > 0 && !utf8.RuneStart(b[k]) {
		k--
	}
	f.w.Write(b[:k])
	f.resBytes -= k
	if k < len(b) {
		f.cut, f.lineCut = true, true
	}
}

// flush passes on a last line with no newline.
func (f *filter) flush() error {
	if !f.decided && len(f.head) > 0 {
		if f.classify(f.head, true) {
			f.w.Write(f.head)
		}
	}
	return nil
}

// classify takes the start of a line (whole says it is the whole line),
// updates the state and tells whether the line is passed on.
func (f *filter) classify(line []byte, whole bool) bool {
	if f.fence > 0 {
		if whole && len(line) >= f.fence && len(bytes.Trim(line, "`")) == 0 {
			f.fence = 0
			if f.res == 3 {
				f.res = 0
				if f.cut && f.visible() {
					f.w.Write(append(append([]byte(nil), line...), '\n'))
					if f.cutLines > 0 {
						word := "lines"
						if f.cutLines == 1 {
							word = "line"
						}
						fmt.Fprintf(f.w, "_(%d more %s left out: include_tool_output shows the whole result)_\n", f.cutLines, word)
					} else {
						f.w.Write([]byte("_(the end of the line left out: include_tool_output shows the whole result)_\n"))
					}
					return false
				}
			}
			return f.visible()
		}
		if f.res == 3 {
			// A line of the output: shown while some is left to show.
			if f.resLines == 0 || f.resBytes == 0 {
				f.cut = true
				f.cutLines++
				return false
			}
			f.resLines--
		}
		return f.visible()
	}
	if bytes.HasPrefix(line, []byte("```")) {
		f.fence = len(line) - len(bytes.TrimLeft(line, "`"))
		if f.res == 1 {
			f.res, f.resLines, f.resBytes, f.cutLines, f.cut = 2, resultLines, resultBytes, 0, false
		}
		return f.visible()
	}
	switch {
	case bytes.HasPrefix(line, []byte("<details>")):
		vis := f.visible()
		f.depth++
		if f.dropAt < 0 && !f.thinking && bytes.HasPrefix(line, []byte("<details><summary>Thinking")) {
			f.dropAt = f.depth
			return false
		}
		return vis
	case bytes.HasPrefix(line, []byte("</details>")):
		vis := f.visible()
		if f.dropAt == f.depth {
			f.dropAt, vis = -1, false
		}
		f.depth--
		return vis
	case f.depth == 0 && bytes.HasPrefix(line, []byte("### Turn ")):
		if n, err := strconv.Atoi(string(bytes.TrimSpace(line[len("### Turn "):]))); err == nil && whole {
			f.turn, f.turnsSeen = n, f.turnsSeen+1
			f.last = max(f.last, n)
			if f.to > 0 && n > f.to {
				panic(stop{})
			}
		}
	case !f.output && f.dropAt < 0 && f.subAt < 0 && (string(line) == "**Result**" || string(line) == "**Error**"):
		f.res = 1
	case !f.subagents && f.dropAt < 0 && f.subAt < 0 && string(line) == "**Subagent conversation**":
		if f.visible() {
			f.w.Write([]byte("**Subagent conversation** _(left out: include_subagents shows it)_\n"))
		}
		f.subAt = f.depth
		return false
	case f.subAt == f.depth && string(line) == "**End of the subagent conversation**":
		f.subAt = -1
		return false
	}
	return f.visible()
}

// visible reports whether the lines at this point are passed on.
func (f *filter) visible() bool {
	if f.dropAt >= 0 || f.subAt >= 0 {
		return false
	}
	if f.from > 1 && f.turn < f.from {
		return false
	}
	return true
}
