package trim

import (
	"fmt"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// ForkOptions configure a fork: At (an entry's uuid, or a unique prefix
// of one) or Turn (1-based: the history through that turn), one of them.
type ForkOptions struct {
	Root    string
	Session string
	At      string
	Turn    int
	To, ID  string
	// Title is the fork's title; "" gives it the source's title with
	// " (fork)".
	Title string
	// Now is the time the new session's files get (time.Now when zero).
	Now time.Time
}

// ForkPlan is a fork's change set and where its history ends.
type ForkPlan struct {
	*carry.Plan
	// Leaf is the uuid of the last entry of the fork's history, LeafLine
	// its line in the source; Entries the number of lines the fork keeps.
	Leaf     string `json:"leaf"`
	LeafLine int    `json:"leaf_line"`
	Entries  int    `json:"entries"`
}

// Fork plans a new session holding the history of a session up to one
// entry: the chain from the first entry to it (through compactions), the
// parallel calls and results the client puts back beside it, and the
// file-history snapshots of its messages. At an entry of a reply that
// made tool calls, the fork takes the rest of that reply and the calls'
// results with it, so that no call is left unanswered.
func Fork(o ForkOptions) (*ForkPlan, error) {
	switch {
	case o.At == "" && o.Turn == 0:
		return nil, inputErr("say where the fork ends: --at UUID or --turn N")
	case o.At != "" && o.Turn != 0:
		return nil, inputErr("--at and --turn: give one of them")
	case o.Turn < 0:
		return nil, inputErr("--turn %d: turns count from 1 (cfix show SESSION lists them)", o.Turn)
	}
	l, err := store.Scan(o.Root)
	if err != nil {
		return nil, err
	}
	src, err := carry.FindSession(o.Root, l, o.Session, "fork")
	if err != nil {
		return nil, err
	}
	s, err := scanFile(src.Path, session.TrimOptions{}, false)
	if err != nil {
		return nil, err
	}
	ld := s.g.Load(session.LoaderFor(s.version), false)
	leaf := -1 // graph node
	switch {
	case o.At != "":
		var found []int
		for i := range s.g.Nodes {
			u := s.g.Nodes[i].UUID
			if strings.EqualFold(u, o.At) {
				found = []int{i}
				break
			}
			if len(o.At) >= 4 && strings.HasPrefix(strings.ToLower(u), strings.ToLower(o.At)) {
				found = append(found, i)
			}
		}
		switch len(found) {
		case 0:
			return nil, inputErr("--at %s: no entry of session %s has that uuid", o.At, src.Session)
		case 1:
			leaf = found[0]
			if n := &s.g.Nodes[leaf]; n.Sidechain {
				return nil, inputErr("--at %s: entry %s (line %d) is part of a subagent's conversation (isSidechain), which a resume of the session does not load as its history; fork at an entry of the main conversation", o.At, n.UUID, n.Line)
			}
		default:
			return nil, inputErr("--at %s: %d entries of session %s have uuids starting so; give more of it", o.At, len(found), src.Session)
		}
	default:
		var prompts []int // positions in ld.Chain
		for k, gi := range ld.Chain {
			if s.lines[s.node[gi]].prompt {
				prompts = append(prompts, k)
			}
		}
		if o.Turn > len(prompts) {
			return nil, inputErr("--turn %d: the history session %s resumes has %s", o.Turn, src.Session, plural.Count(len(prompts), "turn"))
		}
		end := len(ld.Chain) - 1
		if o.Turn < len(prompts) {
			end = prompts[o.Turn] - 1
		}
		leaf = ld.Chain[end]
	}
	asked := leaf
	leaf = s.endOfReply(ld, leaf)
	keep := s.history(leaf)
	// The client must resume the fork from its last entry: a loader that
	// starts from the latest timestamp starts from a kept entry stamped
	// later (entries of a compaction are written out of order), so the
	// fork ends where the client would start.
	loader := session.LoaderFor(s.version)
	intended := leaf
	for range 8 {
		g := session.NewGraph()
		for gi := range s.g.Nodes {
			if keep[s.node[gi]] {
				g.AddNode(s.g.Nodes[gi])
			}
		}
		fl := g.Load(loader, false)
		if fl.Leaf < 0 {
			break
		}
		got := s.g.Lookup(g.Nodes[fl.Leaf].UUID)
		if got == leaf {
			break
		}
		leaf = got
		keep = s.history(leaf)
	}
	var lines []changeset.LineTrim
	var saved int64
	kept, removed := 0, 0
	for i := range s.lines {
		if keep[i] {
			kept++
			continue
		}
		lt := changeset.LineTrim{Line: s.lines[i].n, Drop: true}
		if c := s.lines[i].count; c > 1 {
			lt.Through = lt.Line + c - 1
		}
		lines = append(lines, lt)
		saved += s.lines[i].bytes
		removed += s.lines[i].count
	}
	leafLine := s.lines[s.node[leaf]]
	what := fmt.Sprintf("fork of session %s up to line %d (%s)", src.Session, leafLine.n, leafLine.uuid)
	if lines == nil {
		lines = []changeset.LineTrim{} // a copy, but through the fork's path
	}
	p, err := carry.Copy(carry.Options{Root: o.Root, Session: src.Path, To: o.To, ID: o.ID, Lines: lines, Now: o.Now,
		Saved: saved, Removed: removed, Command: "fork", What: what, Title: copyTitle(src, o.Title, "fork")})
	if err != nil {
		return nil, err
	}
	notes := []string{fmt.Sprintf("the fork's history ends at line %d of %s, entry %s (%s)", leafLine.n, src.Path, leafLine.uuid, leafLine.typ)}
	if leaf != intended {
		in := s.lines[s.node[intended]]
		why := fmt.Sprintf("entry %s (line %d) carries an earlier timestamp than entry %s before it; claude %s resumes from the entry stamped latest, so the fork ends there",
			in.uuid, in.n, leafLine.uuid, s.version)
		if loader.LeafLastWritten {
			why = fmt.Sprintf("entry %s (line %d) is written before entry %s (line %d); claude %s resumes from the message written last, so the fork ends there",
				in.uuid, in.n, leafLine.uuid, leafLine.n, s.version)
		}
		notes = append(notes, why)
	} else if leaf != asked {
		a := s.lines[s.node[asked]]
		notes = append(notes, fmt.Sprintf("entry %s (line %d) made tool calls: the fork takes the rest of its reply and the results with it", a.uuid, a.n))
	}
	if !onChain(ld, asked) {
		notes = append(notes, fmt.Sprintf("entry %s is not on the history a resume of session %s loads (another branch): the fork resumes that branch", s.lines[s.node[asked]].uuid, src.Session))
	}
	p.ChangeSet.Notes = append(notes, p.ChangeSet.Notes...)
	return &ForkPlan{Plan: p, Leaf: leafLine.uuid, LeafLine: leafLine.n, Entries: kept}, nil
}

func onChain(ld session.Load, gi int) bool {
	for _, c := range ld.Chain {
		if c == gi {
			return true
		}
	}
	return false
}

// endOfReply moves a leaf that is part of a reply with tool calls to the
// end of that reply and its results: the entries that follow it on the
// chain (or as its children) while they are the same reply (message.id)
// or results of its calls.
func (s *scanned) endOfReply(ld session.Load, leaf int) int {
	n := &s.g.Nodes[leaf]
	if n.Type != "assistant" {
		return leaf
	}
	calls := map[string]bool{}
	open := 0
	addCalls := func(gi int) {
		for _, id := range s.calls(gi) {
			if !calls[id] {
				calls[id] = true
				open++
			}
		}
	}
	addCalls(leaf)
	// The calls of the reply's entries before the leaf (parallel calls
	// written one entry each) are answered after it too.
	for p, hops := s.g.Lookup(n.Parent), 0; p >= 0 && hops < len(s.g.Nodes); hops++ {
		m := &s.g.Nodes[p]
		if m.Type != "assistant" || m.MsgID == "" || m.MsgID != n.MsgID {
			break
		}
		addCalls(p)
		p = s.g.Lookup(m.Parent)
	}
	if open == 0 && n.MsgID == "" {
		return leaf
	}
	answers := func(gi int) bool {
		rs := s.answers(gi)
		if s.g.Nodes[gi].Type != "user" || len(rs) == 0 {
			return false
		}
		for _, id := range rs {
			if !calls[id] {
				return false
			}
		}
		return true
	}
	same := func(gi int) bool {
		m := &s.g.Nodes[gi]
		return m.Type == "assistant" && m.MsgID != "" && m.MsgID == n.MsgID
	}
	// Follow the children, those on the walk of a resume first when the
	// leaf is on it (a call's result may hang under the reply's first
	// entry, beside a parallel call that the loader leaves on another
	// branch).
	children := s.g.Children()
	walked := map[int]bool{}
	for _, gi := range ld.Chain {
		walked[gi] = !ld.Recovered[gi]
	}
	onWalk := walked[leaf]
	succ := func(gi int) []int {
		if !onWalk {
			return children[gi]
		}
		var w []int
		for _, c := range children[gi] {
			if walked[c] {
				w = append(w, c)
			}
		}
		if len(w) == 0 {
			return children[gi]
		}
		return w
	}
	cur := leaf
	for {
		next := -1
		for _, c := range succ(cur) {
			if same(c) || open > 0 && answers(c) {
				next = c
				break
			}
			// Progress entries between a call and its result.
			if s.g.Nodes[c].Type == "progress" && open > 0 {
				next = c
			}
		}
		if next < 0 {
			break
		}
		if same(next) {
			addCalls(next)
		}
		if answers(next) {
			for _, id := range s.answers(next) {
				if calls[id] {
					delete(calls, id)
					open--
					calls["\x00"+id] = true
				}
			}
		}
		cur = next
		if open == 0 {
			// The reply may go on (more blocks of the same message.id,
			// after the results of its first calls).
			more := false
			for _, c := range succ(cur) {
				if same(c) {
					more = true
				}
			}
			if !more {
				break
			}
		}
	}
	if open > 0 {
		// Results hung beside the walk (under an earlier call of the
		// reply, written after those followed): the fork ends at the
		// last of them.
		for gi := range s.g.Nodes {
			if s.g.Nodes[gi].Type != "user" {
				continue
			}
			for _, id := range s.answers(gi) {
				if calls[id] {
					delete(calls, id)
					open--
					calls["\x00"+id] = true
					if s.g.Nodes[gi].Line > s.g.Nodes[cur].Line {
						cur = gi
					}
				}
			}
		}
	}
	if s.g.Nodes[cur].Type == "progress" {
		return leaf // results never came: stop where asked
	}
	return cur
}

// history returns the lines (indexes in s.lines) a fork ending at leaf
// keeps.
func (s *scanned) history(leaf int) map[int]bool {
	keep := map[int]bool{}
	uuids := map[string]bool{}
	msgIDs := map[string]bool{}
	calls := map[string]bool{}
	leafLine := s.g.Nodes[leaf].Line
	seen := 0
	for gi := leaf; gi >= 0 && seen <= len(s.g.Nodes); seen++ {
		n := &s.g.Nodes[gi]
		li := s.node[gi]
		if keep[li] {
			break
		}
		keep[li] = true
		uuids[n.UUID] = true
		if n.Type == "assistant" && n.MsgID != "" {
			msgIDs[n.MsgID] = true
		}
		for _, id := range s.calls(gi) {
			calls[id] = true
		}
		p := n.Parent
		if p == "" {
			p = n.Logical // a compaction goes on from the history before it
		}
		gi = -1
		if p != "" {
			gi = s.g.Lookup(p)
		}
	}
	// What the client puts back beside the chain: the other entries of
	// its replies (parallel calls) and the results of their calls.
	for gi := range s.g.Nodes {
		n := &s.g.Nodes[gi]
		li := s.node[gi]
		if keep[li] || n.Line > leafLine {
			continue
		}
		if n.Type == "assistant" && msgIDs[n.MsgID] && uuids[n.Parent] {
			keep[li] = true
			uuids[n.UUID] = true
			for _, id := range s.calls(gi) {
				calls[id] = true
			}
		}
	}
	for gi := range s.g.Nodes {
		n := &s.g.Nodes[gi]
		li := s.node[gi]
		if keep[li] || n.Line > leafLine || n.Type != "user" || !uuids[n.Parent] || len(s.answers(gi)) == 0 {
			continue
		}
		all := true
		for _, id := range s.answers(gi) {
			all = all && calls[id]
		}
		if all {
			keep[li] = true
		}
	}
	// Snapshots of kept messages (what /rewind restores), and summaries
	// whose leaf is kept.
	for i := range s.lines {
		ln := &s.lines[i]
		if ln.n > leafLine {
			break
		}
		switch {
		case ln.typ == "file-history-snapshot" && uuids[ln.messageID]:
			keep[i] = true
		case ln.typ == "summary" && uuids[ln.leaf]:
			keep[i] = true
		}
	}
	return keep
}
