// Package export writes a session as a person reads it: the chain a resume
// loads (or every branch), with tool calls and their results folded,
// thinking marked, subagent conversations under the call that started
// them and compactions shown, as Markdown, one self-contained HTML file,
// or the chain's own JSONL lines.
package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// Formats are the formats Write knows.
var Formats = []string{"md", "html", "jsonl"}

// Options says what to write.
type Options struct {
	Format string // md, html or jsonl
	// Branches writes every entry of the transcript in file order, those
	// a resume does not load marked, instead of the resumed chain.
	Branches bool
	// Index is a folder where the reading of a big main transcript (from
	// IndexMin bytes) is kept between runs, by the transcript's identity,
	// so that writing its start costs no pass over the whole file; ""
	// keeps nothing.
	Index string
	// Anchors (Markdown, the resumed chain of a main transcript) marks
	// the messages a fork can end at: a line "<!-- cfix:message -->"
	// before the heading of each message of the history a resume loads,
	// and after the message (its tool results, notes and the entries
	// that write nothing, up to the next message) a line
	// "<!-- cfix:at UUID -->" naming the last entry of the chain before
	// the next message, the entry cfix fork --at ends such a fork at.
	// After the last message of turn N, that is the entry cfix fork
	// --turn N ends at. Off, the output is unchanged.
	Anchors bool
	// Attachments says how attachment entries are shown: AttachSummary
	// (the default, also ""), AttachAll or AttachNone.
	Attachments string
	// Redact, when set, takes secrets out of what is written: every
	// record goes through its Line as it is read (what --format jsonl
	// writes and what md and html render), titles and prompts kept
	// elsewhere through its Text (cfix export --redact, cfix mcp).
	Redact Redactor
}

// Redactor is what Options.Redact does: secrets.Redactor.
type Redactor interface {
	Line(raw []byte) ([]byte, int)
	Text(s string) (string, int)
}

// redactText is s through opts.Redact, if set.
func (o Options) redactText(s string) string {
	if o.Redact == nil {
		return s
	}
	out, _ := o.Redact.Text(s)
	return out

}

// InputError reports a request that cannot be met as asked.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// maxDepth bounds the nesting of subagent conversations.
const maxDepth = 4

