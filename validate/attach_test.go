package validate

import (
	"testing"

	"github.com/cfix-dev/cfix/session"
)

// TestAttachCrash checks the measured ranges of attachment-malformed
// against the rules they belong to, at versions measured on both sides.
func TestAttachCrash(t *testing.T) {
	if len(attachCrash) != len(session.AttachRules) {
		t.Fatalf("%d ranges for %d rules", len(attachCrash), len(session.AttachRules))
	}
	rule := func(typ, field string) int {
		for i, r := range session.AttachRules {
			if r.Type == typ && r.Field == field {
				return i
			}
		}
		t.Fatalf("no rule %s.%s", typ, field)
		return -1
	}
	for _, c := range []struct {
		version, typ, field string
		throws              bool
	}{
		{"1.0.128", "", "", true},
		{"2.1.216", "", "", true},
		{"2.1.217", "", "", false},
		{"1.0.128", "file", "content", false},
		{"2.1.274", "file", "content", true},
		{"2.1.275", "file", "content", false},
		{"2.1.332", "nested_memory", "content", true},
		{"2.1.100", "task_reminder", "content", false},
		{"2.1.232", "task_reminder", "content", true},
		{"2.1.233", "task_reminder", "content", false},
		{"2.1.217", "agent_listing_delta", "addedLines", true},
		{"2.1.218", "agent_listing_delta", "addedLines", false},
		{"2.1.205", "hook_additional_context", "content", true},
		{"2.1.219", "hook_additional_context", "content", false},
		{"2.1.100", "hook_success", "stdout", true},
		{"2.1.332", "hook_success", "stdout", true},
		{"2.1.222", "diagnostics", "files", true},
		{"2.1.223", "diagnostics", "files", false},
		{"1.0.128", "diagnostics", "files[].uri", false},
		{"2.0.77", "diagnostics", "files[].uri", true},
		{"2.1.222", "diagnostics", "files[].uri", true},
		{"2.1.223", "diagnostics", "files[].uri", false},
		{"2.1.332", "diagnostics", "files[].uri", false},
		{"2.1.233", "memory_update", "paths", true},
		{"2.1.234", "memory_update", "paths", false},
		{"2.1.332", "tool_search_usage_reminder", "undiscoveredToolNames", true},
		{"2.1.332", "selected_lines_in_ide", "content", true},
		{"", "file", "content", false}, // an unknown version: the newest
		{"", "nested_memory", "content", true},
	} {
		if got := SendsOf(c.version).AttachCrash.Has(rule(c.typ, c.field)); got != c.throws {
			t.Errorf("%s, %s.%s: throws %v, measured %v", c.version, c.typ, c.field, got, c.throws)
		}
	}
}
