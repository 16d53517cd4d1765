package session

import "testing"

// TestAttachmentFaults reads the shapes of attachment entries the clients
// were measured with.
func TestAttachmentFaults(t *testing.T) {
	if len(AttachRules) > 32 {
		t.Fatalf("%d rules: AttachFaults holds 32", len(AttachRules))
	}
	p := NewParser()
	for _, c := range []struct {
		line string
		want AttachFaults
	}{
		{`{"type":"attachment","attachment":{"type":"file","filename":"/a","content":{"type":"text"}}}`, 0},
		{`{"type":"attachment","attachment":{"type":"file","filename":"/a"}}`, 1 << 1},
		{`{"type":"attachment","attachment":{"type":"file","filename":"/a","content":null}}`, 1 << 1},
		{`{"type":"attachment","attachment":{"type":"file","content":"text"}}`, 0}, // read as undefined
		{`{"type":"attachment","attachment":{"type":"nested_memory","path":"/m"}}`, 1 << 2},
		{`{"type":"attachment","attachment":{"type":"todo_reminder","content":null,"itemCount":0}}`, 1 << 4},
		{`{"type":"attachment","attachment":{"type":"task_reminder","content":"x"}}`, 1 << 3},
		{`{"type":"attachment","attachment":{"type":"task_reminder","content":[{"id":"1"}]}}`, 0},
		{`{"type":"attachment","attachment":{"type":"hook_success","stdout":5}}`, 1 << 11},
		{`{"type":"attachment","attachment":{"type":"hook_success","stdout":{"a":1}}}`, 1 << 11},
		{`{"type":"attachment","attachment":{"type":"hook_success","stdout":null}}`, 0},
		{`{"type":"attachment","attachment":{"type":"hook_success","stdout":"ok"}}`, 0},
		{`{"type":"attachment","attachment":{"type":"deferred_tools_delta","addedLines":"x","removedNames":[]}}`, 1 << 8},
		{`{"type":"attachment","attachment":{"type":"edited_text_file","filename":5}}`, 1 << 15},
		{`{"type":"attachment","attachment":{"type":"edited_text_file","snippet":"x"}}`, 0},
		{`{"type":"attachment","attachment":{"type":"hook_additional_context","content":"x"}}`, 1 << 5},
		{`{"type":"attachment","attachment":{"type":"hook_additional_context","content":["x"]}}`, 0},
		{`{"type":"attachment","attachment":{"type":"agent_listing_delta","addedTypes":[]}}`, 1<<6 | 1<<7},
		{`{"type":"attachment","attachment":{"type":"skill_listing","content":null}}`, 0},
		{`{"type":"attachment","attachment":null}`, 1},
		{`{"type":"attachment"}`, 1},
		{`{"type":"attachment","attachment":"x"}`, 1},
		{`{"type":"attachment","attachment":[]}`, 0},
		{`{"attachment":{"content":null,"type":"file"},"type":"attachment"}`, 1 << 1},
		{`{"type":"attachment","attachment":{"type":"file"}} {"type":"user"}`, 0}, // glued: other checks
	} {
		if got := AttachmentFaults(p, []byte(c.line)); got != c.want {
			t.Errorf("%s: faults %b, want %b", c.line, got, c.want)
		}
	}
}
