package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/internal/wild"
)

const desktopSkeleton = "../../testdata/desktop/2.1.161-2.1.170/claude-code-sessions"

// TestDesktopPlanNotes: a plan that takes a session Claude Desktop lists
// out of the store (rm, archive), or out of the project folder of the
// entry's cwd (move), says so in a note naming the entry; a clone, or a
// session Desktop does not list, gets none; validate reports the index's
// findings, from --desktop-dir or $CFIX_DESKTOP_DIR.
func TestDesktopPlanNotes(t *testing.T) {
	root := wild.Copy(t, "2.1.161-2.1.170")
	skel, err := filepath.Abs(desktopSkeleton)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("CFIX_JOURNAL_DIR", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv(desktop.EnvDir, "")
	gone := `note: Claude Desktop lists session 70fa8c66-5cc1-4681-92f6-1851ca83712e "Sort the downloads" (` + skel + `/5d0c1a4e-0b7e-4c61-9a53-3f1f0c2d7a10/8e2f4b6a-1c3d-4e5f-a7b9-0c1d2e3f4a5b/local_0a6b2c1d-7e8f-4a9b-8c0d-1e2f3a4b5c6d.json): without its transcript Desktop shows "Session not found on disk"`
	moved := `note: Claude Desktop lists session 70fa8c66-5cc1-4681-92f6-1851ca83712e "Sort the downloads" (` + skel + `/5d0c1a4e-0b7e-4c61-9a53-3f1f0c2d7a10/8e2f4b6a-1c3d-4e5f-a7b9-0c1d2e3f4a5b/local_0a6b2c1d-7e8f-4a9b-8c0d-1e2f3a4b5c6d.json) and resumes it in C:\Users\d1\.claude, whose project folder will no longer hold its transcript`
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rm", "70fa8c66"}, gone},
		{[]string{"archive", "70fa8c66"}, gone},
		{[]string{"move", "70fa8c66", "--to", dir}, moved},
		{[]string{"clone", "70fa8c66", "--to", dir}, ""},
		{[]string{"rm", "06210e47"}, ""},
	} {
		args := append(c.args, "--root", root, "--stat", "--desktop-dir", desktopSkeleton)
		out, errOut, code := cliErr(args...)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", strings.Join(c.args, " "), code, errOut)
			continue
		}
		n := strings.Count(out, "note: Claude Desktop")
		if c.want == "" && n != 0 || c.want != "" && (n != 1 || !strings.Contains(out, c.want)) {
			t.Errorf("%s: %d Desktop notes, want %q:\n%s", strings.Join(c.args, " "), n, c.want, out)
		}
		// Without the index, no note.
		out, _, _ = cliErr(append(c.args, "--root", root, "--stat")...)
		if strings.Contains(out, "Claude Desktop lists") {
			t.Errorf("%s, no index: %s", strings.Join(c.args, " "), out)
		}
	}

	out, _, _ := cliErr("validate", "--root", root, "--desktop-dir", desktopSkeleton)
	if !strings.Contains(out, "desktop-transcript-missing") || !strings.Contains(out, "desktop-transcript-elsewhere") {
		t.Errorf("validate --desktop-dir:\n%s", out)
	}
	t.Setenv(desktop.EnvDir, desktopSkeleton)
	out, _, _ = cliErr("validate", "--root", root)
	if !strings.Contains(out, "desktop-transcript-missing") {
		t.Errorf("validate with $%s:\n%s", desktop.EnvDir, out)
	}
}

// TestDesktopShow: cfix show names the title Claude Desktop lists a
// session under, and its findings on the session, from --desktop-dir;
// without the index, neither.
func TestDesktopShow(t *testing.T) {
	root := wild.Copy(t, "2.1.161-2.1.170")
	t.Setenv(desktop.EnvDir, "")
	for _, c := range []struct {
		id, title, code string
	}{
		{"70fa8c66", `"Sort the downloads" (desktop)`, ""},
		{"ff06e642", `"Fix the site" (desktop)`, "desktop-transcript-elsewhere"},
	} {
		out, errOut, _ := cliErr("show", c.id, "--root", root, "--desktop-dir", desktopSkeleton)
		if !strings.Contains(out, c.title) {
			t.Errorf("show %s --desktop-dir: no %s in the titles:\n%s%s", c.id, c.title, out, errOut)
		}
		if c.code != "" && !strings.Contains(out, c.code) {
			t.Errorf("show %s --desktop-dir: no %s finding:\n%s", c.id, c.code, out)
		}
		out, _, _ = cliErr("show", c.id, "--root", root)
		if strings.Contains(out, "(desktop)") || strings.Contains(out, "desktop-transcript") {
			t.Errorf("show %s, no index: %s", c.id, out)
		}
	}
}
