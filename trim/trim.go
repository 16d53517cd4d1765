package trim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// DefaultKeepTurns is how many of the last turns a trim leaves as they are.
const DefaultKeepTurns = 3

// Options configure a trim.
type Options struct {
	Root    string
	Session string
	// What goes (at least one).
	Thinking, ToolOutput, Images, Progress bool
	// KeepTurns: the last KeepTurns turns (a user prompt and all that
	// follows it) are left as they are.
	KeepTurns int
	// InPlace rewrites the session itself; else a new session is made
	// (To, ID as for clone; To "" keeps the session's project folder).
	InPlace bool
	To, ID  string
	// Title is the new session's title; "" gives it the source's title
	// with " (trimmed)" (not for InPlace).
	Title string
	// Now is the time the new session's files get (time.Now when zero).
	Now time.Time
}

// Figures are what a trim takes out.
type Figures struct {
	// Bytes the transcript loses, and Entries it drops.
	Bytes   int64 `json:"bytes"`
	Entries int   `json:"entries_removed"`
	// What was taken: thinking blocks, tool outputs, images, progress
	// entries, and entries left empty.
	Thinking    int `json:"thinking_blocks"`
	ToolOutputs int `json:"tool_outputs"`
	Images      int `json:"images"`
	Progress    int `json:"progress_entries"`
	Emptied     int `json:"entries_emptied"`
	// RequestBytes is how many bytes of message content the request of a
	// resume loses (entries on the chain the writing version's client
	// loads), Tokens the same in tokens; TokenEstimate says how they were
	// estimated: "usage" (scaled by what message.usage says the session's
	// requests held) or "bytes/4".
	RequestBytes  int64  `json:"request_bytes"`
	Tokens        int64  `json:"request_tokens"`
	TokenEstimate string `json:"token_estimate"`
	// KeptFrom is the first line of the turns left as they are (0 when
	// every turn may be trimmed), KeptTurns their number.
	KeptFrom  int `json:"kept_from_line"`
	KeptTurns int `json:"kept_turns"`
}

// Plan is a trim's change set, what it makes and what it takes out.
type Plan struct {
	*carry.Plan
	Figures Figures
}

func inputErr(format string, args ...any) error {
	return &carry.InputError{Msg: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &carry.ConflictError{Msg: fmt.Sprintf(format, args...)}
}

// Trim plans a trim of a session.
func Trim(o Options) (*Plan, error) {
	if !o.Thinking && !o.ToolOutput && !o.Images && !o.Progress {
		return nil, inputErr("nothing to trim: give --thinking, --tool-output, --images or --progress")
	}
	if o.KeepTurns < 0 {
		return nil, inputErr("--keep-turns %d: must be 0 or more", o.KeepTurns)
	}
	if o.InPlace && (o.To != "" || o.ID != "") {
		return nil, inputErr("--in-place rewrites the session itself: --to and --id are for a new session")
	}
	l, err := store.Scan(o.Root)
	if err != nil {
		return nil, err
	}
	src, err := carry.FindSession(o.Root, l, o.Session, "trim")
	if err != nil {
		return nil, err
	}
	if o.InPlace {
		if target, ok := carry.Linked(src.Path); ok {
			return nil, carry.LinkRefused(src.Path, target, "rewrite", "trim into a new session (without --in-place): that copies what the link leads to")
		}
		live, err := store.LiveSessions(o.Root)
		if err != nil {
			return nil, err
		}
		for _, ls := range live {
			if ls.Running && strings.EqualFold(ls.SessionID, src.Session) {
				return nil, conflict("session %s is live (%s, pid %d): a live session is never rewritten; trim it into a new session (without --in-place) or when it has ended", src.Session, ls.Path, ls.PID)
			}
		}
	}
	opts := session.TrimOptions{Thinking: o.Thinking, ToolOutput: o.ToolOutput, Images: o.Images}
	s, err := scanFile(src.Path, opts, o.InPlace)
	if err != nil {
		return nil, err
	}
	lines, fig := s.plan(o)
	what := fmt.Sprintf("trim of session %s", src.Session)
	if len(lines) == 0 {
		cs := changeset.New(o.Root, "trim")
		cs.Notes = append(cs.Notes, fmt.Sprintf("nothing to trim in session %s%s", src.Session, keptNote(fig)))
		return &Plan{Plan: &carry.Plan{ChangeSet: cs, SessionID: src.Session, Dir: s.cwd, Folder: src.Project}, Figures: fig}, nil
	}
	var p *carry.Plan
	if o.InPlace {
		cs := changeset.New(o.Root, "trim")
		t := &changeset.Transform{Kind: changeset.TransformRetarget, Trim: lines, Saved: fig.Bytes}
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: src.Path, Expect: s.fp, Transform: t, Session: src.Session,
			EntriesRemoved: fig.Entries, Reason: what + " in place" + describe(fig)})
		p = &carry.Plan{ChangeSet: cs, SessionID: src.Session, Dir: s.cwd, Folder: src.Project}
	} else {
		p, err = carry.Copy(carry.Options{Root: o.Root, Session: src.Path, To: o.To, ID: o.ID, Lines: lines, Now: o.Now, Title: copyTitle(src, o.Title, "trimmed"),
			Saved: fig.Bytes, Removed: fig.Entries, Command: "trim", What: what + describe(fig)})
		if err != nil {
			return nil, err
		}
	}
	p.ChangeSet.Notes = append(p.ChangeSet.Notes, requestNote(fig)+keptNote(fig))
	return &Plan{Plan: p, Figures: fig}, nil
}

