// Package trim plans cfix trim (a session with less context: thinking,
// old tool output, images or progress entries taken out, as a new session
// or in place) and cfix fork (a new session holding the history up to one
// entry). Both read the transcript once, streamed, and describe the new
// transcript as line edits of a changeset.Transform; a new session is
// written by clone's planner, with the sidecars a clone carries.
package trim

import (
	"bytes"
	"fmt"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// line is what the planners keep of one line of the transcript.
type line struct {
	n         int
	typ       string
	uuid      string
	parent    string
	logical   string // logicalParentUuid
	leaf      string // leafUuid (summary, last-prompt)
	messageID string // file-history-snapshot: the message it belongs to
	chain     bool   // a chain entry (uuid and parentUuid)
	sidechain bool
	prompt    bool // a user prompt: starts a turn
	msgID     string
	off       int64
	len       int
	usage     int64 // assistant: input tokens of its request, from message.usage
	trim      session.TrimStats
	// count is how many lines this is: a run of lines no planner looks
	// into (see plain) is kept as one, so a file of a million empty
	// objects costs what one does; bytes are theirs, terminators included.
	count int
	bytes int64
	long  *session.Long // a line longer than session.MaxLine, never read whole
}

// plain reports whether no planner looks into the line: neither a chain
// entry nor one that names one (leafUuid, logicalParentUuid, a snapshot's
// message), which a fork drops and a trim leaves as it is.
func (l *line) plain() bool {
	return !l.chain && l.leaf == "" && l.logical == "" && l.messageID == ""
}

// read is what the work of scanFile gives for a line: the line, and what
// goes into the graph or the file's figures only.
type read struct {
	line
	time, version, cwd string
	blocks             []session.Block // tool calls and results
	// damage says why the line holds records the planners cannot edit
	// line by line (glued records, NUL bytes), "" for none.
	damage string
}

// scanned is a transcript as the planners read it.
type scanned struct {
	path    string
	lines   []line
	g       *session.Graph
	node    []int // graph node → index in lines
	version string
	cwd     string
	fp      changeset.Fingerprint
}

// scanFile reads path once, in parallel (session.Pipeline): the graph of
// its chain entries, what each line is, and what o would take out of it.
func scanFile(path string, o session.TrimOptions, hash bool) (*scanned, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	// Room for about as many lines as such a file holds (a file of NUL
	// bytes holds none), so that the slices do not grow in many steps.
	est := int(min(fi.Size()/2048, 1<<16)) + 16
	s := &scanned{path: path, g: session.NewGraphSize(est), lines: make([]line, 0, est), node: make([]int, 0, est)}
	var fpErr error
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		if hash {
			s.fp, fpErr = changeset.FingerprintOf(path)
		}
	}()
	var size int64
	err = session.Pipeline(fh, 0, func() func(session.Line) read {
		p := session.NewParser()
		sh := session.NewShaper(nil, nil)
		var e session.Entry
		return func(l session.Line) read { return readLine(p, sh, &e, l, o) }
	}, func(l session.Line, r read) error {
		size = l.End()
		if r.damage != "" {
			return fmt.Errorf("line %d %s: trim and fork edit whole lines; run cfix repair on the session first", l.N, r.damage)
		}
		r.n, r.off, r.len, r.long, r.count, r.bytes = l.N, l.Offset, int(l.Len()), l.Long, 1, l.End()-l.Offset
		if k := len(s.lines) - 1; r.plain() && k >= 0 && s.lines[k].plain() && s.lines[k].n+s.lines[k].count == l.N {
			s.lines[k].count++
			s.lines[k].bytes += r.bytes
			return nil
		}
		if r.chain {
			e := session.Entry{Type: r.typ, UUID: r.uuid, Parent: r.parent, HasParent: true, LogicalParent: r.logical,
				IsSidechain: r.sidechain, MessageID: r.msgID, Timestamp: r.time, Blocks: r.blocks}
			if r.version != "" {
				s.version = r.version
			}
			if s.cwd == "" && !r.sidechain {
				s.cwd = r.cwd
			}
			if s.g.Add(&e, l.N) {
				s.node = append(s.node, len(s.lines))
			}
		} else if r.typ == "last-prompt" && r.leaf != "" {
			s.g.Meta(&session.Entry{Type: r.typ, LeafUUID: r.leaf}, l.N)
		}
		s.lines = append(s.lines, r.line)
		return nil
	})
	<-hashed
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fpErr != nil {
		return nil, fpErr
	}
	if hash && (s.fp.Size != size || s.fp.Size != fi.Size()) {
		return nil, fmt.Errorf("%s: changed while cfix read it (Claude Code is writing to it?); try again", path)
	}
	return s, nil
}

var (
	keyUsage   = []byte(`"usage":{`)
	keyCompact = []byte(`"isCompactSummary":true`)
)

