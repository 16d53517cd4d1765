package browse

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hostile holds what a terminal acts on: a window title, an OSC 52 write
// to the clipboard, the alternate screen, a screen clear, an 8-bit CSI.
const hostile = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[?1049h\x1b[2J\u009b31m"

// TestEscapesNeverReachTheTerminal browses a store whose folder name,
// session name, title, prompt, reply and tool call hold escape sequences:
// every screen (the list, the filter, the preview, the header, a live
// session's refusal, the search of every session) holds none of them,
// only the browser's own colours.
func TestEscapesNeverReachTheTerminal(t *testing.T) {
	root := corpus88(t)
	name := "s" + hostile
	dir := filepath.Join(root, "projects", "-home-dev-work-"+hostile)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cwd := q("/home/dev/work/" + hostile)
	lines := []string{
		`{"type":"user","uuid":"00000000-0000-4000-8000-000000000001","parentUuid":null,"sessionId":` + q(name) + `,"cwd":` + cwd + `,"version":"2.1.88","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":` + q("needle prompt "+hostile) + `}}`,
		`{"type":"assistant","uuid":"00000000-0000-4000-8000-000000000002","parentUuid":"00000000-0000-4000-8000-000000000001","sessionId":` + q(name) + `,"cwd":` + cwd + `,"version":"2.1.88","timestamp":"2026-01-01T00:00:01Z","message":{"id":"msg_1","role":"assistant","model":"claude-x","content":[{"type":"text","text":` + q("needle reply "+hostile) + `},{"type":"tool_use","id":"toolu_1","name":` + q("Bash"+hostile) + `,"input":{"command":` + q("echo "+hostile) + `}}]}}`,
		`{"type":"custom-title","customTitle":` + q("needle title "+hostile) + `,"sessionId":` + q(name) + `}`,
	}
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	pid := fmt.Sprintf(`{"pid":%d,"sessionId":%s,"cwd":%s,"kind":"interactive"}`, os.Getpid(), q(name), cwd)
	if err := os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid())), []byte(pid), 0o600); err != nil {
		t.Fatal(err)
	}
	// The browser's own styling: colours and attributes (SGR).
	sgr := regexp.MustCompile(`\x1b\[[0-9;:]*m`)
	bad := regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f]")
	check := func(what string, m *Model) {
		t.Helper()
		s := sgr.ReplaceAllString(m.View().Content, "")
		if loc := bad.FindStringIndex(s); loc != nil {
			t.Errorf("%s: a control character reaches the terminal: %q", what, s[max(0, loc[0]-60):min(len(s), loc[1]+30)])
		}
	}
	m := open(t, root, 120, 40, Options{Plan: func(Action, string) (*Planned, error) { return nil, nil }})
	check("the list", m)
	press(t, m, "needle")
	check("filtered to the session", m)
	if s := screen(m); !strings.Contains(s, `\x1b]0;PWNED`) {
		t.Errorf("the session is not shown, escaped:\n%s", s)
	}
	press(t, m, "esc", "d")
	check("d on the live session", m)
	press(t, m, "o", "v")
	check("the preview, tools and thinking shown", m)
	press(t, m, "/", "needle", "enter")
	check("the search of every session", m)
	press(t, m, "esc", "tab")
	check("this project", m)

	// The export e opens in the pager.
	t.Setenv("TMPDIR", t.TempDir())
	msg := exportCmd(root, filepath.Join(dir, name+".jsonl"), name)().(exportedMsg)
	if msg.err != nil {
		t.Fatal(msg.err)
	}
	b, _ := os.ReadFile(msg.file)
	if loc := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]").FindIndex(b); loc != nil || !strings.Contains(string(b), `needle reply \x1b]0;PWNED`) {
		t.Errorf("the export for the pager: %q", b)
	}
}
