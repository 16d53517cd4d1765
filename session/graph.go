package session

// Node is one chain entry of a file, as the parentUuid graph keeps it.
type Node struct {
	UUID    string
	Parent  string
	Logical string // logicalParentUuid
	Line    int
	Rec     int // index of the record on its line (records glued together)
	// Where the line is in the file, for planners that rewrite it.
	Off        int64
	Len        int
	Terminated bool
	// Long: the line is longer than MaxLine: Off and Len name the whole
	// line, which is never read whole (ReadSkeleton reads it again).
	Long      bool
	Time      string
	Type      string
	Subtype   string // of a system entry
	Sidechain bool
	MsgID     string
	Model     string  // message.model of an assistant entry
	Blocks    []Block // the blocks KeepBlock keeps
	// BlankOnly: message.content is a list of text blocks, each of them
	// blank (empty or whitespace only).
	BlankOnly bool
	// BlankString: message.content is a string, empty or whitespace only
	// (EmptyString: "").
	BlankString, EmptyString bool
	// Attach: the AttachRules an attachment entry breaks (set by the
	// reader that has the line, see AttachmentFaults).
	Attach AttachFaults
}

// KeepBlock reports whether a node keeps a content block: tool calls and
// results (server tools' too), thinking, and blank text.
func KeepBlock(b Block) bool {
	switch b.Type {
	case "tool_use", "server_tool_use", "mcp_tool_use", "tool_result", "thinking":
		return true
	case "text":
		return b.Blank
	}
	return ServerResult(b.Type)
}

// BlankOnly reports whether blocks are text blocks, at least one, all of
// them blank.
func BlankOnly(blocks []Block) bool {
	for _, b := range blocks {
		if b.Type != "text" || !b.Blank {
			return false
		}
	}
	return len(blocks) > 0
}

// Graph is the parentUuid forest of one file. Add nodes in file order.
type Graph struct {
	Nodes []Node
	index map[string]int32 // uuid → first node with it
	// LastPrompt is the leafUuid of the file's last last-prompt entry, and
	// LastPromptLine its line: newer clients resume from that entry when
	// no message is written after the line (see Loader.LeafLastPrompt).
	LastPrompt     string
	LastPromptLine int
	// Fork is the file's fork-context-ref (a forked subagent's): the
	// context its load puts before its chain (see ForkRef). Nil for
	// others.
	Fork *ForkRef
}

// Meta takes in what the graph needs of a metadata entry (one that is not
// part of the chain) read at line: a last-prompt's leafUuid.
func (g *Graph) Meta(e *Entry, line int) {
	if e.Type == "last-prompt" && e.LeafUUID != "" {
		g.LastPrompt, g.LastPromptLine = e.LeafUUID, line
	}
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return NewGraphSize(0) }

// NewGraphSize returns an empty graph with room for n nodes.
func NewGraphSize(n int) *Graph {
	return &Graph{Nodes: make([]Node, 0, n), index: make(map[string]int32, n)}
}

// Add adds a chain entry read at line. It reports false, adding nothing,
// when the uuid was already added (a duplicate).
func (g *Graph) Add(e *Entry, line int) bool {
	if _, dup := g.index[e.UUID]; dup {
		return false
	}
	n := Node{UUID: e.UUID, Parent: e.Parent, Logical: e.LogicalParent, Line: line,
		Time: e.Timestamp, Type: e.Type, Subtype: e.Subtype, Sidechain: e.IsSidechain, MsgID: e.MessageID, Model: e.Model,
		BlankOnly: BlankOnly(e.Blocks), BlankString: e.BlankString, EmptyString: e.EmptyString}
	for _, b := range e.Blocks {
		if KeepBlock(b) {
			n.Blocks = append(n.Blocks, b)
		}
	}
	g.index[e.UUID] = int32(len(g.Nodes))
	g.Nodes = append(g.Nodes, n)
	return true
}

// AddNode adds a node as it is. It reports false, adding nothing, when its
// uuid was already added.
func (g *Graph) AddNode(n Node) bool {
	if _, dup := g.index[n.UUID]; dup {
		return false
	}
	g.index[n.UUID] = int32(len(g.Nodes))
	g.Nodes = append(g.Nodes, n)
	return true
}

// Children returns, for each node, the indexes of the nodes naming it as
// parent.
func (g *Graph) Children() [][]int {
	ch := make([][]int, len(g.Nodes))
	for i := range g.Nodes {
		if p := g.Nodes[i].Parent; p != "" {
			if j := g.Lookup(p); j >= 0 {
				ch[j] = append(ch[j], i)
			}
		}
	}
	return ch
}

// Lookup returns the node index of uuid, or -1.
func (g *Graph) Lookup(uuid string) int {
	if i, ok := g.index[uuid]; ok {
		return int(i)
	}
	return -1
}

// Has reports whether uuid is a node of the graph.
func (g *Graph) Has(uuid string) bool { _, ok := g.index[uuid]; return ok }

