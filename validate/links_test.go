package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// moveOut moves a project folder of the store at root to another folder
// ("another disk") and links it back, as people do with big projects. It
// returns the link and the folder it leads to.
func moveOut(t *testing.T, root, folder string) (link, disk string) {
	t.Helper()
	link = filepath.Join(root, "projects", folder)
	disk = filepath.Join(t.TempDir(), folder)
	if err := os.Rename(link, disk); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(disk, link); err != nil {
		t.Fatal(err)
	}
	return link, disk
}

func findings(rep *validate.Report, c validate.Code) []validate.Finding {
	var out []validate.Finding
	for _, f := range rep.Findings {
		if f.Code == c {
			out = append(out, f)
		}
	}
	return out
}

// TestProjectSymlink: a torn session behind a project folder that is a
// symbolic link is found, and the link is reported with where it leads.
func TestProjectSymlink(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	before := run(t, root)
	link, disk := moveOut(t, root, damage.V88Project)
	main := damage.MainFile(root) // through the link
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","uuid":"torn`)
	f.Close()

	rep := run(t, root)
	if rep.FilesChecked != before.FilesChecked {
		t.Errorf("%d files checked, %d before the move", rep.FilesChecked, before.FilesChecked)
	}
	if !hasFinding(rep, validate.LineTorn, main, 0) {
		t.Errorf("the torn line behind the link is not reported")
	}
	// No cfix command writes behind the link: its findings get no hint.
	for _, f := range findings(rep, validate.LineTorn) {
		if f.Hint != "" {
			t.Errorf("a finding behind the link has the hint %q", f.Hint)
		}
	}
	fs := findings(rep, validate.ProjectSymlink)
	if len(fs) != 1 || fs[0].Path != link || fs[0].Severity != validate.Warning || fs[0].Line != 0 {
		t.Fatalf("project-symlink findings: %+v", fs)
	}
	for _, want := range []string{"symbolic link to " + disk, "/resume picker", "anthropics/claude-code#60965", "leads out of the store"} {
		if !strings.Contains(fs[0].Message, want) {
			t.Errorf("message lacks %q: %s", want, fs[0].Message)
		}
	}
	// The sessions behind the link are known: their sidecars are no orphans.
	for _, c := range []validate.Code{validate.OrphanFileHist, validate.OrphanTodos, validate.OrphanSessionEnv, validate.OrphanDebug} {
		if len(findings(rep, c)) != len(findings(before, c)) {
			t.Errorf("%s: %d findings, %d before the move", c, len(findings(rep, c)), len(findings(before, c)))
		}
	}
	// A run on the session, by id or by a prefix, says it too.
	for _, target := range []string{damage.V88Session, damage.V88Session[:8]} {
		rep = run(t, root, target)
		if len(findings(rep, validate.ProjectSymlink)) != 1 || !hasFinding(rep, validate.LineTorn, main, 0) {
			t.Errorf("%s: %+v", target, rep.Findings)
		}
	}
}

// TestProjectSymlinkDangling: a link to a disk that is not there is
// reported, and the rest of the store is checked.
func TestProjectSymlinkDangling(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	link, disk := moveOut(t, root, damage.V88Project)
	os.RemoveAll(disk)
	rep := run(t, root)
	fs := findings(rep, validate.ProjectSymlink)
	if len(fs) != 1 || fs[0].Path != link || !strings.Contains(fs[0].Message, "symbolic link to "+disk+", which cannot be read") ||
		!strings.Contains(fs[0].Message, "its sessions were not checked") {
		t.Errorf("project-symlink findings: %+v", fs)
	}
	if rep.FilesChecked == 0 {
		t.Error("the other project folders were not checked")
	}
}
