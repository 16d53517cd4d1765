package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// The damage helpers of repair_test.go on a small hand-made transcript: no
// Claude Code needed (they run with -short too).

const helperTranscript = `{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"first prompt"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","isSidechain":false,"timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","isSidechain":false,"timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"}]},"toolUseResult":{"stdout":"out"}}
{"type":"assistant","uuid":"a2","parentUuid":"r1","isSidechain":false,"timestamp":"2026-01-01T00:00:04Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}
{"type":"user","uuid":"u2","parentUuid":"a2","isSidechain":false,"timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":[{"type":"text","text":"second prompt"}]}}
{"type":"user","uuid":"s1","parentUuid":null,"isSidechain":true,"timestamp":"2026-01-01T00:00:09Z","message":{"role":"user","content":"sidechain prompt"}}
{"type":"assistant","uuid":"a3","parentUuid":"u2","isSidechain":false,"timestamp":"2026-01-01T00:00:06Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}]}}
{"type":"last-prompt","lastPrompt":"second prompt","leafUuid":"a3"}
`

func helperSite(t *testing.T, body string) (*site, [][]byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &site{projectDir: dir, path: filepath.Join(dir, "s.jsonl")}
	if err := os.WriteFile(s.path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, readLines(t, s.path)
}

func TestResumedChain(t *testing.T) {
	_, lines := helperSite(t, helperTranscript)
	var got []string
	for _, e := range resumedChain(t, lines) {
		got = append(got, e.UUID)
	}
	if want := []string{"u1", "a1", "r1", "a2", "u2", "a3"}; !slices.Equal(got, want) {
		t.Errorf("chain %q, want %q", got, want)
	}
	if e := lastOnChain(t, lines, "prompt", isPrompt); e.UUID != "u2" {
		t.Errorf("last prompt %s, want u2", e.UUID)
	}
	if e := lastOnChain(t, lines, "tool result", hasToolResult); e.UUID != "r1" {
		t.Errorf("last tool result %s, want r1", e.UUID)
	}
}

func TestDamageHelpers(t *testing.T) {
	orig := bytes.Split([]byte(strings.TrimSuffix(helperTranscript, "\n")), []byte("\n"))
	t.Run("torn", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		if lost := damageTorn(t, s); lost != nil {
			t.Errorf("a torn last-prompt line loses %q", lost)
		}
		raw, _ := os.ReadFile(s.path)
		last := orig[len(orig)-1]
		if !bytes.HasSuffix(raw, last[:len(last)/2]) || bytes.HasSuffix(raw, []byte("\n")) {
			t.Errorf("not torn: %q", raw[len(raw)-60:])
		}
		// A torn assistant line loses its text.
		s, _ = helperSite(t, strings.Join(strings.Split(helperTranscript, "\n")[:7], "\n")+"\n")
		if lost := damageTorn(t, s); !slices.Equal(lost, []string{"answer"}) {
			t.Errorf("lost %q, want [answer]", lost)
		}
	})
	t.Run("glued", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageGlued(t, s)
		got := readLines(t, s.path)
		if len(got) != len(orig)-1 || !bytes.Equal(got[4], append(append([]byte(nil), orig[4]...), orig[5]...)) {
			t.Errorf("lines 5 and 6 not glued: %q", got[4])
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageDuplicate(t, s)
		got := readLines(t, s.path)
		if len(got) != len(orig)+1 || !bytes.Equal(got[len(got)-1], orig[4]) {
			t.Errorf("last line %q, want a copy of line 5", got[len(got)-1])
		}
	})
	t.Run("stub", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageStub(t, s)
		matches, _ := filepath.Glob(filepath.Join(s.projectDir, "*.jsonl"))
		var stub []byte
		for _, m := range matches {
			if m != s.path {
				stub, _ = os.ReadFile(m)
			}
		}
		if want := `{"type":"summary","summary":"t","leafUuid":"a3"}` + "\n"; string(stub) != want {
			t.Errorf("stub %q, want %q (files %q)", stub, want, matches)
		}
	})
	t.Run("surrogate-field", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageSurrogateField(t, s)
		got := readLines(t, s.path)
		if want := `{"x":"\ud83d",` + string(orig[4][1:]); string(got[4]) != want {
			t.Errorf("line 5 %s, want %s", got[4], want)
		}
	})
	t.Run("surrogate-text", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageSurrogateText(t, s)
		got := readLines(t, s.path)
		if want := strings.Replace(string(orig[4]), `second prompt"`, `second prompt\ud83d"`, 1); string(got[4]) != want {
			t.Errorf("line 5 %s, want %s", got[4], want)
		}
		// Content given as a string.
		body := strings.Replace(helperTranscript, `"content":[{"type":"text","text":"second prompt"}]`, `"content":"second prompt"`, 1)
		s, lines := helperSite(t, body)
		damageSurrogateText(t, s)
		got = readLines(t, s.path)
		if want := strings.Replace(string(lines[4]), `second prompt"`, `second prompt\ud83d"`, 1); string(got[4]) != want {
			t.Errorf("line 5 %s, want %s", got[4], want)
		}
	})
	t.Run("tool-result", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageToolResult(t, s)
		got := readLines(t, s.path)
		want := strings.Replace(string(orig[2]), `[{"type":"tool_result","tool_use_id":"t1","content":"out"}]`, `[{"type":"text","text":"the tool result was lost"}]`, 1)
		if string(got[2]) != want {
			t.Errorf("line 3 %s, want %s", got[2], want)
		}
	})
}

