package session

import "encoding/json"

// ForkRef is what a fork-context-ref entry says. 2.1.220 and later write
// one in the transcript of a subagent forked from its session's
// conversation, instead of copying that conversation into it: when the
// client loads the subagent (to resume it or send it more), it reads the
// parent session's transcript, walks back from ParentLast to the root,
// and puts those entries (sidechain ones aside) before the subagent's own
// chain. When the parent's transcript does not hold ParentLast the client
// loads no context at all (it logs a warning and goes on). The entry is
// metadata: it has no uuid and is no part of the subagent's chain.
type ForkRef struct {
	ParentSession string // parentSessionId
	ParentLast    string // parentLastUuid
	// Length is contextLength: the messages of context the parent's
	// conversation held when the subagent was forked (its in-memory count,
	// which can differ a little from the entries the walk finds).
	Length int
	Line   int // the line of the entry
}

// ForkRefOf reads a fork-context-ref entry read at line from its decoded
// (or light) tree; false when v is no such entry or names no parent.
func ForkRefOf(v any, line int) (ForkRef, bool) {
	m, ok := v.(map[string]any)
	if !ok || str(m["type"]) != "fork-context-ref" {
		return ForkRef{}, false
	}
	r := ForkRef{ParentSession: str(m["parentSessionId"]), ParentLast: str(m["parentLastUuid"]), Line: line}
	switch n := m["contextLength"].(type) {
	case float64:
		r.Length = int(n)
	case int64:
		r.Length = int(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			r.Length = int(i)
		}
	}
	return r, r.ParentSession != "" && r.ParentLast != ""
}

// ForkContext returns the nodes of g, the parent session's graph, that a
// load of a subagent forked at ref puts before the subagent's own chain,
// root first: the walk back by parentUuid from ref.ParentLast, sidechain
// entries left out. ok is false when g does not hold ref.ParentLast: the
// client then loads no context.
func (g *Graph) ForkContext(ref ForkRef) (nodes []int, ok bool) {
	i := g.Lookup(ref.ParentLast)
	if i < 0 {
		return nil, false
	}
	seen := map[int]bool{}
	for i >= 0 && !seen[i] {
		seen[i] = true
		if !g.Nodes[i].Sidechain {
			nodes = append(nodes, i)
		}
		if g.Nodes[i].Parent == "" {
			break
		}
		i = g.Lookup(g.Nodes[i].Parent)
	}
	for a, b := 0, len(nodes)-1; a < b; a, b = a+1, b-1 {
		nodes[a], nodes[b] = nodes[b], nodes[a]
	}
	return nodes, true
}
