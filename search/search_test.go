package search

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
)

// refHit is a hit as the reference search gives it.
type refHit struct {
	path             string
	line             int
	kind, role, tool string
	count            int
	match            string
}

func (h refHit) String() string {
	return fmt.Sprintf("%s:%d %s %s %s %d %q", h.path, h.line, h.kind, h.role, h.tool, h.count, h.match)
}

// refText is a text the reference search looks in.
type refText struct {
	path             string
	line             int
	kind, role, tool string
	text             string
}

// match returns the reference's hits for re.
func match(texts []refText, re *regexp.Regexp) []refHit {
	var out []refHit
	for _, x := range texts {
		locs := re.FindAllStringIndex(x.text, -1)
		if len(locs) > 0 {
			out = append(out, refHit{x.path, x.line, x.kind, x.role, x.tool, len(locs), x.text[locs[0][0]:locs[0][1]]})
		}
	}
	return out
}

// reference reads a store the slow, plain way: every line of every file
// decoded whole by encoding/json, the texts picked out of the values by
// the rules README.md gives.
func reference(t *testing.T, root string) []refText {
	t.Helper()
	var files []string
	filepath.WalkDir(filepath.Join(root, "projects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	ex, _ := filepath.Glob(filepath.Join(root, "transcripts", "ses_*.jsonl"))
	files = append(files, ex...)
	pc, _ := filepath.Glob(filepath.Join(root, "pre-compact-session-histories", "*.jsonl"))
	files = append(files, pc...)
	if _, err := os.Stat(filepath.Join(root, "history.jsonl")); err == nil {
		files = append(files, filepath.Join(root, "history.jsonl"))
	}
	var out []refText
	for _, path := range files {
		src := SourceSession
		switch {
		case filepath.Base(path) == "history.jsonl":
			src = SourceHistory
		case strings.Contains(path, "/transcripts/"):
			src = SourceExport
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<30)
		for n := 1; sc.Scan(); n++ {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			add := func(kind, role, tool, text string) {
				out = append(out, refText{path, n, kind, role, tool, text})
			}
			typ, _ := m["type"].(string)
			msg, hasMsg := m["message"].(map[string]any)
			switch {
			case src == SourceHistory:
				if s, ok := m["display"].(string); ok {
					add(KindPrompt, "user", "", s)
				}
				if pcs, ok := m["pastedContents"].(map[string]any); ok {
					keys := sortedKeys(pcs)
					for _, k := range keys {
						if pm, ok := pcs[k].(map[string]any); ok && pm["type"] != "image" {
							for _, s := range strs(pm["content"]) {
								add(KindPrompt, "user", "", s)
							}
						}
					}
				}
			case src == SourceExport && !hasMsg:
				name, _ := m["tool_name"].(string)
				switch typ {
				case "user", "assistant":
					switch c := m["content"].(type) {
					case string:
						add(KindText, typ, "", c)
					case []any:
						for _, e := range c {
							if s, ok := e.(string); ok {
								add(KindText, typ, "", s)
							} else if em, ok := e.(map[string]any); ok {
								for _, s := range strs(em["text"]) {
									add(KindText, typ, "", s)
								}
							}
						}
					}
				case "tool_use":
					for _, s := range strs(m["tool_input"]) {
						add(KindToolInput, "tool", name, s)
					}
				case "tool_result":
					for _, s := range strs(m["tool_output"]) {
						add(KindToolOutput, "tool", name, s)
					}
				}
			case typ == "user" || typ == "assistant":
				if !hasMsg {
					continue
				}
				role := typ
				if r, ok := msg["role"].(string); ok && r != "" {
					role = r
				}
				textKind, textRole := KindText, role
				if cs, _ := m["isCompactSummary"].(bool); cs {
					textKind, textRole = KindSummary, "summary"
				} else if m["rowSource"] == "harness" && role == "user" {
					textRole = "harness"
				}
				blocks, _ := msg["content"].([]any)
				for _, b := range blocks {
					if bm, ok := b.(map[string]any); ok {
						id, _ := bm["id"].(string)
						name, _ := bm["name"].(string)
						if id != "" && name != "" {
							tools[id] = name
						}
					}
				}
				if s, ok := msg["content"].(string); ok {
					add(textKind, textRole, "", s)
				}
				for _, b := range blocks {
					bm, ok := b.(map[string]any)
					if !ok {
						continue
					}
					// In the order of the members on the line, as the
					// search gives them.
					for _, k := range memberOrder(sc.Bytes(), bm) {
						switch k {
						case "text":
							for _, s := range strs(bm[k]) {
								add(textKind, textRole, "", s)
							}
						case "thinking":
							for _, s := range strs(bm[k]) {
								add(KindThinking, "assistant", "", s)
							}
						case "input":
							name, _ := bm["name"].(string)
							for _, s := range strs(bm[k]) {
								add(KindToolInput, "tool", name, s)
							}
						case "content":
							id, _ := bm["tool_use_id"].(string)
							var texts []string
							switch c := bm[k].(type) {
							case string:
								texts = []string{c}
							case []any:
								for _, e := range c {
									if em, ok := e.(map[string]any); ok {
										texts = append(texts, strs(em["text"])...)
									}
								}
							}
							for _, s := range texts {
								add(KindToolOutput, "tool", tools[id], s)
							}
						}
					}
				}
			case typ == "summary":
				for _, s := range strs(m["summary"]) {
					add(KindSummary, "summary", "", s)
				}
			case typ == "custom-title":
				for _, s := range strs(m["customTitle"]) {
					add(KindTitle, "title", "", s)
				}
			case typ == "ai-title":
				for _, s := range strs(m["aiTitle"]) {
					add(KindTitle, "title", "", s)
				}
			}
		}
	}
	return out
}

// strs returns every string in v (not member names).
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, strs(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(x) {
			out = append(out, strs(x[k])...)
		}
		return out
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// memberOrder returns the keys of m (a block of the line) in the order
// they stand on the line, roughly: by where `"key":` first occurs.
func memberOrder(line []byte, m map[string]any) []string {
	ks := sortedKeys(m)
	sort.SliceStable(ks, func(i, j int) bool {
		return bytes.Index(line, []byte(`"`+ks[i]+`":`)) < bytes.Index(line, []byte(`"`+ks[j]+`":`))
	})
	return ks
}

// runHits runs a search and returns its hits as refHits.
func runHits(t *testing.T, opts Options) []refHit {
	t.Helper()
	var out []refHit
	_, err := Run(opts, func(h *Hit) error {
		out = append(out, refHit{h.Path, h.Line, h.Kind, h.Role, h.Tool, h.Count, h.Match})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortHits(hs []refHit) {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].path != hs[j].path {
			return hs[i].path < hs[j].path
		}
		return hs[i].line < hs[j].line
	})
}

func compareHits(t *testing.T, what string, got, want []refHit) {
	t.Helper()
	g, w := append([]refHit(nil), got...), append([]refHit(nil), want...)
	// Within a line the order of blocks is the search's; compare as sets.
	less := func(a, b refHit) bool {
		if a.path != b.path {
			return a.path < b.path
		}
		if a.line != b.line {
			return a.line < b.line
		}
		return a.String() < b.String()
	}
	sort.Slice(g, func(i, j int) bool { return less(g[i], g[j]) })
	sort.Slice(w, func(i, j int) bool { return less(w[i], w[j]) })
	for i := 0; i < len(g) || i < len(w); i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			var gs, ws string
			if i < len(g) {
				gs = g[i].String()
			}
			if i < len(w) {
				ws = w[i].String()
			}
			t.Fatalf("%s: %d hits, reference %d; first difference at %d:\n got  %s\n want %s", what, len(g), len(w), i, gs, ws)
		}
	}
}

// stores returns the corpus and wild stores.
func stores(t *testing.T) []string {
	out := wild.AllRoots(t)
	if len(out) < 10 {
		t.Fatalf("corpus and wild stores: found %d", len(out))
	}
	return out
}

// TestReference holds the search (raw prefilter, line walker, decoder,
// tool names looked up backwards) to the plain decode-everything search,
// on every corpus and wild store and a crafted one, for literal, case-
// insensitive and regular-expression patterns.
func TestReference(t *testing.T) {
	type pat struct {
		p         string
		regex, ci bool
	}
	pats := []pat{
		{p: "e"}, {p: "x"}, {p: "the"}, {p: `"`}, {p: "\n"}, {p: "/"}, {p: `\`}, {p: "ls /home"},
		{p: "—"}, {p: "→"}, {p: "🤖"}, {p: "é"}, {p: "café"}, {p: "a\nb"}, {p: `say "hi"`}, {p: "</tag>"},
		{p: "THE", ci: true}, {p: "Reply", ci: true}, {p: "CAFÉ", ci: true}, {p: "kelvin", ci: true},
		{p: `h.llo`, regex: true}, {p: `(?i)REPLY \d+`, regex: true}, {p: `reply \d+ to`, regex: true},
		{p: `^x+$`, regex: true}, {p: `(?m)^b`, regex: true}, {p: `é|→`, regex: true}, {p: `toolu_`},
	}
	roots := append(stores(t), craftedStore(t))
	for _, root := range roots {
		texts := reference(t, root)
		for _, p := range pats {
			expr := p.p
			if !p.regex {
				expr = regexp.QuoteMeta(expr)
			}
			if p.ci {
				expr = "(?i)" + expr
			}
			want := match(texts, regexp.MustCompile(expr))
			got := runHits(t, Options{Root: root, Pattern: p.p, Regex: p.regex, IgnoreCase: p.ci})
			compareHits(t, fmt.Sprintf("%s: %q (regex %v, -i %v)", root, p.p, p.regex, p.ci), got, want)
		}
	}
}

const (
	sidA = "aaaaaaaa-0000-4000-8000-000000000001"
	sidB = "bbbbbbbb-0000-4000-8000-000000000002"
)

// craftedLines is a store whose text is written every way JSON allows:
// escapes of either case, \/ and Go's \u003c, surrogate pairs, the pattern
// in member names, ids and metadata where no hit may be.
var craftedLines = map[string][]string{
	"projects/-w/" + sidA + ".jsonl": {
		`{"type":"summary","summary":"caf\u00e9 summary of the work","leafUuid":"cafe0000-0000-4000-8000-000000000000"}`,
		`{"type":"user","uuid":"cafe0001-0000-4000-8000-000000000000","parentUuid":null,"sessionId":"` + sidA + `","cwd":"/w/café","timestamp":"2026-01-01T10:00:00.000Z","message":{"role":"user","content":"please list the café files"},"toolUseResult":{"café":"the café"}}`,
		`{"parentUuid":"cafe0001-0000-4000-8000-000000000000","type":"assistant","timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"the user says \"hi\"\nand wants caf\u00E9","signature":"the-signature-café"},{"type":"text","text":"say \"hi\" to the caf\u00e9 \u2014 a\nb"},{"type":"tool_use","id":"toolu_01Bash","name":"Bash","input":{"command":"ls /home/dev","description":"list the caf\u00e9 dir","the":"café"}}]},"uuid":"cafe0002-0000-4000-8000-000000000000"}`,
		`{"type":"user","timestamp":"2026-01-01T10:00:02.000Z","message":{"role":"user","content":[{"tool_use_id":"toolu_01Bash","type":"tool_result","content":[{"type":"text","text":"a\nb \u00C9 the <\/tag> and \u003c/tag\u003e"},{"type":"image","source":{"type":"base64","data":"the café"}}]}]},"toolUseResult":{"stdout":"a\nb the café"},"uuid":"cafe0003-0000-4000-8000-000000000000"}`,
		`{"type":"assistant","timestamp":"2026-01-02T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"robot \ud83e\udd16 and \ud83e and </tag> \u212aelvin reply 7 to hello"}]},"uuid":"cafe0004-0000-4000-8000-000000000000"}`,
		`{"type":"user","isCompactSummary":true,"timestamp":"2026-01-03T10:00:00.000Z","message":{"role":"user","content":"This session is being continued: the café"},"uuid":"cafe0005-0000-4000-8000-000000000000"}`,
		`{"type":"custom-title","customTitle":"the café title","sessionId":"` + sidA + `"}`,
		`{"type":"ai-title","aiTitle":"An AI title about the caf\u00e9","sessionId":"` + sidA + `"}`,
		`{"type":"system","subtype":"informational","content":"the café system note","timestamp":"2026-01-03T10:00:00.000Z"}`,
		`{"type":"last-prompt","lastPrompt":"the café","leafUuid":"cafe0005-0000-4000-8000-000000000000"}`,
		``,
		`{"type":"user","timestamp":"2026-01-04T10:00:00.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_gone","content":"orphan result: the café"}]},"uuid":"cafe0006-0000-4000-8000-000000000000"}`,
	},
	"projects/-w/" + sidA + "/subagents/agent-a1.jsonl": {
		`{"type":"user","isSidechain":true,"agentId":"a1","sessionId":"` + sidA + `","timestamp":"2026-01-01T10:00:03.000Z","message":{"role":"user","content":"subagent: find the café"},"uuid":"cafe0100-0000-4000-8000-000000000000"}`,
		`{"type":"assistant","isSidechain":true,"agentId":"a1","sessionId":"` + sidA + `","timestamp":"2026-01-01T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_02","name":"Grep","input":{"pattern":"caf\u00e9","path":"/w"}}]},"uuid":"cafe0101-0000-4000-8000-000000000000"}`,
		`{"type":"user","isSidechain":true,"agentId":"a1","sessionId":"` + sidA + `","timestamp":"2026-01-01T10:00:05.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_02","content":"menu.txt: the café"}]},"uuid":"cafe0102-0000-4000-8000-000000000000"}`,
	},
	"projects/-v/" + sidB + ".jsonl": {
		`{"type":"user","sessionId":"` + sidB + `","cwd":"/v","timestamp":"2025-12-01T10:00:00.000Z","message":{"role":"user","content":"an older session about the café"},"uuid":"cafe0200-0000-4000-8000-000000000000"}`,
	},
	"transcripts/ses_abc123.jsonl": {
		`{"type":"user","timestamp":"2026-01-05T10:00:00.000Z","content":"export: open the café"}`,
		`{"type":"tool_use","timestamp":"2026-01-05T10:00:01.000Z","tool_name":"bash","tool_input":{"command":"cat caf\u00e9.txt","description":"the menu"}}`,
		`{"type":"tool_result","timestamp":"2026-01-05T10:00:02.000Z","tool_name":"bash","tool_input":{"command":"cat café.txt"},"tool_output":{"output":"the café menu\n","exit":0}}`,
		`{"type":"assistant","timestamp":"2026-01-05T10:00:03.000Z","content":"the café is open"}`,
	},
	"pre-compact-session-histories/" + sidA + ".jsonl": {
		`{"type":"user","sessionId":"` + sidA + `","cwd":"/w","timestamp":"2025-12-31T10:00:00.000Z","message":{"role":"user","content":"before the compaction: the café"},"uuid":"cafe0300-0000-4000-8000-000000000000"}`,
	},
	"history.jsonl": {
		`{"display":"please list the café files","pastedContents":{},"timestamp":1767261600000,"project":"/w","sessionId":"` + sidA + `"}`,
		`{"display":"[Pasted text #1]","pastedContents":{"1":{"id":1,"type":"text","content":"pasted: the caf\u00e9"}},"timestamp":1764583200000,"project":"/v"}`,
	},
}

func craftedStore(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	for p, lines := range craftedLines {
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestStopEndsTheSearch(t *testing.T) {
	root := craftedStore(t)
	all, err := Run(Options{Root: root, Pattern: "caf"}, func(*Hit) error { return nil })
	if err != nil || all.Files < 2 || all.Hits == 0 {
		t.Fatalf("the whole search: %+v %v", all, err)
	}
	asked := 0
	st, err := Run(Options{Root: root, Pattern: "caf", Stop: func() bool { asked++; return asked > 1 }}, func(*Hit) error { return nil })
	if !errors.Is(err, ErrStopped) || st.Files > 1 || asked != 2 {
		t.Errorf("stopped after the first file: %+v %v, asked %d times", st, err, asked)
	}
}
