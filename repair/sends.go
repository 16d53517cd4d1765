package repair

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// attachments removes, along the chain loader l loads, the attachment
// entries that break session.AttachRules (validate's attachment-malformed),
// whichever client wrote them: an attachment is context the client added
// to a turn, never a message or a tool result, and one it cannot read
// attaches nothing. Its children get its parent, so the chain is kept, and
// so do the leafUuids naming it (remove).
func (x *fixer) attachments(l session.Loader) error {
	if !x.allow(validate.AttachMalformed) {
		return nil
	}
	g, idx := x.graph()
	ld := g.Load(l, x.f.Kind != store.KindSession)
	var nodes []int
	for _, gi := range ld.Chain {
		if n := &g.Nodes[gi]; n.Type == "attachment" && n.Attach != 0 {
			nodes = append(nodes, idx[gi])
		}
	}
	s := validate.SendsOf(x.judge())
	for _, i := range nodes {
		if x.deleted[i] {
			continue
		}
		why := "remove an attachment entry Claude Code cannot read (attachment-malformed): it attaches nothing"
		if f := x.nodes[i].Attach & s.AttachCrash; f != 0 {
			why = fmt.Sprintf("remove an attachment entry Claude Code %s throws on, exiting 1 on every resume (attachment-malformed): it attaches nothing", s.Name)
		}
		if err := x.remove(i, why); err != nil {
			return err
		}
	}
	return nil
}

