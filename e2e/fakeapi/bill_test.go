package fakeapi

import (
	"encoding/json"
	"testing"
)

// TestBill: with Bill, every reply gets a usage of its own, recorded in
// Bills under its message id; a stream starts with an output of 1 and no
// server tool use and ends with the whole usage in message_delta; a reply
// that is not streamed carries it whole.
func TestBill(t *testing.T) {
	s := newServer(t, Options{Bill: true})
	seen := map[Usage]bool{}
	for i := 0; i < 6; i++ {
		stream := i%2 == 0
		status, body := post(t, s, "/v1/messages", request(stream, []map[string]any{bashTool}, userText("BASH: echo hi")))
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		bills := s.Bills()
		if len(bills) != i+1 {
			t.Fatalf("%d bills after %d replies", len(bills), i+1)
		}
		b := bills[i]
		u := b.Usage
		if seen[u] {
			t.Errorf("reply %d billed %+v again", i+1, u)
		}
		seen[u] = true
		if u.CacheCreation == nil || u.CacheCreationInputTokens != u.CacheCreation.Ephemeral5m+u.CacheCreation.Ephemeral1h || u.CacheCreation.Ephemeral1h == 0 || u.CacheReadInputTokens == 0 {
			t.Errorf("reply %d: usage %+v", i+1, u)
		}
		if n := i + 1; (n%3 == 0) != (u.ServerToolUse.WebSearchRequests > 0) || (n%5 == 0) != (u.ServerToolUse.WebFetchRequests > 0) {
			t.Errorf("reply %d: server tool use %+v", n, *u.ServerToolUse)
		}
		var id string
		var final Usage
		if stream {
			events := readSSE(t, body)
			start := events[0].Data["message"].(map[string]any)
			id = start["id"].(string)
			su := start["usage"].(map[string]any)
			if su["output_tokens"].(float64) != 1 || su["server_tool_use"].(map[string]any)["web_search_requests"].(float64) != 0 {
				t.Errorf("message_start usage %v", su)
			}
			for _, e := range events {
				if e.Name == "message_delta" {
					raw, _ := json.Marshal(e.Data["usage"])
					json.Unmarshal(raw, &final)
				}
			}
		} else {
			var m struct {
				ID    string `json:"id"`
				Usage Usage  `json:"usage"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			id, final = m.ID, m.Usage
		}
		if id != b.MessageID || final.OutputTokens != u.OutputTokens || final.InputTokens != u.InputTokens ||
			*final.CacheCreation != *u.CacheCreation || *final.ServerToolUse != *u.ServerToolUse {
			t.Errorf("reply %d (%s): sent %+v, billed %s %+v", i+1, id, final, b.MessageID, u)
		}
	}
	// Without Bill, no bill and the usage of before.
	plain := newServer(t, Options{})
	post(t, plain, "/v1/messages", request(false, []map[string]any{bashTool}, userText("hi")))
	if len(plain.Bills()) != 0 {
		t.Error("a server without Bill billed")
	}
}
