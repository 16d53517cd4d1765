package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		id := "aaaaaaaa-0000-4000-8000-00000000000" + string(rune('1'+i))
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
// sequence in a title set the terminal's title and cleared the screen.
func TestLsTextVisible(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	const evil = "\x1b]0;pwned\x07x\x1b[2J"
	root := writeLsStore(t, "-w\x1b[31m", "/w\x1b[31m", "2.1\x1b[2J", evil+" title", "second\x1b[31m")
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
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%v: a control character reaches the terminal:\n%q", args, out)
		}
	}
	out, _ := cli(t, "ls", "--root", root, "--", folder)
	if !strings.Contains(out, `\x1b]0;pwned\x07x\x1b[2J title`) {
		t.Errorf("the title is not shown escaped:\n%s", out)
	}
}
