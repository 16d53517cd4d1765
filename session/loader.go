package session

import (
	"sort"
	"strconv"
	"strings"
)

// Loader models how one range of Claude Code versions rebuilds the
// conversation from a transcript when it resumes it (`claude -r ID`):
// which entries are messages, which one the resume starts from, how it
// walks back, and what it puts back beside the walk.
type Loader struct {
	// Name names the model: the range of versions it describes.
	Name string
	// BridgeProgress: progress entries are not messages. A message whose
	// parentUuid names one is linked to the progress run's nearest
	// ancestor that is not progress (the loader's progressBridge).
	// Without it, progress entries are messages like any other.
	BridgeProgress bool
	// RecoverParallel: after the walk, assistant entries that share a
	// message.id with an assistant entry on the chain, and tool results
	// whose parent is one of them, are put back right after that entry
	// (recoverOrphanedParallelToolResults).
	RecoverParallel bool
	// DropsUnanswered: before sending, the client removes tool_use blocks
	// that have no tool_result (no request is rejected; the call is gone).
	// Without it, the client sends them and the API answers 400.
	DropsUnanswered bool
}

// Loaders are the models cfix knows, oldest first; each applies from its
// From version up to the next one's. They were measured with the real
// clients (e2e/oracle_test.go).
var Loaders = []struct {
	From   string
	Loader Loader
}{
	{"0", Loader{Name: "1.0.0-2.1.x", DropsUnanswered: true, RecoverParallel: true, BridgeProgress: true}},
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
		return !l.BridgeProgress
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
		if g.Nodes[j].Type != "progress" {
			return -2 // an entry type the loader does not keep
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
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !l.IsMessage(n.Type) || (n.Sidechain && !agent) || n.Time == "" {
			continue
		}
		// findLatestMessage: the first of equal timestamps wins.
		if ld.Leaf < 0 || n.Time > g.Nodes[ld.Leaf].Time {
			ld.Leaf = i
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
	if l.RecoverParallel {
		ld.Chain, ld.Recovered = g.recoverParallel(l, walk, seen)
	}
	return ld
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
