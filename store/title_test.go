package store

import (
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
