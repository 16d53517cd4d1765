package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/export"
)

const readDescription = `Read one past Claude Code session as Markdown ("cfix export" of it): the conversation a resume loads, with its turns numbered ("### Turn N"), tool calls folded with their inputs, and compactions shown. A long session is read a page at a time: the answer holds at most max_chars characters from offset, and next_offset when more follows (call again with it).

Name the session by id (from search_sessions or list_sessions), a unique prefix of one, or "latest" (the newest session of the project). from_turn/to_turn read only those turns. Thinking, tool outputs and subagent conversations are left out unless asked for (include_thinking, include_tool_output, include_subagents).`

// ReadInput is what read_session takes.
type ReadInput struct {
	Session           string `json:"session" jsonschema:"a session id, a unique prefix of one (at least 4 characters), or \"latest\" for the newest session of the project"`
	Project           string `json:"project,omitempty" jsonschema:"for \"latest\": the project's directory (default: the client's current project)"`
	Offset            int    `json:"offset,omitempty" jsonschema:"where the page starts, in bytes of the Markdown (next_offset of the previous page); default 0"`
	MaxChars          int    `json:"max_chars,omitempty" jsonschema:"the most bytes of Markdown to return (default 8000, at most 100000)"`
	FromTurn          int    `json:"from_turn,omitempty" jsonschema:"read from this turn on (turns are numbered from 1; the header is left out)"`
	ToTurn            int    `json:"to_turn,omitempty" jsonschema:"read up to this turn (included)"`
	IncludeThinking   bool   `json:"include_thinking,omitempty" jsonschema:"also show the model's thinking"`
	IncludeToolOutput bool   `json:"include_tool_output,omitempty" jsonschema:"also show what the tools returned (inputs are always shown)"`
	IncludeSubagents  bool   `json:"include_subagents,omitempty" jsonschema:"also show the conversations of subagents under the calls that started them"`
}

// ReadOutput is what read_session returns.
type ReadOutput struct {
	Session string `json:"session"`
	Offset  int    `json:"offset"`
	// Text is the page of Markdown.
	Text string `json:"text"`
	// NextOffset is where the next page starts; absent at the end.
	NextOffset *int   `json:"next_offset,omitempty"`
	Note       string `json:"note,omitempty"`
}

func (s *server) read(ctx context.Context, req *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, ReadOutput, error) {
	var out ReadOutput
	if in.Offset < 0 {
		return nil, out, toolError("offset %d is negative: give 0 or the next_offset of the previous page", in.Offset)
	}
	if in.FromTurn < 0 || in.ToTurn < 0 || in.ToTurn > 0 && in.FromTurn > in.ToTurn {
		return nil, out, toolError("turns %d to %d: give from_turn <= to_turn, both from 1", in.FromTurn, in.ToTurn)
	}
	fam, err := s.resolveSession(ctx, req, in.Session, in.Project)
	if err != nil {
		return nil, out, err
	}
	out.Session, out.Offset = fam.Session, in.Offset
	p := &page{off: in.Offset, max: clamp(in.MaxChars, defaultMaxChars, maxMaxChars)}
	f := &filter{w: p, from: in.FromTurn, to: in.ToTurn, thinking: in.IncludeThinking, output: in.IncludeToolOutput, subagents: in.IncludeSubagents}
	if err := writeStopping(f, func() error {
		if err := export.Write(f, fam, export.Options{Format: "md", Index: s.opts.Index}); err != nil {
			return err
		}
		return f.flush()
	}); err != nil {
		return nil, out, toolError("session %s cannot be read: %v", in.Session, err)
	}
	out.Text = p.text()
	switch {
	case p.more:
		n := in.Offset + p.kept()
		out.NextOffset = &n
	case p.pos <= in.Offset && in.Offset > 0:
		out.Note = "offset " + strconv.Itoa(in.Offset) + " is past the end (" + strconv.Itoa(p.pos) + " bytes): this is the end of the session"
	case f.turnsSeen == 0 && in.FromTurn > 1:
		out.Note = "the session has no numbered turns: read it without from_turn"
	case in.FromTurn > f.last && in.FromTurn > 0:
		out.Note = fmt.Sprintf("the session has %d turns: turn %d is past the end", f.last, in.FromTurn)
	}
	return nil, out, nil
}

// stop is what a page writer panics with to stop an export that has
// written all the page needs: export.Write reads on while its writes
// fail, and a page of a long session should cost a page's reading.
type stop struct{}

// writeStopping runs fn, which writes through f, and takes a stop as the
// end of the page.
func writeStopping(f *filter, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
			err = nil
		}
	}()
	return fn()
}

// page keeps the bytes [off, off+max) of what is written to it, and stops
// the writing (panics with stop) once it knows more follows.
type page struct {
	off, max int
	pos      int // bytes written so far
	buf      []byte
	more     bool
}

func (p *page) Write(b []byte) (int, error) {
	n := len(b)
	start, end := p.pos, p.pos+n
	p.pos = end
	lo, hi := max(start, p.off), min(end, p.off+p.max)
	if lo < hi {
		p.buf = append(p.buf, b[lo-start:hi-start]...)
	}
	if end > p.off+p.max {
		p.more = true
		panic(stop{})
	}
	return n, nil
}

// kept is how many bytes of the page the text holds: the window, less a
// rune cut at its end.
func (p *page) kept() int {
	b := p.buf
	if p.more {
		// A rune cut by the window's end goes to the next page.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return len(b)
}

// text is the page, less a rune cut at its start (the previous page holds
// it) or end.
func (p *page) text() string {
	b := p.buf[:p.kept()]
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}

// filter passes on the lines of an export's Markdown that a read asks for:
// the turns from..to, and thinking, tool outputs and subagent
// conversations only when asked. It follows the structure export's
// Markdown has: fenced code (whose lines are data), <details> blocks
// (thinking, a tool call, a note), a tool's "**Result**" and its fenced
// block, "**Subagent conversation**" up to its end, "### Turn N" at the
// top level. Text is escaped by the export, so none of these lines comes
// from what people or the model wrote. It classifies a line by its first
// bytes, so a long line is passed on as it comes, never held.
type filter struct {
	w                           *page
	from, to                    int
	thinking, output, subagents bool
	head                        []byte // the start of the current line, up to headLen
	decided                     bool   // the current line is classified
	keep                        bool   // and passed on
	fence                       int    // the open fence's length, 0 outside code
	depth                       int    // open <details> blocks
	dropAt                      int    // depth at which a dropped block ends; -1 none
	resultDrop                  int    // 1: after "**Result**", dropping to its fence's end
	subAt                       int    // depth of a dropped subagent conversation; -1 none
	turn, last, turnsSeen       int
	started                     bool
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
				f.w.Write(f.head)
			}
		}
		if f.keep && len(chunk) > 0 {
			f.w.Write(chunk)
		}
		if i >= 0 {
			f.head, f.decided = f.head[:0], false
		}
	}
	return n, nil
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
			if f.resultDrop == 1 {
				f.resultDrop = 0
				return false
			}
		}
		return f.visible()
	}
	if bytes.HasPrefix(line, []byte("```")) {
		f.fence = len(line) - len(bytes.TrimLeft(line, "`"))
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
		if f.visible() {
			f.w.Write([]byte(string(line) + " _(left out: include_tool_output shows it)_\n"))
		}
		f.resultDrop = 1
		return false
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
	if f.dropAt >= 0 || f.resultDrop == 1 || f.subAt >= 0 {
		return false
	}
	if f.from > 1 && f.turn < f.from {
		return false
	}
	return true
}
