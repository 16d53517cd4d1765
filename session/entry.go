package session

import (
	"encoding/json"
	"strings"
)

// Block is what the checks need of one message content block.
type Block struct {
	Type      string
	ID        string // tool_use: its id
	ToolUseID string // tool_result: the id of the tool_use it answers
	EmptyText bool   // thinking: the thinking text is empty; text: the text is ""
	EmptySig  bool   // thinking: the signature is empty or missing
	// Blank: a text block whose text is empty or whitespace only (in its
	// first MaxString bytes, all the light tree keeps).
	Blank bool
}

// ServerResult reports whether a block type is the result of a server
// tool (web_search_tool_result, advisor_tool_result, mcp_tool_result...):
// it sits in the assistant message of its call, right after it.
func ServerResult(typ string) bool {
	return typ != "tool_result" && strings.HasSuffix(typ, "_tool_result")
}

// ServerCall reports whether a block type calls a server tool (whose
// result the API writes into the same message).
func ServerCall(typ string) bool { return typ == "server_tool_use" || typ == "mcp_tool_use" }

// Entry is the header of one transcript entry: the fields the checks,
// planners and the parentUuid graph use.
type Entry struct {
	Type          string
	Subtype       string
	UUID          string
	Parent        string // parentUuid; "" when null or absent
	HasParent     bool   // the parentUuid key is present (null or not)
	LogicalParent string // logicalParentUuid (compact boundaries)
	Timestamp     string
	Version       string // the Claude Code version that wrote the entry
	RequestID     string // requestId: the API request an assistant entry answers
	SessionID     string
	CWD           string
	AgentID       string
	LeafUUID      string
	IsSidechain   bool
	IsMeta        bool
	MessageID     string
	Model         string // message.model
	Role          string
	Content       any // message.content: string or []any (light tree)
	Blocks        []Block
	// BlankString: message.content is a string, empty or whitespace only
	// (EmptyString: "").
	BlankString, EmptyString bool
}

// IsChain reports whether the entry takes part in the parentUuid chain:
// it has a uuid and a parentUuid field. Metadata entries (summary,
// last-prompt, queue-operation, ...) do not.
func (e *Entry) IsChain() bool { return e.UUID != "" && e.HasParent }

// HeaderKeys are the top-level fields HeaderOf reads.
var HeaderKeys = []string{"type", "subtype", "uuid", "parentUuid", "logicalParentUuid",
	"timestamp", "version", "sessionId", "cwd", "agentId", "leafUuid", "isSidechain", "isMeta", "message", "requestId"}

// HeaderOf extracts the entry header from a light tree. It returns false
// when v is not a JSON object.
func HeaderOf(v any, e *Entry) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	*e = Entry{Blocks: e.Blocks[:0]}
	e.Type = str(m["type"])
	e.Subtype = str(m["subtype"])
	e.UUID = str(m["uuid"])
	if p, ok := m["parentUuid"]; ok {
		e.HasParent = true
		e.Parent = str(p)
	}
	e.LogicalParent = str(m["logicalParentUuid"])
	e.Timestamp = str(m["timestamp"])
	e.Version = str(m["version"])
	e.RequestID = str(m["requestId"])
	e.SessionID = str(m["sessionId"])
	e.CWD = str(m["cwd"])
	e.AgentID = str(m["agentId"])
	e.LeafUUID = str(m["leafUuid"])
	e.IsSidechain, _ = m["isSidechain"].(bool)
	e.IsMeta, _ = m["isMeta"].(bool)
	msg, _ := m["message"].(map[string]any)
	if msg == nil {
		return true
	}
	e.MessageID = str(msg["id"])
	e.Model = str(msg["model"])
	e.Role = str(msg["role"])
	e.Content = msg["content"]
	if s, ok := e.Content.(string); ok && strings.TrimSpace(s) == "" {
		e.BlankString, e.EmptyString = true, s == ""
	}
	blocks, _ := e.Content.([]any)
	for _, b := range blocks {
		bm, ok := b.(map[string]any)
		if !ok {
			e.Blocks = append(e.Blocks, Block{})
			continue
		}
		blk := Block{Type: str(bm["type"])}
		switch blk.Type {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			blk.ID = str(bm["id"])
		case "tool_result":
			blk.ToolUseID = str(bm["tool_use_id"])
		case "thinking":
			blk.EmptyText = str(bm["thinking"]) == ""
			blk.EmptySig = str(bm["signature"]) == ""
		case "text":
			if t, ok := bm["text"].(string); ok {
				blk.EmptyText = t == ""
				blk.Blank = strings.TrimSpace(t) == ""
			}
		default:
			if ServerResult(blk.Type) {
				blk.ToolUseID = str(bm["tool_use_id"])
			}
		}
		e.Blocks = append(e.Blocks, blk)
	}
	return true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// RelocatedCWD returns the relocatedCwd of a relocated entry's line: the
// directory whose project folder Claude Code moved the session's transcript
// into (a worktree entered or left, /cd), "" when the line names none.
func RelocatedCWD(raw []byte) string {
	start, end, ok := Find(raw, "relocatedCwd")
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw[start:end], &s) != nil {
		return ""
	}
	return s
}
