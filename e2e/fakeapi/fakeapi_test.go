package fakeapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// post sends body to path and returns the status and the response body.
func post(t *testing.T, s *Server, path string, body any) (int, []byte) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// readSSE parses a text/event-stream body: "event:" and "data:" lines,
// events separated by a blank line.
func readSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	var data strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name == "" && data.Len() == 0 {
				continue
			}
			if err := json.Unmarshal([]byte(data.String()), &cur.Data); err != nil {
				t.Fatalf("event %q: bad data %q: %v", cur.Name, data.String(), err)
			}
			if typ, _ := cur.Data["type"].(string); typ != cur.Name {
				t.Errorf("event %q carries type %q", cur.Name, typ)
			}
			events = append(events, cur)
			cur = sseEvent{}
			data.Reset()
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.Name != "" || data.Len() != 0 {
		t.Fatalf("stream ends inside an event")
	}
	return events
}

// assembled is a message rebuilt from a stream.
type assembled struct {
	ID         string
	StopReason string
	Blocks     []map[string]any // with "text", "thinking", "signature", "input" (parsed)
}

// assemble checks the event order of a stream and rebuilds the message.
func assemble(t *testing.T, events []sseEvent) assembled {
	t.Helper()
	var m assembled
	var partial []string
	state := "start"
	for _, e := range events {
		switch e.Name {
		case "message_start":
			if state != "start" {
				t.Fatalf("message_start in state %s", state)
			}
			msg := e.Data["message"].(map[string]any)
			m.ID, _ = msg["id"].(string)
			state = "message"
		case "ping":
			if state == "start" || state == "done" {
				t.Fatalf("ping in state %s", state)
			}
		case "content_block_start":
			if state != "message" {
				t.Fatalf("content_block_start in state %s", state)
			}
			if idx := int(e.Data["index"].(float64)); idx != len(m.Blocks) {
				t.Fatalf("content_block_start index %d, want %d", idx, len(m.Blocks))
			}
			b := e.Data["content_block"].(map[string]any)
			m.Blocks = append(m.Blocks, b)
			partial = partial[:0]
			state = "block"
		case "content_block_delta":
			if state != "block" {
				t.Fatalf("content_block_delta in state %s", state)
			}
			b := m.Blocks[len(m.Blocks)-1]
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				b["signature"] = d["signature"]
			case "input_json_delta":
				partial = append(partial, d["partial_json"].(string))
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			if state != "block" {
				t.Fatalf("content_block_stop in state %s", state)
			}
			b := m.Blocks[len(m.Blocks)-1]
			if b["type"] == "tool_use" {
				var input any
				if err := json.Unmarshal([]byte(strings.Join(partial, "")), &input); err != nil {
					t.Fatalf("tool input %q: %v", strings.Join(partial, ""), err)
				}
				b["input"] = input
			}
			state = "message"
		case "message_delta":
			if state != "message" {
				t.Fatalf("message_delta in state %s", state)
			}
			d := e.Data["delta"].(map[string]any)
			m.StopReason, _ = d["stop_reason"].(string)
			if _, ok := e.Data["usage"].(map[string]any)["output_tokens"]; !ok {
				t.Errorf("message_delta without usage.output_tokens")
			}
			state = "delta"
		case "message_stop":
			if state != "delta" {
				t.Fatalf("message_stop in state %s", state)
			}
			state = "done"
		default:
			t.Fatalf("unknown event %q", e.Name)
		}
	}
	if state != "done" {
		t.Fatalf("stream ended in state %s", state)
	}
	return m
}

var bashTool = map[string]any{"name": "Bash", "input_schema": map[string]any{
	"type":       "object",
	"properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
	"required":   []string{"command"},
}}

func tool(name string) map[string]any { return map[string]any{"name": name} }

func userText(texts ...string) map[string]any {
	var blocks []map[string]any
	for _, t := range texts {
		blocks = append(blocks, map[string]any{"type": "text", "text": t})
	}
	return map[string]any{"role": "user", "content": blocks}
}