// Dangling lists the nodes whose parentUuid names no node of the graph.
func (g *Graph) Dangling() []int {
	var out []int
	for i := range g.Nodes {
		if p := g.Nodes[i].Parent; p != "" && !g.Has(p) {
			out = append(out, i)
		}
	}
	return out
}

// Cycles returns one node of each parentUuid cycle (a self-parent is a
// cycle of one), the node with the lowest line number in the cycle.
func (g *Graph) Cycles() [][]int {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.Nodes))
	var cycles [][]int
	var path []int
	for start := range g.Nodes {
		if color[start] != white {
			continue
		}
		path = path[:0]
		i := start
		for i >= 0 && color[i] == white {
			color[i] = grey
			path = append(path, i)
			i = g.Lookup(g.Nodes[i].Parent)
			if g.Nodes[path[len(path)-1]].Parent == "" {
				i = -1
			}
		}
		if i >= 0 && color[i] == grey {
			// Found a cycle: the part of path from i on.
			var cyc []int
			for k := len(path) - 1; k >= 0; k-- {
				cyc = append(cyc, path[k])
				if path[k] == i {
					break
				}
			}
			cycles = append(cycles, cyc)
		}
		for _, k := range path {
			color[k] = black
		}
	}
	return cycles
}

// Leaf returns the node a resume starts from: among the nodes no other node
// names as parent, the one with the latest timestamp (the later line on a
// tie). Sidechain and progress nodes are skipped unless includeSidechain
// (subagent files are all sidechain). It returns -1 for an empty graph.
func (g *Graph) Leaf(includeSidechain bool) int {
	isParent := make([]bool, len(g.Nodes))
	for i := range g.Nodes {
		if p := g.Lookup(g.Nodes[i].Parent); p >= 0 && g.Nodes[i].Parent != "" {
			isParent[p] = true
		}
	}
	best := -1
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if isParent[i] || n.Type == "progress" || (n.Sidechain && !includeSidechain) {
			continue
		}
		if best < 0 || n.Time >= g.Nodes[best].Time {
			best = i
		}
	}
	return best
}

// Walk returns the chain a resume loads from leaf: the leaf and its
// ancestors, root first. It stops at a null or missing parent and at a
// node already visited (a cycle). end is the index of the oldest node
// reached; truncated reports that its parentUuid names a missing node.
func (g *Graph) Walk(leaf int) (chain []int, truncated bool) {
	if leaf < 0 {
		return nil, false
	}
	seen := make(map[int]bool)
	for i := leaf; i >= 0 && !seen[i]; {
		seen[i] = true
		chain = append(chain, i)
		p := g.Nodes[i].Parent
		if p == "" {
			break
		}
		j := g.Lookup(p)
		if j < 0 {
			truncated = true
			break
		}
		i = j
	}
	for a, b := 0, len(chain)-1; a < b; a, b = a+1, b-1 {
		chain[a], chain[b] = chain[b], chain[a]
	}
	return chain, truncated
}

// SiblingResults returns the entries off the chain that hold tool_results
// for tool_uses on it: with parallel tool calls some versions chain every
// result but the last to the assistant entry of its own tool_use, beside
// the chain, and a resume loads them all. It maps each such node to true
// and returns the tool_use ids they answer.
func (g *Graph) SiblingResults(chain []int) (nodes map[int]bool, ids map[string]bool) {
	on := make(map[int]bool, len(chain))
	uses := map[string]bool{}
	for _, i := range chain {
		on[i] = true
		for _, b := range g.Nodes[i].Blocks {
			if b.Type == "tool_use" && b.ID != "" {
				uses[b.ID] = true
			}
		}
	}
	nodes, ids = map[int]bool{}, map[string]bool{}
	children := g.Children()
	for _, i := range chain {
		for _, c := range children[i] {
			if on[c] || g.Nodes[c].Type != "user" {
				continue
			}
			results, all := 0, true
			for _, b := range g.Nodes[c].Blocks {
				if b.Type == "tool_result" {
					results++
					all = all && uses[b.ToolUseID]
				}
			}
			if results == 0 || !all || len(children[c]) > 0 {
				continue
			}
			nodes[c] = true
			for _, b := range g.Nodes[c].Blocks {
				if b.Type == "tool_result" {
					ids[b.ToolUseID] = true
				}
			}
		}
	}
	return nodes, ids
}

// Reachable marks the nodes a resume from leaf accounts for: the resumed
// chain plus, across compact boundaries (logicalParentUuid), the history
// that compaction summarized.
func (g *Graph) Reachable(leaf int) []bool {
	reach := make([]bool, len(g.Nodes))
	for i := leaf; i >= 0 && !reach[i]; {
		reach[i] = true
		n := &g.Nodes[i]
		p := n.Parent
		if p == "" {
			p = n.Logical
		}
		if p == "" {
			break
		}
		i = g.Lookup(p)
	}
	return reach
}
