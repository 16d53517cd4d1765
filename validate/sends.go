package validate

import (
	"fmt"
	"strings"

	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// Sends models what a client version puts into the request when it
// resumes a chain holding entries or blocks the API rejects. Every field
// was measured with the real clients (TestOracleProbe on crafted
// transcripts, resumed by 1.0.128, 2.0.77 and 2.1.29 to 2.1.330 and
// bisected between them); each boundary is the first version that behaves
// so, the version before it measured to behave otherwise.
type Sends struct {
	// Name is the version the model is for.
	Name string
	// BlankAssistant: an assistant entry whose content is blank text only
	// (a "\n\n" block written on its own before a tool call) is sent as it
	// is. 2.1.32 and later drop such entries
	// (filterWhitespaceOnlyAssistantMessages); 2.1.31 and older send them.
	BlankAssistant bool
	// EmptyAssistantText: an empty text block of an assistant entry that
	// holds more is sent. 2.1.277 and later drop it; 2.1.276 and older send
	// it. A whitespace-only one is sent by every version measured.
	EmptyAssistantText bool
	// BlankUserText: a blank text block of a user entry's content list is
	// sent. From 2.1.152 the client drops it, and sends "(no content)" for
	// a list it leaves empty; 2.1.150 and older send it (there is no
	// 2.1.151). A user entry whose content is a blank string is sent as it
	// is by every version.
	BlankUserText bool
	// LocalCommands: a system entry of subtype local_command (a slash
	// command's output) is sent as a user message of its own (2.1.63 and
	// later); 2.1.62 and older leave it out. No version sends system
	// entries of other subtypes (turn_duration, stop_hook_summary,
	// away_summary, informational measured).
	LocalCommands bool
	// Attachments: attachment entries of some types are sent as a user
	// message of their own (hook_additional_context from 2.0.77,
	// task_reminder from 2.1.144); 1.0.128 sends none, and from 2.1.281
	// on (2.1.280 not) the client moves them out of an assistant message's
	// way.
	Attachments bool
	// Synthetic: an assistant entry of Claude Code's own making (model
	// <synthetic>: an API error's message, or an interrupted turn's partial
	// reply, which can hold unsigned thinking) is sent as a message. 1.0.128,
	// 2.0.77 and 2.1.0 to 2.1.6 send it; 2.1.7 and later leave it out
	// (bisected, and measured up to 2.1.332, on an interrupted turn's entry
	// of the wild 2.1.139-2.1.173 store).
	Synthetic bool
	// LoneSurrogates: a lone surrogate escape (\ud88d) in what the
	// client sends goes into the request as it is, and the API answers 400
	// (no low surrogate in string). 2.1.132 and later send U+FFFD in its
	// place; 2.1.131 and older send it (bisected: 1.0.128, 2.0.77, 2.1.0,
	// 2.1.14, 2.1.111 to 2.1.113, 2.1.126, 2.1.129, 2.1.131 send it,
	// 2.1.132, 2.1.133, 2.1.140, 2.1.177, 2.1.219 and 2.1.332 replace it, in
	// a tool_use input and in a prompt's text).
	LoneSurrogates bool
	// OrphanServerResults: a server tool's result (advisor_tool_result,
	// web_search_tool_result...) whose server_tool_use no entry of the
	// file holds is sent, and the API answers 400 (unexpected tool_use_id
	// found in ... blocks). 2.1.88 and later leave such a block out of the
	// message; 2.1.87 and older send it (bisected: 2.0.77, 2.1.0, 2.1.29,
	// 2.1.73, 2.1.87 send it; 2.1.88, 2.1.89, 2.1.90, 2.1.94, 2.1.100,
	// 2.1.111, 2.1.219 and 2.1.332 do not, an orphaned advisor_tool_result
	// put before the text of a 2.1.140 session's last reply). A result
	// whose call sits in another message of the request is sent by every
	// version (see ServerSplits).
	OrphanServerResults bool
	// AttachCrash: the session.AttachRules whose breaking makes the client
	// throw while it turns the attachment into a message, and exit 1
	// before any request (see attachCrash).
	AttachCrash session.AttachFaults
}

// attachCrash gives, for each of session.AttachRules, the versions that
// throw on an attachment breaking it: from (oldest measured to throw; ""
// for every older version) up to, not including, to ("" when the newest
// measured still throws). Measured by resuming crafted transcripts with
// the real clients (e2e TestAttachmentMalformed for one row); the
// versions before from were not measured unless the note says so.
var attachCrash = []struct{ from, to, note string }{
	// The attachment null, missing or not an object: the loader itself
	// fails (Failed to resume session) in 1.0.128, 2.0.77, 2.1.100,
	// 2.1.205 and 2.1.216; 2.1.217 skips the entry.
	{"", "2.1.217", "bisected"},
	// file: content. 2.0.77 ends the run with "Execution error" and sends
	// nothing, 2.1.100 to 2.1.274 throw; 2.1.275 leaves it out; 1.0.128
	// resumes.
	{"2.0.77", "2.1.275", "bisected"},
	// nested_memory: content. Every version measured from 2.0.77 to
	// 2.1.332 throws.
	{"2.0.77", "", ""},
	// task_reminder: content not a list (null, missing, a string, a
	// number, an object: x.map is not a function). 2.1.205 to 2.1.232
	// throw; 2.1.100 and 2.1.233 do not.
	{"2.1.205", "2.1.233", "bisected"},
	// todo_reminder: content. 2.0.77 to 2.1.224 throw, 2.1.250 does not;
	// the boundary is task_reminder's (one change of the client).
	{"2.0.77", "2.1.233", "the end bisected on task_reminder"},
	// hook_additional_context: content not a list (null: x.length of
	// null; a string: x.join is not a function). 2.0.77 (null) and 2.1.100
	// to 2.1.205 throw, 2.1.219 does not (not bisected).
	{"2.0.77", "2.1.219", "2.1.206 to 2.1.218 not measured"},
	// The listing deltas' lists: null or missing (x.length of null) or a
	// string (x.join is not a function): 2.1.100 to 2.1.217 throw, 2.1.218
	// does not (bisected on agent_listing_delta's addedLines; each field
	// measured on 2.1.205 and 2.1.219, a string bisected on
	// deferred_tools_delta's addedLines); 2.0.77 knows no such type.
	{"2.1.100", "2.1.218", "bisected on agent_listing_delta"},
	{"2.1.100", "2.1.218", "bisected on agent_listing_delta"},
	{"2.1.100", "2.1.218", "bisected on agent_listing_delta"},
	{"2.1.100", "2.1.218", "bisected on agent_listing_delta"},
	{"2.1.100", "2.1.218", "bisected on agent_listing_delta"},
	// hook_success: stdout set but not a string. Every version measured
	// from 2.1.100 to 2.1.332 throws (stdout?.trim is not a function),
	// whatever the hook's event.
	{"2.1.100", "", "2.0.77 and 1.0.128 do not"},
	// diagnostics: files. 2.0.77 ends the run with "Execution error",
	// 2.1.100 to 2.1.222 throw; 2.1.223 leaves it out.
	{"2.0.77", "2.1.223", "bisected"},
	// tool_search_usage_reminder: undiscoveredToolNames. 2.1.205 to 2.1.332
	// throw; 2.1.100 knows no such type.
	{"2.1.205", "", ""},
	// memory_update: paths. 2.1.205 to 2.1.233 throw; 2.1.234 leaves it
	// out; 2.1.100 knows no such type.
	{"2.1.205", "2.1.234", "bisected"},
	// edited_text_file: filename set but not a string. The loader fails
	// (Failed to resume session: The "to" argument must be of type
	// string) in 2.1.100 to 2.1.216; 2.1.217 reads it; 2.0.77 does not
	// fail.
	{"2.1.100", "2.1.217", "bisected"},
	// selected_lines_in_ide: content. Every version measured from 2.1.100
	// to 2.1.332 throws (evaluating 'e.length').
	{"2.1.100", "", ""},
	// diagnostics: an element of files whose uri is null. 2.0.77 ends the
	// run with "Execution error", 2.1.111 to 2.1.222 throw (evaluating
	// 'n.uri.split'; 2.1.111, 2.1.140, 2.1.177, 2.1.205, 2.1.219, 2.1.222
	// measured); 2.1.223 and 2.1.332 leave it out; 1.0.128 resumes.
	{"2.0.77", "2.1.223", "bisected"},
}

// AttachCrashRange describes the versions measured to throw on an
// attachment that breaks rule i of session.AttachRules.
func AttachCrashRange(i int) string {
	c := attachCrash[i]
	var r string
	switch {
	case c.to == "":
		r = c.from + " and later (every version measured)"
	case c.from == "":
		r = "versions before " + c.to
	default:
		r = c.from + " up to " + c.to + " (not included)"
	}
	if c.note != "" {
		r += "; " + c.note
	}
	return r
}

// The measured boundaries of Sends.
const (
	blankAssistantTo   = "2.1.32"
	emptyTextFrom      = "2.1.277"
	blankUserFrom      = "2.1.152"
	localCommandFrom   = "2.1.63"
	attachmentsFrom    = "2.0.0"
	attachmentsTo      = "2.1.281"
	attachmentTypeNote = "hook_additional_context from 2.0.77, an empty task_reminder from 2.1.144"
	syntheticTo        = "2.1.7"
	surrogateTo        = store.SurrogateSentTo
	orphanServerTo     = "2.1.88"
)

// SendsOf returns the model of the client version that wrote a file (the
// newest one for an unknown version).
func SendsOf(version string) Sends {
	before := func(v string) bool { return version != "" && session.VersionLess(version, v) }
	name := version
	if name == "" {
		name = "(no version)"
	}
	return Sends{
		Name:                name,
		BlankAssistant:      before(blankAssistantTo),
		EmptyAssistantText:  before(emptyTextFrom),
		BlankUserText:       before(blankUserFrom),
		LocalCommands:       !before(localCommandFrom),
		Attachments:         !before(attachmentsFrom) && before(attachmentsTo),
		Synthetic:           before(syntheticTo),
		LoneSurrogates:      before(surrogateTo),
		OrphanServerResults: before(orphanServerTo),
		AttachCrash:         attachCrashOf(version),
	}
}

// attachCrashOf returns the attachment rules version throws on (those of
// the newest versions for an unknown one).
func attachCrashOf(version string) session.AttachFaults {
	var f session.AttachFaults
	for i, c := range attachCrash {
		from := c.from == "" || version != "" && !session.VersionLess(version, c.from)
		to := c.to == "" || version != "" && session.VersionLess(version, c.to)
		if version == "" {
			from = c.to == ""
		}
		if from && to {
			f |= 1 << i
		}
	}
	return f
}

// BlankSent counts the blank text blocks of node n that the client sends:
// empty ones and whitespace-only ones (the API answers 400 to either).
func (s Sends) BlankSent(n *session.Node) (empty, space int) {
	switch n.Type {
	case "assistant":
		if n.Model == SyntheticModel && !s.Synthetic || n.BlankOnly && !s.BlankAssistant {
			return 0, 0
		}
		for _, b := range n.Blocks {
			switch {
			case b.Type != "text" || !b.Blank:
			case !b.EmptyText:
				space++
			case n.BlankOnly || s.EmptyAssistantText:
				empty++
			}
		}
	case "user":
		if n.BlankString {
			// Sent as it is by every version measured.
			if n.EmptyString {
				return 1, 0
			}
			return 0, 1
		}
		if !s.BlankUserText {
			return 0, 0
		}
		for _, b := range n.Blocks {
			if b.Type == "text" && b.Blank {
				if b.EmptyText {
					empty++
				} else {
					space++
				}
			}
		}
	}
	return empty, space
}

// Separate reports how the client sends chain entry n when it sits
// between a server tool call and its result in the assistant message of
// id msgID: as a message of its own (the pair is split, and the API
// answers 400) with sure true, as one for some attachment types (sure
// false), or not at all (split false).
func (s Sends) Separate(n *session.Node, msgID string) (split, sure bool) {
	switch n.Type {
	case "assistant":
		return n.MsgID == "" || n.MsgID != msgID, true
	case "user":
		return true, true
	case "system":
		return n.Subtype == "local_command" && s.LocalCommands, true
	case "attachment":
		return s.Attachments, false
	}
	return false, true
}

// ServerSplit is a server tool result on the resumed chain that the
// client sends apart from its call.
type ServerSplit struct {
	Result int    // graph node holding the result
	Block  string // the result block's type
	ID     string // the call's id
	// Call is the graph node holding the call, -1 when the resume does
	// not load it (a compaction came between them); CallLine is its line
	// in the file, 0 when no chain entry of the file holds it.
	Call, CallLine int
	// Seps are the chain entries between the call and the result that the
	// client sends as messages of their own.
	Seps []int
	// Sure: one of them, or the missing call, splits the pair in every
	// case (else only some attachment types are sent).
	Sure bool
}

// ServerSplits finds, along the chain ld of graph g, the server tool
// results the client of model s sends apart from their call: with entries
// it sends as messages of their own between them, or without the call.
func ServerSplits(g *session.Graph, ld session.Load, s Sends) []ServerSplit {
	var out []ServerSplit
	calls := map[string]int{} // call id → index in ld.Chain
	for k, i := range ld.Chain {
		n := &g.Nodes[i]
		for _, b := range n.Blocks {
			if session.ServerCall(b.Type) && b.ID != "" {
				if _, ok := calls[b.ID]; !ok {
					calls[b.ID] = k
				}
				continue
			}
			if !session.ServerResult(b.Type) || b.ToolUseID == "" {
				continue
			}
			sp := ServerSplit{Result: i, Block: b.Type, ID: b.ToolUseID, Call: -1}
			k1, ok := calls[b.ToolUseID]
			if !ok {
				sp.Sure = true
				for j := range g.Nodes {
					if hasCall(&g.Nodes[j], b.ToolUseID) {
						sp.CallLine = g.Nodes[j].Line
						break
					}
				}
				out = append(out, sp)
				continue
			}
			sp.Call, sp.CallLine = ld.Chain[k1], g.Nodes[ld.Chain[k1]].Line
			for _, j := range ld.Chain[k1+1 : k] {
				if split, sure := s.Separate(&g.Nodes[j], g.Nodes[sp.Call].MsgID); split {
					sp.Seps = append(sp.Seps, j)
					sp.Sure = sp.Sure || sure
				}
			}
			if len(sp.Seps) > 0 {
				out = append(out, sp)
			}
		}
	}
	return out
}

func hasCall(n *session.Node, id string) bool {
	for _, b := range n.Blocks {
		if session.ServerCall(b.Type) && b.ID == id {
			return true
		}
	}
	return false
}

// describe names the entries of nodes, for a message: "line 7 (system
// local_command), line 8 (user)".
func describe(g *session.Graph, nodes []int) string {
	parts := make([]string, 0, len(nodes))
	for _, i := range nodes {
		n := &g.Nodes[i]
		what := n.Type
		if n.Subtype != "" {
			what += " " + n.Subtype
		}
		parts = append(parts, fmt.Sprintf("line %d (%s)", n.Line, what))
	}
	return strings.Join(parts, ", ")
}