func request(stream bool, tools []map[string]any, msgs ...map[string]any) map[string]any {
	r := map[string]any{"model": "claude-test", "max_tokens": 1024, "messages": msgs, "stream": stream}
	if tools != nil {
		r["tools"] = tools
	}
	return r
}

func TestStreamToolUse(t *testing.T) {
	s := newServer(t, Options{})
	status, body := post(t, s, "/v1/messages?beta=true", request(true, []map[string]any{bashTool}, userText("BASH: echo hi")))
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	events := readSSE(t, body)
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
	}
	want := "message_start ping content_block_start"
	if got := strings.Join(names[:3], " "); got != want {
		t.Errorf("first events %q, want %q", got, want)
	}
	m := assemble(t, events)
	if !strings.HasPrefix(m.ID, "msg_") {
		t.Errorf("message id %q", m.ID)
	}
	if m.StopReason != "tool_use" || len(m.Blocks) != 1 {
		t.Fatalf("stop %q, blocks %v", m.StopReason, m.Blocks)
	}
	b := m.Blocks[0]
	if b["type"] != "tool_use" || b["name"] != "Bash" || !strings.HasPrefix(b["id"].(string), "toolu_") {
		t.Errorf("block %v", b)
	}
	input := b["input"].(map[string]any)
	if input["command"] != "echo hi" || input["description"] == "" {
		t.Errorf("input %v", input)
	}
}

func TestStreamThinkingAndText(t *testing.T) {
	s := newServer(t, Options{})
	thought := "a long thought that spans several deltas, with ünïcödé"
	_, body := post(t, s, "/v1/messages", request(true, []map[string]any{bashTool}, userText("THINK: "+thought)))
	events := readSSE(t, body)
	m := assemble(t, events)
	if len(m.Blocks) != 2 {
		t.Fatalf("blocks %v", m.Blocks)
	}
	if m.Blocks[0]["type"] != "thinking" || m.Blocks[0]["thinking"] != thought {
		t.Errorf("thinking block %v", m.Blocks[0])
	}
	if sig, _ := m.Blocks[0]["signature"].(string); sig == "" {
		t.Errorf("empty signature")
	}
	if m.Blocks[1]["type"] != "text" || !strings.Contains(m.Blocks[1]["text"].(string), "a long thought") {
		t.Errorf("text block %v", m.Blocks[1])
	}
	if m.StopReason != "end_turn" {
		t.Errorf("stop reason %q", m.StopReason)
	}
	var kinds []string
	for _, e := range events {
		if e.Name == "content_block_delta" {
			kinds = append(kinds, e.Data["delta"].(map[string]any)["type"].(string))
		}
	}
	if !strings.Contains(strings.Join(kinds, " "), "thinking_delta thinking_delta signature_delta text_delta") {
		t.Errorf("delta kinds %v", kinds)
	}
}

// reply is the non-streaming answer.
type replyMsg struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"`
	Role       string  `json:"role"`
	Model      string  `json:"model"`
	Content    []Block `json:"content"`
	StopReason string  `json:"stop_reason"`
	Usage      struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func ask(t *testing.T, s *Server, req map[string]any) replyMsg {
	t.Helper()
	status, body := post(t, s, "/v1/messages", req)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var m replyMsg
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("reply %s: %v", body, err)
	}
	if m.Type != "message" || m.Role != "assistant" || m.Model != "claude-test" || !strings.HasPrefix(m.ID, "msg_") {
		t.Errorf("reply envelope %+v", m)
	}
	if m.Usage.InputTokens <= 0 || m.Usage.OutputTokens <= 0 || m.Usage.InputTokens > 10000 {
		t.Errorf("usage %+v", m.Usage)
	}
	return m
}

func input(t *testing.T, b Block) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b.Input, &m); err != nil {
		t.Fatalf("input %s: %v", b.Input, err)
	}
	return m
}

