package fakeapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Tool is one entry of a request's tools list.
type Tool struct {
	Name        string          `json:"name"`
	Type        string          `json:"type,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// apiRequest is the part of a Messages API request body the fake reads.
type apiRequest struct {
	Model     string          `json:"model"`
	Messages  json.RawMessage `json:"messages"`
	System    json.RawMessage `json:"system"`
	Tools     []Tool          `json:"tools"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
}

// outBlock is one content block of a reply.
type outBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// reply is what the fake answers to one /v1/messages request.
type reply struct {
	Kind       string // what rule produced it: text, tool_use, summary, title, ...
	Blocks     []outBlock
	StopReason string
}

func textBlock(s string) outBlock { return outBlock{Type: "text", Text: &s} }

func (r *reply) addText(s string) { r.Blocks = append(r.Blocks, textBlock(s)) }

// Script commands, recognized in the latest user text.
var commands = []string{"BASH2:", "BASH:", "AGENT:", "WRITE:", "READ:", "TODO:", "THINK:", "MCP:"}

var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// userTexts returns the text blocks of the last user message with every
// <system-reminder> section removed (blocks left empty are dropped), and
// that message's tool_result blocks.
func userTexts(msgs []Message) (texts []string, results []Block) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		for _, b := range msgs[i].Content {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(reminderRE.ReplaceAllString(b.Text, "")); t != "" {
					texts = append(texts, t)
				}
			case "tool_result":
				results = append(results, b)
			}
		}
		return texts, results
	}
	return nil, nil
}

