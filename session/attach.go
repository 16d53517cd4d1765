package session

import "bytes"

// AttachRule is one field an attachment entry must have for some Claude
// Code versions to turn it into a message: when a resume loads an
// attachment that breaks a rule, the client version that reads the field
// unguarded throws (TypeError: null is not an object) and exits 1 before
// it sends anything. The versions each rule holds for are in
// validate.Sends.
type AttachRule struct {
	// Type is the attachment type the rule is about; "" for the rule that
	// the attachment is an object at all.
	Type string
	// Field must be present and not null.
	Field string
}

// AttachRules are the rules measured with the real clients (2.1.205,
// 2.1.219, 2.1.224, 2.1.250 to 2.1.332), in the order of the bits of
// AttachFaults. Only null and missing fields break them: a field of
// another type is read as undefined and left out.
var AttachRules = []AttachRule{
	{"", ""},
	{"file", "content"},
	{"nested_memory", "content"},
	{"task_reminder", "content"},
	{"todo_reminder", "content"},
	{"hook_additional_context", "content"},
	{"agent_listing_delta", "addedLines"},
	{"agent_listing_delta", "removedTypes"},
	{"deferred_tools_delta", "addedLines"},
	{"deferred_tools_delta", "removedNames"},
	{"mcp_instructions_delta", "removedNames"},
}

// AttachFaults is a set of AttachRules broken by one attachment entry: bit
// i for AttachRules[i].
type AttachFaults uint16

// Has reports whether rule i is broken.
func (f AttachFaults) Has(i int) bool { return f&(1<<i) != 0 }

// attachTypes are the attachment types some rule is about.
var attachTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range AttachRules {
		if r.Type != "" {
			m[r.Type] = true
		}
	}
	return m
}()

// attachPrefix is how Claude Code writes the start of an attachment: its
// type first.
var attachPrefix = []byte(`"attachment":{"type":"`)

// AttachmentFaults returns the AttachRules that the attachment entry on
// line raw (one record) breaks. Lines whose attachment starts as Claude
// Code writes it, with a type no rule is about, are not parsed; others
// are, with p (whose TopKeys it sets).
func AttachmentFaults(p *Parser, raw []byte) AttachFaults {
	if i := bytes.Index(raw, attachPrefix); i >= 0 {
		rest := raw[i+len(attachPrefix):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && !attachTypes[string(rest[:j])] {
			return 0
		}
	}
	p.TopKeys = attachKeys
	p.Header = false
	pr := p.Parse(raw)
	m, ok := pr.Value.(map[string]any)
	if pr.Err != nil || !ok || len(pr.More) > 0 {
		return 0 // not one record: other checks say so
	}
	return AttachmentValueFaults(m["attachment"])
}

var attachKeys = map[string]bool{"attachment": true}

// AttachmentValueFaults returns the AttachRules the value of an attachment
// entry's "attachment" field breaks (v is nil when the field is null or
// missing).
func AttachmentValueFaults(v any) AttachFaults {
	if _, isList := v.([]any); isList {
		return 0 // an object to the client: "in" and field reads work
	}
	a, ok := v.(map[string]any)
	if !ok {
		return 1 // null, missing, a string, number or bool
	}
	typ, _ := a["type"].(string)
	var f AttachFaults
	for i, r := range AttachRules {
		if r.Type != "" && r.Type == typ && a[r.Field] == nil {
			f |= 1 << i
		}
	}
	return f
}
