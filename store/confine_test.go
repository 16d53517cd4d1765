package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveInStore resolves names as an MCP client gives them: what the
// store holds resolves as it does for the user, and nothing resolves
// against the working directory or a path outside the store.
func TestResolveInStore(t *testing.T) {
	root, wd, _ := testStore(t)
	// The working directory holds what the plain resolver would take.
	outside := filepath.Join(wd, "notes.jsonl")
	writeFile(t, outside, `{"type":"user"}`+"\n")
	writeFile(t, filepath.Join(wd, "-w", "x"), "")
	writeFile(t, filepath.Join(root, "projects", "-w", "short.jsonl"), `{"type":"user"}`+"\n")
	t.Chdir(wd)
	if tg, err := NewResolver(root, nil).Resolve("notes.jsonl"); err != nil || tg.InStore {
		t.Fatalf("the plain resolver: %+v %v (want the file of the working directory)", tg, err)
	}
	r := NewResolver(root, nil).InStore()
	for _, c := range []struct {
		arg     string
		kind    TargetKind
		session string
		project string
	}{
		{idA2, TargetSession, idA2, ""},
		{"aaaab", TargetSession, idA2, ""},
		{"short", TargetFile, "short", "-w"},
		{"-w", TargetProject, "", "-w"},
		{"-big", TargetProject, "", "-big"},
		{"/w", TargetProject, "", "-w"},
		{filepath.Join(root, "projects", "-x"), TargetProject, "", "-x"},
		{filepath.Join(root, "projects", "-w", "short.jsonl"), TargetFile, "short", "-w"},
		{wd, TargetProject, "", EncodeProject(RealPath(filepath.Dir(filepath.Dir(wd)))) + "-work-proj"},
	} {
		tg, err := r.Resolve(c.arg)
		if err != nil {
			t.Errorf("%s: %v", c.arg, err)
			continue
		}
		if tg.Kind != c.kind || tg.Session != c.session || tg.Project != c.project {
			t.Errorf("%s: %s %q in %q, want %s %q in %q", c.arg, tg.Kind, tg.Session, tg.Project, c.kind, c.session, c.project)
		}
	}
	for _, arg := range []string{"notes.jsonl", "./notes.jsonl", outside, ".", "..", "latest", "-w/x",
		filepath.Join(root, "projects", "..", "..", "work", "proj", "notes.jsonl"), "/etc/passwd", "/etc"} {
		tg, err := r.Resolve(arg)
		var te *TargetError
		if !errors.As(err, &te) {
			t.Errorf("%s: %+v %v, want a TargetError", arg, tg, err)
		}
	}
}

// TestConfine tells the files that lead outside the store from those that
// stay in it, a project folder linked to another disk included.
func TestConfine(t *testing.T) {
	root, wd, _ := testStore(t)
	key := filepath.Join(wd, "id_rsa")
	writeFile(t, key, "SECRET\n")
	w := filepath.Join(root, "projects", "-w")
	for name, to := range map[string]string{
		"out.jsonl": key,
		"in.jsonl":  filepath.Join(w, idA+".jsonl"),
		"rel.jsonl": "../-x/" + idA + ".jsonl",
	} {
		if err := os.Symlink(to, filepath.Join(w, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A session folder whose subagents folder leads out.
	sub := filepath.Join(w, idA2, "subagents")
	os.MkdirAll(filepath.Dir(sub), 0o700)
	writeFile(t, filepath.Join(wd, "agents", "agent-x.jsonl"), "SECRET\n")
	if err := os.Symlink(filepath.Join(wd, "agents"), sub); err != nil {
		t.Fatal(err)
	}
	c := NewConfine(root)
	for path, want := range map[string]bool{
		filepath.Join(w, "out.jsonl"):                         true,
		filepath.Join(sub, "agent-x.jsonl"):                   true,
		filepath.Join(w, "in.jsonl"):                          false,
		filepath.Join(w, "rel.jsonl"):                         false,
		filepath.Join(w, idA+".jsonl"):                        false,
		filepath.Join(root, "projects", "-big", idB+".jsonl"): false,
		filepath.Join(w, "nothing.jsonl"):                     false,
	} {
		if real, got := c.Outside(path); got != want {
			t.Errorf("%s (to %s): outside %v, want %v", path, real, got, want)
		}
	}
	l, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var oe *OutsideError
	if err := c.Check(l); !errors.As(err, &oe) || !strings.HasSuffix(oe.Path, "out.jsonl") && !strings.HasSuffix(oe.Path, "agent-x.jsonl") {
		t.Errorf("check: %v", err)
	}
	k := c.Keep(l)
	for _, f := range k.Files {
		if strings.HasSuffix(f.Path, "out.jsonl") || strings.HasSuffix(f.Path, "agent-x.jsonl") {
			t.Errorf("kept %s", f.Path)
		}
	}
	if len(k.Files) != len(l.Files)-2 {
		t.Errorf("kept %d of %d files", len(k.Files), len(l.Files))
	}
}
