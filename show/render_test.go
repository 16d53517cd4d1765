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

// TestTurnsSaysWhyTheyDiffer: a turn that starts at the client's
// interruption is counted as a turn (cfix fork --turn numbers it) but not
// as a prompt; the turns row says so, and counts the prompts behind a
// compaction apart.
func TestTurnsSaysWhyTheyDiffer(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "34343434-3434-4343-8343-343434343434"
	rec := func(typ, uuid, parent, ts, content string) string {
		p := `"` + parent + `"`
		if parent == "" {
			p = "null"
		}
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"` + id + `","timestamp":"2026-01-01T00:00:0` + ts + `Z","version":"2.1.97","cwd":"/w","message":{"role":"` + typ + `","content":` + content + `}}`
	}
	lines := []string{
		rec("user", "u1", "", "1", `"first prompt"`),
		rec("assistant", "a1", "u1", "2", `[{"type":"text","text":"answer"}]`),
		rec("user", "i1", "a1", "3", `[{"type":"text","text":"[Request interrupted by user for tool use]"}]`),
		rec("assistant", "a2", "i1", "4", `[{"type":"text","text":"stopped"}]`),
		rec("user", "u2", "a2", "5", `"second prompt"`),
		rec("assistant", "a3", "u2", "6", `[{"type":"text","text":"done"}]`),
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := func() string {
		fam, err := Resolve(root, id)
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
		return out.String()
	}
	want := "turns        3 on the history a resume loads (cfix fork --turn N), 2 prompts in all: turn 2 starts at what the client wrote (an interruption or a command's output), not at a prompt\n"
	if out := text(); !strings.Contains(out, want) {
		t.Errorf("want %q in:\n%s", want, out)
	}
	// A prompt on another branch: counted in all, not as a turn.
	lines = append(lines, rec("user", "f1", "a1", "3", `"a prompt on a branch"`))
	if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-2], "\n")+"\n"+lines[len(lines)-1]+"\n"+lines[len(lines)-2]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := text(); !strings.Contains(out, "3 prompts in all: turn 2 starts at what the client wrote (an interruption or a command's output), not at a prompt; 1 prompt behind compactions or on other branches\n") {
		t.Errorf("the prompt on a branch is not said:\n%s", out)
	}
}