func TestScriptCommands(t *testing.T) {
	s := newServer(t, Options{})
	all := []map[string]any{bashTool, tool("Agent"), tool("Write"), tool("Read"), tool("TodoWrite")}

	t.Run("bash ignores reminders", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("<system-reminder>\nREAD: /nope\n</system-reminder>", "BASH: ls -la")))
		if len(m.Content) != 1 || m.Content[0].Name != "Bash" || input(t, m.Content[0])["command"] != "ls -la" || m.StopReason != "tool_use" {
			t.Errorf("got %+v", m)
		}
	})
	t.Run("bash2", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("BASH2: echo a ;; echo b")))
		if len(m.Content) != 2 {
			t.Fatalf("got %+v", m.Content)
		}
		if input(t, m.Content[0])["command"] != "echo a" || input(t, m.Content[1])["command"] != "echo b" {
			t.Errorf("commands %s %s", m.Content[0].Input, m.Content[1].Input)
		}
		if m.Content[0].ID == m.Content[1].ID {
			t.Errorf("same id %s", m.Content[0].ID)
		}
	})
	t.Run("agent", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("AGENT: BASH: echo sub")))
		in := input(t, m.Content[0])
		if m.Content[0].Name != "Agent" || in["prompt"] != "BASH: echo sub" || in["subagent_type"] != "general-purpose" || in["description"] != "sub task" {
			t.Errorf("got %s %v", m.Content[0].Name, in)
		}
	})
	t.Run("task", func(t *testing.T) {
		m := ask(t, s, request(false, []map[string]any{bashTool, tool("Task")}, userText("AGENT: do it")))
		if len(m.Content) != 1 || m.Content[0].Name != "Task" {
			t.Errorf("got %+v", m.Content)
		}
	})
	t.Run("agent schema filter", func(t *testing.T) {
		agent := map[string]any{"name": "Agent", "input_schema": map[string]any{
			"properties": map[string]any{"prompt": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
		}}
		m := ask(t, s, request(false, []map[string]any{agent}, userText("AGENT: x")))
		if in := input(t, m.Content[0]); len(in) != 2 || in["prompt"] != "x" {
			t.Errorf("input %v", in)
		}
	})
	t.Run("write", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("WRITE: /tmp/x.txt :: some text")))
		in := input(t, m.Content[0])
		if m.Content[0].Name != "Write" || in["file_path"] != "/tmp/x.txt" || in["content"] != "some text\n" {
			t.Errorf("got %s %v", m.Content[0].Name, in)
		}
	})
	t.Run("mcp", func(t *testing.T) {
		mcpTool := tool("mcp__cfix__search_sessions")
		m := ask(t, s, request(false, append(all, mcpTool), userText(`MCP: mcp__cfix__search_sessions {"query": "zebra", "limit": 3}`)))
		if len(m.Content) != 1 || m.Content[0].Name != "mcp__cfix__search_sessions" || input(t, m.Content[0])["query"] != "zebra" || input(t, m.Content[0])["limit"] != 3.0 {
			t.Errorf("got %+v", m.Content)
		}
		m = ask(t, s, request(false, append(all, mcpTool), userText(`MCP: mcp__cfix__search_sessions {oops`)))
		if len(m.Content) != 1 || m.Content[0].Type != "text" || !strings.Contains(m.Content[0].Text, "not a JSON object") {
			t.Errorf("bad input: %+v", m.Content)
		}
	})
	t.Run("read", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("READ: /etc/hostname")))
		if m.Content[0].Name != "Read" || input(t, m.Content[0])["file_path"] != "/etc/hostname" {
			t.Errorf("got %+v", m.Content)
		}
	})
	t.Run("todo", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("TODO: plan, build")))
		todos := input(t, m.Content[0])["todos"].([]any)
		if m.Content[0].Name != "TodoWrite" || len(todos) != 2 {
			t.Fatalf("got %+v", m.Content)
		}
		first := todos[0].(map[string]any)
		if first["content"] != "plan" || first["status"] != "pending" || first["activeForm"] != "plan" {
			t.Errorf("todo %v", first)
		}
	})
	t.Run("todo old schema", func(t *testing.T) {
		old := map[string]any{"name": "TodoWrite", "input_schema": map[string]any{"properties": map[string]any{"todos": map[string]any{
			"type": "array",
			"items": map[string]any{"properties": map[string]any{
				"content": map[string]any{}, "status": map[string]any{}, "priority": map[string]any{}, "id": map[string]any{},
			}},
		}}}}
		m := ask(t, s, request(false, []map[string]any{old}, userText("TODO: a, b")))
		todo := input(t, m.Content[0])["todos"].([]any)[1].(map[string]any)
		if todo["id"] != "2" || todo["priority"] != "medium" || todo["activeForm"] != nil {
			t.Errorf("todo %v", todo)
		}
	})
	t.Run("think then bash", func(t *testing.T) {
		m := ask(t, s, request(false, all, userText("THINK: hmm BASH: pwd")))
		if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != "hmm" || m.Content[0].Signature == "" ||
			m.Content[1].Name != "Bash" || m.StopReason != "tool_use" {
			t.Errorf("got %+v", m)
		}
	})
	t.Run("tool results", func(t *testing.T) {
		m := ask(t, s, request(false, all,
			userText("BASH: echo 0123456789012345678901234567890123456789xyz"),
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []map[string]any{
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": []map[string]any{{"type": "text", "text": "0123456789012345678901234567890123456789xyz"}}},
				{"type": "text", "text": "<system-reminder>BASH: no</system-reminder>"},
			}},
		))
		if len(m.Content) != 1 || m.Content[0].Text != "done: 0123456789012345678901234567890123456789" || m.StopReason != "end_turn" {
			t.Errorf("got %+v", m)
		}
	})
	t.Run("string content and default", func(t *testing.T) {
		m := ask(t, s, request(false, all, map[string]any{"role": "user", "content": "hello there, this prompt is longer than forty characters"}))
		if m.Content[0].Text != "ok: hello there, this prompt is longer than " || m.StopReason != "end_turn" {
			t.Errorf("got %+v", m.Content)
		}
	})
	t.Run("tool not offered", func(t *testing.T) {
		m := ask(t, s, request(false, []map[string]any{tool("Read")}, userText("BASH: ls")))
		if m.Content[0].Type != "text" || !strings.Contains(m.Content[0].Text, "no Bash tool") || m.StopReason != "end_turn" {
			t.Errorf("got %+v", m)
		}
	})
	t.Run("compaction", func(t *testing.T) {
		m := ask(t, s, request(false, all,
			userText("hello, first session"),
			map[string]any{"role": "assistant", "content": "ok"},
			userText("Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests."),
		))
		text := m.Content[0].Text
		if !strings.Contains(text, "<summary>") || !strings.Contains(text, "</summary>") || !strings.Contains(text, "hello, first session") {
			t.Errorf("summary %q", text)
		}
	})
	t.Run("title", func(t *testing.T) {
		m := ask(t, s, request(false, nil, userText("Please write a 5-10 word title for the following conversation:\n\nUser: BASH: ls\n\nRespond with the title for the conversation and nothing else.")))
		if len(m.Content) != 1 || m.Content[0].Type != "text" || m.Content[0].Text == "" || strings.HasPrefix(m.Content[0].Text, "{") {
			t.Errorf("got %+v", m.Content)
		}
	})
	t.Run("json side request", func(t *testing.T) {
		req := request(false, nil, userText("Analyze if this message indicates a new conversation topic. Format your response as a JSON object with two fields: \"isNewTopic\": boolean, \"title\": string."))
		m := ask(t, s, req)
		var obj map[string]any
		if err := json.Unmarshal([]byte(m.Content[0].Text), &obj); err != nil {
			t.Fatalf("not JSON: %q", m.Content[0].Text)
		}
		if obj["isNewTopic"] != true || obj["title"] == nil || len(obj) != 2 {
			t.Errorf("object %v", obj)
		}
	})
	t.Run("json side request, quoted keys", func(t *testing.T) {
		req := request(false, nil, userText("hello"))
		req["system"] = []map[string]any{{"type": "text", "text": "Format your response as a JSON object with two fields: 'isDone' (boolean) and 'summary' (string)."}}
		m := ask(t, s, req)
		var obj map[string]any
		if err := json.Unmarshal([]byte(m.Content[0].Text), &obj); err != nil {
			t.Fatalf("not JSON: %q", m.Content[0].Text)
		}
		if obj["isDone"] != false || obj["summary"] != "ok" || len(obj) != 2 {
			t.Errorf("object %v", obj)
		}
	})
	t.Run("probe", func(t *testing.T) {
		req := request(false, nil, userText("quota"))
		req["max_tokens"] = 1
		m := ask(t, s, req)
		if m.StopReason != "max_tokens" || len(m.Content) != 1 {
			t.Errorf("got %+v", m)
		}
	})
}