// Write writes the family's conversation to w.
func Write(w io.Writer, fam *show.Family, opts Options) error {
	if stub, ok := leftOf(fam); ok {
		return writeLeft(w, fam, stub, opts)
	}
	main, err := mainFile(fam)
	if err != nil {
		return err
	}
	x := &exporter{fam: fam, opts: opts}
	agent := main.Kind != store.KindSession
	if agent {
		x.used = map[string]bool{main.Path: true}
	}
	var t *transcript
	// The index keeps no anchors' start (chainAt): an export with
	// anchors reads the transcript.
	if opts.Index != "" && !agent && fam.Loose == "" && !opts.Branches && !opts.Anchors {
		t, err = x.openIndexed(main, opts.Index)
	} else {
		t, err = x.open(main, agent)
	}
	if err != nil {
		return err
	}
	defer t.close()
	if opts.Redact != nil {
		// Prompts are matched in their redacted form, as the calls that
		// name them are read.
		t.redact = opts.Redact
		roots := map[string][]int{}
		for k, v := range t.roots {
			k = opts.redactText(k)
			roots[k] = append(roots[k], v...)
		}
		t.roots = roots
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if opts.Format == "jsonl" {
		for _, i := range t.sel {
			if n := &t.g.Nodes[i]; n.Long {
				// Never read whole: copied as it streams past.
				if _, err := io.Copy(bw, io.NewSectionReader(t.fh, n.Off, int64(n.Len))); err != nil {
					return fmt.Errorf("%s:%d: %w", t.path, n.Line, err)
				}
				if err := bw.WriteByte('\n'); err != nil {
					return err
				}
				continue
			}
			raw, err := t.raw(i)
			if err != nil {
				return err
			}
			bw.Write(raw)
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	switch opts.Attachments {
	case "", AttachSummary, AttachAll, AttachNone:
	default:
		return &InputError{Msg: fmt.Sprintf("attachments %q: want one of %s", opts.Attachments, strings.Join(AttachModes, ", "))}
	}
	var r renderer
	switch opts.Format {
	case "md":
		r = &markdown{w: bw}
	case "html":
		r = &htmlOut{w: bw}
	default:
		return &InputError{Msg: fmt.Sprintf("format %q: want one of %s", opts.Format, strings.Join(Formats, ", "))}
	}
	x.r = r
	if opts.Anchors && opts.Format == "md" && !opts.Branches && !agent && !t.loose {
		x.anchored = t
	}
	h := x.header(t)
	h.Title, h.Name = opts.redactText(h.Title), opts.redactText(h.Name)
	r.begin(h)
	if err := x.conversation(t, 0); err != nil {
		return err
	}
	x.endAnchor()
	if opts.Branches && !t.agent && !t.loose {
		if err := x.strays(t); err != nil {
			return err
		}
	}
	r.end()
	return bw.Flush()
}

// mainFile picks the transcript to export: the file named (a subagent's
// too), or the family's one main transcript.
func mainFile(fam *show.Family) (store.File, error) {
	if fam.Loose != "" {
		return store.File{Path: fam.Loose, Kind: store.KindSession}, nil
	}
	for _, f := range fam.Layout.Files {
		if fam.Named != "" && f.Path == fam.Named {
			return f, nil
		}
	}
	var mains []store.File
	for _, f := range fam.Layout.Files {
		if f.Kind == store.KindSession {
			mains = append(mains, f)
		}
	}
	switch len(mains) {
	case 1:
		return mains[0], nil
	case 0:
		return store.File{}, &InputError{Msg: fmt.Sprintf("session %s has no main transcript, only subagents: name a subagent transcript by its path", fam.Session)}
	}
	var paths []string
	for _, f := range mains {
		paths = append(paths, f.Path)
	}
	return store.File{}, &InputError{Msg: fmt.Sprintf("session %s has transcripts in %d folders; name the one to export by its path: %s",
		fam.Session, len(mains), strings.Join(paths, ", "))}
}

type exporter struct {
	fam  *show.Family
	opts Options
	r    renderer
	used map[string]bool // subagent transcripts already nested
	// inlined holds the inline subagent entries already written.
	inlined map[int]bool
	agents  *agents // the family's subagent transcripts, indexed
	last    string  // the message written last
	// model is the model the last reply's heading named since the last
	// prompt's.
	model string
	// anchored is the transcript whose messages Options.Anchors marks;
	// onChain says the entry written is on its loaded chain; leaf is
	// the last entry of the chain since the heading of the message
	// marked last ("" when none is open).
	anchored *transcript
	onChain  bool
	leaf     string
}

// transcript is one transcript open for export: its graph (where each
// record sits) and the records to write, in order.
type transcript struct {
	path  string
	fh    *os.File
	g     *session.Graph
	sel   []int
	other map[int]bool // Branches: records a resume does not load
	// results maps a tool_use id to the node holding its result.
	results map[string]int
	// agentOf maps a tool_use id to the agent id its result names
	// (toolUseResult.agentId).
	agentOf map[string]string
	// roots maps the prompt of an inline subagent's first entry to those
	// entries, in file order (two calls may give the same prompt).
	roots   map[string][]int
	shown   map[string]bool // tool results shown with their call
	pending map[int]*entry  // entries read ahead for their results
	loaded  int
	version string
	loader  string
	cut     bool
	loose   bool
	// turns numbers the prompts of a main transcript's resumed history
	// as cfix fork --turn and cfix show count them (trim.Number).
	turns map[int]int
	// chainAt is where in sel the chain a resume loads starts (after the
	// history behind its compactions).
	chainAt int
	agent   bool // a subagent's transcript
	// head is the header, when read from an index (stats is nil then).
	head  *header
	stats *show.Stats
	// fork is a forked subagent's fork-context-ref: its context is its
	// session's conversation, which its transcript does not copy.
	fork *session.ForkRef
	// redact, when set, takes the secrets out of each record read.
	redact Redactor
}

func (t *transcript) close() { t.fh.Close() }

// open reads a transcript once: its graph, with where each record sits,
// and what links its calls to subagents.
func (x *exporter) open(f store.File, agent bool) (*transcript, error) {
	fh, err := rfile.Open(f.Path)
	if err != nil {
		return nil, err
	}
	t := &transcript{path: f.Path, fh: fh, results: map[string]int{}, agentOf: map[string]string{}, roots: map[string][]int{},
		shown: map[string]bool{}, pending: map[int]*entry{}, loose: x.fam.Loose != "", agent: agent, redact: x.opts.Redact}
	c := validate.NewChainReader()
	seen := 0
	prompt := map[int]bool{} // graph node → starts a turn (trim.PromptLine)
	var lines []session.Node // a loose file's lines, for one with no chain
	st, err := show.ReadLines(f.Path, c, func(ln session.Line) {
		if t.loose && len(bytes.TrimSpace(ln.Raw)) > 0 {
			lines = append(lines, session.Node{UUID: fmt.Sprintf("line %d", ln.N), Line: ln.N, Off: ln.Offset, Len: int(ln.Len()), Long: ln.Long != nil})
		}
		if bytes.Contains(ln.Raw, []byte(`"agentId"`)) && bytes.Contains(ln.Raw, []byte(`"toolUseResult"`)) {
			var v struct {
				Message struct {
					Content []struct {
						ToolUseID string `json:"tool_use_id"`
					} `json:"content"`
				} `json:"message"`
				Result struct {
					AgentID string `json:"agentId"`
				} `json:"toolUseResult"`
			}
			if json.Unmarshal(ln.Raw, &v) == nil && v.Result.AgentID != "" {
				for _, b := range v.Message.Content {
					if b.ToolUseID != "" {
						t.agentOf[b.ToolUseID] = v.Result.AgentID
					}
				}
			}
		}
		for ; seen < len(c.Graph.Nodes); seen++ {
			n := &c.Graph.Nodes[seen]
			if !agent && trim.PromptLine(ln.Raw, n) {
				prompt[seen] = true
			}
			if !agent && n.Sidechain && n.Parent == "" && n.Type == "user" {
				var v struct {
					Message struct {
						Content any `json:"content"`
					} `json:"message"`
				}
				if json.Unmarshal(ln.Raw, &v) == nil {
					if p := promptText(v.Message.Content); p != "" {
						t.roots[p] = append(t.roots[p], seen)
					}
				}
			}
		}
	})
	if err != nil {
		fh.Close()
		return nil, err
	}
	t.stats = st
	t.g = c.Graph
	t.fork = c.Graph.Fork
	loaded, ld := c.Load(agent)
	t.version, t.loader, t.cut, t.loaded = loaded.Version, loaded.Loader, loaded.Cut, len(ld.Chain)
	if !agent && !t.loose {
		t.turns = trim.Number(ld.Chain, prompt)
	}
	g := t.g
	switch {
	case t.loose && len(ld.Chain) == 0:
		// No chain (a transcript export): every line in file order.
		t.g = session.NewGraph()
		for _, n := range lines {
			t.g.AddNode(n)
			t.sel = append(t.sel, len(t.g.Nodes)-1)
		}
		g = t.g
	case x.opts.Branches:
		on := map[int]bool{}
		for _, i := range append(show.Compacted(g, ld.Chain), ld.Chain...) {
			on[i] = true
		}
		t.other = map[int]bool{}
		for i := range g.Nodes {
			if g.Nodes[i].Sidechain && !agent {
				continue // shown under the call that started it
			}
			t.sel = append(t.sel, i)
			if !on[i] {
				t.other[i] = true
			}
		}
	default:
		t.sel = append(show.Compacted(g, ld.Chain), ld.Chain...)
		t.chainAt = len(t.sel) - len(ld.Chain)
	}
	for _, i := range t.sel {
		for _, b := range g.Nodes[i].Blocks {
			if b.Type == "tool_result" {
				if _, ok := t.results[b.ToolUseID]; !ok {
					t.results[b.ToolUseID] = i
				}
			}
		}
	}
	return t, nil
}

// raw reads the record of node i again, by its offset: for a line longer
// than session.MaxLine, its skeleton, read again as it streams past.
func (t *transcript) raw(i int) ([]byte, error) {
	n := &t.g.Nodes[i]
	if n.Long {
		sk, _, err := session.ReadSkeleton(t.fh, n.Off, int64(n.Len))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", t.path, n.Line, err)
		}
		return sk, nil
	}
	buf := make([]byte, n.Len)
	if _, err := t.fh.ReadAt(buf, n.Off); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", t.path, n.Line, err)
	}
	if t.redact != nil {
		buf, _ = t.redact.Line(buf)
	}
	return buf, nil
}

// entry reads node i's entry (once, when read ahead for a result).
func (t *transcript) entry(i int) (*entry, error) {
	if e, ok := t.pending[i]; ok {
		return e, nil
	}
	raw, err := t.raw(i)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		raw = bytes.ReplaceAll(raw, []byte{0}, nil) // as the chain was read
	}
	e, err := decodeEntry(raw)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", t.path, t.g.Nodes[i].Line, err)
	}
	e.line = t.g.Nodes[i].Line
	if n := &t.g.Nodes[i]; n.Long {
		e.cut = fmt.Sprintf("[line %d is %s, over the %s cfix reads whole: each of its texts is shown up to its first %d KB]",
			n.Line, session.MB(int64(n.Len)), session.MB(session.MaxLine), session.KeepString>>10)
	}
	return e, nil
}

