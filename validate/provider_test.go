package validate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// The wild sessions these tests take, from a store whose turns went
// through a proxy to other providers.
const (
	// A deepseek session (2.1.152): line 127 is the <synthetic> entry an
	// interrupted turn left, holding its partial, unsigned thinking.
	wildSynthetic = "C--Users-d1-d4-d5/e34bc63b-503e-414b-8fec-720c371ef6a9.jsonl"
	// A Kimi-style session (2.1.145): tool ids functions.Read:0 restart in
	// each message (lines 91 and 95 repeat lines 30 and 32's ids).
	wildKimi = "c--Users-d1-d7-d6/c0c9d31e-da66-42c0-86dc-dc38b17b7b8a.jsonl"
)

// wildVariant writes a copy of a transcript of the wild store
// 2.1.139-2.1.173 into a store of its own, each line passed through edit,
// and returns the store and the copy's path.
func wildVariant(t *testing.T, rel string, edit func(string) string) (root, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(wild.Root("2.1.139-2.1.173"), "projects", rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i := range lines {
		lines[i] = edit(lines[i])
	}
	root = t.TempDir()
	path = filepath.Join(root, "projects", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// asAnthropic makes a line read as Anthropic's API wrote it: a Claude model
// and a request id on each reply.
func asAnthropic(line string) string {
	line = strings.ReplaceAll(line, `"model":"deepseek-v4-pro"`, `"model":"claude-sonnet-4-5-20250929"`)
	if strings.Contains(line, `"type":"assistant"`) && !strings.Contains(line, `"model":"<synthetic>"`) {
		line = strings.Replace(line, `{"parentUuid"`, `{"requestId":"req_011CXYMdu1vaiqC69uftUr9D","parentUuid"`, 1)
	}
	return line
}

var versionField = regexp.MustCompile(`"version":"[0-9.]+"`)

func withVersion(v string) func(string) string {
	return func(line string) string { return versionField.ReplaceAllString(line, `"version":"`+v+`"`) }
}

// at returns the findings of a report on line n of path.
func at(rep *validate.Report, path string, n int) []validate.Finding {
	var out []validate.Finding
	for _, f := range rep.Findings {
		if f.Path == path && f.Line == n {
			out = append(out, f)
		}
	}
	return out
}

// TestSyntheticThinking: the <synthetic> entry an interrupted turn leaves,
// holding its partial unsigned thinking, is sent by 1.0.128, 2.0.77 and
// 2.1.0 to 2.1.6 (the API rejects its empty signature) and left out by
// 2.1.7 and later (measured with 1.0.128, 2.0.77, 2.1.0, 2.1.3 to 2.1.7,
// 2.1.10, 2.1.14, 2.1.29, 2.1.39, 2.1.73, 2.1.87, 2.1.152, 2.1.219 and
// 2.1.332 resuming this session). A session whose replies came
// from another provider sends it to that provider, which took it.
func TestSyntheticThinking(t *testing.T) {
	const line = 127
	id := func(s string) string { return s }
	for _, c := range []struct {
		name string
		edit func(string) string
		code validate.Code
		sev  validate.Severity
	}{
		{"deepseek, 2.1.152 (left out)", id, "", 0},
		{"anthropic, 2.1.152 (left out)", asAnthropic, "", 0},
		{"anthropic, 2.1.7 (left out)", func(l string) string { return withVersion("2.1.7")(asAnthropic(l)) }, "", 0},
		{"anthropic, 2.1.6 (sent, rejected)", func(l string) string { return withVersion("2.1.6")(asAnthropic(l)) }, validate.ThinkingUnsigned, validate.Error},
		{"anthropic, 2.0.77 (sent, rejected)", func(l string) string { return withVersion("2.0.77")(asAnthropic(l)) }, validate.ThinkingUnsigned, validate.Error},
		{"deepseek, 2.0.77 (sent to deepseek)", withVersion("2.0.77"), validate.ThinkingForeign, validate.Notice},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, path := wildVariant(t, wildSynthetic, c.edit)
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			var got []validate.Finding
			for _, f := range at(rep, path, line) {
				if strings.HasPrefix(string(f.Code), "thinking") {
					got = append(got, f)
				}
			}
			switch {
			case c.code == "" && len(got) > 0:
				t.Errorf("line %d: %s %s: %s, want none", line, got[0].Severity, got[0].Code, got[0].Message)
			case c.code != "" && (len(got) != 1 || got[0].Code != c.code || got[0].Severity != c.sev):
				t.Errorf("line %d: %v, want one %s %s", line, got, c.sev, c.code)
			}
			if rep.Counts["error"] > 0 && c.sev != validate.Error {
				t.Errorf("%d errors: %v", rep.Counts["error"], rep.Findings)
			}
		})
	}
}

// TestForeignToolIDs: a Kimi-style session's tool ids restart in each
// message; the provider took them (the session went on for 61 turns), the
// Anthropic API answers 400 (tool_use ids must be unique). An error only in
// a session whose replies came from Anthropic's API.
func TestForeignToolIDs(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(string) string
		sev  validate.Severity
	}{
		{"as written", func(s string) string { return s }, validate.Notice},
		{"anthropic", func(l string) string {
			l = strings.ReplaceAll(l, `"model":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`, `"model":"claude-opus-4-5-20251101"`)
			return strings.ReplaceAll(l, `"id":"gen-`, `"id":"msg_gen-`)
		}, validate.Error},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, path := wildVariant(t, wildKimi, c.edit)
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{91, 95} {
				var dup []validate.Finding
				for _, f := range at(rep, path, n) {
					if f.Code == validate.ToolUseDuplicate {
						dup = append(dup, f)
					}
				}
				if len(dup) != 1 || dup[0].Severity != c.sev {
					t.Errorf("line %d: %v, want one %s tool-use-duplicate", n, dup, c.sev)
				}
			}
		})
	}
}