func TestSubagentRequest(t *testing.T) {
	// A subagent's first user message is the AGENT prompt: it must be
	// answered by the same rules.
	s := newServer(t, Options{})
	m := ask(t, s, request(false, []map[string]any{bashTool},
		map[string]any{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "<system-reminder>\ncontext\n</system-reminder>"},
			{"type": "text", "text": "BASH: echo sub"},
		}},
		map[string]any{"role": "system", "content": "# Environment"},
	))
	if len(m.Content) != 1 || m.Content[0].Name != "Bash" || input(t, m.Content[0])["command"] != "echo sub" {
		t.Errorf("got %+v", m.Content)
	}
}

func apiError(t *testing.T, s *Server, body any) (int, string, string) {
	t.Helper()
	status, raw := post(t, s, "/v1/messages", body)
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error body %s: %v", raw, err)
	}
	if status != 200 && e.Type != "error" {
		t.Errorf("error envelope %s", raw)
	}
	return status, e.Error.Type, e.Error.Message
}

func toolUse(ids ...string) map[string]any {
	var blocks []map[string]any
	for _, id := range ids {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "ls"}})
	}
	return map[string]any{"role": "assistant", "content": blocks}
}

func toolResult(ids ...string) map[string]any {
	var blocks []map[string]any
	for _, id := range ids {
		blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": id, "content": "x"})
	}
	return map[string]any{"role": "user", "content": blocks}
}

