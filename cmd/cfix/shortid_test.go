package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestShortIDsNameOneSession: two sessions sharing their first 8
// characters print ids that tell them apart (the shortest unique prefix,
// as git) in ls, search and resume --title, and cfix show takes each as
// it is printed; before, both printed 3ba86ea1, which show refused as
// ambiguous.
func TestShortIDsNameOneSession(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("COLUMNS", "200")
	root := damage.CopyStore(t, damage.V88)
	b, err := os.ReadFile(damage.MainFile(root))
	if err != nil {
		t.Fatal(err)
	}
	const twin = "3ba86ea1-3a00-4000-8000-000000000000" // shares 11 characters
	if err := os.WriteFile(filepath.Join(root, "projects", damage.V88Project, twin+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	short := map[string]string{damage.V88Session: "3ba86ea1-3a4", twin: "3ba86ea1-3a0"}
	ls, code := cli(t, "ls", "--root", root, "--", filepath.Join(root, "projects", damage.V88Project))
	if code != exitOK {
		t.Fatalf("ls: status %d", code)
	}
	search, _ := cli(t, "search", "--root", root, "--no-heading", "hello, first session")
	_, resumeErr, _ := cliErr("resume", "--root", root, "--title", "hello, first session", "--check-only")
	for name, out := range map[string]string{"ls": ls, "search": search, "resume --title": resumeErr} {
		for id, s := range short {
			if !regexp.MustCompile(`(?m)^ *` + regexp.QuoteMeta(s) + `  `).MatchString(out) {
				t.Errorf("%s does not print %s for %s:\n%s", name, s, id, out)
			}
		}
		if regexp.MustCompile(`(?m)^ *3ba86ea1  `).MatchString(out) {
			t.Errorf("%s prints an ambiguous 3ba86ea1:\n%s", name, out)
		}
	}
	if !strings.Contains(ls, "ID            STARTED") {
		t.Errorf("ls: the ID column is not as wide as its ids:\n%s", ls)
	}
	for id, s := range short {
		out, errOut, code := cliErr("show", "--root", root, s)
		if code != exitOK || !strings.Contains(out, "session "+id) {
			t.Errorf("show %s: status %d, %s%s", s, code, out, errOut)
		}
	}
}
