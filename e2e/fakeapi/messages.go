package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Message is one entry of a request's messages array. Content given as a
// plain string is decoded as a single text block.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's list of content blocks.
type Content []Block

// UnmarshalJSON accepts both forms the Messages API accepts: a string or an
// array of blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	if bytes.Equal(data, []byte("null")) {
		*c = nil
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(data, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

// Block is one content block. Only the fields of its Type are set.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText returns the text of a tool_result block's content, which is a
// string or a list of blocks (text blocks are joined with newlines).
func (b Block) ResultText() string {
	raw := bytes.TrimSpace(b.Content)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var texts []string
	for _, x := range blocks {
		if x.Type == "text" {
			texts = append(texts, x.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Text returns the text of every text block, tool_result and tool_use input
// of the message, one per line: handy for "does this history mention X".
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "thinking":
			parts = append(parts, b.Thinking)
		case "tool_result":
			parts = append(parts, b.ResultText())
		case "tool_use":
			parts = append(parts, string(b.Input))
		}
	}
	return strings.Join(parts, "\n")
}

// APIError is an error the fake answers with, shaped like the real API's.
type APIError struct {
	Status  int
	Type    string // e.g. invalid_request_error
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

func invalidRequest(format string, args ...any) *APIError {
	return &APIError{Status: 400, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// CheckSurrogates reports, like the real API, a JSON string escape holding a
// UTF-16 surrogate that has no partner (a high surrogate not followed by a
// low one, or a low one on its own). Go's decoder silently turns those into
// U+FFFD, so the raw body has to be scanned. The position follows Python's
// JSONDecodeError: line and column are 1-based, char is the 0-based
// character offset of the backslash that starts the bad escape.
func CheckSurrogates(body []byte) *APIError {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(body) {
				return nil
			}
			if body[i+1] != 'u' {
				i++ // skip the escaped character
				continue
			}
			hi, ok := hex4(body, i+2)
			if !ok {
				i++
				continue
			}
			switch {
			case hi >= 0xD800 && hi <= 0xDBFF:
				if i+7 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
					lo, ok := hex4(body, i+8)
					if ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
					return surrogateError("invalid low surrogate in string", body, i)
				}
				return surrogateError("no low surrogate in string", body, i)
			case hi >= 0xDC00 && hi <= 0xDFFF:
				return surrogateError("invalid high surrogate in string", body, i)
			}
			i += 5
		}
	}
	return nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

func surrogateError(what string, body []byte, at int) *APIError {
	return positionError(what, body, at)
}

// positionError is the real API's error for a body its JSON parser
// rejects at byte at.
func positionError(what string, body []byte, at int) *APIError {
	char := utf8.RuneCount(body[:at])
	line := 1 + bytes.Count(body[:at], []byte("\n"))
	col := char + 1
	if nl := bytes.LastIndexByte(body[:at], '\n'); nl >= 0 {
		col = utf8.RuneCount(body[nl+1:at]) + 1
	}
	return invalidRequest("The request body is not valid JSON: %s: line %d column %d (char %d)", what, line, col, char)
}

// CheckToolPairing applies the real API's two rules about tool calls, in
// message order, and returns the first violation with the real message text:
//
//   - every tool_use id of an assistant message must be answered by a
//     tool_result block in the message right after it;
//   - every tool_result block must answer a tool_use of the assistant
//     message right before it.
//
// Messages whose role is neither user nor assistant (2.1.330 sends "system"
// messages between turns) are skipped when looking for the message before
// or after.
func CheckToolPairing(msgs []Message) *APIError {
	turns := make([]int, 0, len(msgs)) // indexes of user and assistant messages
	for i, m := range msgs {
		if m.Role == "user" || m.Role == "assistant" {
			turns = append(turns, i)
		}
	}
	for k, i := range turns {
		m := msgs[i]
		switch m.Role {
		case "assistant":
			answered := map[string]bool{}
			if k+1 < len(turns) && msgs[turns[k+1]].Role == "user" {
				for _, b := range msgs[turns[k+1]].Content {
					if b.Type == "tool_result" {
						answered[b.ToolUseID] = true
					}
				}
			}
			var missing []string
			for _, b := range m.Content {
				if b.Type == "tool_use" && !answered[b.ID] {
					missing = append(missing, b.ID)
				}
			}
			if len(missing) > 0 {
				return invalidRequest("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
			}
		case "user":
			calls := map[string]bool{}
			if k > 0 && msgs[turns[k-1]].Role == "assistant" {
				for _, b := range msgs[turns[k-1]].Content {
					if b.Type == "tool_use" {
						calls[b.ID] = true
					}
				}
			}
			for j, b := range m.Content {
				if b.Type == "tool_result" && !calls[b.ToolUseID] {
					return invalidRequest("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
			}
		}
	}
	return nil
}

// toolIDPattern is the real API's pattern of a tool_use id.
var toolIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// CheckToolIDs applies the real API's rules about tool_use ids, with its
// texts: each matches ^[a-zA-Z0-9_-]+$ ("messages.1.content.1.tool_use.id:
// String should match pattern ..."; ids another provider made, such as
// Kimi's functions.Read:0), and no two tool_use blocks of a request share
// one ("messages.1.content.1: `tool_use` ids must be unique", reported at
// the second: anthropics/claude-code#21317, #28515).
func CheckToolIDs(msgs []Message) *APIError {
	for i, m := range msgs {
		for j, b := range m.Content {
			if b.Type == "tool_use" && !toolIDPattern.MatchString(b.ID) {
				return invalidRequest("messages.%d.content.%d.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", i, j)
			}
		}
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		for j, b := range m.Content {
			if b.Type != "tool_use" {
				continue
			}
			if seen[b.ID] {
				return invalidRequest("messages.%d.content.%d: `tool_use` ids must be unique", i, j)
			}
			seen[b.ID] = true
		}
	}
	return nil
}

// CheckBlankText reports, like the real API, a text block of a user or
// assistant message whose text is empty or whitespace only (resumed
// sessions that hold one get it on every request:
// anthropics/claude-code#23390, #59294, #60837), and content given as a
// string that is: the API takes it for one text block, and says of an
// empty one that all messages must have content. raw is the request's
// messages array.
func CheckBlankText(raw json.RawMessage) *APIError {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return nil
	}
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		var texts []string
		if c := bytes.TrimSpace(m.Content); len(c) > 0 && c[0] == '"' {
			var str string
			if json.Unmarshal(c, &str) != nil {
				continue
			}
			if str == "" {
				if m.Role == "assistant" && i == len(msgs)-1 {
					continue
				}
				return invalidRequest("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
			}
			texts = append(texts, str)
		} else {
			var blocks []Block
			if json.Unmarshal(c, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
		}
		for _, t := range texts {
			switch {
			case t == "":
				return invalidRequest("messages: text content blocks must be non-empty")
			case strings.TrimSpace(t) == "":
				return invalidRequest("messages: text content blocks must contain non-whitespace text")
			}
		}
	}
	return nil
}

// CheckServerToolPairing applies the real API's rule about server tools
// (web search, web fetch, code execution, the advisor): a result block
// (web_search_tool_result, advisor_tool_result...) must follow its
// server_tool_use in the same assistant message. A result split from its
// call (a slash command's or a hook's entry between them in a resumed
// transcript) gets 400 with the real text
// (anthropics/claude-code#63507, #81233, #92509, #95463).
func CheckServerToolPairing(msgs []Message) *APIError {
	for i, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		calls := map[string]bool{}
		for j, b := range m.Content {
			switch {
			case b.Type == "server_tool_use" || b.Type == "mcp_tool_use":
				calls[b.ID] = true
			case b.Type != "tool_result" && strings.HasSuffix(b.Type, "_tool_result") && !calls[b.ToolUseID]:
				call := "server_tool_use"
				if b.Type == "mcp_tool_result" {
					call = "mcp_tool_use"
				}
				return invalidRequest("messages.%d.content.%d: unexpected `tool_use_id` found in `%s` blocks: %s. Each `%s` block must have a corresponding `%s` block before it.", i, j, b.Type, b.ToolUseID, b.Type, call)
			}
		}
	}
	return nil
}

// CheckEndOfData reports a body the real API's parser finds ending early,
// with its text ("unexpected end of data", anthropics/claude-code#94055):
// a body cut short, or one holding a raw NUL byte, where that parser
// stops. A NUL escaped as \u0000 is fine.
func CheckEndOfData(body []byte) *APIError {
	at := bytes.IndexByte(body, 0)
	if at < 0 {
		if json.Valid(body) || !endsEarly(body) {
			return nil
		}
		at = len(body)
	}
	return positionError("unexpected end of data", body, at)
}

// endsEarly reports whether body is a JSON text cut off: its syntax error,
// if any, is at its end.
func endsEarly(body []byte) bool {
	var v any
	err := json.Unmarshal(body, &v)
	var se *json.SyntaxError
	return errors.As(err, &se) && se.Offset >= int64(len(body)) && strings.Contains(se.Error(), "unexpected end of JSON input")
}
