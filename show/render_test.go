package show

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextVisible: what a transcript says of itself (cwd, slug, model,
// version, a subagent's type, a uuid a finding quotes) and a file's name
// reach the listing quoted or escaped when they hold a line break or an
// escape sequence: nothing of them moves the terminal's cursor or adds a
// line.
func TestTextVisible(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	sub := filepath.Join(dir, "12121212-1212-4121-8121-121212121212", "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	evil := `\u001b]0;owned\u0007\u001b[2J\nfake line`
	line := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"12121212-1212-4121-8121-121212121212","timestamp":"2026-01-01T00:00:00Z","version":"` + evil + `","cwd":"` + evil + `","slug":"` + evil + `","message":{"role":"user","content":"hi"}}` + "\n"
	// A parent written nowhere: its finding quotes the uuid.
	orphan := strings.Replace(strings.Replace(line, `"uuid":"u1","parentUuid":null`, `"uuid":"u2","parentUuid":"`+evil+`"`, 1), `"hi"`, `"again"`, 1)
	os.WriteFile(filepath.Join(dir, "12121212-1212-4121-8121-121212121212.jsonl"), []byte(line+orphan), 0o644)
	os.WriteFile(filepath.Join(sub, "agent-a1.jsonl"), []byte(line), 0o644)
	os.WriteFile(filepath.Join(sub, "agent-a1.meta.json"), []byte(`{"agentType":"`+evil+`"}`), 0o644)
	os.WriteFile(filepath.Join(sub, "notes\x1b[2J\nfake"), []byte("x"), 0o644)
	fam, err := Resolve(root, "12121212")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(fam)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Text(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `parent-missing: parentUuid \x1b]0;owned\x07`) {
		t.Errorf("no parent-missing finding quoting the uuid as Go escapes:\n%s", out.String())
	}
	if bytes.ContainsAny(out.Bytes(), "\x1b\x07") {
		t.Errorf("an escape sequence reaches the terminal:\n%q", out.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "fake") {
			t.Errorf("a line break of the transcript's text adds a line:\n%s", out.String())
		}
	}
}

// TestLabelOneLine: one line not JSON is "1 line".
func TestLabelOneLine(t *testing.T) {
	f := &File{Kind: "main", Size: 10, Stats: &Stats{Entries: 1, NotJSON: 1}}
	if got := f.label(); !strings.Contains(got, "1 entry, 1 line not JSON") {
		t.Errorf("label %q", got)
	}
}
