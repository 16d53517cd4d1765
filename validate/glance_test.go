package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/store"
)

// TestGlanceCodes: the quick check of a glance speaks validate's codes,
// with their severities, and reads as far as the picker does.
func TestGlanceCodes(t *testing.T) {
	if store.GlanceReach != PickerReach {
		t.Errorf("store.GlanceReach %d, validate.PickerReach %d", store.GlanceReach, PickerReach)
	}
	for code, sev := range store.QuickCodes {
		if _, ok := codeSeverity[Code(code)]; !ok {
			t.Errorf("quick code %s is no validate code", code)
			continue
		}
		if got := SeverityOf(Code(code)).String(); got != sev {
			t.Errorf("quick code %s: severity %s, validate says %s", code, sev, got)
		}
	}
}

// TestGlanceStores: on every main transcript of the corpus and wild
// stores, what a glance reads of the head and tail agrees with a full
// read (the messages, first and last timestamps of a file it reads whole),
// and every quick finding is one validate reports for the same file.
func TestGlanceStores(t *testing.T) {
	roots := wild.AllRoots(t)
	if len(roots) < 18 {
		t.Fatalf("%d stores found", len(roots))
	}
	files, quick := 0, 0
	for _, root := range roots {
		rep, err := Run(Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		reported := map[string]bool{}
		for _, f := range rep.Findings {
			reported[f.Path+" "+string(f.Code)] = true
		}
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		// A listing of one project folder says what the store's says.
		for _, folder := range l.Projects {
			pl, err := store.ScanProject(root, folder)
			if err != nil {
				t.Fatal(err)
			}
			ss := store.SessionsOf(pl, nil)
			store.Restub(ss, l, nil)
			for _, s := range ss {
				for _, q := range s.Quick {
					if !reported[s.Path+" "+q.Code] {
						t.Errorf("%s (listed alone): quick %s %s, which validate does not report", s.Path, q.Code, q.Message)
					}
				}
			}
		}
		for _, s := range store.SessionsOf(l, nil) {
			files++
			if s.Err != nil {
				t.Errorf("%s: %v", s.Path, s.Err)
			}
			for _, q := range s.Quick {
				quick++
				if !reported[s.Path+" "+q.Code] {
					t.Errorf("%s: quick %s %s, which validate does not report", s.Path, q.Code, q.Message)
				}
			}
			if !s.Whole {
				continue
			}
			sum, err := store.Summarize(s.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !s.MessagesKnown || s.Messages != sum.Messages {
				t.Errorf("%s: %d messages (known %v), a full read counts %d", s.Path, s.Messages, s.MessagesKnown, sum.Messages)
			}
			if sum.First != "" && !s.Started.Equal(ts(t, sum.First)) {
				t.Errorf("%s: started %v, a full read says %s", s.Path, s.Started, sum.First)
			}
			if sum.Last != "" && !s.LastActive.Equal(ts(t, sum.Last)) {
				t.Errorf("%s: last active %v, a full read says %s", s.Path, s.LastActive, sum.Last)
			}
		}
	}
	t.Logf("%d stores, %d transcripts, %d quick findings", len(roots), files, quick)
	if quick == 0 {
		t.Error("no quick finding on any store: the test would not see a wrong one")
	}
}

func ts(t *testing.T, s string) time.Time {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGlanceReach: in a transcript bigger than twice the reach, a glance
// sees only the head and the tail: the title the picker shows (as
// FindTitleGap finds it), the first prompt, the last timestamp, a torn
// last line, and no message count.
func TestGlanceReach(t *testing.T) {
	dir := t.TempDir()
	id := "aaaaaaaa-0000-4000-8000-000000000001"
	path := filepath.Join(dir, id+".jsonl")
	entry := func(i int, typ, text string) string {
		parent := "null"
		if i > 0 {
			parent = fmt.Sprintf(`"u%d"`, i-1)
		}
		return fmt.Sprintf(`{"type":%q,"uuid":"u%d","parentUuid":%s,"sessionId":%q,"timestamp":"2026-01-01T00:%02d:%02dZ","cwd":"/w","version":"2.1.30","message":{"role":%q,"content":%q}}`,
			typ, i, parent, id, i/60%60, i%60, typ, text)
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"ai-title","aiTitle":"head title","sessionId":"` + id + `"}` + "\n")
	b.WriteString(entry(0, "user", "the first prompt") + "\n")
	i := 1
	for ; b.Len() < 3*store.GlanceReach; i++ {
		typ := "assistant"
		if i%2 == 0 {
			typ = "user"
		}
		b.WriteString(entry(i, typ, strings.Repeat("x", 900)) + "\n")
		if i == 80 {
			b.WriteString(`{"type":"custom-title","customTitle":"lost in the middle","sessionId":"` + id + `"}` + "\n")
		}
	}
	b.WriteString(entry(i, "assistant", "last") + "\n")
	b.WriteString(`{"type":"assistant","uuid":"torn`)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	g := store.GlanceAt(store.File{Path: path, Project: "-w", Kind: store.KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()})
	gap, err := FindTitleGap(path)
	if err != nil || gap == nil {
		t.Fatalf("FindTitleGap: %v, %v", gap, err)
	}
	if g.Title != gap.Picked || g.Title != "head title" || g.TitleFrom != store.TitleAI {
		t.Errorf("title %q from %s; the picker shows %q", g.Title, g.TitleFrom, gap.Picked)
	}
	if g.FirstPrompt != "the first prompt" || g.Whole || g.MessagesKnown {
		t.Errorf("first prompt %q, whole %v, messages known %v", g.FirstPrompt, g.Whole, g.MessagesKnown)
	}
	if want := ts(t, fmt.Sprintf("2026-01-01T00:%02d:%02dZ", i/60%60, i%60)); !g.LastActive.Equal(want) || !g.Timed {
		t.Errorf("last active %v, want %v", g.LastActive, want)
	}
	if len(g.Quick) != 1 || g.Quick[0].Code != string(LineTorn) {
		t.Errorf("quick %+v, want one line-torn", g.Quick)
	}
	// The title once appended again at the end is in reach.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n" + `{"type":"custom-title","customTitle":"lost in the middle","sessionId":"` + id + `"}` + "\n")
	f.Close()
	fi, _ = os.Stat(path)
	g = store.GlanceAt(store.File{Path: path, Project: "-w", Kind: store.KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()})
	if g.Title != "lost in the middle" || g.TitleFrom != store.TitleCustom {
		t.Errorf("title %q from %s after the append", g.Title, g.TitleFrom)
	}
}

// glanceVsValidate writes the transcript b as the session id of a store,
// and returns its glance and what validate reports of it, by code, with
// the lines.
func glanceVsValidate(t *testing.T, id string, b []byte) (store.Glance, map[string][]int) {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	g := store.GlanceAt(store.File{Path: path, Project: "-w", Kind: store.KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()})
	rep, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]int{}
	for _, f := range rep.Findings {
		if f.Path == path {
			found[string(f.Code)] = append(found[string(f.Code)], f.Line)
		}
	}
	return g, found
}

// TestGlanceTailLines: a finding in the tail of a big transcript has no
// line number (0), never the count of lines from where the tail starts
// (a line that is not JSON 396 lines in was said to be line 52).
func TestGlanceTailLines(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000002"
	var b bytes.Buffer
	for i := 0; b.Len() < 3*store.GlanceReach; i++ {
		typ := "assistant"
		if i%2 == 0 {
			typ = "user"
		}
		fmt.Fprintf(&b, `{"type":%q,"uuid":"u%d","parentUuid":"u%d","sessionId":%q,"timestamp":"2026-01-01T00:00:00Z","message":{"role":%q,"content":%q}}`+"\n",
			typ, i+1, i, id, typ, strings.Repeat("x", 900))
	}
	b.WriteString(`{"broken json` + "\n")
	b.WriteString(`{"type":"summary","summary":"s","leafUuid":"u1"}` + "\n")
	b.WriteString("\x00\x00\x00\n")
	g, found := glanceVsValidate(t, id, b.Bytes())
	if len(g.Quick) != 2 {
		t.Fatalf("quick %+v, want json-invalid and nul-bytes", g.Quick)
	}
	for _, q := range g.Quick {
		lines, ok := found[q.Code]
		if !ok {
			t.Errorf("quick %s, which validate does not report (%v)", q.Code, found)
		}
		if q.Line != 0 {
			t.Errorf("quick %s at line %d in the tail (validate: %v)", q.Code, q.Line, lines)
		}
	}
}

// TestGlanceNULBytes: a line holding NUL bytes is read as validate reads
// it: a nul-bytes finding, and the entry it holds counted once they are
// taken out; NUL bytes a power loss left at the end (no final newline)
// are nul-bytes, not a torn line.
func TestGlanceNULBytes(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000003"
	entry := func(i int, typ string) string {
		return fmt.Sprintf(`{"type":%q,"uuid":"u%d","parentUuid":"u%d","sessionId":%q,"timestamp":"2026-01-01T00:00:%02dZ","message":{"role":%q,"content":"hi"}}`,
			typ, i, i-1, id, i, typ)
	}
	b := entry(1, "user") + "\n" + entry(2, "assistant") + "\n" + "\x00\x00\x00" + entry(3, "user") + "\n" +
		entry(4, "assistant") + "\n" + strings.Repeat("\x00", 300)
	g, found := glanceVsValidate(t, id, []byte(b))
	codes := map[string]int{}
	for _, q := range g.Quick {
		codes[q.Code]++
		if _, ok := found[q.Code]; !ok {
			t.Errorf("quick %s, which validate does not report (%v)", q.Code, found)
		}
	}
	if codes["nul-bytes"] != 2 || len(found["nul-bytes"]) != 2 {
		t.Errorf("quick %v, validate %v: want nul-bytes twice", codes, found)
	}
	// cfix show counts the entry of the line with NUL bytes as well.
	if !g.MessagesKnown || g.Messages != 4 {
		t.Errorf("%d messages, want 4", g.Messages)
	}
	if want := ts(t, "2026-01-01T00:00:04Z"); !g.LastActive.Equal(want) {
		t.Errorf("last active %v, want %v", g.LastActive, want)
	}
}

// TestGlanceNoObject: a file that holds no JSON object is no
// metadata-only session (validate says session-unwritten of a file of
// metadata objects only), and a file of which no line is JSON is one
// file-not-jsonl warning, not an error a line: the quick check called
// such files broken twice over, or worse than validate does.
func TestGlanceNoObject(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000004"
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"text", "not json\n{broken\n", []string{"file-not-jsonl"}},
		{"torn", `{"type":"user","uuid":"u1","mess`, []string{"line-torn"}},
		{"nul", "\x00\x00\x00\x00", []string{"nul-bytes"}},
		{"array", "[1,2]\n", []string{"entry-not-object"}},
		{"blank", "\n\n", nil},
	} {
		g, found := glanceVsValidate(t, id, []byte(c.content))
		var got []string
		for _, q := range g.Quick {
			got = append(got, q.Code)
			if _, ok := found[q.Code]; !ok {
				t.Errorf("%s: quick %s, which validate does not report (%v)", c.name, q.Code, found)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || g.MetaOnly {
			t.Errorf("%s: quick %v (metadata-only %v), want %v", c.name, got, g.MetaOnly, c.want)
		}
	}
}

// TestGlanceEmptyTitle: an empty custom-title last in the tail hides the
// ones before it, as the picker reads it (FindTitleGap): the picker goes on
// to the next place, where a glance took the custom-title before it.
func TestGlanceEmptyTitle(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000005"
	var b bytes.Buffer
	b.WriteString(`{"type":"ai-title","aiTitle":"head title","sessionId":"` + id + `"}` + "\n")
	for i := 0; b.Len() < 3*store.GlanceReach; i++ {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","parentUuid":"u%d","sessionId":%q,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":%q}}`+"\n",
			i+1, i, id, strings.Repeat("x", 900))
		if i == 80 {
			b.WriteString(`{"type":"ai-title","aiTitle":"middle title","sessionId":"` + id + `"}` + "\n")
		}
	}
	b.WriteString(`{"type":"custom-title","customTitle":"renamed","sessionId":"` + id + `"}` + "\n")
	b.WriteString(`{"type":"custom-title","customTitle":"","sessionId":"` + id + `"}` + "\n")
	g, _ := glanceVsValidate(t, id, b.Bytes())
	gap, err := FindTitleGap(g.Path)
	if err != nil || gap == nil {
		t.Fatalf("FindTitleGap: %v, %v", gap, err)
	}
	if g.Title != gap.Picked || g.TitleFrom != store.TitleAI {
		t.Errorf("title %q from %s; the picker shows %q", g.Title, g.TitleFrom, gap.Picked)
	}
}

// TestGlanceShrunk: a file shorter than when it was listed (written again
// by a rename since) is glanced at as it is: its tail was read past its
// end (the last entries unseen, or another file's bytes left in the
// buffer taken for its own) and a head cut short was a read error.
func TestGlanceShrunk(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000006"
	var b bytes.Buffer
	i := 0
	for ; b.Len() < store.GlanceReach*3/2; i++ {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","parentUuid":"u%d","sessionId":%q,"timestamp":"2026-01-01T00:%02d:%02dZ","message":{"role":"user","content":%q}}`+"\n",
			i+1, i, id, i/60%60, i%60, strings.Repeat("x", 900))
	}
	path := filepath.Join(t.TempDir(), id+".jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	want := ts(t, fmt.Sprintf("2026-01-01T00:%02d:%02dZ", (i-1)/60%60, (i-1)%60))
	for _, listed := range []int64{3 * store.GlanceReach, store.GlanceReach * 5 / 2} {
		g := store.GlanceAt(store.File{Path: path, Project: "-w", Kind: store.KindSession, Session: id, Size: listed, ModTime: fi.ModTime()})
		if g.Err != nil || len(g.Quick) > 0 {
			t.Errorf("listed at %d bytes: error %v, quick %+v", listed, g.Err, g.Quick)
		}
		if !g.LastActive.Equal(want) || !g.MessagesKnown || g.Messages != i || g.Size != fi.Size() {
			t.Errorf("listed at %d bytes: last active %v (want %v), %d messages (known %v, want %d), size %d", listed, g.LastActive, want, g.Messages, g.MessagesKnown, i, g.Size)
		}
	}
}

// TestGlanceFirstPromptReach: the first prompt is the picker's, from
// within the head's reach, whether the file is read whole (at most twice
// the reach) or not: a first prompt ending past the reach was shown for a
// file of 100 KB and not for the same file grown past 128 KB.
func TestGlanceFirstPromptReach(t *testing.T) {
	id := "aaaaaaaa-0000-4000-8000-000000000008"
	line := func(i int, typ, text string) string {
		return fmt.Sprintf(`{"type":%q,"uuid":"u%d","parentUuid":"u%d","sessionId":%q,"timestamp":"2026-01-01T00:00:00Z","message":{"role":%q,"content":%q}}`+"\n",
			typ, i, i-1, id, typ, text)
	}
	var b bytes.Buffer
	b.WriteString(line(1, "user", "a pasted log "+strings.Repeat("y", store.GlanceReach+1000)))
	b.WriteString(line(2, "assistant", "ok"))
	small := b.Len()
	g1, _ := glanceVsValidate(t, id, b.Bytes())
	for i := 3; b.Len() < 3*store.GlanceReach; i++ {
		b.WriteString(line(i, "assistant", strings.Repeat("x", 900)))
	}
	g2, _ := glanceVsValidate(t, id, b.Bytes())
	if !g1.Whole || g2.Whole || small > 2*store.GlanceReach {
		t.Fatalf("whole %v and %v", g1.Whole, g2.Whole)
	}
	if g1.FirstPrompt != g2.FirstPrompt || g1.Title != g2.Title || g1.FirstPrompt != "" {
		t.Errorf("first prompt %.20q (title %.20q) read whole, %.20q (%.20q) not", g1.FirstPrompt, g1.Title, g2.FirstPrompt, g2.Title)
	}
}

// TestGlanceDeepLine: the quick check calls a valid line nested past the
// parser's limit line-too-deep, as validate does, not json-invalid.
func TestGlanceDeepLine(t *testing.T) {
	id := "11111111-2222-3333-4444-555555555555"
	path := filepath.Join(t.TempDir(), id+".jsonl")
	n := 20000
	deep := `{"type":"user","message":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	last := `{"type":"user","uuid":"u","sessionId":"` + id + `","message":{"role":"user","content":"hi"}}`
	if err := os.WriteFile(path, []byte(deep+"\n"+last+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	g := store.GlanceAt(store.File{Path: path, Project: "-w", Kind: store.KindSession, Session: id, Size: fi.Size(), ModTime: fi.ModTime()})
	var codes []string
	for _, q := range g.Quick {
		codes = append(codes, fmt.Sprintf("%s:%d", q.Code, q.Line))
	}
	if len(codes) == 0 || codes[0] != "line-too-deep:1" {
		t.Errorf("quick findings %v, want line-too-deep:1", codes)
	}
}
