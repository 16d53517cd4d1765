package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestOutputVisible: a store whose project folder, custom title and a
// parentUuid hold escape sequences: no command's output carries a raw
// control character, and the title shows as Go escapes in archive --list.
func TestOutputVisible(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V88, dir)
	old := filepath.Join(root, "projects", damage.V88Project)
	folder := filepath.Join(root, "projects", "-w\x1b[2J")
	if err := os.Rename(old, folder); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(folder, damage.V88Session+".jsonl")
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"type":"custom-title","customTitle":"T\u001b[31mRED","sessionId":"%s"}`+"\n", damage.V88Session)
	fmt.Fprintf(f, `{"type":"user","uuid":"x1","parentUuid":"bad\u001b]0;t\u0007","sessionId":"%s","message":{"role":"user","content":"hi"}}`+"\n", damage.V88Session)
	f.Close()
	damage.Age(t, root)
	t.Setenv("CFIX_ARCHIVE_DIR", filepath.Join(dir, "archive"))
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	id := damage.V88Session
	for _, args := range [][]string{
		{"validate"}, {"ls"}, {"du"}, {"repair"}, {"prune"}, {"search", "hi"},
		{"show", id}, {"trim", "--thinking", id}, {"fork", "--turn", "1", id}, {"clone", "--to", "/tmp/elsewhere", id},
		{"rm", id}, {"archive", id}, {"archive", id, "--apply", "--yes"}, {"archive", "--list"}, {"restore", id},
	} {
		out, _ := cli(t, append(args, "--root", root)...)
		if args[0] == "archive" && len(args) > 1 && args[1] == "--list" {
			if !strings.Contains(out, `T\x1b[31mRED`) {
				t.Errorf("archive --list does not show the title as Go escapes:\n%s", out)
			}
		}
		if i := bytes.IndexAny([]byte(out), "\x1b\x07"); i >= 0 {
			t.Errorf("cfix %s prints a raw control character: %q", strings.Join(args, " "), out[max(0, i-60):min(len(out), i+20)])
		}
	}
}

// TestArchiveIDVisible: a session whose id (its transcript's name) holds
// an escape sequence is archived; archive --list and restore show the id
// as Go escapes, never raw.
func TestArchiveIDVisible(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V88, dir)
	id := "e5c\x1b]0;t\x07\x1b[31m"
	src := filepath.Join(root, "projects", damage.V88Project, damage.V88Session+".jsonl")
	main := filepath.Join(root, "projects", damage.V88Project, id+".jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, b, 0o600); err != nil {
		t.Fatal(err)
	}
	damage.Age(t, root)
	adir := filepath.Join(dir, "archive")
	t.Setenv("CFIX_ARCHIVE_DIR", adir)
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	if out, code := cli(t, "archive", main, "--root", root, "--apply", "--yes"); code != exitOK {
		t.Fatalf("archive: status %d\n%s", code, out)
	}
	for _, args := range [][]string{{"archive", "--list"}, {"restore", filepath.Join(adir, id+".tar.zst"), "--root", root}} {
		out, code := cli(t, args...)
		if code != exitOK || !strings.Contains(out, `e5c\x1b]0;t\x07\x1b[31m`) {
			t.Errorf("cfix %s: status %d, the id not as Go escapes:\n%q", args[0], code, out)
		}
		if i := bytes.IndexAny([]byte(out), "\x1b\x07"); i >= 0 {
			t.Errorf("cfix %s prints a raw control character: %q", strings.Join(args, " "), out[max(0, i-60):min(len(out), i+20)])
		}
	}
}
