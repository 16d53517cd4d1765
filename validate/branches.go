package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/session"
)

// Branch is a branch of a transcript that a resume does not load: the
// entries from the loaded (or compacted) history out to a leaf, as a
// resume that kept one child of a parent left the other
// (anthropics/claude-code#88597). cfix fork --at Leaf makes it the
// history of a new session.
type Branch struct {
	Leaf     string `json:"leaf"`      // the uuid of its last message
	LeafLine int    `json:"leaf_line"` // its line
	// From is the line of its first entry; Fork the line of the entry of
	// the loaded history it hangs from (0: none, a root of its own).
	From     int    `json:"from_line"`
	Fork     int    `json:"fork_line"`
	Entries  int    `json:"entries"`  // entries on it, not loaded
	Messages int    `json:"messages"` // user and assistant messages among them
	Last     string `json:"last"`     // its last message's timestamp
}

// OtherBranches returns the branches of graph g that a resume loading the
// entries of on (those of reach are behind a compaction) leaves out, each
// ending at a message no other message of such a branch follows, the
// newest first (by leaf line), at most max of them (each is walked back to
// the loaded history), and how many there are in all. off tells the
// messages that count (as chain-forks counts them).
func OtherBranches(g *session.Graph, on, reach []bool, off func(i int) bool, max int) ([]Branch, int) {
	inLoaded := func(i int) bool { return on[i] || reach[i] }
	inner := make([]bool, len(g.Nodes)) // has an off message below it on its branch
	for i := range g.Nodes {
		if !off(i) {
			continue
		}
		for p, steps := g.Lookup(g.Nodes[i].Parent), 0; p >= 0 && !inLoaded(p) && !inner[p] && steps < len(g.Nodes); p, steps = g.Lookup(g.Nodes[p].Parent), steps+1 {
			inner[p] = true
		}
	}
	var leaves []int
	for i := range g.Nodes {
		if off(i) && !inner[i] {
			leaves = append(leaves, i)
		}
	}
	sort.Slice(leaves, func(a, b int) bool { return g.Nodes[leaves[a]].Line > g.Nodes[leaves[b]].Line })
	all := len(leaves)
	if len(leaves) > max {
		leaves = leaves[:max]
	}
	out := make([]Branch, 0, len(leaves))
	for _, i := range leaves {
		n := &g.Nodes[i]
		b := Branch{Leaf: n.UUID, LeafLine: n.Line, From: n.Line, Last: n.Time}
		seen := map[int]bool{}
		for j := i; j >= 0 && !inLoaded(j) && !seen[j]; j = g.Lookup(g.Nodes[j].Parent) {
			seen[j] = true
			b.Entries++
			if off(j) {
				b.Messages++
			}
			b.From = g.Nodes[j].Line
			if p := g.Lookup(g.Nodes[j].Parent); p >= 0 && inLoaded(p) {
				b.Fork = g.Nodes[p].Line
			}
		}
		out = append(out, b)
	}
	return out, all
}

// Lines says where the branch is: "line N" or "lines A-B".
func (b Branch) Lines() string {
	if b.From == b.LeafLine {
		return fmt.Sprintf("line %d", b.From)
	}
	return fmt.Sprintf("lines %d-%d", b.From, b.LeafLine)
}

// describeBranches says what the first branches of g hold, for
// chain-forks.
func describeBranches(g *session.Graph, on, reach []bool, off func(i int) bool) string {
	bs, all := OtherBranches(g, on, reach, off, 3)
	var parts []string
	for _, b := range bs {
		from := "a root of its own"
		if b.Fork > 0 {
			from = fmt.Sprintf("off line %d", b.Fork)
		}
		last := ""
		if b.Last != "" {
			last = ", last message " + b.Last
		}
		parts = append(parts, fmt.Sprintf("%s (%s: %d %s, %d %s%s; cfix fork --at %s resumes it)",
			b.Lines(), from, b.Entries, pl(b.Entries, "entry", "entries"), b.Messages, pl(b.Messages, "message", "messages"), last, shell.Quote(b.Leaf)))
	}
	if all > len(bs) {
		parts = append(parts, fmt.Sprintf("and %d more", all-len(bs)))
	}
	return strings.Join(parts, "; ")
}

func pl(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}
