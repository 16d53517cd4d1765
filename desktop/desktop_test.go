//go:build unix

package desktop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const skeleton = "../testdata/desktop/2.1.161-2.1.170/claude-code-sessions"

// TestReadSkeleton reads the skeleton index: every file, the fields cfix
// uses, each entry found by the transcript it names.
func TestReadSkeleton(t *testing.T) {
	x, err := Read(skeleton)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Problems) != 0 {
		t.Errorf("problems: %v", x.Problems)
	}
	if len(x.Entries) != 7 {
		t.Fatalf("%d entries, want 7", len(x.Entries))
	}
	es := x.For("ff06e642-25a7-42ab-bac8-5496b3e753bc")
	if len(es) != 1 {
		t.Fatalf("For: %d entries", len(es))
	}
	e := es[0]
	if e.ID != "local_5f1a7b6c-2d3e-4f4a-9b5c-6d7e8f9a0b1c" || e.Title != "Fix the site" || e.Cwd != `C:\Users\d1\work\site` ||
		e.CompletedTurns == nil || *e.CompletedTurns != 30 || e.Archived || !strings.HasSuffix(e.Path, "local_5f1a7b6c-2d3e-4f4a-9b5c-6d7e8f9a0b1c.json") {
		t.Errorf("entry: %+v", e)
	}
	if es := x.For("0d4e6f8a-1b3c-4d5e-9f7a-2b4c6d8e0f1a"); len(es) != 1 || !es[0].Archived {
		t.Errorf("archived entry: %+v", es)
	}
	if es := x.For("9f1c2b3a-4d5e-4f6a-8b7c-9d0e1f2a3b4c"); len(es) != 1 || !es[0].Empty() {
		t.Errorf("entry of no turn: %+v", es)
	}
	lost := 0
	for _, e := range x.Entries {
		if e.TranscriptUnavailable {
			lost++
			if e.CLISessionID != "" {
				t.Errorf("null cliSessionId read as %q", e.CLISessionID)
			}
		}
	}
	if lost != 1 {
		t.Errorf("%d entries marked transcriptUnavailable, want 1", lost)
	}
}

// TestReadNone: no folder is no index, and no error.
func TestReadNone(t *testing.T) {
	for _, d := range []string{"", filepath.Join(t.TempDir(), "absent")} {
		x, err := Read(d)
		if x != nil || err != nil {
			t.Errorf("Read(%q) = %v, %v", d, x, err)
		}
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := Read(f); err == nil || !strings.Contains(err.Error(), f+": not a folder") {
		t.Errorf("a file as the index: %v", err)
	}
}

// TestReadHostile: what is not a session file is refused, naming the file,
// and the others are read; a member cfix does not use is skipped whatever
// it holds.
func TestReadHostile(t *testing.T) {
	dir := t.TempDir()
	org := filepath.Join(dir, "acct", "org")
	os.MkdirAll(org, 0o700)
	write := func(name, s string) string {
		p := filepath.Join(org, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deep := strings.Repeat(`{"a":[`, 5000) + strings.Repeat(`]}`, 5000)
	good := write("local_good.json", `{"mcpConfig":`+deep+`,"sessionId":"local_good","cliSessionId":"70fa8c66-5cc1-4681-92f6-1851ca83712e","title":7,"completedTurns":-1}`)
	notJSON := write("local_bad.json", "not json")
	array := write("local_array.json", `[1,2]`)
	torn := write("local_torn.json", `{"sessionId":"local_torn","cliSessionId":"`)
	big := write("local_big.json", "")
	if err := os.Truncate(big, MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(org, "local_link.json")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(org, "local_fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	write("other.json", "not read")
	x, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entries) != 1 || x.Entries[0].Path != good || x.Entries[0].Title != "" || x.Entries[0].CompletedTurns != nil {
		t.Errorf("entries: %+v", x.Entries)
	}
	want := map[string]string{
		notJSON: "not JSON",
		array:   "not a JSON object",
		torn:    "the file ends inside its object",
		big:     "more than the 8388608 cfix reads",
		link:    "a symbolic link: not followed",
		fifo:    "not a regular file but a named pipe",
	}
	for _, p := range x.Problems {
		var fe *FileError
		if !errors.As(p, &fe) {
			t.Errorf("problem %v", p)
			continue
		}
		w, ok := want[fe.Path]
		if !ok || !strings.Contains(p.Error(), w) || !strings.Contains(p.Error(), fe.Path) {
			t.Errorf("%s: %v (want %q)", fe.Path, p, w)
		}
		delete(want, fe.Path)
	}
	for p, w := range want {
		t.Errorf("%s: no problem %q", p, w)
	}
}

// TestDefaultDir: the app-data folder of each system.
func TestDefaultDir(t *testing.T) {
	home := func() (string, error) { return "/h", nil }
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"windows", map[string]string{"APPDATA": `/h/AppData/Roaming`}, "/h/AppData/Roaming/Claude/claude-code-sessions"},
		{"darwin", nil, "/h/Library/Application Support/Claude/claude-code-sessions"},
		{"linux", nil, "/h/.config/Claude/claude-code-sessions"},
		{"linux", map[string]string{"XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude-code-sessions"},
	} {
		if got := defaultDir(c.goos, env(c.env), home); got != c.want {
			t.Errorf("%s %v: %s, want %s", c.goos, c.env, got, c.want)
		}
	}
}

// TestDir: the flag, then the variable, then the default for ~/.claude
// only (another store is checked against no index).
func TestDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv(EnvDir, "")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	if got := Dir("/flag", "/other"); got != "/flag" {
		t.Errorf("flag: %s", got)
	}
	if got := Dir("", "/other"); got != "" {
		t.Errorf("another store: %q", got)
	}
	if got, want := Dir("", filepath.Join(home, ".claude")), filepath.Join(home, ".config", "Claude", "claude-code-sessions"); got != want {
		t.Errorf("~/.claude: %q, want %q", got, want)
	}
	t.Setenv(EnvDir, "/env")
	if got := Dir("", "/other"); got != "/env" {
		t.Errorf("variable: %s", got)
	}
}