func TestSendDamageHelpers(t *testing.T) {
	orig := bytes.Split([]byte(strings.TrimSuffix(helperTranscript, "\n")), []byte("\n"))
	t.Run("blank-text", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageBlankText(t, s)
		got := readLines(t, s.path)
		if want := strings.Replace(string(orig[6]), `"content":[{"type":"text","text":"answer"}]`, `"content":[{"type":"text","text":"\n\n"},{"type":"text","text":"answer"}]`, 1); string(got[6]) != want {
			t.Errorf("line 7 %s, want %s", got[6], want)
		}
	})
	t.Run("server-split", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageServerSplit(t, s)
		got := readLines(t, s.path)
		if len(got) != len(orig)+3 {
			t.Fatalf("%d lines, want %d", len(got), len(orig)+3)
		}
		var chain []string
		for _, e := range resumedChain(t, got) {
			var kinds []string
			for _, b := range e.content {
				kinds = append(kinds, b.Type)
			}
			chain = append(chain, e.Type+":"+strings.Join(kinds, ","))
		}
		want := []string{"user:text", "assistant:tool_use", "user:tool_result", "assistant:text", "user:text",
			"assistant:server_tool_use", "user:text", "assistant:web_search_tool_result", "assistant:text"}
		if !slices.Equal(chain, want) {
			t.Errorf("chain %q, want %q", chain, want)
		}
		if !bytes.Equal(got[9][len(`{"type":"assistant","uuid":"a3","parentUuid":"`)+36:], orig[6][len(`{"type":"assistant","uuid":"a3","parentUuid":"u2`):]) {
			t.Errorf("the reply's line changed beyond its parentUuid: %s", got[9])
		}
	})
	t.Run("nul-escape", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageNULEscape(t, s)
		got := readLines(t, s.path)
		if want := strings.Replace(string(orig[2]), `"content":"out"}`, `"content":"out\u0000"}`, 1); string(got[2]) != want {
			t.Errorf("line 3 %s, want %s", got[2], want)
		}
		// Content given as a list of blocks.
		body := strings.Replace(helperTranscript, `"content":"out"}`, `"content":[{"type":"text","text":"out"}]}`, 1)
		s, lines := helperSite(t, body)
		damageNULEscape(t, s)
		got = readLines(t, s.path)
		if want := strings.Replace(string(lines[2]), `"text":"out"`, `"text":"out\u0000"`, 1); string(got[2]) != want {
			t.Errorf("line 3 %s, want %s", got[2], want)
		}
	})
	t.Run("replayed", func(t *testing.T) {
		s, _ := helperSite(t, helperTranscript)
		damageReplayed(t, s)
		got := readLines(t, s.path)
		if want := `{"gitBranch":"replayed",` + string(orig[4][1:]); string(got[len(got)-1]) != want {
			t.Errorf("last line %s, want %s", got[len(got)-1], want)
		}
	})
}

func TestMessageTexts(t *testing.T) {
	msgs := []fakeapi.Message{
		{Role: "user", Content: fakeapi.Content{{Type: "text", Text: "<system-reminder>\nx\n</system-reminder>"}, {Type: "text", Text: " hello\uFFFD "}}},
		{Role: "system", Content: fakeapi.Content{{Type: "text", Text: "# Environment"}}},
		{Role: "assistant", Content: fakeapi.Content{{Type: "tool_use", ID: "t"}, {Type: "text", Text: "hello"}}},
		{Role: "user", Content: fakeapi.Content{{Type: "tool_result", ToolUseID: "t"}, {Type: "text", Text: resumePrompt}}},
	}
	if got := messageTexts(msgs); !slices.Equal(got, []string{"hello"}) {
		t.Errorf("messageTexts = %q, want [hello]", got)
	}
	if got := lastUserText(msgs); got != resumePrompt {
		t.Errorf("lastUserText = %q", got)
	}
	if got := missingTexts([]string{"a", "b"}, []string{"b", "c"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("missingTexts = %q", got)
	}
}