// longLine is the length from which decodeEntry reads a line in one pass
// instead of with encoding/json.
const longLine = 1 << 20

// decodeEntry decodes an entry. A line of MB (a pasted file) is read in
// one pass: its light tree for the fields, the raw values of the content
// fields from the line (encoding/json checks and decodes it three times);
// of a key repeated in an object, the last value counts, where
// encoding/json merges repeated objects and skips a null.
func decodeEntry(raw []byte) (*entry, error) {
	e := &entry{}
	if len(raw) > longLine {
		p := parsers.Get().(*session.Parser)
		defer parsers.Put(p)
		if pr := p.Parse(raw); pr.Err == nil && pr.GluedAt < 0 {
			if b, err := json.Marshal(pr.Value); err == nil && json.Unmarshal(b, e) == nil {
				e.Content = field(p, raw, "content")
				e.Message.Content = field(p, raw, "message", "content")
				e.Attachment = field(p, raw, "attachment")
				return e, nil
			}
			*e = entry{}
		}
	}
	if err := json.Unmarshal(raw, e); err != nil {
		return nil, err
	}
	return e, nil
}

// field is the raw value at path in line, or nil.
func field(p *session.Parser, line []byte, path ...string) json.RawMessage {
	if v, ok := p.Field(line, path...); ok {
		return v
	}
	return nil
}

