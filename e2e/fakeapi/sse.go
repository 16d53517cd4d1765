package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func (s sseWriter) event(name string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(`{}`)
	}
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, raw)
	if s.f != nil {
		s.f.Flush()
	}
}

// chunks cuts s into pieces of at most n bytes, never inside a UTF-8
// sequence; an empty s gives no piece.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// streamMessage sends msg as the real API streams it: message_start, ping,
// then per block content_block_start, its deltas and content_block_stop,
// then message_delta (stop reason, output usage) and message_stop. With
// full, message_start's usage has an output of 1 and no server tool use,
// and message_delta carries the whole final usage, as the API reports a
// billed reply's.
func streamMessage(w http.ResponseWriter, msg message, full bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := sseWriter{w: w, f: f}

	start := msg
	start.Content = []outBlock{}
	start.StopReason = ""
	startUsage := msg.Usage
	startUsage.OutputTokens = 1
	if startUsage.ServerToolUse != nil {
		startUsage.ServerToolUse = &ServerToolUse{}
	}
	s.event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": start.ID, "type": "message", "role": "assistant", "model": start.Model,
			"content": start.Content, "stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
		},
	})
	s.event("ping", map[string]string{"type": "ping"})

	for i, b := range msg.Content {
		var first outBlock
		var deltas []map[string]any
		empty := ""
		switch b.Type {
		case "text":
			first = outBlock{Type: "text", Text: &empty}
			for _, c := range chunks(deref(b.Text), 24) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
			}
		case "thinking":
			first = outBlock{Type: "thinking", Thinking: &empty, Signature: &empty}
			for _, c := range chunks(deref(b.Thinking), 24) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": c})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": deref(b.Signature)})
		case "tool_use":
			first = outBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage(`{}`)}
			for _, c := range chunks(string(b.Input), 16) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": c})
			}
		default:
			first = b
		}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": first})
		for _, d := range deltas {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}

	var final any = map[string]int{"output_tokens": msg.Usage.OutputTokens}
	if full {
		final = msg.Usage
	}
	s.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": final,
	})
	s.event("message_stop", map[string]string{"type": "message_stop"})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
