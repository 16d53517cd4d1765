package changeset_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// TestProjectSettingsConfined: a change set of a project's settings
// writes <project>/.claude/settings.json and nothing else: another file of
// the folder, a file beside it, a rename, a .claude that is a link and a
// saved plan of that scope are refused, and nothing is written.
func TestProjectSettingsConfined(t *testing.T) {
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "proj")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{proj, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	settings := filepath.Join(proj, ".claude", "settings.json")
	apply := func(cs *changeset.ChangeSet) error {
		_, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: filepath.Join(tmp, "journal")})
		return err
	}
	create := func(path string) changeset.Op {
		return changeset.Op{Action: changeset.Create, Path: path, Data: []byte("{}\n"), HasData: true, Reason: "test"}
	}
	for _, c := range []struct {
		name string
		op   changeset.Op
		want string
	}{
		{"another file of .claude", create(filepath.Join(proj, ".claude", "settings.local.json")), "writes nothing else"},
		{"a file beside .claude", create(filepath.Join(proj, "x.json")), "writes nothing else"},
		{"a file outside", create(filepath.Join(outside, "settings.json")), "writes nothing else"},
		{"a rename", changeset.Op{Action: changeset.Rename, Path: settings, To: filepath.Join(outside, "y"), Reason: "test"}, "only writes its settings.json"},
		{"a copy of another file", changeset.Op{Action: changeset.Create, Path: settings, From: filepath.Join(outside, "z"), Reason: "test"}, "reads no other file"},
	} {
		cs := changeset.NewProjectSettings(proj, "test")
		cs.Add(c.op)
		if err := apply(cs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: apply says %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(proj); len(ents) != 0 {
		t.Errorf("a refused plan wrote into the project: %v", ents)
	}

	// Not a .claude folder.
	cs := changeset.NewProjectSettings(proj, "test")
	cs.Root = proj
	cs.Add(create(filepath.Join(proj, "settings.json")))
	if err := apply(cs); err == nil || !strings.Contains(err.Error(), "is not a project's .claude folder") {
		t.Errorf("a root that is no .claude folder: %v", err)
	}

	// .claude is a link to a folder outside.
	if err := os.Symlink(outside, filepath.Join(proj, ".claude")); err != nil {
		t.Fatal(err)
	}
	cs = changeset.NewProjectSettings(proj, "test")
	cs.Add(create(settings))
	if err := apply(cs); err == nil || !strings.Contains(err.Error(), "is a symbolic link to "+outside) {
		t.Errorf("a .claude that is a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "settings.json")); err == nil {
		t.Errorf("the plan wrote through the link")
	}
	os.Remove(filepath.Join(proj, ".claude"))

	// A saved plan of a project's settings is never loaded.
	cs = changeset.NewProjectSettings(proj, "test")
	cs.Add(create(settings))
	saved := filepath.Join(tmp, "plan.json")
	if err := cs.Save(saved); err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Load(saved); err == nil || !strings.Contains(err.Error(), "never saved") {
		t.Errorf("a saved plan of a project's settings: %v", err)
	}

	// The plan that is allowed: the file, and the folder made for it.
	if err := apply(cs); err != nil {
		t.Fatalf("the project's settings.json: %v", err)
	}
	if b, err := os.ReadFile(settings); err != nil || string(b) != "{}\n" {
		t.Errorf("settings.json: %q, %v", b, err)
	}
}
