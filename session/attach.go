package session

import (
	"bytes"
	"encoding/json"
	"strings"
)

// AttachRule is one field an attachment entry must have for some Claude
// Code versions to turn it into a message: when a resume loads an
// attachment that breaks a rule, the client version that reads the field
// without a guard throws (TypeError: null is not an object, x.map is not a
// function) and exits 1 before it sends anything. The versions each rule
// holds for are in validate.Sends.
type AttachRule struct {
	// Type is the attachment type the rule is about; "" for the rule that
	// the attachment is an object at all.
	Type  string
	Field string
	// Must is what the field must be: see the Must constants.
	Must AttachMust
}

// AttachMust says what an AttachRule asks of its field.
type AttachMust uint8

const (
	// MustBeSet: present and not null (a value of another type is read as
	// undefined and left out).
	MustBeSet AttachMust = iota
	// MustBeList: a list (the client maps over it).
	MustBeList
	// MustBeString: absent, null or a string (the client trims it, or
	// makes a path of it, when it is set).
	MustBeString
	// MustEachBeSet: Field is list[].key: each element of the list is an
	// object whose key is present and not null (the client reads it off
	// every element). A list field that is not a list breaks no such rule.
	MustEachBeSet
)

// AttachRules are the rules measured with the real clients, in the order
// of the bits of AttachFaults.
var AttachRules = []AttachRule{
	{"", "", MustBeSet},
	{"file", "content", MustBeSet},
	{"nested_memory", "content", MustBeSet},
	{"task_reminder", "content", MustBeList},
	{"todo_reminder", "content", MustBeList},
	{"hook_additional_context", "content", MustBeList},
	{"agent_listing_delta", "addedLines", MustBeList},
	{"agent_listing_delta", "removedTypes", MustBeList},
	{"deferred_tools_delta", "addedLines", MustBeList},
	{"deferred_tools_delta", "removedNames", MustBeList},
	{"mcp_instructions_delta", "removedNames", MustBeList},
	{"hook_success", "stdout", MustBeString},
	{"diagnostics", "files", MustBeSet},
	{"tool_search_usage_reminder", "undiscoveredToolNames", MustBeSet},
	{"memory_update", "paths", MustBeSet},
	{"edited_text_file", "filename", MustBeString},
	{"selected_lines_in_ide", "content", MustBeSet},
	{"diagnostics", "files[].uri", MustEachBeSet},
}

// Broken reports whether v, the rule's field (nil when null or absent),
// breaks the rule.
func (r AttachRule) Broken(v any) bool {
	switch r.Must {
	case MustEachBeSet:
		list, _ := v.([]any)
		_, key, _ := strings.Cut(r.Field, "[].")
		for _, el := range list {
			if m, ok := el.(map[string]any); !ok || m[key] == nil {
				return true
			}
		}
		return false
	case MustBeList:
		_, ok := v.([]any)
		return !ok
	case MustBeString:
		_, ok := v.(string)
		return v != nil && !ok
	}
	return v == nil
}

// listField is the field of the attachment the rule reads: the list of a
// list[].key field, else the field itself.
func (r AttachRule) listField() string {
	f, _, _ := strings.Cut(r.Field, "[].")
	return f
}

// What says what the field of a broken rule should be.
func (r AttachRule) What() string {
	switch r.Must {
	case MustBeList:
		return "is not a list"
	case MustBeString:
		return "is set but not a string"
	case MustEachBeSet:
		return "is null or missing in an element"
	}
	return "is null or missing"
}

// AttachFaults is a set of AttachRules broken by one attachment entry: bit
// i for AttachRules[i].
type AttachFaults uint32

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
	f := AttachmentValueFaults(m["attachment"])
	if a, ok := m["attachment"].(map[string]any); ok && eachTypes[str(a["type"])] {
		// The light tree keeps no element of the attachment's lists: the
		// rules on each element read the line whole (diagnostics only).
		var full struct {
			Attachment map[string]any `json:"attachment"`
		}
		if json.Unmarshal(raw, &full) == nil {
			for i, r := range AttachRules {
				if r.Must == MustEachBeSet && r.Type == str(a["type"]) && r.Broken(full.Attachment[r.listField()]) {
					f |= 1 << i
				}
			}
		}
	}
	return f
}

// eachTypes are the attachment types a MustEachBeSet rule is about.
var eachTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range AttachRules {
		if r.Must == MustEachBeSet {
			m[r.Type] = true
		}
	}
	return m
}()

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
		if r.Type != "" && r.Type == typ && r.Must != MustEachBeSet && r.Broken(a[r.Field]) {
			f |= 1 << i
		}
	}
	return f
}