// readLine is the per-line work of scanFile.
func readLine(p *session.Parser, sh *session.Shaper, e *session.Entry, l session.Line, o session.TrimOptions) read {
	var r read
	// A line with NUL bytes or glued records holds entries the loader
	// reads (validate.ChainReader: NULs taken out, each record an entry)
	// that a line edit cannot keep apart: the planners refuse it.
	if l.Long != nil && l.Long.NULs > 0 {
		// Its skeleton holds no NUL byte.
		if res := p.Parse(l.Raw); res.Err == nil {
			r.damage = "holds " + plural.Count(l.Long.NULs, "NUL byte")
		}
		return r
	}
	if n := bytes.Count(l.Raw, []byte{0}); n > 0 {
		if res := p.Parse(bytes.ReplaceAll(l.Raw, []byte{0}, nil)); res.Err == nil {
			r.damage = "holds " + plural.Count(n, "NUL byte")
		}
		return r
	}
	if _, ok := p.Scan(l.Raw, sh, e); !ok {
		res := p.Parse(l.Raw)
		if res.Err == nil && res.GluedAt >= 0 {
			r.damage = fmt.Sprintf("holds %d records glued together", len(res.More)+1)
			return r
		}
		if res.Err != nil || !session.HeaderOf(res.Value, e) {
			return r
		}
	}
	r.typ, r.uuid, r.parent, r.logical, r.leaf = e.Type, e.UUID, e.Parent, e.LogicalParent, e.LeafUUID
	r.chain, r.sidechain, r.msgID = e.IsChain(), e.IsSidechain, e.MessageID
	r.time, r.version, r.cwd = e.Timestamp, e.Version, e.CWD
	if r.typ == "file-history-snapshot" {
		if s, en, ok := session.Find(l.Raw, "messageId"); ok {
			r.messageID, _ = changeset.DecodeJSONString(l.Raw[s:en])
		}
	}
	hasText, hasResult, trimmable := len(e.Blocks) == 0 && !e.BlankString, false, false
	for _, b := range e.Blocks {
		switch b.Type {
		case "tool_use":
			r.blocks = append(r.blocks, session.Block{Type: b.Type, ID: b.ID})
		case "tool_result":
			r.blocks = append(r.blocks, session.Block{Type: b.Type, ToolUseID: b.ToolUseID})
			hasResult = true
			trimmable = trimmable || o.ToolOutput || o.Images
		case "text":
			hasText = true
		case "image":
			hasText = true
			trimmable = trimmable || o.Images
		case "thinking", "redacted_thinking":
			trimmable = trimmable || o.Thinking
		}
	}
	r.prompt = r.chain && r.typ == "user" && !e.IsMeta && !e.IsSidechain && hasText && !hasResult &&
		!bytes.Contains(l.Raw, keyCompact) && !localOutput(l.Raw)
	if r.typ == "assistant" && bytes.Contains(l.Raw, keyUsage) {
		r.usage = usageTokens(l.Raw)
	}
	if r.chain && trimmable && l.Long == nil {
		// (A long line's skeleton is not its bytes: it is not trimmed.)
		if _, st, err := session.TrimEntry(l.Raw, o); err == nil {
			r.trim = st
		}
	}
	return r
}

// usageTokens is what message.usage says the request of an assistant
// reply held: input, cache creation and cache read tokens. It reads the
// first "usage" object of the line (an assistant entry's only one).
func usageTokens(raw []byte) int64 {
	i := bytes.Index(raw, keyUsage)
	if i < 0 {
		return 0
	}
	fields, _, err := session.Fields(raw, i+len(keyUsage)-1)
	if err != nil {
		return 0
	}
	var n int64
	for _, f := range fields {
		switch f.Key {
		case "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens":
			var v int64
			fmt.Sscan(string(raw[f.Start:f.End]), &v)
			n += v
		}
	}
	return n
}

// raw reads line i of the file again.
func (s *scanned) raw(i int) ([]byte, error) {
	f, err := rfile.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, s.lines[i].len)
	_, err = f.ReadAt(b, s.lines[i].off)
	return b, err
}

// calls are the tool_use ids of graph node gi, answers the ids its
// tool_result blocks answer.
func (s *scanned) calls(gi int) []string   { return s.ids(gi, "tool_use") }
func (s *scanned) answers(gi int) []string { return s.ids(gi, "tool_result") }

func (s *scanned) ids(gi int, typ string) []string {
	var out []string
	for _, b := range s.g.Nodes[gi].Blocks {
		if b.Type == typ {
			if typ == "tool_use" {
				out = append(out, b.ID)
			} else {
				out = append(out, b.ToolUseID)
			}
		}
	}
	return out
}

// localOutput reports whether a user entry is the output a local command
// printed (<local-command-stdout>, its stderr, the caveat before it),
// which Claude Code writes as a user entry; the person typed the command,
// an entry before it, not this.
func localOutput(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"content":"<local-command-`)) || bytes.Contains(raw, []byte(`"text":"<local-command-`))
}
