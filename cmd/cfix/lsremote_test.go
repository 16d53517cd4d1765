package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	agelib "filippo.io/age"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestLsRemote: cfix ls --remote lists what a push left, by machine; an
// encrypted index shows no title without the key, and its titles with it.
func TestLsRemote(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, "2.1.332", dir)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	rem := filepath.Join(dir, "remote")
	os.Mkdir(rem, 0o700)
	id, _ := agelib.GenerateX25519Identity()
	key := filepath.Join(dir, "key.txt")
	os.WriteFile(key, []byte(id.String()+"\n"), 0o600)
	url := "file://" + rem
	if out, code := cli(t, "push", url, "--root", root, "--machine", "laptop", "--apply", "--allow-secrets"); code != 0 {
		t.Fatalf("push: %d\n%s", code, out)
	}
	if out, code := cli(t, "push", url, "--root", root, "--machine", "desk", "--apply", "--allow-secrets", "--recipient", id.Recipient().String()); code != 0 {
		t.Fatalf("push: %d\n%s", code, out)
	}
	out, code := cli(t, "ls", "--remote", url)
	if code != 0 || !strings.Contains(out, "laptop: 5 sessions") || !strings.Contains(out, "desk: 5 sessions") ||
		!strings.Contains(out, "bc1c66c0") || strings.Count(out, "hello, first session") != 1 || !strings.Contains(out, "(5 titles encrypted: --identity FILE shows them)") {
		t.Fatalf("ls --remote: %d\n%s", code, out)
	}
	out, _ = cli(t, "ls", "--remote", url, "--machine", "desk", "--identity", key)
	if strings.Contains(out, "laptop") || !strings.Contains(out, "hello, first session") || strings.Contains(out, "(encrypted)") {
		t.Fatalf("ls --remote --machine desk --identity:\n%s", out)
	}
}
