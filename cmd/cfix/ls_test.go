package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/catalog"
)

// writeLsStore writes a store with one project folder (for cwd) holding a
// session of each title, and returns its root.
func writeLsStore(t *testing.T, folder, cwd, version string, titles ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, title := range titles {
		// aaaaaaaa-…1, bbbbbbbb-…2: ids whose first 8 characters tell them apart.
		id := strings.Repeat(string(rune('a'+i)), 8) + "-0000-4000-8000-00000000000" + string(rune('1'+i))
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.Encode(map[string]any{"type": "user", "sessionId": id, "cwd": cwd, "uuid": "u1", "parentUuid": nil,
			"timestamp": "2026-01-0" + string(rune('1'+i)) + "T00:00:00Z", "version": version,
			"message": map[string]any{"role": "user", "content": "a prompt"}})
		enc.Encode(map[string]any{"type": "custom-title", "customTitle": title, "sessionId": id})
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestLsTextVisible: what a transcript says (a title, a cwd, a version)
// and a folder's name reach the terminal with their control characters
// escaped, in ls, du and the completion of session ids: an escape
// sequence in a title set the terminal's title and cleared the screen, a
// right-to-left override showed "txt.exe\u202egpj" as "txt.exejpg".
func TestLsTextVisible(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	const evil = "\x1b]0;pwned\x07x\x1b[2J"
	root := writeLsStore(t, "-w\x1b[31m", "/w\x1b[31m", "2.1\x1b[2J", evil+" title", "second\x1b[31m", "txt.exe\u202egpj")
	folder := filepath.Join(root, "projects", "-w\x1b[31m")
	for _, args := range [][]string{
		{"ls", "--root", root},
		{"ls", "--root", root, "--", folder},
		{"du", "--root", root},
		{"du", "--root", root, "--", folder},
		{"__complete", "validate", "--root", root, ""},
	} {
		out, code := cli(t, args...)
		if code != exitOK {
			t.Errorf("%v: status %d", args, code)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%v: a control character reaches the terminal:\n%q", args, out)
		}
	}
	out, _ := cli(t, "ls", "--root", root, "--", folder)
	if !strings.Contains(out, `\x1b]0;pwned\x07x\x1b[2J title`) || !strings.Contains(out, `txt.exe\u202egpj`) {
		t.Errorf("the title is not shown escaped:\n%s", out)
	}
}

// TestLsWidth: a title is cut to the terminal's columns, not to its
// characters: a CJK title (two columns a character) ran past an 80-column
// terminal and wrapped, and a title of combining marks was cut short and
// lost the mark of its last letter.
func TestLsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	root := writeLsStore(t, "-w", "/w", "2.1.30",
		strings.Repeat("日本語のタイトル", 10), strings.Repeat("e\u0301", 100), "short")
	out, code := cli(t, "ls", "--root", root, "--", filepath.Join(root, "projects", "-w"))
	if code != exitOK {
		t.Fatalf("status %d", code)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if len(line) < 9 || line[8] != ' ' || strings.Trim(line[:8], line[:1]) != "" {
			continue
		}
		rows++
		if n := cells(line); n > 80 {
			t.Errorf("%d columns: %s", n, line)
		}
		if strings.Contains(line, "e\u0301") && (cells(line) != 80 || !strings.HasSuffix(line, "e\u0301…")) {
			t.Errorf("combining marks cut short or split (%d columns): %s", cells(line), line)
		}
		if strings.Contains(line, "日本") && cells(line) < 79 {
			t.Errorf("wide title cut short (%d columns): %s", cells(line), line)
		}
	}
	if rows != 3 {
		t.Errorf("%d rows:\n%s", rows, out)
	}
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"日本語", 4, "日…"}, {"日本語", 6, "日本語"}, {"ab", 1, "…"}, {"e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301e\u0301"}, {"e\u0301e\u0301e\u0301", 2, "e\u0301…"}} {
		if got := cut(c.s, c.n); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// TestLsStoreTotals: the last line of the store's listing counts the empty
// and Warmup sessions of a folder that holds nothing else (it left them
// out, unsaid), and --all, which lists them, counts them as sessions.
func TestLsStoreTotals(t *testing.T) {
	root := writeLsStore(t, "-w", "/w", "2.1.30", "a title")
	empty := filepath.Join(root, "projects", "-v")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "bbbbbbbb-0000-4000-8000-000000000001.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := cli(t, "ls", "--root", root)
	if !strings.Contains(out, "1 project, 1 session, ") || !strings.Contains(out, "; 1 empty or Warmup session not counted") {
		t.Errorf("ls:\n%s", out)
	}
	out, _ = cli(t, "ls", "--root", root, "--all")
	if !strings.Contains(out, "2 projects, 2 sessions, ") || strings.Contains(out, "not counted") {
		t.Errorf("ls --all:\n%s", out)
	}
	if !strings.Contains(out, "         1          0        0 B  1 warning     ? (folder -v)") {
		t.Errorf("ls --all: the folder of an empty session shows no session:\n%s", out)
	}
}

// TestLsLiveUnwritten: a live session whose file holds its metadata only
// (it has just started) is a notice, as validate says, not a warning.
func TestLsLiveUnwritten(t *testing.T) {
	root := writeLsStore(t, "-w", "/w", "2.1.30", "a title")
	id := "bbbbbbbb-0000-4000-8000-000000000002"
	dir := filepath.Join(root, "projects", "-w")
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(`{"type":"custom-title","customTitle":"starting","sessionId":"`+id+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// pid 1 runs.
	if err := os.MkdirAll(filepath.Join(root, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sessions", "1.json"), []byte(`{"pid":1,"sessionId":"`+id+`","cwd":"/w"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, "validate", "--root", root, "--json")
	if code != exitOK || !strings.Contains(out, `"code": "session-unwritten",
      "severity": "notice",`) {
		t.Fatalf("validate (status %d) does not call it a notice:\n%s", code, out)
	}
	out, _ = cli(t, "ls", "--root", root, "--json", "--", dir)
	var doc struct {
		Sessions []catalog.SessionDoc `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Sessions {
		if s.ID == id && (!s.Live || s.Health.Warnings != 0 || len(s.Health.Findings) != 1 || s.Health.Findings[0].Severity != "notice") {
			t.Errorf("live, metadata only: %+v", s)
		}
	}
	out, _ = cli(t, "ls", "--root", root)
	if !strings.Contains(out, " 2 (1 live) ") || !strings.Contains(out, " ok ") {
		t.Errorf("ls:\n%s", out)
	}
}

// TestLsExtrasPlural: two pre-compact histories are "histories".
func TestLsExtrasPlural(t *testing.T) {
	root := writeLsStore(t, "-w", "/w", "2.1.30", "a title")
	dir := filepath.Join(root, "pre-compact-session-histories")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"h1.jsonl", "h2.jsonl"} {
		line := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"before"}}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := cli(t, "ls", "--root", root)
	if !strings.Contains(out, "/ (2 pre-compact histories)") {
		t.Errorf("ls:\n%s", out)
	}
	out, _ = cli(t, "ls", "--root", root, dir)
	if !strings.HasSuffix(out, "\n2 pre-compact histories\n") {
		t.Errorf("ls %s:\n%s", dir, out)
	}
}

// TestCompleteSidecarTitle: completion describes a session by its title as
// ls shows it, the title sidecar (2.1.330's rename) included: it showed
// the first prompt, as it glanced with no session folder known.
func TestCompleteSidecarTitle(t *testing.T) {
	root := writeLsStore(t, "-w", "/w", "2.1.330", "")
	id := "aaaaaaaa-0000-4000-8000-000000000001"
	dir := filepath.Join(root, "projects", "-w", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "custom-title.json"), []byte(`{"customTitle":"renamed in the sidecar"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := cli(t, "ls", "--root", root, "--", filepath.Join(root, "projects", "-w"))
	if !strings.Contains(out, "renamed in the sidecar") {
		t.Fatalf("ls:\n%s", out)
	}
	out, _ = cli(t, "__complete", "show", "--root", root, "")
	if !strings.Contains(out, id+"\trenamed in the sidecar\n") {
		t.Errorf("completion:\n%s", out)
	}
}

// TestLsMessagesBig: ls counts the messages of a session too big to read
// whole (2.1.330 writes about 142 KB a turn), as it counts those of a small
// one, and --sort messages orders by them; they showed as "-" (null). The
// second listing takes the count from the cache, the third counts what
// was appended since.
func TestLsMessagesBig(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := writeLsStore(t, "-w", "/w", "2.1.330", "small one")
	dir := filepath.Join(root, "projects", "-w")
	const id = "bbbbbbbb-0000-4000-8000-000000000002"
	var b strings.Builder
	enc := json.NewEncoder(&b)
	parent := any(nil)
	add := func(typ, uuid string) {
		enc.Encode(map[string]any{"type": typ, "sessionId": id, "cwd": "/w", "uuid": uuid, "parentUuid": parent,
			"timestamp": "2026-01-05T00:00:00Z", "version": "2.1.330",
			"message": map[string]any{"role": typ, "content": strings.Repeat("z", 2000)}})
		parent = uuid
	}
	for i := 0; i < 150; i++ {
		add("user", "u"+string(rune('A'+i%26))+strings.Repeat("x", i/26))
		add("assistant", "a"+string(rune('A'+i%26))+strings.Repeat("x", i/26))
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(want int) {
		t.Helper()
		out, code := cli(t, "ls", "--root", root, "--json", "--sort", "messages", "--", "-w")
		if code != exitOK {
			t.Fatalf("status %d", code)
		}
		var v struct {
			Sessions []struct {
				ID       string `json:"id"`
				Messages *int   `json:"messages"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Sessions) != 2 || v.Sessions[0].ID != id || v.Sessions[0].Messages == nil || *v.Sessions[0].Messages != want ||
			v.Sessions[1].Messages == nil || *v.Sessions[1].Messages != 1 {
			t.Fatalf("want %s first with %d messages, then 1:\n%s", id, want, out)
		}
	}
	list(300)
	list(300)
	b.Reset()
	add("user", "tail1")
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(b.String())
	fh.Close()
	list(301)
}

// TestLsMemoryOnly: a project folder that holds only Claude Code's
// memory/ (its last session removed or archived) is left out of the
// listing and counted in its last line, and --all lists it as what it is;
// it was listed as "? (folder NAME)". A folder with sessions and memory/
// is listed as before.
func TestLsMemoryOnly(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	root := writeLsStore(t, "-w", "/w", "2.1.330", "kept")
	for _, dir := range []string{filepath.Join(root, "projects", "-w", "memory"), filepath.Join(root, "projects", "-gone", "memory")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte("# notes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, code := cli(t, "ls", "--root", root)
	if code != exitOK || strings.Contains(out, "-gone") || strings.Contains(out, "?") ||
		!strings.Contains(out, "1 project, 1 session,") ||
		!strings.Contains(out, "; 1 folder holds only Claude Code's memory/ and no session, not listed (--all lists them; prune keeps them)\n") {
		t.Errorf("ls (status %d):\n%s", code, out)
	}
	out, code = cli(t, "ls", "--all", "--root", root)
	if code != exitOK || !strings.Contains(out, " memory only, no session (folder -gone)\n") || !strings.Contains(out, " /w\n") {
		t.Errorf("ls --all (status %d):\n%s", code, out)
	}
	out, _ = cli(t, "ls", "--all", "--json", "--root", root)
	var v struct {
		Projects []struct {
			Folder     string `json:"folder"`
			MemoryOnly bool   `json:"memory_only"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range v.Projects {
		if p.MemoryOnly != (p.Folder == "-gone") {
			t.Errorf("ls --json: %s memory_only %v", p.Folder, p.MemoryOnly)
		}
	}
	if len(v.Projects) != 2 {
		t.Errorf("ls --all --json: %s", out)
	}
}
