package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/repair"
)

// TestFinder: a finder finds what bytes.Index finds, case-insensitively
// with fold, over random text of a small alphabet (many near misses), by
// both its ways (pairIndex, in assembly on amd64, and bytes.IndexByte).
func TestFinder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alpha := []byte(`abAB ."\`)
	for iter := 0; iter < 3000; iter++ {
		b := make([]byte, rng.Intn(600))
		for i := range b {
			b[i] = alpha[rng.Intn(len(alpha))]
		}
		nd := make([]byte, 1+rng.Intn(3+iter%10))
		for i := range nd {
			nd[i] = alpha[rng.Intn(len(alpha))]
		}
		for _, fold := range []bool{false, true} {
			hay, needle := b, nd
			if fold {
				hay, needle = bytes.ToLower(b), bytes.ToLower(nd)
			}
			want := bytes.Index(hay, needle)
			f := newFinder(needle, fold)
			if got := f.index(b); got != want {
				t.Fatalf("finder(%q, fold %v).index(%q) = %d, want %d", nd, fold, b, got, want)
			}
			if len(b) >= len(nd) {
				if got := f.indexByte(b); got != want {
					t.Fatalf("finder(%q, fold %v).indexByte(%q) = %d, want %d", nd, fold, b, got, want)
				}
				if got := f.indexPair(b); got != want {
					t.Fatalf("finder(%q, fold %v).indexPair(%q) = %d, want %d", nd, fold, b, got, want)
				}
			}
		}
	}
}

// TestUnescape: unescape decodes as encoding/json does (lone surrogates
// to U+FFFD), for strings encoded with every escape.
func TestUnescape(t *testing.T) {
	for _, raw := range []string{
		`plain`, `a\nb\tc\rd\be\ff`, `q\"q\\q\/q`, `caf\u00e9 caf\u00E9`, `\ud83e\udd16`, `lone \ud83e end`,
		`lone low \udd16`, `\ud83e\u0041`, `\u003c/tag\u003e`, `\u0000nul`, `end\\`,
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(unescape(nil, []byte(raw))); got != want {
			t.Errorf("unescape(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestPrefilterForms: the raw forms a pattern is looked for in.
func TestPrefilterForms(t *testing.T) {
	for _, c := range []struct {
		pat  string
		fold bool
		want []string // needles; nil: no prefilter
	}{
		{pat: "tangential", want: []string{"tangential"}},
		{pat: `say "hi"`, want: []string{`say \"hi\"`}},
		{pat: "a\nb", want: []string{`a\nb`}},
		{pat: "ls /home/dev", want: []string{"home"}},
		{pat: "café", want: []string{"caf"}},
		{pat: "проект", want: []string{"проект", `\u043f\u0440\u043e\u0435\u043a\u0442`, `\u043F\u0440\u043E\u0435\u043A\u0442`}},
		{pat: "a🤖", want: []string{"🤖", `\ud83e\udd16`, `\uD83E\uDD16`}},
		{pat: "The Kelvin", fold: true, want: []string{"elvin"}},
		{pat: "SKY", fold: true, want: []string{"y"}},
		{pat: "</>", want: nil},
		{pat: "é\u2028→", want: []string{"→", `\u2192`, `\u2192`}},
		{pat: "\ufffd\u2029", want: nil},
	} {
		p := newPrefilter([]rune(c.pat), c.fold)
		var got []string
		if p != nil {
			for _, f := range p.finders {
				got = append(got, string(f.nd))
			}
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("prefilter(%q, fold %v) = %q, want %q", c.pat, c.fold, got, c.want)
		}
	}
}

// TestParseTime: RFC 3339, dates (until: the whole day), durations back.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	day := time.Date(2026, 1, 29, 0, 0, 0, 0, time.Local)
	for _, c := range []struct {
		v     string
		until bool
		want  time.Time
	}{
		{v: "2026-01-29T10:00:00Z", want: time.Date(2026, 1, 29, 10, 0, 0, 0, time.UTC)},
		{v: "2026-01-29", want: day},
		{v: "2026-01-29", until: true, want: day.AddDate(0, 0, 1).Add(-time.Nanosecond)},
		{v: "2026-01-29 10:30", want: day.Add(10*time.Hour + 30*time.Minute)},
		{v: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{v: "2w", want: now.Add(-14 * 24 * time.Hour)},
		{v: "12h", want: now.Add(-12 * time.Hour)},
		{v: "1h30m", want: now.Add(-90 * time.Minute)},
	} {
		got, err := ParseTime(c.v, now, c.until)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q, until %v) = %v, %v; want %v", c.v, c.until, got, err, c.want)
		}
	}
	for _, v := range []string{"yesterday", "-7d", "2026-13-01", "7x", "", "1.5d"} {
		if _, err := ParseTime(v, now, false); err == nil {
			t.Errorf("ParseTime(%q): no error", v)
		}
	}
	// A duration back is one --older-than takes (repair.ParseAge), no other.
	for _, v := range []string{"30d", "2w", "36h", "1h30m", "0", "1.5d", "1e3d", "7 d", "d", "-1h"} {
		_, err := ParseTime(v, now, false)
		_, aerr := repair.ParseAge(v)
		if (err == nil) != (aerr == nil) {
			t.Errorf("ParseTime(%q): error %v; repair.ParseAge: %v", v, err, aerr)
		}
	}
}

// TestFilters: role, tool, session, project and time, on the crafted
// store, for "café" written every way JSON allows.
func TestFilters(t *testing.T) {
	root := craftedStore(t)
	type hit struct {
		file       string
		line       int
		kind, tool string
	}
	run := func(o Options) []hit {
		t.Helper()
		o.Root = root
		if o.Pattern == "" {
			o.Pattern = "café"
		}
		var out []hit
		if _, err := Run(o, func(h *Hit) error {
			rel := strings.TrimPrefix(h.Path, root+"/")
			out = append(out, hit{rel, h.Line, h.Kind, h.Tool})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := run(Options{})
	if len(all) != 21 {
		t.Errorf("all hits: %d, want 21:\n%v", len(all), all)
	}
	// The order: projects by path (a session before its subagents), then
	// the extras, then history.jsonl; lines in order.
	want := []hit{
		{"projects/-v/" + sidB + ".jsonl", 1, KindText, ""},
		{"projects/-w/" + sidA + ".jsonl", 1, KindSummary, ""},
		{"projects/-w/" + sidA + ".jsonl", 2, KindText, ""},
		{"projects/-w/" + sidA + ".jsonl", 3, KindThinking, ""},
		{"projects/-w/" + sidA + ".jsonl", 3, KindText, ""},
		{"projects/-w/" + sidA + ".jsonl", 3, KindToolInput, "Bash"},
		{"projects/-w/" + sidA + ".jsonl", 3, KindToolInput, "Bash"},
		{"projects/-w/" + sidA + ".jsonl", 6, KindSummary, ""},
		{"projects/-w/" + sidA + ".jsonl", 7, KindTitle, ""},
		{"projects/-w/" + sidA + ".jsonl", 8, KindTitle, ""},
		{"projects/-w/" + sidA + ".jsonl", 12, KindToolOutput, ""},
		{"projects/-w/" + sidA + "/subagents/agent-a1.jsonl", 1, KindText, ""},
		{"projects/-w/" + sidA + "/subagents/agent-a1.jsonl", 2, KindToolInput, "Grep"},
		{"projects/-w/" + sidA + "/subagents/agent-a1.jsonl", 3, KindToolOutput, "Grep"},
		{"pre-compact-session-histories/" + sidA + ".jsonl", 1, KindText, ""},
		{"transcripts/ses_abc123.jsonl", 1, KindText, ""},
		{"transcripts/ses_abc123.jsonl", 2, KindToolInput, "bash"},
		{"transcripts/ses_abc123.jsonl", 3, KindToolOutput, "bash"},
		{"transcripts/ses_abc123.jsonl", 4, KindText, ""},
		{"history.jsonl", 1, KindPrompt, ""},
		{"history.jsonl", 2, KindPrompt, ""},
	}
	if len(all) == len(want) {
		for i := range want {
			if all[i] != want[i] {
				t.Errorf("hit %d = %v, want %v", i, all[i], want[i])
			}
		}
	}
	count := func(name string, o Options, n int) {
		t.Helper()
		if got := run(o); len(got) != n {
			t.Errorf("%s: %d hits, want %d:\n%v", name, len(got), n, got)
		}
	}
	count("--role tool", Options{Role: "tool"}, 7)
	count("--role user", Options{Role: "user"}, 7)
	count("--role assistant", Options{Role: "assistant"}, 3)
	count("--role title", Options{Role: "title"}, 2)
	count("--role summary", Options{Role: "summary"}, 2)
	count("--tool Bash", Options{Tool: "Bash"}, 4)
	count("--tool grep --role tool", Options{Tool: "grep", Role: "tool"}, 2)
	count("--session id", Options{Sessions: []string{sidA}}, 15)
	count("--session prefix", Options{Sessions: []string{"bbbb"}}, 1)
	count("--session export", Options{Sessions: []string{"ses_abc"}}, 4)
	count("--session two", Options{Sessions: []string{"bbbb", "ses_abc123"}}, 5)
	count("--session path", Options{Sessions: []string{root + "/projects/-w/" + sidA + "/subagents/agent-a1.jsonl"}}, 3)
	count("--project /w", Options{Project: "/w"}, 15)
	count("--project /v", Options{Project: "/v"}, 2)
	count("--project folder", Options{Project: "-v"}, 2)
	since, _ := time.Parse(time.RFC3339, "2026-01-02T00:00:00Z")
	until, _ := time.Parse(time.RFC3339, "2025-12-31T23:59:59Z")
	count("--since", Options{Since: since}, 9)
	count("--until", Options{Until: until}, 3)
	count("--since --until", Options{Since: until, Until: since}, 9)

	// Metadata: ids, uuids, member names, signatures, cwd, images, copies.
	for _, p := range []string{"toolu_", "cafe0001", "leafUuid", "isSidechain", "the-signature", "/w/café", "base64", "stdout", "the café system", "lastPrompt"} {
		if n := len(run(Options{Pattern: p})); n != 0 {
			t.Errorf("%q: %d hits in metadata", p, n)
		}
	}
	for _, o := range []Options{
		{Role: "robot"}, {Role: "user", Tool: "Bash"}, {Sessions: []string{"ffff"}}, {Sessions: []string{"-w"}},
		{Project: "/nowhere"}, {Pattern: "("},
	} {
		o.Root = root
		if o.Pattern == "" {
			o.Pattern = "café"
		} else {
			o.Regex = true
		}
		if _, err := Run(o, func(*Hit) error { return nil }); err == nil {
			t.Errorf("Run(%+v): no error", o)
		}
	}
}

// TestDamagedLine: a line that is not JSON is named in a warning, and the
// text before the damage is still searched.
func TestDamagedLine(t *testing.T) {
	root := craftedStore(t)
	path := root + "/projects/-w/" + sidA + ".jsonl"
	data, _ := os.ReadFile(path)
	data = append(data, `{"type":"user","message":{"role":"user","content":"torn: the café"},"uuid":"cafe07`...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	var last *Hit
	_, err := Run(Options{Root: root, Pattern: "torn", Warn: func(m string) { warns = append(warns, m) }}, func(h *Hit) error {
		last = h
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if last == nil || last.Line != 13 || last.Match != "torn" {
		t.Errorf("hit in the torn line: %+v", last)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], path+":13: not valid JSON") {
		t.Errorf("warnings: %q", warns)
	}
}

// TestLongLine: a line longer than the read buffer, and a tool call many
// chunks before its result.
func TestLongLine(t *testing.T) {
	root := craftedStore(t)
	path := root + "/projects/-w/" + sidA + ".jsonl"
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("filler ", 3*bufSize/7)
	fmt.Fprintf(f, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_far","name":"Read","input":{"file_path":"%s"}}]}}`+"\n", long)
	fmt.Fprintf(f, `{"type":"user","message":{"role":"user","content":"%s needle %s"}}`+"\n", long, long)
	fmt.Fprintf(f, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_far","content":"far needle"}]}}`+"\n")
	f.Close()
	var hits []*Hit
	if _, err := Run(Options{Root: root, Pattern: "needle", Context: 10}, func(h *Hit) error {
		hits = append(hits, h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Line != 14 || !strings.HasSuffix(hits[0].Before, "filler  ") ||
		!strings.HasPrefix(hits[0].After, " filler") || len(hits[0].Before)+len(hits[0].After) > 20 || !hits[0].CutBefore || !hits[0].CutAfter ||
		hits[1].Line != 15 || hits[1].Tool != "Read" {
		for _, h := range hits {
			t.Logf("%+v", *h)
		}
		t.Errorf("hits in and after long lines: %d", len(hits))
	}
}

// TestPairIndex: pairIndex (in assembly on amd64) returns the first
// position where both bytes are, as a plain loop does.
func TestPairIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for iter := 0; iter < 5000; iter++ {
		b := make([]byte, 16+rng.Intn(300))
		for i := range b {
			b[i] = "aAbB"[rng.Intn(4)]
		}
		d := rng.Intn(len(b) - 15)
		m := (len(b) - d) &^ 15
		c1, c2 := "ab"[rng.Intn(2)], "ab"[rng.Intn(2)]
		var or1, or2 byte
		if rng.Intn(2) == 0 {
			or1 = 0x20
		}
		if rng.Intn(2) == 0 {
			or2 = 0x20
		}
		want := -1
		for i := 0; i < m; i++ {
			if b[i]|or1 == c1 && b[i+d]|or2 == c2 {
				want = i
				break
			}
		}
		if got := pairIndex(b, c1, c2, or1, or2, d, m); got != want {
			t.Fatalf("pairIndex(%q, %c, %c, %#x, %#x, %d, %d) = %d, want %d", b, c1, c2, or1, or2, d, m, got, want)
		}
	}
}

// TestEmitError: an error from emit (a closed pipe) stops the search and
// is returned; nothing hangs.
func TestEmitError(t *testing.T) {
	root := craftedStore(t)
	stopErr := fmt.Errorf("closed")
	n := 0
	_, err := Run(Options{Root: root, Pattern: "café", Workers: 2}, func(*Hit) error {
		n++
		return stopErr
	})
	if err != stopErr || n != 1 {
		t.Errorf("Run: %v after %d hits, want %v after 1", err, n, stopErr)
	}
}

// TestEmitErrorMidFile: an error from emit at the first hit of a file
// that has more to send (batches of hits, then its end) stops the search
// all the same: Run returns, and leaves no goroutine behind.
func TestEmitErrorMidFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 20*batchLen; i++ {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","message":{"role":"user","content":"needle %d"}}`+"\n", i, i)
	}
	for _, id := range []string{sidA, sidB} {
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	stopErr := fmt.Errorf("closed")
	for i := 0; i < 10; i++ {
		done := make(chan error, 1)
		go func() {
			_, err := Run(Options{Root: root, Pattern: "needle", Workers: 2}, func(*Hit) error { return stopErr })
			done <- err
		}()
		select {
		case err := <-done:
			if err != stopErr {
				t.Fatalf("Run: %v, want %v", err, stopErr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("run %d: Run has not returned 20 s after emit's error", i)
		}
	}
	deadline := time.Now().Add(2 * time.Second) // the wrappers above end
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the searches, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestTwoWays: a character an encoder escapes in otherwise raw text
// (U+2028 and U+2029 by Go's encoding/json, U+FFFD for a lone surrogate
// or bytes not UTF-8) matches in a pattern with other non-ASCII text.
func TestTwoWays(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "→\u2028é \ufffd→ →\u2029é"
	line, err := json.Marshal(map[string]any{"type": "user", "uuid": "u1", "timestamp": "2026-01-01T10:00:00.000Z",
		"message": map[string]any{"role": "user", "content": text}})
	if err != nil {
		t.Fatal(err)
	}
	line = append(line, "\n"...)
	line = append(line, `{"type":"user","uuid":"u2","message":{"role":"user","content":"lone \ud83e→ here"}}`+"\n"...)
	if err := os.WriteFile(filepath.Join(dir, sidA+".jsonl"), line, 0o644); err != nil {
		t.Fatal(err)
	}
	for pat, want := range map[string]int{"→\u2028é": 1, "→\u2029é": 1, "\ufffd→": 2} {
		if got := runHits(t, Options{Root: root, Pattern: pat}); len(got) != want {
			t.Errorf("%q: %d hits, want %d", pat, len(got), want)
		}
	}
}

// TestPastedImage: a pasted image history.jsonl keeps (1.0.x and 2.0.x
// keep one of at most 1024 characters) is base64, not a prompt: no hit in
// it, whether its type comes before its content or after.
func TestPastedImage(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	if err := os.MkdirAll(filepath.Join(root, "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	hist := `{"display":"[Image #1] what is this","pastedContents":{"1":{"id":1,"type":"image","content":"iVBORw0KGgoQk9Xw","mediaType":"image/png"}},"timestamp":1767261600000,"project":"/w"}
{"display":"[Image #1] and this","pastedContents":{"1":{"id":1,"content":"iVBORw0KGgoQk9Xw","type":"image"},"2":{"id":2,"type":"text","content":"pasted Qk9Xw text"}},"timestamp":1767261600000,"project":"/w"}
`
	if err := os.WriteFile(filepath.Join(root, "history.jsonl"), []byte(hist), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runHits(t, Options{Root: root, Pattern: "Qk9Xw"})
	if len(got) != 1 || got[0].line != 2 || got[0].kind != KindPrompt {
		t.Errorf("hits: %v, want the pasted text of line 2 only", got)
	}
}

// TestHarnessRole: a user row the harness wrote (rowSource "harness",
// 2.1.331) has role harness: --role user finds only the rows the person
// wrote (local, recorded, or no rowSource).
func TestHarnessRole(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
	lines := []string{
		`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","rowSource":"harness","isMeta":true,"message":{"role":"user","content":"quince from the harness"}}`,
		`{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"` + id + `","rowSource":"local","message":{"role":"user","content":"quince typed"}}`,
		`{"type":"user","uuid":"u3","parentUuid":"u2","sessionId":"` + id + `","rowSource":"recorded","message":{"role":"user","content":[{"type":"text","text":"quince recorded"}]}}`,
		`{"type":"user","uuid":"u4","parentUuid":"u3","sessionId":"` + id + `","message":{"role":"user","content":"quince of old"}}`,
		`{"rowSource":"harness","type":"user","uuid":"u5","parentUuid":"u4","sessionId":"` + id + `","message":{"role":"user","content":[{"type":"text","text":"quince harness block"}]}}`,
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines4 := func(role string) []int {
		var out []int
		if _, err := Run(Options{Root: root, Pattern: "quince", Role: role}, func(h *Hit) error {
			out = append(out, h.Line)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := fmt.Sprint(lines4("user")); got != "[2 3 4]" {
		t.Errorf("--role user: lines %s, want [2 3 4]", got)
	}
	if got := fmt.Sprint(lines4("harness")); got != "[1 5]" {
		t.Errorf("--role harness: lines %s, want [1 5]", got)
	}
	if got := fmt.Sprint(lines4("")); got != "[1 2 3 4 5]" {
		t.Errorf("any role: lines %s", got)
	}
}
