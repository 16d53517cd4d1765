package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
)

// TestTitleOfStores: on every transcript of the corpus and wild stores,
// TitleOf gives the title GlanceAt gives, from each of the places a title
// comes from.
func TestTitleOfStores(t *testing.T) {
	roots := wild.AllRoots(t)
	if len(roots) < 18 {
		t.Fatalf("%d stores found", len(roots))
	}
	from := map[string]int{}
	for _, root := range roots {
		l, err := Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if f.Kind != KindSession {
				continue
			}
			g := GlanceAt(f)
			if got := TitleOf(f); got != g.Title {
				t.Errorf("%s: TitleOf %q, GlanceAt %q (from %s)", f.Path, got, g.Title, g.TitleFrom)
			}
			from[g.TitleFrom]++
		}
	}
	for _, k := range []string{TitleCustom, TitleAI, TitleSummary, TitleFirstPrompt} {
		if from[k] == 0 {
			t.Errorf("no transcript titled by %s: the test does not cover it (%v)", k, from)
		}
	}
}

// TestTitleOfLines: title lines after the first prompt are found however
// JSON spells their type, and a line that only mentions a title type is
// no title.
func TestTitleOfLines(t *testing.T) {
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
	prompt := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"fix the build"}}`
	mention := `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"` + id + `","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"\"summary\" and \"custom-title\""}]}}`
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"first prompt", []string{prompt, mention}, "fix the build"},
		{"summary", []string{prompt, mention, `{"type":"summary","summary":"Build fixed","leafUuid":"a1"}`}, "Build fixed"},
		{"escaped type", []string{prompt, mention, `{"type":"custom\u002dtitle","customTitle":"Escaped","sessionId":"` + id + `"}`}, "Escaped"},
		{"custom over ai", []string{prompt, `{"type":"ai-title","aiTitle":"AI","sessionId":"` + id + `"}`, `{"type":"custom-title","customTitle":"Mine","sessionId":"` + id + `"}`}, "Mine"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		f := File{Path: path, Project: "-w", Kind: KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()}
		g := GlanceAt(f)
		if got := TitleOf(f); got != c.want || g.Title != c.want {
			t.Errorf("%s: TitleOf %q, GlanceAt %q, want %q", c.name, got, g.Title, c.want)
		}
	}
}

// TestPickerPrompt: the first prompt of each shape is the one the /resume
// picker shows, as measured with the real 2.1.100 and 2.1.332 clients (a
// store of these sessions, `claude --resume` in a terminal; see
// promptText): every text block is looked at, text that opens with a
// markup tag or [Request interrupted by user] is skipped, a session of a
// slash command only is titled by the command's name.
func TestPickerPrompt(t *testing.T) {
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
	n := 0
	user := func(content string, extra string) string {
		n++
		return fmt.Sprintf(`{"type":"user","uuid":"u%d","parentUuid":null,"sessionId":"%s","timestamp":"2026-01-01T00:00:%02dZ"%s,"message":{"role":"user","content":%s}}`, n, id, n, extra, content)
	}
	reply := `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"` + id + `","timestamp":"2026-01-01T00:01:00Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}`
	// pad is 70 KB of tool traffic: what follows is out of the head's reach.
	pad := func() []string {
		var out []string
		for i := 0; i < 70; i++ {
			out = append(out, user(`[{"type":"tool_result","tool_use_id":"t1","content":"`+strings.Repeat("x", 1000)+`"}]`, ""))
		}
		return out
	}
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"ide file then text block", []string{user(`[{"type":"text","text":"<ide_opened_file>The user opened the file /x/a.go in the IDE.</ide_opened_file>"},{"type":"text","text":"alpha second block"}]`, ""), reply}, "alpha second block"},
		{"interrupt then prompt", []string{user(`"[Request interrupted by user]"`, ""), user(`"bravo after interrupt"`, ""), reply}, "bravo after interrupt"},
		{"interrupt for tool use", []string{user(`[{"type":"text","text":"[Request interrupted by user for tool use]"}]`, ""), user(`"next"`, "")}, "next"},
		{"slash command only", []string{user(`"<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>"`, ""), user(`"<local-command-stdout></local-command-stdout>"`, "")}, "/clear"},
		{"command with args then prompt", []string{user(`"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>"`, ""), user(`"golf later prompt"`, "")}, "golf later prompt"},
		{"system reminder opens the text", []string{user(`"<system-reminder>echo reminder</system-reminder>\necho after reminder"`, ""), user(`"echo second message"`, "")}, "echo second message"},
		{"first of two blocks", []string{user(`[{"type":"text","text":"foxtrot first block"},{"type":"text","text":"foxtrot second block"}]`, "")}, "foxtrot first block"},
		{"any lower-case tag", []string{user(`"  <b>hotel</b> starts with markup"`, ""), user(`"hotel second"`, "")}, "hotel second"},
		{"not a tag", []string{user(`"<3 and a prompt"`, "")}, "<3 and a prompt"},
		{"bash input", []string{user(`"<bash-input>ls -la</bash-input>"`, "")}, "! ls -la"},
		{"newlines fold", []string{user(`"line one\nline two"`, "")}, "line one line two"},
		{"meta and compact summary", []string{user(`"meta text"`, `,"isMeta":true`), user(`"summary text"`, `,"isCompactSummary":true`), user(`"india"`, "")}, "india"},
		{"harness row is kept", []string{user(`"harness row text delta"`, `,"rowSource":"harness"`), user(`"delta local prompt"`, `,"rowSource":"local"`)}, "harness row text delta"},
		{"prompt in the tail only", append(append([]string{user(`"<command-name>/clear</command-name>"`, "")}[:0], pad()...), user(`"juliet in the tail"`, "")), "juliet in the tail"},
		{"head's command before tail's prompt", append(append([]string{user(`"<command-name>/clear</command-name>"`, "")}, pad()...), user(`"kilo in the tail"`, "")), "/clear"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		f := File{Path: path, Project: "-w", Kind: KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()}
		g := GlanceAt(f)
		if got := TitleOf(f); got != c.want || g.Title != c.want || g.TitleFrom != TitleFirstPrompt {
			t.Errorf("%s: TitleOf %q, GlanceAt %q (from %q), want %q", c.name, got, g.Title, g.TitleFrom, c.want)
		}
	}
}
