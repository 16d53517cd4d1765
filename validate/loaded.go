package validate

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// Loaded is what cfix models a resume of one transcript to load.
type Loaded struct {
	Version string // the version that wrote the file's last chain entry
	Loader  string // the loader model used (session.Loaders)
	// UUIDs lists the entries the client loads, in the order it sends
	// them: the walk back from the leaf with the recovered parallel
	// entries after their anchors, before the client's own normalization.
	UUIDs []string
	// DroppedToolUses are the tool_use ids on that chain that have no
	// result there and that the client removes before sending.
	DroppedToolUses []string
	// Cut reports that the walk stopped at a parent the file does not
	// hold; Cycle that it stopped at an entry it had seen.
	Cut, Cycle bool
}

// LoadedChain reads the transcript at path and returns what a resume by
// the client that wrote it loads.
func LoadedChain(path string) (*Loaded, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	c := NewChainReader()
	rd := session.NewReader(fh, nil)
	for rd.Next() {
		c.Line(rd.Line())
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	out, _ := c.Load(strings.HasPrefix(filepath.Base(path), "agent-"))
	return out, nil
}

// ChainReader builds the parentUuid graph of one transcript a line at a
// time, as LoadedChain reads it, for readers that take more of each line
// in the same pass. Each node keeps where its record sits in the file
// (Off, Len, Rec).
type ChainReader struct {
	Graph *session.Graph
	// Version is the version of the last chain entry that names one.
	Version string
	p       *session.Parser
	e       session.Entry
}

// NewChainReader returns an empty ChainReader.
func NewChainReader() *ChainReader {
	p := session.NewParser()
	p.Header = true
	return &ChainReader{Graph: session.NewGraph(), p: p}
}

// Line takes in one line of the transcript, in file order.
func (c *ChainReader) Line(ln session.Line) {
	raw := ln.Raw
	if bytes.IndexByte(raw, 0) >= 0 {
		raw = bytes.ReplaceAll(raw, []byte{0}, nil) // as validate reads it
	}
	// Most lines hold one sound object: Scan reads its header without
	// building its tree.
	if _, ok := c.p.Scan(raw, chainShaper, &c.e); ok && c.e.Type != "fork-context-ref" {
		c.record(ln, raw, 0, nil)
		return
	}
	r := c.p.Parse(raw)
	if r.Err != nil {
		return // the loader skips lines it cannot parse
	}
	for k, v := range append([]any{r.Value}, r.More...) {
		if session.HeaderOf(v, &c.e) {
			c.record(ln, raw, k, r.Spans)
		}
	}
}

// chainShaper counts no field: Scan reads the header and checks the rest.
var chainShaper = session.NewShaper(nil, map[string]bool{})

// record takes in c.e, the header of record k of line ln (raw: the line
// without its NUL bytes; spans: where its records are, when it holds
// several).
func (c *ChainReader) record(ln session.Line, raw []byte, k int, spans [][2]int) {
	if !c.e.IsChain() {
		c.Graph.Meta(&c.e, ln.N)
		if c.e.Type == "fork-context-ref" {
			c.forkRef(raw, spans, k, ln.N)
		}
		return
	}
	if c.e.Version != "" {
		c.Version = c.e.Version
	}
	if c.Graph.Add(&c.e, ln.N) {
		n := &c.Graph.Nodes[len(c.Graph.Nodes)-1]
		n.Rec, n.Off, n.Len, n.Terminated = k, ln.Offset, len(ln.Raw), ln.Terminated
		if ln.Long != nil {
			// Its skeleton's offsets are not the file's: the node
			// names the whole line.
			n.Len, n.Long = int(ln.Long.Size), true
		} else if len(spans) > 1 && k < len(spans) {
			start, end := spans[k][0], spans[k][1]
			if len(raw) != len(ln.Raw) {
				start, end = withNULs(ln.Raw, start), withNULs(ln.Raw, end-1)+1
			}
			n.Off, n.Len = ln.Offset+int64(start), end-start
		}
	}
}

// forkRef records the fork-context-ref of record k of a line (the
// parser keeps only the header fields: the line is read again, rarely).
func (c *ChainReader) forkRef(raw []byte, spans [][2]int, k, line int) {
	if len(spans) > 1 && k < len(spans) {
		raw = raw[spans[k][0]:spans[k][1]]
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	if f, ok := session.ForkRefOf(v, line); ok {
		c.Graph.Fork = &f
	}
}

// withNULs maps offset i of line with its NUL bytes taken out to the
// offset of the same byte in line.
func withNULs(line []byte, i int) int {
	j := 0
	for ; j < len(line); j++ {
		if line[j] == 0 {
			continue
		}
		if i == 0 {
			break
		}
		i--
	}
	return j
}

// Load returns what a resume by the client that wrote the transcript
// loads, and the loader's own account of it (node indexes of Graph).
// Subagent transcripts pass agent true.
func (c *ChainReader) Load(agent bool) (*Loaded, session.Load) {
	g := c.Graph
	l := session.LoaderFor(c.Version)
	ld := g.Load(l, agent)
	out := &Loaded{Version: c.Version, Loader: l.Name, Cut: ld.Cut >= 0, Cycle: ld.Cycle}
	results := map[string]bool{}
	for _, i := range ld.Chain {
		out.UUIDs = append(out.UUIDs, g.Nodes[i].UUID)
		for _, b := range g.Nodes[i].Blocks {
			if b.Type == "tool_result" {
				results[b.ToolUseID] = true
			}
		}
	}
	if l.DropsUnanswered {
		for _, i := range ld.Chain {
			for _, b := range g.Nodes[i].Blocks {
				if b.Type == "tool_use" && b.ID != "" && !results[b.ID] {
					out.DroppedToolUses = append(out.DroppedToolUses, b.ID)
				}
			}
		}
	}
	return out, ld
}
