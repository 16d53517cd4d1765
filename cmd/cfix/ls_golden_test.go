package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestLsDuGolden: cfix ls of a store and of a project (wide, narrow and
// --json) and cfix du, on copies of a corpus and a wild store with fixed
// mtimes, against golden files.
func TestLsDuGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	t.Setenv("COLUMNS", "150")

	root := damage.CopyStore(t, "2.0.77")
	damage.Age(t, root)
	journals := t.TempDir()
	t.Setenv("CFIX_JOURNAL_DIR", journals)
	clean := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, root, "$ROOT"), journals, "$JOURNALS")
	}
	run := func(name string, args ...string) {
		t.Helper()
		out, code := cli(t, append([]string{args[0], "--root", root}, args[1:]...)...)
		if code != exitOK {
			t.Errorf("%s: status %d", name, code)
		}
		golden(t, name, clean(out))
	}
	run("ls-2.0.77.txt", "ls")
	run("ls-2.0.77-alpha.txt", "ls", "--all", "--", "-home-dev-work-alpha")
	run("ls-2.0.77-alpha.json", "ls", "--json", "--", "-home-dev-work-alpha")
	run("du-2.0.77.txt", "du")
	t.Setenv("COLUMNS", "80")
	run("ls-2.0.77-alpha-80.txt", "ls", "--all", "--", "-home-dev-work-alpha")

	t.Setenv("COLUMNS", "150")
	wild := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "testdata", "wild", "2.1.12-2.1.29", ".claude"), wild).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	damage.Age(t, wild)
	root = wild
	run("ls-wild-2.1.12.txt", "ls")
	run("ls-wild-2.1.12.json", "ls", "--json")
	run("du-wild-2.1.12.json", "du", "--json")
}