// blankText drops, along the chain loader l loads, the blank text blocks
// the writing version's client sends (validate.Sends): an entry left with
// no block goes, its children re-parented. Blank blocks the client leaves
// out itself stay as Claude Code wrote them.
func (x *fixer) blankText(l session.Loader) error {
	if !x.allow(validate.TextBlank) {
		return nil
	}
	s := validate.SendsOf(x.judge())
	g, idx := x.graph()
	ld := g.Load(l, x.f.Kind != store.KindSession)
	var nodes []int
	for _, gi := range ld.Chain {
		if empty, space := s.BlankSent(&g.Nodes[gi]); empty+space > 0 {
			nodes = append(nodes, idx[gi])
		}
	}
	why := fmt.Sprintf("drop an empty or whitespace-only text block: Claude Code %s sends it and the API answers 400", s.Name)
	for _, i := range nodes {
		var err error
		switch {
		case x.deleted[i]:
		case x.nodes[i].BlankString:
			err = x.remove(i, why+"; the entry is left empty and removed")
		default:
			err = x.dropBlocks(i, blankBlock, why)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// blankBlock selects a text block whose text is empty or whitespace only.
func blankBlock(b map[string]any) bool {
	t, ok := b["text"].(string)
	return b["type"] == "text" && ok && strings.TrimSpace(t) == ""
}

// serverSplits joins, along the chain loader l loads, each server tool
// result to its call when entries the client sends as messages of their
// own sit between them: those entries move after the pair, in their
// order, and what followed the result follows them. A pair that ends the
// chain gets them before the call instead, where a resume still loads
// them. A call the resume does not load, written in the same reply as its
// result but before a compaction, moves to right before the result (the
// compaction's entries stay where they are).
func (x *fixer) serverSplits(l session.Loader) error {
	if !x.allow(validate.ServerToolSplit) {
		return nil
	}
	g, idx := x.graph()
	ld := g.Load(l, x.f.Kind != store.KindSession)
	splits := validate.ServerSplits(g, ld, validate.SendsOf(x.judge()))
	type pair struct {
		call, result int
		id           string
	}
	var pairs []pair
	for _, sp := range splits {
		if sp.Call >= 0 {
			pairs = append(pairs, pair{idx[sp.Call], idx[sp.Result], sp.ID})
			continue
		}
		call := -1
		r := &g.Nodes[sp.Result]
		for i := range x.nodes {
			n := &x.nodes[i]
			if !x.deleted[i] && n.Type == "assistant" && n.MsgID != "" && n.MsgID == r.MsgID && hasServerCall(n, sp.ID) {
				call = i
				break
			}
		}
		if call < 0 {
			x.unfixed[validate.ServerToolSplit]++
			continue
		}
		pairs = append(pairs, pair{call, idx[sp.Result], ""})
	}
	for _, p := range pairs {
		var err error
		if p.id != "" {
			err = x.joinPair(p.call, p.result)
		} else {
			err = x.bringCall(p.call, p.result)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func hasServerCall(n *session.Node, id string) bool {
	for _, b := range n.Blocks {
		if session.ServerCall(b.Type) && b.ID == id {
			return true
		}
	}
	return false
}

// bringCall moves node call, which a resume does not load, to right
// before node result (the same reply's, after a compaction): its children
// get its parent, it gets the result's, and the result follows it.
func (x *fixer) bringCall(call, result int) error {
	c := &x.nodes[call]
	why := "move a server tool call after the compaction that came between it and its result (the compaction's entries stay)"
	for j := range x.nodes {
		if j != result && !x.deleted[j] && x.nodes[j].Parent == c.UUID {
			if err := x.setParent(j, c.Parent, "re-parent over a server tool call moved to its result"); err != nil {
				return err
			}
		}
	}
	// A compaction's link to the history it summarized follows too.
	for j := range x.nodes {
		n := &x.nodes[j]
		if x.deleted[j] || n.Logical != c.UUID || c.Parent == "" {
			continue
		}
		raw, err := x.rec(n)
		if err != nil {
			return err
		}
		val, _ := json.Marshal(c.Parent)
		nb, err := session.SetField(raw, "logicalParentUuid", val)
		if err != nil {
			return err
		}
		n.Logical = c.Parent
		if err := x.setRec(n, nb, "link the compaction to the entry before the server tool call moved after it"); err != nil {
			return err
		}
	}
	if err := x.setParent(call, x.nodes[result].Parent, why); err != nil {
		return err
	}
	return x.setParent(result, c.UUID, why)
}

// joinPair re-links the entries on the parentUuid path from node call to
// node result: the assistant entries of the call's message stay between
// them, the others move after the result (or, when nothing follows the
// result, before the call).
func (x *fixer) joinPair(call, result int) error {
	pos := map[string]int{}
	for i := range x.nodes {
		if !x.deleted[i] {
			pos[x.nodes[i].UUID] = i
		}
	}
	// The path back from the result to the call.
	var between []int
	for cur, steps := result, 0; ; steps++ {
		j, ok := pos[x.nodes[cur].Parent]
		if !ok || x.nodes[cur].Parent == "" || steps > len(x.nodes) {
			x.unfixed[validate.ServerToolSplit]++
			return nil // not on one path: left alone
		}
		if j == call {
			break
		}
		between = append(between, j)
		cur = j
	}
	msgID := x.nodes[call].MsgID
	var keep, move []int
	for k := len(between) - 1; k >= 0; k-- {
		j := between[k]
		if n := &x.nodes[j]; n.Type == "assistant" && n.MsgID != "" && n.MsgID == msgID {
			keep = append(keep, j)
		} else {
			move = append(move, j)
		}
	}
	if len(move) == 0 {
		x.unfixed[validate.ServerToolSplit]++
		return nil
	}
	var after []int // the result's children
	for j := range x.nodes {
		if !x.deleted[j] && x.nodes[j].Parent == x.nodes[result].UUID {
			after = append(after, j)
		}
	}
	var lines []string
	for _, j := range move {
		lines = append(lines, fmt.Sprint(x.nodes[j].Line))
	}
	id := ""
	for _, b := range x.nodes[result].Blocks {
		if session.ServerResult(b.Type) {
			id = b.ToolUseID
			break
		}
	}
	why := fmt.Sprintf("join the server tool result for %s to its call: the entries between them (lines %s) move after it", id, strings.Join(lines, ", "))
	seq := append(append(append([]int{call}, keep...), result), move...)
	top := x.nodes[call].Parent
	if len(after) == 0 {
		why = fmt.Sprintf("join the server tool result for %s to its call: the entries between them (lines %s) move before the call", id, strings.Join(lines, ", "))
		seq = append(append(append(move, call), keep...), result)
	}
	for k, j := range seq {
		parent := top
		if k > 0 {
			parent = x.nodes[seq[k-1]].UUID
		}
		if x.nodes[j].Parent == parent {
			continue
		}
		if err := x.setParent(j, parent, why); err != nil {
			return err
		}
	}
	last := x.nodes[seq[len(seq)-1]].UUID
	for _, j := range after {
		if err := x.setParent(j, last, "follow the entries moved after a server tool result"); err != nil {
			return err
		}
	}
	return nil
}
