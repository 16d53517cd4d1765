package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// secret is what a file outside the store holds: no tool may return it.
const secret = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ SECRET\n"

// TestConfined names sessions and projects as a prompt planted in a cloned
// repository would: every name resolves in the store, never against the
// server's directory or a path outside the store, and a transcript of the
// store that is a link leading outside it is not read either.
func TestConfined(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	outside := t.TempDir()
	key := filepath.Join(outside, "id_rsa")
	if err := os.WriteFile(key, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	// The repository the client (and the server) runs in: notes.jsonl and
	// a folder named like a project folder lead to the key.
	repo := t.TempDir()
	if err := os.Symlink(key, filepath.Join(repo, "notes.jsonl")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(repo, "proj"), 0o755)
	if err := os.Symlink(key, filepath.Join(repo, "proj", "bc1c66c0-0000-4000-8000-000000000000.jsonl")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	// A transcript of the store that is a link to the key, and one in a
	// subagent folder.
	alphaDir := filepath.Join(root, "projects", "-home-dev-work-alpha")
	if err := os.Symlink(key, filepath.Join(alphaDir, "linked.jsonl")); err != nil {
		t.Fatal(err)
	}
	linkedID := "11111111-2222-4333-8444-555555555555"
	if err := os.Symlink(key, filepath.Join(alphaDir, linkedID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, root, repo)

	noSecret := func(what, text string) {
		t.Helper()
		if strings.Contains(text, "SECRET") || strings.Contains(text, "PRIVATE KEY") {
			t.Errorf("%s: the file outside the store was read: %s", what, text)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_session", map[string]any{"session": "notes.jsonl"}, "no session matches notes.jsonl"},
		{"session_health", map[string]any{"session": "notes.jsonl"}, "no session matches notes.jsonl"},
		{"read_session", map[string]any{"session": "linked"}, "leads outside the store"},
		{"read_session", map[string]any{"session": "linkedx"}, "no session matches linkedx"},
		{"session_health", map[string]any{"session": "linked"}, "leads outside the store"},
		{"read_session", map[string]any{"session": linkedID}, "leads outside the store"},
		{"session_health", map[string]any{"session": linkedID[:8]}, "leads outside the store"},
		{"list_sessions", map[string]any{"project": "proj"}, "names no project"},
		{"list_sessions", map[string]any{"project": "."}, "names no project"},
		{"search_sessions", map[string]any{"query": "SECRET", "project": "proj"}, "names no project"},
		{"read_session", map[string]any{"session": "latest", "project": "proj"}, "names no project"},
	} {
		got := callError(t, cs, c.tool, c.args)
		noSecret(c.tool, got)
		if strings.Contains(got, "did you mean linked") {
			t.Errorf("%s %v: suggests a link that leads outside the store: %q", c.tool, c.args, got)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	// Searching and listing everything reads no link that leads out.
	var sout SearchOutput
	call(t, cs, "search_sessions", map[string]any{"query": "SECRET", "project": "all"}, &sout)
	if len(sout.Hits) != 0 {
		t.Errorf("search: %+v", sout)
	}
	var lout ListOutput
	call(t, cs, "list_sessions", map[string]any{"project": "all"}, &lout)
	for _, s := range lout.Sessions {
		noSecret("list_sessions", s.Title)
		if s.Session == linkedID || s.Session == "linked" {
			t.Errorf("list_sessions lists a link that leads outside the store: %+v", s)
		}
	}
	// A project's directory as an absolute path still names it, and a
	// session of the store still reads.
	call(t, cs, "list_sessions", map[string]any{"project": "/home/dev/work/alpha"}, &lout)
	if lout.Total != 1 || lout.Sessions[0].Session != alpha {
		t.Errorf("project alpha: %+v", lout)
	}
	if text := readAll(t, cs, map[string]any{"session": "bc1c66c0"}); !strings.Contains(text, "hello") {
		t.Errorf("read alpha: %.200s", text)
	}
}