// entry is what the export reads of a transcript entry.
type entry struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	Timestamp        string          `json:"timestamp"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Content          json.RawMessage `json:"content"` // system entries
	CompactMetadata  struct {
		Trigger   string `json:"trigger"`
		PreTokens int64  `json:"preTokens"`
	} `json:"compactMetadata"`
	Message struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Attachment json.RawMessage `json:"attachment"`
	line       int
	cut        string // what the export says of a line never read whole
}

// block is one content block.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    struct {
		MediaType string `json:"media_type"`
	} `json:"source"`
}

// parsers holds the parsers blocks uses.
var parsers = sync.Pool{New: func() any { return session.NewParser() }}

// blocks decodes message content: a string is one text block.
func blocks(raw json.RawMessage) []block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		// One pass for a prompt of hundreds of MB; encoding/json for
		// what the parser leaves to it.
		p := parsers.Get().(*session.Parser)
		s, ok := p.Unquote(raw)
		parsers.Put(p)
		if !ok {
			json.Unmarshal(raw, &s)
		}
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return []block{{Type: "text", Text: string(raw)}}
	}
	return bs
}

// resultText renders a tool result's content: its text blocks, images
// named.
func resultText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, fmt.Sprintf("[image %s]", b.Source.MediaType))
		default:
			parts = append(parts, fmt.Sprintf("[%s]", b.Type))
		}
	}
	return strings.Join(parts, "\n")
}

// promptText returns the text of a prompt: a string, or its text blocks.
func promptText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, b := range v {
			if m, ok := b.(map[string]any); ok && m["type"] == "text" {
				s, _ := m["text"].(string)
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// header is what the top of an export says.
type header struct {
	Title, Session, Path, What string
	// Name is what names the page (HTML's <title>): the session's title
	// as cfix ls and the /resume picker show it, else Title.
	Name  string
	Facts [][2]string
}

func (x *exporter) header(t *transcript) header {
	if t.head != nil {
		return *t.head
	}
	h := header{Session: x.fam.Session, Path: t.path}
	if st := t.stats; st != nil {
		for _, k := range []string{"custom-title", "ai-title", "summary"} {
			for _, ti := range st.Titles {
				if ti.Kind == k && h.Title == "" {
					h.Title = ti.Text
				}
			}
		}
		add := func(k string, vs []string) {
			if len(vs) > 0 {
				h.Facts = append(h.Facts, [2]string{k, strings.Join(vs, ", ")})
			}
		}
		add("cwd", st.CWDs)
		add("versions", st.Versions)
		add("models", st.Models)
		if st.First != "" {
			h.Facts = append(h.Facts, [2]string{"time", when(st.First) + " to " + when(st.Last) + " UTC"})
		}
	}
	if h.Title == "" {
		h.Title = "Session " + x.fam.Session
		if x.fam.Session == "" {
			h.Title = t.path
		}
	}
	h.Name = h.Title
	if x.fam.Layout != nil {
		for _, f := range x.fam.Layout.Files {
			if f.Path == t.path && f.Kind == store.KindSession {
				if name := strings.Join(strings.Fields(store.TitleOf(f)), " "); name != "" {
					h.Name = name
				}
			}
		}
	}
	switch {
	case t.loose:
		h.What = "Not a resumable session: " + x.fam.Why + "."
	case t.agent && !x.opts.Branches:
		h.What = fmt.Sprintf("A subagent's conversation: the chain its transcript holds (%d %s; %s, loader %s).", t.loaded, plural.Of(t.loaded, "entry"), orNone(t.version), t.loader)
	case x.opts.Branches:
		h.What = fmt.Sprintf("Every branch of the transcript in file order; entries a resume does not load are marked (a resume by %s, loader %s, loads %d %s).", orNone(t.version), t.loader, t.loaded, plural.Of(t.loaded, "entry"))
	default:
		h.What = fmt.Sprintf("The chain a resume loads (%d %s; %s, loader %s), after the history its compactions summarized.", t.loaded, plural.Of(t.loaded, "entry"), orNone(t.version), t.loader)
	}
	if t.cut {
		h.What += " The chain is cut at a parent the file does not hold."
	}
	if st := t.stats; st != nil && st.NotJSON > 0 {
		var ns []string
		for _, n := range st.NotJSONLines() {
			ns = append(ns, fmt.Sprint(n))
		}
		if len(ns) < st.NotJSON {
			ns = append(ns, "…")
		}
		what := "is left out"
		if t.loose {
			what = "is shown as it is"
		}
		if st.NotJSON == 1 {
			h.What += fmt.Sprintf(" Line %s holds no JSON and %s.", ns[0], what)
		} else {
			h.What += fmt.Sprintf(" %d lines hold no JSON and are %s (lines %s).", st.NotJSON, strings.TrimPrefix(what, "is "), strings.Join(ns, ", "))
		}
	}
	return h
}

// forkNote says what a fork-context-ref gives a subagent's load.
func forkNote(f *session.ForkRef) string {
	return fmt.Sprintf("This subagent was forked from the conversation of session %s: a load of it first reads that session's transcript up to entry %s (%d %s of context when it was forked, line %d of this file) and puts them before what follows. They are not repeated here: the session's export holds them.",
		f.ParentSession, f.ParentLast, f.Length, plural.Of(f.Length, "message"), f.Line)
}

func orNone(v string) string {
	if v == "" {
		return "no version"
	}
	return v
}

// conversation writes the selected entries of a transcript.
func (x *exporter) conversation(t *transcript, depth int) error {
	defer func(m string) { x.model = m }(x.model)
	x.model = ""
	if t.agent && t.fork != nil {
		// A forked subagent's context: a folded note, not the session's
		// entries again (the export of the session holds them).
		x.last = ""
		x.r.note("forked context", forkNote(t.fork), "", false)
	}
	anchoring := t == x.anchored && depth == 0
	for k, i := range t.sel {
		on := anchoring && k >= t.chainAt
		x.onChain = on // read by write at a message's heading
		e, err := t.entry(i)
		if err != nil && t.loose && t.g.Nodes[i].UUID == fmt.Sprintf("line %d", t.g.Nodes[i].Line) {
			// A line of a file with no chain that holds no JSON: shown
			// as it is, as the header says.
			raw, rerr := t.raw(i)
			if rerr != nil {
				return rerr
			}
			if len(raw) > 4096 {
				raw = append(raw[:4096:4096], "…"...)
			}
			x.last = ""
			x.r.note(fmt.Sprintf("line %d: not JSON", t.g.Nodes[i].Line), strings.ToValidUTF8(string(raw), "\uFFFD"), "", false)
			continue
		}
		if err != nil {
			return err
		}
		delete(t.pending, i)
		// An attachment that is shown ends the message (write says so);
		// one left out is no break in it.
		if typ := t.g.Nodes[i].Type; typ != "user" && typ != "assistant" && typ != "attachment" {
			x.last = ""
		}
		if err := x.write(t, i, e, depth); err != nil {
			return err
		}
		if on && x.leaf != "" {
			x.leaf = t.g.Nodes[i].UUID
		}
	}
	return nil
}

// endAnchor ends the message Options.Anchors marked last: it names the
// entry a fork at it ends at. A uuid that is not a plain token (a hostile
// transcript's) names none: that message is no fork point.
func (x *exporter) endAnchor() {
	if x.leaf == "" {
		return
	}
	if plainID(x.leaf) {
		x.r.forkEnd(x.leaf)
	}
	x.leaf = ""
}

// plainID reports whether s is a uuid-like token: letters, digits and
// "-", "_", ".", at most 100 of them.
func plainID(s string) bool {
	if len(s) > 100 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// write writes one entry.
func (x *exporter) write(t *transcript, i int, e *entry, depth int) error {
	r := x.r
	other := t.other[i]
	switch e.Type {
	case "user", "assistant":
	case "system":
		var text string
		json.Unmarshal(e.Content, &text)
		if e.Subtype == "compact_boundary" {
			s := "Conversation compacted"
			if e.CompactMetadata.Trigger != "" {
				s += fmt.Sprintf(" (%s, %s before)", e.CompactMetadata.Trigger, plural.Count(e.CompactMetadata.PreTokens, "token"))
			}
			r.compaction(s, when(e.Timestamp))
			return nil
		}
		if strings.TrimSpace(text) == "" {
			return nil
		}
		r.note("system "+e.Subtype, text, when(e.Timestamp), other)
		return nil
	case "attachment":
		x.attachment(e, other)
		return nil
	case "progress":
		return nil
	default:
		if t.loose {
			raw, _ := t.raw(i)
			r.note(e.Type, prettyJSON(raw), when(e.Timestamp), other)
		}
		return nil
	}
	bs := blocks(e.Message.Content)
	if len(bs) == 0 && t.loose {
		bs = blocks(e.Content) // a transcript export's {type, content}
	}
	role := e.Type
	switch {
	case e.IsCompactSummary:
		x.last = ""
		r.endMessage()
		r.folded("Summary of the conversation before the compaction", resultTextOf(bs), "summary")
		return nil
	case e.IsMeta:
		x.last = ""
		r.endMessage()
		r.folded("Context Claude Code added (meta)", resultTextOf(bs), "meta")
		return nil
	}
	if len(bs) == 1 && bs[0].Type == "text" && role == "user" {
		if out, ok := commandOutput(bs[0].Text); ok {
			x.last = ""
			r.note("command output", out, when(e.Timestamp), other)
			return nil
		}
		if cmd, ok := command(bs[0].Text); ok {
			bs[0].Text = cmd
		}
	}
	// Tool results shown with their calls leave nothing to write.
	var rest []block
	for _, b := range bs {
		if b.Type == "tool_result" && t.shown[b.ToolUseID] {
			continue
		}
		rest = append(rest, b)
	}
	if len(rest) == 0 {
		return nil
	}
	if e.cut != "" {
		rest = append(rest, block{Type: "text", Text: e.cut})
	}
	label := "User"
	if role == "assistant" {
		label = "Assistant"
	}
	// The entries Claude Code writes for the blocks of one reply are one
	// message.
	key := fmt.Sprintf("%p %d", t, i)
	if role == "assistant" && t.g.Nodes[i].MsgID != "" {
		key = fmt.Sprintf("%p %s %v", t, t.g.Nodes[i].MsgID, other)
	}
	anchoring := t == x.anchored && depth == 0
	if n := t.turns[i]; n > 0 && depth == 0 && !other && role == "user" && !t.agent {
		if anchoring {
			x.endAnchor()
		}
		r.turn(n)
		x.last = ""
	}
	if key != x.last {
		if anchoring {
			x.endAnchor()
			if x.onChain {
				r.forkStart()
				x.leaf = t.g.Nodes[i].UUID
			}
		}
		// The model is named on the first reply after a prompt, and
		// again only when it changes.
		model := e.Message.Model
		switch {
		case role == "user":
			x.model = ""
		case model == x.model:
			model = ""
		default:
			x.model = model
		}
		r.message(label, model, when(e.Timestamp), other)
		x.last = key
	}
	for _, b := range rest {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				r.text(b.Text)
			}
		case "thinking":
			r.folded("Thinking", b.Thinking, "thinking")
		case "redacted_thinking":
			r.folded("Thinking (redacted)", "", "thinking")
		case "tool_use", "server_tool_use", "mcp_tool_use":
			if err := x.call(t, b, depth); err != nil {
				return err
			}
		case "tool_result":
			r.tool(toolCall{Name: "result", Summary: "of call " + b.ToolUseID + " (its call is not on this chain)", Result: resultText(b.Content), HasResult: true, IsError: b.IsError}, nil)
		case "image":
			r.text(fmt.Sprintf("[image %s]", b.Source.MediaType))
		default:
			r.folded(b.Type, prettyJSON(mustJSON(b)), "block")
		}
	}
	return nil
}

// attachment writes an attachment entry as Options.Attachments asks: its
// line (the quiet kinds left out), every one folded with all it holds, or
// none.
func (x *exporter) attachment(e *entry, other bool) {
	mode := x.opts.Attachments
	if mode == AttachNone {
		return
	}
	a := Describe(e.Attachment)
	body := ""
	if mode == AttachAll {
		body = prettyJSON(e.Attachment)
		if len(bytes.TrimSpace(e.Attachment)) == 0 {
			body = "(no attachment field)"
		}
	} else if a.Quiet {
		return
	}
	x.last = ""
	x.r.attachment(a, body, when(e.Timestamp), other)
}

// when renders a timestamp.
func when(ts string) string {
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	return ts
}

// tagged returns the text inside <tag>...</tag> in s, if s holds it.
func tagged(s, tag string) (string, bool) {
	i := strings.Index(s, "<"+tag+">")
	j := strings.LastIndex(s, "</"+tag+">")
	if i < 0 || j < i {
		return "", false
	}
	return s[i+len(tag)+2 : j], true
}

// command renders a slash command or a shell command the person typed
// (<command-name>, <bash-input>) as they typed it.
func command(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<command-name>") || strings.HasPrefix(s, "<command-message>") {
		name, _ := tagged(s, "command-name")
		args, _ := tagged(s, "command-args")
		if name == "" {
			return "", false
		}
		return strings.TrimSpace(name + " " + args), true
	}
	if !strings.HasPrefix(s, "<bash-input>") {
		return "", false
	}
	if in, ok := tagged(s, "bash-input"); ok {
		return "! " + in, true
	}
	return "", false
}

// commandOutput returns the output of a slash command or a shell command
// that a user entry holds.
func commandOutput(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<local-command-std") && !strings.HasPrefix(s, "<bash-std") {
		return "", false
	}
	var parts []string
	for _, tag := range []string{"local-command-stdout", "local-command-stderr", "bash-stdout", "bash-stderr"} {
		if v, ok := tagged(s, tag); ok && strings.TrimSpace(v) != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, "\n"), true
}

func resultTextOf(bs []block) string {
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolCall is a tool call with its result, as written.
type toolCall struct {
	Name, Summary, Input string
	Result               string
	HasResult, IsError   bool
	Agent                string // the subagent transcript nested under it
}

// call writes a tool call, its result, and the subagent it started.
func (x *exporter) call(t *transcript, b block, depth int) error {
	c := toolCall{Name: b.Name, Summary: summary(b.Name, b.Input), Input: prettyJSON(b.Input)}
	if j, ok := t.results[b.ID]; ok {
		e, err := t.entry(j)
		if err != nil {
			return err
		}
		t.pending[j] = e
		for _, rb := range blocks(e.Message.Content) {
			if rb.Type == "tool_result" && rb.ToolUseID == b.ID {
				c.Result, c.HasResult, c.IsError = resultText(rb.Content), true, rb.IsError
				t.shown[b.ID] = true
			}
		}
	}
	var sub func() error
	if (b.Name == "Task" || b.Name == "Agent") && depth < maxDepth {
		sub = x.subagent(t, b, depth, &c)
	}
	return x.r.tool(c, sub)
}

// subagent finds the conversation a Task or Agent call started: the
// transcript its result names (toolUseResult.agentId), the one whose
// .meta.json names the call (toolUseId), or the one whose first prompt is
// the call's prompt (flat files and inline sidechains of older versions).
func (x *exporter) subagent(t *transcript, b block, depth int, c *toolCall) func() error {
	var in struct {
		Prompt string `json:"prompt"`
	}
	json.Unmarshal(b.Input, &in)
	if x.used == nil {
		x.used = map[string]bool{}
	}
	var found *store.File
	if x.fam.Layout != nil {
		ix := x.agentIndex()
		files := x.fam.Layout.Files
		id := t.agentOf[b.ID]
		pick := func(ks []int) *store.File {
			for _, k := range ks {
				if !x.used[files[k].Path] {
					return &files[k]
				}
			}
			return nil
		}
		if id != "" {
			found = pick(ix.byAgent[id])
		}
		if found == nil {
			found = pick(ix.byCall()[b.ID])
		}
		if found == nil && in.Prompt != "" && id == "" {
			found = pick(ix.byPrompt()[in.Prompt])
		}
	}
	if found != nil {
		x.used[found.Path] = true
		c.Agent = found.Path
		f := *found
		return func() error {
			st, err := x.open(f, true)
			if err != nil {
				return err
			}
			defer st.close()
			x.last = ""
			defer func() { x.last = "" }()
			return x.conversation(st, depth+1)
		}
	}
	if q := t.roots[in.Prompt]; len(q) > 0 && in.Prompt != "" {
		t.roots[in.Prompt] = q[1:]
		c.Agent = "inline"
		return func() error { return x.inline(t, descendants(t.g, q[0]), depth+1) }
	}
	return nil
}

// inline writes entries of a transcript's inline subagents (sidechain
// entries, in file order) as a conversation of their own.
func (x *exporter) inline(t *transcript, sel []int, depth int) error {
	st := &transcript{path: t.path, fh: t.fh, g: t.g, results: map[string]int{}, agentOf: t.agentOf, roots: map[string][]int{},
		shown: map[string]bool{}, pending: map[int]*entry{}, sel: sel, redact: t.redact}
	if x.inlined == nil {
		x.inlined = map[int]bool{}
	}
	for _, i := range sel {
		x.inlined[i] = true
		for _, bl := range t.g.Nodes[i].Blocks {
			if bl.Type == "tool_result" {
				st.results[bl.ToolUseID] = i
			}
		}
	}
	x.last = ""
	defer func() { x.last = "" }()
	return x.conversation(st, depth)
}

// strays writes, after every branch, what no call of the transcript led
// to, as --branches writes every entry: the inline subagent entries, then
// the family's subagent transcripts (the warmup runs of 2.0.x, say).
func (x *exporter) strays(t *transcript) error {
	var rest []int
	for i := range t.g.Nodes {
		if t.g.Nodes[i].Sidechain && !x.inlined[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		x.last = ""
		x.r.endMessage()
		c := toolCall{Name: "subagents", Summary: fmt.Sprintf("%d inline subagent %s that no call on the transcript started", len(rest), plural.Of(len(rest), "entry"))}
		if err := x.r.tool(c, func() error { return x.inline(t, rest, 1) }); err != nil {
			return err
		}
	}
	if x.fam.Layout == nil {
		return nil
	}
	for _, f := range x.fam.Layout.Files {
		if f.Kind == store.KindSession || f.Side() || x.used[f.Path] {
			continue
		}
		x.last = ""
		x.r.endMessage()
		if err := x.subagentCall(f, filepath.Base(f.Path)+", which no call on the transcript started"); err != nil {
			return err
		}
	}
	return nil
}

// subagentCall writes the subagent transcript f as a folded call whose
// body is its conversation.
func (x *exporter) subagentCall(f store.File, summary string) error {
	c := toolCall{Name: "subagent", Summary: summary, Agent: f.Path}
	return x.r.tool(c, func() error {
		st, err := x.open(f, true)
		if err != nil {
			return err
		}
		defer st.close()
		x.last = ""
		defer func() { x.last = "" }()
		return x.conversation(st, 1)
	})
}

// agents indexes the family's subagent transcripts (not side files) for
// finding the one a call started: by agent id, and, read once each when
// first needed, by the call their .meta.json names and by their first
// prompt. Each lists the files in file order.
type agents struct {
	files          []store.File
	byAgent        map[string][]int
	calls, prompts map[string][]int
	candidates     []int
	redact         func(string) string // prompts are matched redacted
}

func (x *exporter) agentIndex() *agents {
	if x.agents != nil {
		return x.agents
	}
	ix := &agents{files: x.fam.Layout.Files, byAgent: map[string][]int{}, redact: x.opts.redactText}
	for k, f := range ix.files {
		if f.Kind == store.KindSession || f.Side() {
			continue
		}
		ix.candidates = append(ix.candidates, k)
		if f.Agent != "" {
			ix.byAgent[f.Agent] = append(ix.byAgent[f.Agent], k)
		}
	}
	x.agents = ix
	return ix
}

func (ix *agents) byCall() map[string][]int {
	if ix.calls == nil {
		ix.calls = map[string][]int{}
		for _, k := range ix.candidates {
			if m, _ := show.MetaOf(ix.files[k].Path); m.ToolUseID != "" {
				ix.calls[m.ToolUseID] = append(ix.calls[m.ToolUseID], k)
			}
		}
	}
	return ix.calls
}

func (ix *agents) byPrompt() map[string][]int {
	if ix.prompts == nil {
		ix.prompts = map[string][]int{}
		for _, k := range ix.candidates {
			if p := ix.redact(firstPrompt(ix.files[k].Path)); p != "" {
				ix.prompts[p] = append(ix.prompts[p], k)
			}
		}
	}
	return ix.prompts
}

// descendants returns root and the sidechain nodes under it, in file order.
func descendants(g *session.Graph, root int) []int {
	in := map[int]bool{root: true}
	out := []int{root}
	for i := root + 1; i < len(g.Nodes); i++ {
		n := &g.Nodes[i]
		if !n.Sidechain {
			continue
		}
		if p := g.Lookup(n.Parent); p >= 0 && in[p] {
			in[i] = true
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// firstPrompt returns the prompt of a subagent transcript's first user
// entry.
func firstPrompt(path string) string {
	fh, err := rfile.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	for k := 0; k < 16 && rd.Next(); k++ {
		var v struct {
			Type    string `json:"type"`
			Message struct {
				Content any `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(rd.Line().Raw, &v) == nil && v.Type == "user" {
			return promptText(v.Message.Content)
		}
	}
	return ""
}

