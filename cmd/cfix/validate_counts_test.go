package main

import (
	"bytes"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// TestCodeCountsTable: on a terminal, validate ends with a table of the
// codes found, worst severity (of the findings, not the code's default)
// first, then most found.
func TestCodeCountsTable(t *testing.T) {
	rep := &validate.Report{FilesChecked: 3, Counts: map[string]int{"error": 1, "warning": 3, "notice": 0,
		"line-torn": 1, "tool-result-missing": 1, "session-stub": 2}}
	rep.Findings = []validate.Finding{
		{Code: validate.LineTorn, Severity: validate.Error, Path: "/a"},
		{Code: validate.SessionStub, Severity: validate.Warning, Path: "/b"},
		{Code: validate.SessionStub, Severity: validate.Warning, Path: "/c"},
		{Code: validate.ToolResultMiss, Severity: validate.Warning, Path: "/c"},
	}
	var b bytes.Buffer
	printCodeCounts(&b, rep, true)
	want := `CODE                 SEVERITY   COUNT
line-torn            error          1
session-stub         warning        2
tool-result-missing  warning        1

`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printCodeCounts(&b, rep, false)
	if want := "by code: line-torn 1, session-stub 2, tool-result-missing 1\n"; b.String() != want {
		t.Errorf("line %q, want %q", b.String(), want)
	}
}

// TestFindingsVisible: a finding that quotes the file (a damaged uuid, a
// cwd) prints its escape sequences and line breaks as Go escapes: nothing
// of the file reaches the terminal as a control character.
func TestFindingsVisible(t *testing.T) {
	rep := &validate.Report{Counts: map[string]int{}}
	rep.Findings = []validate.Finding{{Code: validate.ParentMissing, Severity: validate.Warning, Path: "/p\x1b[2J.jsonl", Line: 3,
		Message: "parentUuid bad\x1b]0;owned\x07\nfake \u202eline is written nowhere"}}
	var b bytes.Buffer
	printFindings(&b, rep, findingFilter{}, true, false)
	want := `/p\x1b[2J.jsonl:3: warning parent-missing: parentUuid bad\x1b]0;owned\x07\nfake \u202eline is written nowhere` + "\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