func TestToolPairingErrors(t *testing.T) {
	s := newServer(t, Options{})
	tools := []map[string]any{bashTool}
	cases := []struct {
		name string
		msgs []map[string]any
		want string
	}{
		{
			name: "missing result",
			msgs: []map[string]any{userText("BASH: ls"), toolUse("toolu_A"), userText("next")},
			want: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		},
		{
			name: "one of two parallel results missing",
			msgs: []map[string]any{userText("x"), toolUse("toolu_A", "toolu_B"), toolResult("toolu_A"), map[string]any{"role": "assistant", "content": "ok"}, userText("y")},
			want: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		},
		{
			name: "both missing, last message",
			msgs: []map[string]any{userText("x"), map[string]any{"role": "assistant", "content": "a"}, userText("y"), toolUse("toolu_A", "toolu_B")},
			want: "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A, toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		},
		{
			name: "orphan result",
			msgs: []map[string]any{userText("x"), toolUse("toolu_A"), map[string]any{"role": "user", "content": []map[string]any{
				{"type": "tool_result", "tool_use_id": "toolu_A", "content": "x"},
				{"type": "tool_result", "tool_use_id": "toolu_Z", "content": "x"},
			}}},
			want: "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		},
		{
			name: "result in first message",
			msgs: []map[string]any{toolResult("toolu_Q")},
			want: "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_Q. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, typ, msg := apiError(t, s, request(true, tools, c.msgs...))
			if status != 400 || typ != "invalid_request_error" || msg != c.want {
				t.Errorf("got %d %s %q\nwant 400 invalid_request_error %q", status, typ, msg, c.want)
			}
		})
	}
	// The well-formed history is accepted.
	ask(t, s, request(false, tools, userText("x"), toolUse("toolu_A", "toolu_B"), toolResult("toolu_B", "toolu_A")))
	// Recorded with the status it got.
	reqs := s.Requests()
	if reqs[0].Status != 400 || !strings.Contains(reqs[0].Reply, "toolu_A") || reqs[len(reqs)-1].Status != 200 {
		t.Errorf("recorded statuses: first %d %q, last %d", reqs[0].Status, reqs[0].Reply, reqs[len(reqs)-1].Status)
	}
}

func TestLoneSurrogate(t *testing.T) {
	s := newServer(t, Options{})
	prefix := `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"héllo `
	body := prefix + `\ud83d cut"}]}`
	status, typ, msg := apiError(t, s, body)
	col := len([]rune(prefix)) + 1
	want := fmt.Sprintf("The request body is not valid JSON: no low surrogate in string: line 1 column %d (char %d)", col, col-1)
	if status != 400 || typ != "invalid_request_error" || msg != want {
		t.Errorf("got %d %s %q, want %q", status, typ, msg, want)
	}
	// A lone low surrogate.
	if _, _, msg := apiError(t, s, prefix+`\udc00"}]}`); !strings.Contains(msg, "invalid high surrogate in string") {
		t.Errorf("lone low surrogate: %q", msg)
	}
	// A proper pair and an escaped backslash before "ud83d" are fine.
	for _, ok := range []string{prefix + `\ud83d\ude00"}]}`, prefix + `\\ud83d"}]}`} {
		if status, _ := post(t, s, "/v1/messages", ok); status != 200 {
			t.Errorf("body %s: status %d", ok, status)
		}
	}
}

func TestCountTokens(t *testing.T) {
	s := newServer(t, Options{})
	status, body := post(t, s, "/v1/messages/count_tokens", request(false, nil, userText("hello")))
	var got map[string]int
	if err := json.Unmarshal(body, &got); err != nil || status != 200 {
		t.Fatalf("status %d body %s: %v", status, body, err)
	}
	if n, ok := got["input_tokens"]; !ok || n <= 0 || len(got) != 1 {
		t.Errorf("got %v", got)
	}
}

func TestOtherPaths(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	s := newServer(t, Options{Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}})
	for path, want := range map[string]int{"/api/hello": 200, "/v1/models": 200, "/api/oauth/profile": 200, "/nothing": 404} {
		resp, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 4 || s.Len() != 4 {
		t.Errorf("logged %q, recorded %d", logged, s.Len())
	}
}

func TestRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api-requests.jsonl")
	s := newServer(t, Options{RecordPath: path})
	ask(t, s, request(false, []map[string]any{bashTool}, userText("hello")))
	post(t, s, "/v1/messages/count_tokens", request(false, nil, userText("count me")))
	resp, err := http.Get(s.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status, body := post(t, s, "/v1/messages", request(true, []map[string]any{bashTool}, userText("second"), map[string]any{"role": "assistant", "content": "ok"}, userText("third"))); status != 200 {
		t.Fatalf("stream: %d %s", status, body)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.N != i+1 {
			t.Errorf("request %d has N %d", i, r.N)
		}
	}
	r := reqs[0]
	if !r.IsMessages() || r.Model != "claude-test" || r.Stream || r.Status != 200 || len(r.Tools) != 1 || r.Tools[0] != "Bash" ||
		r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(r.Body), "hello") {
		t.Errorf("request 1: %+v", r)
	}
	if reqs[1].IsMessages() || reqs[1].Path != "/v1/messages/count_tokens" || reqs[2].URL != "/api/hello" {
		t.Errorf("requests 2, 3: %s %s", reqs[1].URL, reqs[2].URL)
	}
	if !reqs[3].Stream || !strings.Contains(reqs[3].Text(), "second") {
		t.Errorf("request 4: %+v", reqs[3])
	}
	msgs := s.Messages()
	if len(msgs) != 2 || len(msgs[0]) != 1 || len(msgs[1]) != 3 || msgs[1][2].Text() != "third" {
		t.Errorf("Messages() = %+v", msgs)
	}
	if since := s.Since(3); len(since) != 1 || since[0].N != 4 {
		t.Errorf("Since(3) = %+v", since)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines in %s", len(lines), raw)
	}
	var line struct {
		N        int       `json:"n"`
		URL      string    `json:"url"`
		Messages []Message `json:"messages"`
		Model    *string   `json:"model"`
	}
	if err := json.Unmarshal([]byte(lines[3]), &line); err != nil {
		t.Fatal(err)
	}
	if line.N != 4 || line.URL != "/v1/messages" || len(line.Messages) != 3 || line.Model == nil || *line.Model != "claude-test" {
		t.Errorf("line 4: %s", lines[3])
	}
	if err := json.Unmarshal([]byte(lines[2]), &line); err != nil || line.Model != nil || line.URL != "/api/hello" {
		t.Errorf("line 3: %s (%v)", lines[2], err)
	}
}

