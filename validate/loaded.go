package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

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
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	g := session.NewGraph()
	p := session.NewParser()
	p.Header = true
	var e session.Entry
	version := ""
	rd := session.NewReader(fh, nil)
	for rd.Next() {
		ln := rd.Line()
		raw := ln.Raw
		if bytes.IndexByte(raw, 0) >= 0 {
			raw = bytes.ReplaceAll(raw, []byte{0}, nil) // as validate reads it
		}
		r := p.Parse(raw)
		if r.Err != nil {
			continue // the loader skips lines it cannot parse
		}
		for _, v := range append([]any{r.Value}, r.More...) {
			if !session.HeaderOf(v, &e) {
				continue
			}
			if !e.IsChain() {
				g.Meta(&e, ln.N)
				continue
			}
			if e.Version != "" {
				version = e.Version
			}
			g.Add(&e, ln.N)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	agent := strings.HasPrefix(filepath.Base(path), "agent-")
	l := session.LoaderFor(version)
	ld := g.Load(l, agent)
	out := &Loaded{Version: version, Loader: l.Name, Cut: ld.Cut >= 0, Cycle: ld.Cycle}
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
	return out, nil
}
