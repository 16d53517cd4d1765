package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestGuardProjectUndo: cfix undo takes back an install --project, from
// the journal its apply names: into a project without .claude, the folder
// goes again with the file; into a project's settings of another tool,
// they come back byte for byte.
func TestGuardProjectUndo(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(tmp, "journal"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	journal := regexp.MustCompile(`undo with: cfix undo --apply (\S+)`)
	install := func() string {
		t.Helper()
		out, errOut, code := cliErr("guard", "install", "--project", "--cfix", "/usr/local/bin/cfix", "--apply", "--yes")
		m := journal.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("install --project: exit %d\n%s\n%s", code, out, errOut)
		}
		return m[1]
	}
	undo := func(j string) {
		t.Helper()
		if out, errOut, code := cliErr("undo", "--apply", "--yes", j); code != 0 {
			t.Fatalf("undo %s: exit %d\n%s\n%s", j, code, out, errOut)
		}
	}

	bare := filepath.Join(tmp, "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(bare)
	j := install()
	if _, err := os.Stat(filepath.Join(bare, ".claude", "settings.json")); err != nil {
		t.Fatalf("install --project wrote no settings.json: %v", err)
	}
	undo(j)
	if _, err := os.Lstat(filepath.Join(bare, ".claude")); !os.IsNotExist(err) {
		t.Errorf("after the undo, the .claude folder the install made is still there (%v)", err)
	}

	other := filepath.Join(tmp, "other")
	settings := filepath.Join(other, ".claude", "settings.json")
	const theirs = "{\n\t\"permissions\" : {\"allow\": [\"Bash(ls:*)\"]}\n}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(other)
	undo(install())
	if b, _ := os.ReadFile(settings); string(b) != theirs {
		t.Errorf("after the undo, settings.json is\n%s\nwant\n%s", b, theirs)
	}
}