// describe says what a trim takes out, for its op's reason.
func describe(f Figures) string {
	var parts []string
	if f.Thinking > 0 {
		parts = append(parts, plural.Count(f.Thinking, "thinking block"))
	}
	if f.ToolOutputs > 0 {
		parts = append(parts, plural.Count(f.ToolOutputs, "tool output"))
	}
	if f.Images > 0 {
		parts = append(parts, plural.Count(f.Images, "image"))
	}
	if f.Progress > 0 {
		parts = append(parts, plural.Count(f.Progress, "progress entry"))
	}
	if f.Emptied > 0 {
		parts = append(parts, plural.Count(f.Emptied, "entry")+" left empty")
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func requestNote(f Figures) string {
	if why := f.NoGain(); why != "" {
		return fmt.Sprintf("the transcript loses %s, but %s", changeset.Size(f.Bytes), why)
	}
	how := "estimated as bytes/4: the session's message.usage gives no scale"
	if f.TokenEstimate == "usage" {
		how = "estimated from message.usage"
	}
	return fmt.Sprintf("the transcript loses %s; a resume's request loses %s of message content, about %s (%s)",
		changeset.Size(f.Bytes), changeset.Size(f.RequestBytes), plural.Count(f.Tokens, "token"), how)
}

// NoGain says why a trim leaves the request of a resume as it is: what
// it takes out is none of the history a resume sends (it lies behind a
// compaction, on another branch or in subagents); "" when the request
// loses something.
func (f Figures) NoGain() string {
	if f.RequestBytes > 0 {
		return ""
	}
	if f.Bytes == 0 {
		return "nothing is taken out"
	}
	return "a resume's request stays as it is: none of that is in the history a resume sends (it lies behind a compaction, on another branch or in a subagent)"
}

func keptNote(f Figures) string {
	if f.KeptFrom == 0 {
		return ""
	}
	if f.KeptTurns == 1 {
		return fmt.Sprintf("; the last turn (from line %d) is left as it is", f.KeptFrom)
	}
	return fmt.Sprintf("; the last %d turns (from line %d) are left as they are", f.KeptTurns, f.KeptFrom)
}

// plan works out the line edits of a trim, and its figures.
func (s *scanned) plan(o Options) ([]changeset.LineTrim, Figures) {
	var fig Figures
	ld := s.g.Load(session.LoaderFor(s.version), false)
	// The turns left alone: from the KeepTurns-th last prompt on the
	// resumed chain on, in file order.
	cut := math.MaxInt // no turn kept: past every line (a run of lines is one line of s.lines)
	var prompts []int
	for _, gi := range ld.Chain {
		if li := s.node[gi]; s.lines[li].prompt {
			prompts = append(prompts, s.lines[li].n)
		}
	}
	if o.KeepTurns > 0 {
		if len(prompts) <= o.KeepTurns {
			cut = 1
			if len(prompts) > 0 {
				cut = prompts[0]
			}
			fig.KeptTurns = len(prompts)
		} else {
			cut = prompts[len(prompts)-o.KeepTurns]
			fig.KeptTurns = o.KeepTurns
		}
		fig.KeptFrom = cut
	}
	// The thinking of the last reply on the chain always stays (the API
	// checks the thinking of the turn a request continues).
	lastReply := ""
	for k := len(ld.Chain) - 1; k >= 0; k-- {
		if n := &s.g.Nodes[ld.Chain[k]]; n.Type == "assistant" {
			lastReply = n.MsgID
			if lastReply == "" {
				lastReply = "\x00" + n.UUID
			}
			break
		}
	}
	// Entries that must stay whole: named by a leafUuid or a
	// logicalParentUuid, parent of an entry left alone, or the entry the
	// resume starts from (dropped, the loader would start from another
	// entry, maybe on another branch, or find none).
	pinned := map[string]bool{}
	if ld.Leaf >= 0 {
		pinned[s.g.Nodes[ld.Leaf].UUID] = true
	}
	for i := range s.lines {
		ln := &s.lines[i]
		if ln.leaf != "" {
			pinned[ln.leaf] = true
		}
		if ln.logical != "" {
			pinned[ln.logical] = true
		}
		if ln.n >= cut && ln.parent != "" {
			pinned[ln.parent] = true
		}
	}
	edits := map[int]*changeset.LineTrim{}
	dropped := map[string]string{} // uuid → its parent
	for i := range s.lines {
		ln := &s.lines[i]
		if ln.n >= cut || !ln.chain {
			continue
		}
		if o.Progress && ln.typ == "progress" && !pinned[ln.uuid] {
			edits[i] = &changeset.LineTrim{Line: ln.n, Drop: true}
			dropped[ln.uuid] = ln.parent
			fig.Progress++
			continue
		}
		st := ln.trim
		if !st.Changed() {
			continue
		}
		thinking := st.Thinking > 0
		if thinking && lastReply != "" && (ln.msgID == lastReply || "\x00"+ln.uuid == lastReply) {
			if st.Outputs+st.Images == 0 {
				continue
			}
			// Keep its thinking: count what the rest of the trim takes.
			thinking = false
			ln.trim = s.retrim(i, o)
			st = ln.trim
			if !st.Changed() {
				continue
			}
		}
		if st.Empty && pinned[ln.uuid] {
			continue // would be left empty but must stay: untouched
		}
		lt := &changeset.LineTrim{Line: ln.n, Thinking: thinking && o.Thinking, ToolOutput: st.Outputs > 0, Images: st.Images > 0}
		if st.Empty {
			lt = &changeset.LineTrim{Line: ln.n, Drop: true}
			dropped[ln.uuid] = ln.parent
			fig.Emptied++
		}
		edits[i] = lt
		fig.Thinking += st.Thinking
		fig.ToolOutputs += st.Outputs
		fig.Images += st.Images
	}
	// Children of dropped entries take the nearest ancestor kept.
	for i := range s.lines {
		ln := &s.lines[i]
		if !ln.chain || ln.parent == "" {
			continue
		}
		if _, gone := dropped[ln.parent]; !gone {
			continue
		}
		if e := edits[i]; e != nil && e.Drop {
			continue
		}
		p := ln.parent
		for hops := 0; hops <= len(dropped); hops++ {
			pp, gone := dropped[p]
			if !gone {
				break
			}
			p = pp
		}
		e := edits[i]
		if e == nil {
			e = &changeset.LineTrim{Line: ln.n}
			edits[i] = e
		}
		e.Parent = &p
	}
	// Figures: bytes of the file and of a resume's request.
	onChain := map[int]bool{}
	for _, gi := range ld.Chain {
		onChain[s.node[gi]] = true
	}
	var out []changeset.LineTrim
	for i := range s.lines {
		e := edits[i]
		if e == nil {
			continue
		}
		out = append(out, *e)
		ln := &s.lines[i]
		switch {
		case e.Drop:
			fig.Entries++
			fig.Bytes += ln.bytes
			if onChain[i] && ln.typ != "progress" {
				fig.RequestBytes += ln.trim.Content
			}
		default:
			// An edit of the parent alone (of an entry left whole, its
			// parent dropped) takes nothing out.
			if e.Thinking || e.ToolOutput || e.Images {
				fig.Bytes += ln.trim.Bytes
				if onChain[i] {
					fig.RequestBytes += ln.trim.Sent
				}
			}
			if e.Parent != nil {
				fig.Bytes += int64(len(ln.parent)) - int64(len(*e.Parent))
				if *e.Parent == "" {
					fig.Bytes += 2 - 4 // "" quotes gone, null written
				}
			}
		}
	}
	fig.Tokens, fig.TokenEstimate = s.tokens(ld.Chain, fig.RequestBytes)
	return out, fig
}

// retrim computes the stats of line i trimmed without its thinking.
func (s *scanned) retrim(i int, o Options) session.TrimStats {
	raw, err := s.raw(i)
	if err != nil {
		return session.TrimStats{}
	}
	_, st, err := session.TrimEntry(raw, session.TrimOptions{ToolOutput: o.ToolOutput, Images: o.Images})
	if err != nil {
		return session.TrimStats{}
	}
	return st
}

// tokens estimates the tokens of n bytes of message content: scaled by
// how the tokens message.usage reports grew with the bytes of the chain's
// messages between the first and the last reply on the chain that has
// usage (whole lines: their content is most of them), else bytes/4.
func (s *scanned) tokens(chain []int, n int64) (int64, string) {
	var sent int64
	firstB, firstT, lastB, lastT := int64(-1), int64(0), int64(-1), int64(0)
	for _, gi := range chain {
		ln := &s.lines[s.node[gi]]
		if ln.typ == "assistant" && ln.usage > 0 {
			if firstB < 0 {
				firstB, firstT = sent, ln.usage
			}
			lastB, lastT = sent, ln.usage
		}
		if ln.typ == "user" || ln.typ == "assistant" {
			sent += int64(ln.len)
		}
	}
	if firstB >= 0 && lastB-firstB >= 4096 && lastT > firstT {
		return n * (lastT - firstT) / (lastB - firstB), "usage"
	}
	return n / 4, "bytes/4"
}

// copyTitle is the title of a new session made from src: given, else the
// title /resume shows for src (its custom title, AI title, summary or
// first prompt) with " (what)" after it, so that the copy can be told
// from its source in /resume and cfix ls.
func copyTitle(src store.File, given, what string) string {
	if given != "" {
		return given
	}
	t := store.TitleOf(src)
	if t == "" {
		t = "session " + src.Session
	}
	suffix := " (" + what + ")"
	if strings.HasSuffix(t, suffix) {
		return t
	}
	return t + suffix
}