func TestConcurrentRequestsAndUniqueIDs(t *testing.T) {
	s := newServer(t, Options{})
	const n = 40
	ids := make(chan string, 2*n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body := post(t, s, "/v1/messages", request(false, []map[string]any{bashTool}, userText("BASH: true")))
			var m replyMsg
			if status != 200 || json.Unmarshal(body, &m) != nil {
				t.Errorf("status %d: %s", status, body)
				return
			}
			ids <- m.ID
			ids <- m.Content[0].ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("duplicate id %s", id)
		}
		seen[id] = true
	}
	if len(seen) != 2*n || s.Len() != n {
		t.Errorf("%d ids, %d requests", len(seen), s.Len())
	}
}

func TestBadBody(t *testing.T) {
	s := newServer(t, Options{})
	status, typ, msg := apiError(t, s, `{"model": "x", "messages": [`)
	if status != 400 || typ != "invalid_request_error" || !strings.HasPrefix(msg, "The request body is not valid JSON") {
		t.Errorf("got %d %s %q", status, typ, msg)
	}
	status, _, msg = apiError(t, s, `{"model": "x"}`)
	if status != 400 || msg != "messages: Field required" {
		t.Errorf("got %d %q", status, msg)
	}
}

func TestBlankText(t *testing.T) {
	s := newServer(t, Options{})
	text := func(role string, texts ...string) map[string]any {
		var c []map[string]any
		for _, x := range texts {
			c = append(c, map[string]any{"type": "text", "text": x})
		}
		return map[string]any{"role": role, "content": c}
	}
	cases := []struct {
		msgs []map[string]any
		want string
	}{
		{[]map[string]any{userText("x"), text("assistant", "\n\n", "answer"), userText("y")}, "messages: text content blocks must contain non-whitespace text"},
		{[]map[string]any{userText("x"), text("assistant", "", "answer"), userText("y")}, "messages: text content blocks must be non-empty"},
		{[]map[string]any{text("user", " ", "x")}, "messages: text content blocks must contain non-whitespace text"},
	}
	for _, c := range cases {
		if status, _, msg := apiError(t, s, request(false, nil, c.msgs...)); status != 400 || msg != c.want {
			t.Errorf("got %d %q, want 400 %q", status, msg, c.want)
		}
	}
	// Content given as a string.
	if _, _, msg := apiError(t, s, request(false, nil, userText("x"), map[string]any{"role": "assistant", "content": "a"}, map[string]any{"role": "user", "content": ""})); msg != "messages.2: all messages must have non-empty content except for the optional final assistant message" {
		t.Errorf("empty string: %q", msg)
	}
	if _, _, msg := apiError(t, s, request(false, nil, map[string]any{"role": "user", "content": " \n"})); msg != "messages: text content blocks must contain non-whitespace text" {
		t.Errorf("whitespace string: %q", msg)
	}
	ask(t, s, request(false, nil, userText("x"), text("assistant", "a", "b"), userText("y")))
}

