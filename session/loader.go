package session

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Loader models how one range of Claude Code versions rebuilds the
// conversation from a transcript when it resumes it (`claude -r ID`):
// which entries are messages, which one the resume starts from, how it
// walks back, and what it puts back beside the walk.
type Loader struct {
	// Name names the model: the range of versions it describes.
	Name string
	// WalkProgress: the walk back passes through progress entries. Without
	// it (1.0.x, 2.0.x) progress entries are not loaded at all and a chain
	// that runs through one stops there.
	WalkProgress bool
	// LeafProgress: progress entries are messages, and so candidates for
	// the entry a resume starts from (2.1.0 to 2.1.84). From 2.1.85 they
	// are bridged: a message whose parentUuid names one is linked to the
	// progress run's nearest ancestor that is not progress.
	LeafProgress bool
	// LeafSidechain: sidechain entries of a main transcript are candidates
	// too (1.0.x, which then sends the sidechain entry).
	LeafSidechain bool
	// LeafLastWritten: the resume starts from the message written last in
	// the file (2.1.101 and later), not from the one with the latest
	// timestamp.
	LeafLastWritten bool
	// LeafLastPrompt: the resume starts from the entry the file's last
	// last-prompt entry names (its leafUuid), when it names a message and
	// no message is written after it; else as LeafLastWritten (2.1.120 and
	// later).
	LeafLastPrompt bool
	// RelinkRecent: a message whose parent the file does not hold is
	// linked to the message written right before it, when that one is
	// less than 5 seconds older (2.1.91 and later).
	RelinkRecent bool
	// RecoverParallel: after the walk, assistant entries that share a
	// message.id with an assistant entry on the chain, and tool results
	// whose parent is one of them, are put back right after the chain's
	// last entry of that message (recoverOrphanedParallelToolResults,
	// 2.1.80 and later).
	RecoverParallel bool
	// RecoverSiblings: after the walk, tool results that share their
	// parent with a tool result on the chain (the results of the calls of
	// one assistant entry, each written as a child of it: three calls in
	// one entry, as some non-Anthropic endpoints stream them) are put back
	// right before it, in the order of the calls they answer (2.1.30 to
	// 2.1.79; RecoverParallel puts them back from 2.1.80 on).
	RecoverSiblings bool
	// DropsUnanswered: before sending, the client removes tool_use blocks
	// that have no tool_result (the request is accepted; the call is gone
	// from what the model sees). Without it the client would send them and
	// the API would answer 400.
	DropsUnanswered bool
	// DropsOrphanResults: the client removes a tool_result whose tool_use
	// it did not load (2.1.x: drops it, later replaces it with a text).
	// Without it (1.0.x, 2.0.x) it sends the result and the API answers 400.
	DropsOrphanResults bool
}