// summary is the one line that stands for a tool call when folded.
func summary(name string, input json.RawMessage) string {
	var m map[string]any
	json.Unmarshal(input, &m)
	for _, k := range []string{"description", "command", "file_path", "path", "pattern", "url", "query", "prompt", "subject"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			s = strings.TrimSpace(s)
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[:i] + " …"
			}
			if len([]rune(s)) > 100 {
				s = string([]rune(s)[:100]) + "…"
			}
			return s
		}
	}
	return ""
}

func prettyJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// renderer writes one format.
type renderer interface {
	begin(h header)
	message(role, model, ts string, other bool)
	endMessage()
	text(s string)
	folded(title, body, class string)
	// tool writes a call and its result; sub, when not nil, writes the
	// subagent's conversation inside it.
	tool(c toolCall, sub func() error) error
	note(kind, body, ts string, other bool)
	// attachment writes an attachment's line; a body (Options.Attachments
	// AttachAll) is folded under it.
	attachment(a Attachment, body, ts string, other bool)
	compaction(s, ts string)
	// turn heads the prompt that starts turn n (cfix fork --turn n).
	turn(n int)
	// forkStart and forkEnd mark a message a fork can end at
	// (Options.Anchors): before its heading, and after it with the
	// entry the fork ends at.
	forkStart()
	forkEnd(uuid string)
	end()
}