func TestServerToolPairing(t *testing.T) {
	s := newServer(t, Options{})
	use := map[string]any{"type": "server_tool_use", "id": "srvtoolu_A", "name": "advisor", "input": map[string]any{}}
	result := map[string]any{"type": "advisor_tool_result", "tool_use_id": "srvtoolu_A", "content": map[string]any{"type": "advisor_result", "text": "go"}}
	asst := func(blocks ...map[string]any) map[string]any {
		return map[string]any{"role": "assistant", "content": blocks}
	}
	// Split by a user message (a slash command's output between them).
	_, _, msg := apiError(t, s, request(false, nil, userText("x"), asst(use), userText("/rename"), asst(result, map[string]any{"type": "text", "text": "ok"}), userText("y")))
	want := "messages.3.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_A. Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it."
	if msg != want {
		t.Errorf("got %q\nwant %q", msg, want)
	}
	// The result before its call.
	if _, _, msg := apiError(t, s, request(false, nil, userText("x"), asst(result, use), userText("y"))); !strings.Contains(msg, "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result`") {
		t.Errorf("result first: %q", msg)
	}
	ask(t, s, request(false, nil, userText("x"), asst(use, result), userText("y")))
}

func TestEndOfData(t *testing.T) {
	s := newServer(t, Options{})
	prefix := `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"bin`
	for _, c := range []struct{ body, want string }{
		{prefix + "\x00" + `out"}]}`, fmt.Sprintf("The request body is not valid JSON: unexpected end of data: line 1 column %d (char %d)", len(prefix)+1, len(prefix))},
		{prefix + `out`, fmt.Sprintf("The request body is not valid JSON: unexpected end of data: line 1 column %d (char %d)", len(prefix)+4, len(prefix)+3)},
	} {
		if status, _, msg := apiError(t, s, c.body); status != 400 || msg != c.want {
			t.Errorf("got %d %q, want %q", status, msg, c.want)
		}
	}
	// An escaped NUL is fine.
	if status, _ := post(t, s, "/v1/messages", prefix+`\u0000out"}]}`); status != 200 {
		t.Errorf("escaped NUL: status %d", status)
	}
}

// TestToolIDs: the real API's rules on tool_use ids, with its texts (a
// Kimi-style session's ids, which restart in each message).
func TestToolIDs(t *testing.T) {
	s := newServer(t, Options{})
	tools := []map[string]any{bashTool}
	_, _, msg := apiError(t, s, request(false, tools, userText("x"), toolUse("functions.Read:0"), toolResult("functions.Read:0"), userText("y")))
	if want := "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"; msg != want {
		t.Errorf("pattern: got %q\nwant %q", msg, want)
	}
	_, _, msg = apiError(t, s, request(false, tools, userText("x"), toolUse("functions_Read_0"), toolResult("functions_Read_0"), toolUse("functions_Read_0"), toolResult("functions_Read_0"), userText("y")))
	if want := "messages.3.content.0: `tool_use` ids must be unique"; msg != want {
		t.Errorf("unique: got %q\nwant %q", msg, want)
	}
	ask(t, s, request(false, tools, userText("x"), toolUse("functions_Read_0"), toolResult("functions_Read_0"), toolUse("functions_Read_1"), toolResult("functions_Read_1"), userText("y")))
}