// Loaders are the models cfix knows, oldest first; each applies from its
// From version up to the next one's. Each boundary was measured with the
// real clients on crafted and wild transcripts (e2e/oracle_test.go): the
// last version before it behaves as the model before, the first at it as
// the model after.
var Loaders = []struct {
	From   string
	Loader Loader
}{
	{"0", Loader{Name: "1.0.x", LeafSidechain: true, DropsUnanswered: true}},
	{"2.0.0", Loader{Name: "2.0.x", DropsUnanswered: true}},
	{"2.1.0", Loader{Name: "2.1.0-2.1.29", WalkProgress: true, LeafProgress: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.30", Loader{Name: "2.1.30-2.1.79", WalkProgress: true, LeafProgress: true, RecoverSiblings: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.80", Loader{Name: "2.1.80-2.1.84", WalkProgress: true, LeafProgress: true, RecoverParallel: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.85", Loader{Name: "2.1.85-2.1.90", WalkProgress: true, RecoverParallel: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.91", Loader{Name: "2.1.91-2.1.100", WalkProgress: true, RelinkRecent: true, RecoverParallel: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.101", Loader{Name: "2.1.101-2.1.119", WalkProgress: true, LeafLastWritten: true, RelinkRecent: true, RecoverParallel: true, DropsUnanswered: true, DropsOrphanResults: true}},
	{"2.1.120", Loader{Name: "2.1.120 and later", WalkProgress: true, LeafLastWritten: true, LeafLastPrompt: true, RelinkRecent: true, RecoverParallel: true, DropsUnanswered: true, DropsOrphanResults: true}},
}

// LoaderFor returns the model of the client version that wrote a file.
// An unknown or empty version gets the newest model.
func LoaderFor(version string) Loader {
	l := Loaders[len(Loaders)-1].Loader
	if version == "" {
		return l
	}
	for _, c := range Loaders {
		if VersionLess(version, c.From) {
			break
		}
		l = c.Loader
	}
	return l
}

// VersionLess reports whether version a is older than b (dotted numbers;
// a part that is not a number counts as 0).
func VersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(strings.TrimFunc(pa[i], notDigit))
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(strings.TrimFunc(pb[i], notDigit))
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// IsMessage reports whether an entry of type typ is a message the loader
// keeps (and may start a resume from or walk through).
func (l Loader) IsMessage(typ string) bool {
	switch typ {
	case "user", "assistant", "system", "attachment":
		return true
	case "progress":
		return l.LeafProgress
	}
	return false
}

// Load is what a resume loads from a graph.
type Load struct {
	// Leaf is the node the resume starts from, -1 when there is none.
	Leaf int
	// Chain lists the nodes the client loads, in the order it sends them:
	// the walk from the root (or the first node whose parent is missing)
	// to Leaf, with recovered parallel entries after their anchor.
	Chain []int
	// Walked is the number of nodes of Chain that the walk reached (the
	// rest were recovered).
	Walked int
	// Recovered marks the nodes put back beside the walk.
	Recovered map[int]bool
	// Cut is the node whose parentUuid names no message: the walk stopped
	// there. -1 when the walk reached a root.
	Cut int
	// Cycle reports that the walk stopped at a node it had already seen.
	Cycle bool
}

// parentOf returns the node index the loader links node i to, following
// parentUuid through progress entries when the loader bridges them: -1 for
// a root, -2 when the parent names no message.
func (g *Graph) parentOf(l Loader, i int) int {
	seen := 0
	for p := g.Nodes[i].Parent; p != ""; {
		j := g.Lookup(p)
		if j < 0 {
			return -2
		}
		if l.IsMessage(g.Nodes[j].Type) {
			return j
		}
		if g.Nodes[j].Type != "progress" || !l.WalkProgress {
			return -2 // an entry the loader does not keep
		}
		p = g.Nodes[j].Parent
		if seen++; seen > len(g.Nodes) {
			return -2
		}
	}
	return -1
}

// Load models a resume of the graph by loader l. Subagent transcripts
// (all entries sidechain) pass agent true; a main transcript's resume
// starts from its latest entry that is not sidechain.
func (g *Graph) Load(l Loader, agent bool) Load {
	ld := Load{Leaf: -1, Cut: -1}
	if l.LeafLastPrompt && g.LastPrompt != "" {
		trailing := true // no message written after the last-prompt line
		for i := range g.Nodes {
			if n := &g.Nodes[i]; n.Line > g.LastPromptLine && l.IsMessage(n.Type) && (agent || !n.Sidechain) {
				trailing = false
				break
			}
		}
		if i := g.Lookup(g.LastPrompt); trailing && i >= 0 && l.IsMessage(g.Nodes[i].Type) {
			ld.Leaf = i
		}
	}
	switch {
	case ld.Leaf >= 0:
	case l.LeafLastWritten:
		for i := range g.Nodes {
			if n := &g.Nodes[i]; l.IsMessage(n.Type) && (agent || !n.Sidechain) {
				ld.Leaf = i
			}
		}
	default:
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if !l.IsMessage(n.Type) || (n.Sidechain && !agent && !l.LeafSidechain) || n.Time == "" {
				continue
			}
			// findLatestMessage: the first of equal timestamps wins.
			if ld.Leaf < 0 || n.Time > g.Nodes[ld.Leaf].Time {
				ld.Leaf = i
			}
		}
	}
	if ld.Leaf < 0 {
		return ld
	}
	seen := map[int]bool{}
	var walk []int
	for i := ld.Leaf; ; {
		if seen[i] {
			ld.Cycle = true
			break
		}
		seen[i] = true
		walk = append(walk, i)
		p := g.parentOf(l, i)
		if p == -2 && l.RelinkRecent {
			p = g.recentBefore(l, i)
		}
		if p == -2 {
			ld.Cut = i
			break
		}
		if p < 0 {
			break
		}
		i = p
	}
	for a, b := 0, len(walk)-1; a < b; a, b = a+1, b-1 {
		walk[a], walk[b] = walk[b], walk[a]
	}
	ld.Walked = len(walk)
	ld.Chain = walk
	switch {
	case l.RecoverParallel:
		ld.Chain, ld.Recovered = g.recoverParallel(l, walk, seen)
	case l.RecoverSiblings:
		ld.Chain, ld.Recovered = g.recoverSiblings(l, walk, seen)
	}
	return ld
}

// recoverSiblings puts back, right before each tool result on the walk,
// the tool results off it that share its parent, in the order of the
// calls of that parent they answer (then in file order).
func (g *Graph) recoverSiblings(l Loader, walk []int, seen map[int]bool) ([]int, map[int]bool) {
	at := map[int]int{} // parent → the walked tool result under it
	for _, i := range walk {
		if n := &g.Nodes[i]; n.Type == "user" && n.hasResult() {
			if p := g.parentOf(l, i); p >= 0 {
				if _, ok := at[p]; !ok {
					at[p] = i
				}
			}
		}
	}
	if len(at) == 0 {
		return walk, nil
	}
	inserts := map[int][]int{} // walked result → siblings put before it
	recovered := map[int]bool{}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if seen[i] || n.Type != "user" || n.Parent == "" || !n.hasResult() {
			continue
		}
		p := g.parentOf(l, i)
		w, ok := at[p]
		if p < 0 || !ok || n.Sidechain != g.Nodes[w].Sidechain {
			continue
		}
		inserts[w] = append(inserts[w], i)
		recovered[i] = true
	}
	if len(recovered) == 0 {
		return walk, nil
	}
	out := make([]int, 0, len(walk)+len(recovered))
	for _, i := range walk {
		if sibs := inserts[i]; len(sibs) > 0 {
			calls := g.Nodes[g.parentOf(l, i)].Blocks
			pos := func(j int) int {
				for _, b := range g.Nodes[j].Blocks {
					if b.Type != "tool_result" {
						continue
					}
					for k, c := range calls {
						if c.ID != "" && c.ID == b.ToolUseID {
							return k
						}
					}
				}
				return len(calls)
			}
			sort.SliceStable(sibs, func(a, b int) bool { return pos(sibs[a]) < pos(sibs[b]) })
			out = append(out, sibs...)
		}
		out = append(out, i)
	}
	return out, recovered
}

// recentBefore returns the message written right before node i in the
// file when it is less than 5 seconds older than i: where newer loaders
// link a message whose parent the file does not hold. -2 when there is
// none.
func (g *Graph) recentBefore(l Loader, i int) int {
	t, err := time.Parse(time.RFC3339Nano, g.Nodes[i].Time)
	if err != nil {
		return -2
	}
	for j := i - 1; j >= 0; j-- {
		n := &g.Nodes[j]
		if !l.IsMessage(n.Type) || n.Sidechain != g.Nodes[i].Sidechain {
			continue
		}
		pt, err := time.Parse(time.RFC3339Nano, n.Time)
		if err != nil || t.Sub(pt) >= 5*time.Second {
			return -2
		}
		return j
	}
	return -2
}

// recoverParallel puts back, after the last assistant entry of the chain
// with a given message.id, the entries of that id off the chain and the
// tool results whose parent is one of them, each group sorted by time.
func (g *Graph) recoverParallel(l Loader, chain []int, seen map[int]bool) ([]int, map[int]bool) {
	anchor := map[string]int{}
	for _, i := range chain {
		if n := &g.Nodes[i]; n.Type == "assistant" && n.MsgID != "" {
			anchor[n.MsgID] = i
		}
	}
	if len(anchor) == 0 {
		return chain, nil
	}
	group := map[string][]int{}
	results := map[int][]int{} // parent node → tool result nodes under it
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !l.IsMessage(n.Type) {
			continue
		}
		switch {
		case n.Type == "assistant" && n.MsgID != "":
			if _, ok := anchor[n.MsgID]; ok {
				group[n.MsgID] = append(group[n.MsgID], i)
			}
		case n.Type == "user" && n.Parent != "" && n.hasResult():
			if p := g.parentOf(l, i); p >= 0 {
				results[p] = append(results[p], i)
			}
		}
	}
	inserts := map[int][]int{}
	recovered := map[int]bool{}
	done := map[string]bool{}
	for _, i := range chain {
		id := g.Nodes[i].MsgID
		if g.Nodes[i].Type != "assistant" || id == "" || done[id] {
			continue
		}
		done[id] = true
		var sibs, trs []int
		for _, m := range group[id] {
			if !seen[m] {
				sibs = append(sibs, m)
			}
			for _, r := range results[m] {
				if !seen[r] {
					trs = append(trs, r)
				}
			}
		}
		if len(sibs)+len(trs) == 0 {
			continue
		}
		byTime := func(s []int) {
			sort.SliceStable(s, func(a, b int) bool { return g.Nodes[s[a]].Time < g.Nodes[s[b]].Time })
		}
		byTime(sibs)
		byTime(trs)
		rec := append(sibs, trs...)
		for _, r := range rec {
			seen[r] = true
			recovered[r] = true
		}
		a := anchor[id]
		inserts[a] = append(inserts[a], rec...)
	}
	if len(recovered) == 0 {
		return chain, nil
	}
	out := make([]int, 0, len(chain)+len(recovered))
	for _, i := range chain {
		out = append(out, i)
		out = append(out, inserts[i]...)
	}
	return out, recovered
}

func (n *Node) hasResult() bool {
	for _, b := range n.Blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}