// systemText joins the system prompt, a string or a list of text blocks.
func systemText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// findCommand returns the earliest script command in s that starts a word,
// its offset and the offset of its argument; ok is false when there is none.
func findCommand(s string) (cmd string, at, arg int, ok bool) {
	at = -1
	for _, c := range commands {
		from := 0
		for {
			i := strings.Index(s[from:], c)
			if i < 0 {
				break
			}
			i += from
			if i == 0 || !isWordByte(s[i-1]) {
				if at < 0 || i < at {
					cmd, at, arg = c, i, i+len(c)
				}
				break
			}
			from = i + len(c)
		}
	}
	return cmd, at, arg, at >= 0
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// first returns s, trimmed, cut to n characters.
func first(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// isCompaction tells a /compact (or auto-compact) request: Claude Code asks
// for "a detailed summary of the conversation so far" in the last user
// message, with a system prompt about summarizing conversations.
func isCompaction(texts []string, system string) bool {
	all := strings.ToLower(strings.Join(texts, "\n"))
	if strings.Contains(all, "summary of the conversation") ||
		strings.Contains(all, "summarize this conversation") ||
		strings.Contains(all, "summarize the conversation") {
		return true
	}
	return strings.Contains(strings.ToLower(system), "summarizing conversations")
}

// script builds the reply to a /v1/messages request; see the package
// documentation for the rules.
func (s *Server) script(req *apiRequest, msgs []Message) reply {
	texts, results := userTexts(msgs)
	system := systemText(req.System)
	prompt := strings.Join(texts, "\n")

	switch {
	case isCompaction(texts, system):
		return summaryReply(msgs)
	case req.MaxTokens == 1:
		// Quota and connectivity probes ask for a single token.
		return reply{Kind: "probe", Blocks: []outBlock{textBlock("o")}, StopReason: "max_tokens"}
	case len(req.Tools) == 0:
		return sideReply(prompt, system)
	case len(texts) == 0 && len(results) > 0:
		return reply{Kind: "done", Blocks: []outBlock{textBlock("done: " + first(results[0].ResultText(), 40))}, StopReason: "end_turn"}
	}
	// The command closest to the end of the message wins: later text blocks
	// are what the user typed, earlier ones are context Claude Code adds.
	for i := len(texts) - 1; i >= 0; i-- {
		if _, at, _, ok := findCommand(texts[i]); ok {
			return s.command(req.Tools, texts[i][at:])
		}
	}
	text := "ok"
	if prompt != "" {
		text = "ok: " + first(prompt, 40)
	}
	return reply{Kind: "text", Blocks: []outBlock{textBlock(text)}, StopReason: "end_turn"}
}

// command runs the script command at the start of text.
func (s *Server) command(tools []Tool, text string) reply {
	cmd, _, argAt, _ := findCommand(text)
	arg := strings.TrimSpace(text[argAt:])
	r := reply{Kind: strings.ToLower(strings.TrimSuffix(cmd, ":")), StopReason: "end_turn"}
	switch cmd {
	case "THINK:":
		thought := arg
		rest := ""
		if _, at, _, ok := findCommand(arg); ok {
			thought, rest = strings.TrimSpace(arg[:at]), arg[at:]
		}
		sig := signature(thought)
		r.Blocks = append(r.Blocks, outBlock{Type: "thinking", Thinking: &thought, Signature: &sig})
		if rest == "" {
			r.addText("thought about: " + first(thought, 40))
			return r
		}
		next := s.command(tools, rest)
		r.Blocks = append(r.Blocks, next.Blocks...)
		r.StopReason = next.StopReason
		r.Kind += "+" + next.Kind
		return r
	case "BASH:":
		s.toolUse(&r, tools, []string{"Bash"}, bashInput(arg))
	case "BASH2:":
		for _, c := range strings.Split(arg, ";;") {
			s.toolUse(&r, tools, []string{"Bash"}, bashInput(strings.TrimSpace(c)))
		}
	case "AGENT:":
		s.toolUse(&r, tools, []string{"Agent", "Task"}, map[string]any{
			"description":   "sub task",
			"prompt":        arg,
			"subagent_type": "general-purpose",
			// 2.1.x runs agents in the background unless told otherwise;
			// fitInput drops the key for versions that do not know it.
			"run_in_background": false,
		})
	case "WRITE:":
		path, content, ok := strings.Cut(arg, "::")
		if !ok {
			content = "written by fakeapi"
		}
		s.toolUse(&r, tools, []string{"Write"}, map[string]any{
			"file_path": strings.TrimSpace(path),
			"content":   strings.TrimSpace(content) + "\n",
		})
	case "READ:":
		s.toolUse(&r, tools, []string{"Read"}, map[string]any{"file_path": arg})
	case "TODO:":
		s.toolUse(&r, tools, []string{"TodoWrite"}, todoInput(tools, arg))
	case "MCP:":
		name, input, _ := strings.Cut(arg, " ")
		in := map[string]any{}
		if err := json.Unmarshal([]byte(input), &in); err != nil && strings.TrimSpace(input) != "" {
			r.addText(fmt.Sprintf("fakeapi: MCP: input %q is not a JSON object: %v", input, err))
			return r
		}
		s.toolUse(&r, tools, []string{name}, in)
	}
	return r
}

func bashInput(cmd string) map[string]any {
	return map[string]any{"command": cmd, "description": "Run " + first(cmd, 30)}
}

// toolUse appends a tool_use block for the first of names that the request
// offers, or a text block saying none is offered. The input keeps only the
// properties the tool's schema declares, so strict schemas accept it.
func (s *Server) toolUse(r *reply, tools []Tool, names []string, input map[string]any) {
	var tool *Tool
	for _, n := range names {
		for i := range tools {
			if tools[i].Name == n {
				tool = &tools[i]
				break
			}
		}
		if tool != nil {
			break
		}
	}
	if tool == nil {
		r.addText(fmt.Sprintf("fakeapi: no %s tool offered", strings.Join(names, "/")))
		return
	}
	fitInput(tool.InputSchema, input)
	raw, err := json.Marshal(input)
	if err != nil {
		r.addText("fakeapi: " + err.Error())
		return
	}
	r.Blocks = append(r.Blocks, outBlock{Type: "tool_use", ID: s.newID("toolu_"), Name: tool.Name, Input: raw})
	r.StopReason = "tool_use"
}

// schema is the part of a JSON schema fitInput reads.
type schema struct {
	Properties map[string]struct {
		Type  any             `json:"type"`
		Items json.RawMessage `json:"items"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// fitInput drops the keys of input the schema does not declare and fills
// required booleans that are missing with false.
func fitInput(raw json.RawMessage, input map[string]any) {
	var sc schema
	if len(raw) == 0 || json.Unmarshal(raw, &sc) != nil || len(sc.Properties) == 0 {
		return
	}
	for k := range input {
		if _, ok := sc.Properties[k]; !ok {
			delete(input, k)
		}
	}
	for _, k := range sc.Required {
		if _, ok := input[k]; ok {
			continue
		}
		if t, _ := sc.Properties[k].Type.(string); t == "boolean" {
			input[k] = false
		}
	}
}

// todoInput builds TodoWrite's input for the comma-separated items, with
// the fields the offered tool's schema asks for (they changed over time:
// id and priority early, activeForm later).
func todoInput(tools []Tool, arg string) map[string]any {
	var fields map[string]bool
	for _, t := range tools {
		if t.Name != "TodoWrite" {
			continue
		}
		var sc schema
		if json.Unmarshal(t.InputSchema, &sc) != nil {
			break
		}
		var item schema
		if json.Unmarshal(sc.Properties["todos"].Items, &item) == nil {
			fields = map[string]bool{}
			for k := range item.Properties {
				fields[k] = true
			}
		}
	}
	var todos []map[string]any
	for i, it := range strings.Split(arg, ",") {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		todo := map[string]any{"content": it, "status": "pending"}
		if fields == nil || fields["activeForm"] {
			todo["activeForm"] = it
		}
		if fields["priority"] {
			todo["priority"] = "medium"
		}
		if fields["id"] {
			todo["id"] = fmt.Sprint(i + 1)
		}
		todos = append(todos, todo)
	}
	return map[string]any{"todos": todos}
}

// signature returns a plausible thinking signature: base64, never empty.
func signature(thought string) string {
	sum := sha256.Sum256([]byte("fakeapi thinking: " + thought))
	return base64.StdEncoding.EncodeToString(append(sum[:], sum[:]...))
}

// summaryReply answers a compaction request with a summary that names the
// user's earlier prompts, so a resumed session still knows them.
func summaryReply(msgs []Message) reply {
	var prompts []string
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type != "text" {
				continue
			}
			t := strings.TrimSpace(reminderRE.ReplaceAllString(b.Text, ""))
			if t == "" || strings.HasPrefix(t, "<") || strings.Contains(strings.ToLower(t), "summary of the conversation") {
				continue
			}
			prompts = append(prompts, "   - "+first(strings.ReplaceAll(t, "\n", " "), 80))
		}
	}
	text := "<analysis>\nThe user ran scripted commands against the fake API.\n</analysis>\n\n<summary>\n" +
		"1. Primary Request and Intent: exercise Claude Code against a fake API.\n" +
		"2. All user messages:\n" + strings.Join(prompts, "\n") + "\n" +
		"3. Current Work: nothing pending.\n</summary>"
	return reply{Kind: "summary", Blocks: []outBlock{textBlock(text)}, StopReason: "end_turn"}
}

// jsonKeyRE finds the keys a prompt that describes a JSON answer names:
// "key": or 'key' (boolean), as Claude Code's prompts write them.
var jsonKeyRE = regexp.MustCompile(`["']([A-Za-z_][A-Za-z0-9_]*)["']\s*[:(]`)

// sideReply answers the small requests Claude Code makes without tools:
// session titles, topic detection, summaries of command output and the like.
// A prompt that asks for JSON gets a JSON object with the keys it names.
func sideReply(prompt, system string) reply {
	both := system + "\n" + prompt
	lower := strings.ToLower(both)
	if strings.Contains(both, "<is_displaying_contents>") {
		// Bash output file-path extraction (1.x, 2.0.x).
		text := "<is_displaying_contents>\nfalse\n</is_displaying_contents>\n\n<filepaths>\n</filepaths>"
		return reply{Kind: "filepaths", Blocks: []outBlock{textBlock(text)}, StopReason: "end_turn"}
	}
	if strings.Contains(lower, "json") {
		obj := map[string]any{}
		for _, m := range jsonKeyRE.FindAllStringSubmatch(both, -1) {
			obj[m[1]] = jsonValue(m[1])
		}
		if len(obj) == 0 {
			obj["title"] = "Fake session title"
		}
		raw, _ := json.Marshal(obj)
		return reply{Kind: "json", Blocks: []outBlock{textBlock(string(raw))}, StopReason: "end_turn"}
	}
	if strings.Contains(lower, "title") {
		return reply{Kind: "title", Blocks: []outBlock{textBlock("Fake session title")}, StopReason: "end_turn"}
	}
	return reply{Kind: "side", Blocks: []outBlock{textBlock("ok: " + first(prompt, 40))}, StopReason: "end_turn"}
}

// jsonValue picks a value for a key a side prompt asks for.
func jsonValue(key string) any {
	k := strings.ToLower(key)
	switch {
	case k == "isnewtopic":
		return true // and the title goes with it
	case strings.HasPrefix(k, "is") || strings.HasPrefix(k, "should") || strings.HasPrefix(k, "has"):
		return false
	case strings.Contains(k, "title") || strings.Contains(k, "name") || strings.Contains(k, "topic"):
		return "Fake session title"
	case strings.Contains(k, "count") || strings.Contains(k, "number"):
		return 0
	default:
		return "ok"
	}
}

// newID returns a fresh id such as msg_01… or toolu_01…, unique per server.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	s.ids++
	n := s.ids
	s.mu.Unlock()
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := []byte(prefix + "01")
	// A per-server salt, then the counter: unique and 24 characters long
	// like the real ids.
	v := s.salt
	for i := 0; i < 12; i++ {
		b = append(b, alphabet[v%62])
		v /= 62
	}
	tail := make([]byte, 10)
	for i := len(tail) - 1; i >= 0; i-- {
		tail[i] = alphabet[n%62]
		n /= 62
	}
	return string(append(b, tail...))
}
