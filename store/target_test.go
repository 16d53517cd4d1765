package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	idA  = "aaaaaaaa-0000-4000-8000-000000000001"
	idA2 = "aaaabbbb-0000-4000-8000-000000000002"
	idB  = "b0b0b0b0-0000-4000-8000-000000000003"
)

// testStore writes a store: project -w with two sessions (the first with
// a session folder holding a subagent), -x with a second transcript of
// the first session, the project folder of the working directory wd, and
// -big, a link to a folder out of the store. It returns the store, wd and
// the folder -big leads to.
func testStore(t *testing.T) (root, wd, disk string) {
	t.Helper()
	tmp := t.TempDir()
	root = filepath.Join(tmp, "claude")
	wd = filepath.Join(tmp, "work", "proj")
	disk = filepath.Join(tmp, "disk", "-big")
	line := func(id string) string {
		return `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","cwd":"/w","message":{"role":"user","content":"hi"}}` + "\n"
	}
	files := map[string]string{
		"projects/-w/" + idA + ".jsonl":                                             line(idA),
		"projects/-w/" + idA + "/subagents/agent-a1.jsonl":                          line(idA),
		"projects/-w/" + idA + "/subagents/agent-a1.meta.json":                      "{}",
		"projects/-w/" + idA2 + ".jsonl":                                            line(idA2),
		"projects/-w/sessions-index.json":                                           `{"version":1,"entries":[]}`,
		"projects/-x/" + idA + ".jsonl":                                             line(idA),
		"projects/" + EncodeProject(RealPath(tmp)) + "-work-proj/" + idB + ".jsonl": line(idB),
	}
	for p, body := range files {
		writeFile(t, filepath.Join(root, p), body)
	}
	writeFile(t, filepath.Join(disk, idB+".jsonl"), line(idB))
	if err := os.MkdirAll(wd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(disk, filepath.Join(root, "projects", "-big")); err != nil {
		t.Fatal(err)
	}
	return root, wd, disk
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func paths(root string, l *Layout) []string {
	var out []string
	for _, f := range l.Files {
		rel, _ := filepath.Rel(ProjectsDir(root), f.Path)
		out = append(out, rel)
	}
	return out
}

func resolve(t *testing.T, root, arg string) *Target {
	t.Helper()
	tg, err := NewResolver(root, nil).Resolve(arg)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", arg, err)
	}
	return tg
}

// TestResolveSessionInProjectFolder: standing in a project folder, a
// session id names the session, not its session folder of the same name.
func TestResolveSessionInProjectFolder(t *testing.T) {
	root, _, _ := testStore(t)
	t.Chdir(filepath.Join(root, "projects", "-w"))
	if fi, err := os.Stat(idA); err != nil || !fi.IsDir() {
		t.Fatal("the session folder is not there to be confused with")
	}
	tg := resolve(t, root, idA)
	got := strings.Join(paths(root, tg.Layout), " ")
	want := "-w/" + idA + ".jsonl -w/" + idA + "/subagents/agent-a1.jsonl -x/" + idA + ".jsonl"
	if tg.Kind != TargetSession || tg.Session != idA || got != want {
		t.Errorf("%s %s: %s, want %s", tg.Kind, tg.Session, got, want)
	}
	// The session folder by path: the session in this project folder only.
	tg = resolve(t, root, "./"+idA)
	if got := strings.Join(paths(root, tg.Layout), " "); tg.Kind != TargetSession || tg.Project != "-w" ||
		got != "-w/"+idA+".jsonl -w/"+idA+"/subagents/agent-a1.jsonl" {
		t.Errorf("session folder: %s %s: %s", tg.Kind, tg.Project, got)
	}
	if len(tg.Layout.Metas) != 1 || len(tg.Layout.SessionDirs) != 1 {
		t.Errorf("session folder: metas %v, dirs %v", tg.Layout.Metas, tg.Layout.SessionDirs)
	}
	// "." is the project folder, with its index.
	tg = resolve(t, root, ".")
	if tg.Kind != TargetProject || tg.Project != "-w" || len(tg.Layout.Files) != 3 || len(tg.Layout.Indexes) != 1 {
		t.Errorf(".: %s %s %v %v", tg.Kind, tg.Project, paths(root, tg.Layout), tg.Layout.Indexes)
	}
	// memory/ is neither a project nor a session folder.
	os.Mkdir("memory", 0o700)
	var te *TargetError
	if _, err := NewResolver(root, nil).Resolve("./memory"); !errors.As(err, &te) {
		t.Errorf("memory/: %v", err)
	}
}

// TestResolvePrefix: unique id prefixes name their session, as in git;
// an ambiguous one lists the candidates with their project folders.
func TestResolvePrefix(t *testing.T) {
	root, _, _ := testStore(t)
	t.Chdir(t.TempDir())
	if tg := resolve(t, root, "aaaab"); tg.Kind != TargetSession || tg.Session != idA2 {
		t.Errorf("aaaab: %s %s", tg.Kind, tg.Session)
	}
	if tg := resolve(t, root, "AAAAAAAA-0"); tg.Session != idA || len(tg.Layout.Files) != 3 {
		t.Errorf("upper case: %s %v", tg.Session, paths(root, tg.Layout))
	}
	_, err := NewResolver(root, nil).Resolve("aaaa")
	var ae *AmbiguousError
	if !errors.As(err, &ae) || len(ae.Candidates) != 2 {
		t.Fatalf("aaaa: %v", err)
	}
	if c := ae.Candidates[0]; c.Session != idA || strings.Join(c.Projects, ",") != "-w,-x" {
		t.Errorf("first candidate %+v", c)
	}
	msg := err.Error()
	for _, want := range []string{"target aaaa: ambiguous session id prefix", idA + "  -w, -x", idA2 + "  -w"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	for _, arg := range []string{"aaa", "ffff", "zzzz", "-aaaa", "00000000-0000-4000-8000-000000000000"} {
		var te *TargetError
		if _, err := NewResolver(root, nil).Resolve(arg); !errors.As(err, &te) {
			t.Errorf("%s: %v, want a TargetError", arg, err)
		}
	}
}

// TestResolvePaths: files (also by their real path behind a linked
// project folder), project folders by name and path, the store itself,
// and working directories.
func TestResolvePaths(t *testing.T) {
	root, wd, disk := testStore(t)
	t.Chdir(t.TempDir())
	tg := resolve(t, root, filepath.Join(root, "projects", "-w", idA2+".jsonl"))
	if tg.Kind != TargetFile || !tg.InStore || tg.Session != idA2 || tg.Project != "-w" {
		t.Errorf("file: %+v", tg)
	}
	tg = resolve(t, root, filepath.Join(root, "projects", "-w", idA, "subagents", "agent-a1.jsonl"))
	if f := tg.Layout.Files[0]; f.Kind != KindAgent || f.Session != idA || f.Agent != "a1" {
		t.Errorf("subagent: %+v", f)
	}
	// Behind the link, named by its real path: placed where a scan puts it.
	tg = resolve(t, root, filepath.Join(disk, idB+".jsonl"))
	if want := filepath.Join(root, "projects", "-big", idB+".jsonl"); !tg.InStore || tg.Layout.Files[0].Path != want || tg.Project != "-big" {
		t.Errorf("real path behind a link: %+v, want %s", tg.Layout.Files[0], want)
	}
	if len(tg.Layout.Links) != 1 || !tg.Layout.Links[0].Outside {
		t.Errorf("file behind a link: links %+v", tg.Layout.Links)
	}
	// A file out of the store is checked on its own.
	out := filepath.Join(t.TempDir(), "loose.jsonl")
	writeFile(t, out, "{}\n")
	if tg = resolve(t, root, out); tg.InStore || tg.Kind != TargetFile {
		t.Errorf("loose file: %+v", tg)
	}
	if tg = resolve(t, root, "-x"); tg.Kind != TargetProject || len(tg.Layout.Files) != 1 {
		t.Errorf("-x: %+v", tg)
	}
	for _, arg := range []string{root, ProjectsDir(root)} {
		if tg = resolve(t, root, arg); tg.Kind != TargetStore || len(tg.Layout.Files) != 6 {
			t.Errorf("%s: %s, %v", arg, tg.Kind, paths(root, tg.Layout))
		}
	}
	// A working directory names its project folder, by the path Claude
	// Code records: the physical one.
	tg = resolve(t, root, wd)
	if tg.Kind != TargetProject || len(tg.Layout.Files) != 1 || tg.Layout.Files[0].Session != idB {
		t.Errorf("working directory: %s %v", tg.Kind, paths(root, tg.Layout))
	}
	t.Chdir(wd)
	if tg = resolve(t, root, "."); tg.Kind != TargetProject || !strings.HasSuffix(tg.Project, "-work-proj") {
		t.Errorf(". in the working directory: %s %s", tg.Kind, tg.Project)
	}
	// A directory Claude Code saved nothing for.
	_, err := NewResolver(root, nil).Resolve(filepath.Dir(wd))
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "a directory with no project folder in store") ||
		!strings.Contains(err.Error(), EncodeProject(RealPath(filepath.Dir(wd)))) {
		t.Errorf("directory with no sessions: %v", err)
	}
}

// TestResolveTargets merges targets: each file once, sorted.
func TestResolveTargets(t *testing.T) {
	root, _, _ := testStore(t)
	t.Chdir(t.TempDir())
	l, err := ResolveTargets(root, []string{idA, "-w", "aaaab"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(paths(root, l), " ")
	want := "-w/" + idA + ".jsonl -w/" + idA + "/subagents/agent-a1.jsonl -w/" + idA2 + ".jsonl -x/" + idA + ".jsonl"
	if got != want || len(l.Indexes) != 1 || len(l.Metas) != 1 || strings.Join(l.Projects, " ") != "-w -x" {
		t.Errorf("files %s\nwant  %s\nindexes %v metas %v projects %v", got, want, l.Indexes, l.Metas, l.Projects)
	}
	if _, err := ResolveTargets(root, []string{idA, "nope"}); err == nil || err.Error() != "target nope: no such session id, .jsonl file or project folder" {
		t.Errorf("unknown target: %v", err)
	}
}

// TestScanThroughLinks: a project folder that is a symbolic link is read
// through and listed; one that leads nowhere is listed, not fatal.
func TestScanThroughLinks(t *testing.T) {
	root, _, disk := testStore(t)
	os.Symlink(filepath.Join(filepath.Dir(disk), "unplugged"), filepath.Join(root, "projects", "-gone"))
	os.Symlink(filepath.Join(root, "projects", "-x"), filepath.Join(root, "projects", "-alias"))
	writeFile(t, filepath.Join(root, "projects", "plain.txt"), "")
	os.Symlink(filepath.Join(root, "projects", "plain.txt"), filepath.Join(root, "projects", "-file"))
	l, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(paths(root, l), " ")
	if !strings.Contains(got, "-big/"+idB+".jsonl") || !strings.Contains(got, "-alias/"+idA+".jsonl") {
		t.Errorf("scan: %s", got)
	}
	links := map[string]ProjectLink{}
	for _, pl := range l.Links {
		links[pl.Folder] = pl
	}
	if len(links) != 3 {
		t.Fatalf("links: %+v", l.Links)
	}
	if b := links["-big"]; b.Real != RealPath(disk) || !b.Outside || b.Err != nil || b.Dest != disk {
		t.Errorf("-big: %+v", b)
	}
	if a := links["-alias"]; a.Outside || a.Err != nil {
		t.Errorf("-alias (inside the store): %+v", a)
	}
	if g := links["-gone"]; g.Err == nil || g.Real != "" || !g.Outside || !strings.Contains(g.Err.Error(), "unplugged, which cannot be read") {
		t.Errorf("-gone: %+v", g)
	}
	fam := Family(l, idB)
	if len(fam.Links) != 1 || fam.Links[0].Folder != "-big" {
		t.Errorf("family links: %+v", fam.Links)
	}
	if pl, ok := l.LinkOf("-big"); !ok || pl.Folder != "-big" {
		t.Error("LinkOf -big")
	}
	// A project folder named alone through its link.
	pl, err := ScanProject(root, "-big")
	if err != nil || len(pl.Files) != 1 || len(pl.Links) != 1 {
		t.Errorf("ScanProject -big: %v %+v", err, pl)
	}
	if _, err := ScanProject(root, "-gone"); err == nil {
		t.Error("ScanProject of a dangling link: no error")
	}
}

func TestFolderFor(t *testing.T) {
	root := t.TempDir()
	long := "/" + strings.Repeat("abcdefghij/", 25)
	other := EncodeProject(long)[:MaxFolderLen] + "-zzzzzz"
	target := t.TempDir()
	os.MkdirAll(ProjectsDir(root), 0o700)
	if got := FolderFor(root, long); got != EncodeProject(long) {
		t.Errorf("no folder yet: %s", got)
	}
	// An existing long folder with another build's hash, as a link too.
	os.Symlink(target, filepath.Join(ProjectsDir(root), other))
	if got := FolderFor(root, long); got != other {
		t.Errorf("linked long folder: %s", got)
	}
	if got := FolderFor(root, "/a/b"); got != "-a-b" {
		t.Errorf("short: %s", got)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a/b", "/a", false}, {"/a", "/a/..b", true}} {
		if got := Within(c.dir, c.p); got != c.want {
			t.Errorf("Within(%s, %s) = %v", c.dir, c.p, got)
		}
	}
}

func TestResolveLatest(t *testing.T) {
	root, wd, _ := testStore(t)
	folder := EncodeProject(RealPath(filepath.Dir(filepath.Dir(wd)))) + "-work-proj"
	dir := filepath.Join(root, "projects", folder)
	older := "c0c0c0c0-0000-4000-8000-000000000004"
	writeFile(t, filepath.Join(dir, older+".jsonl"), `{"type":"user","uuid":"u9","sessionId":"`+older+`"}`+"\n")
	writeFile(t, filepath.Join(dir, "agent-aside_question-1a2b.jsonl"), "{}\n")
	writeFile(t, filepath.Join(dir, "dddddddd-0000-4000-8000-000000000005.jsonl"), "")
	now := time.Now()
	for name, age := range map[string]time.Duration{
		older + ".jsonl":                             2 * time.Hour,
		idB + ".jsonl":                               time.Hour,
		"agent-aside_question-1a2b.jsonl":            0, // a side run, newer, is no session
		"dddddddd-0000-4000-8000-000000000005.jsonl": 0, // nor is an empty file
	} {
		if err := os.Chtimes(filepath.Join(dir, name), now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}

	t.Chdir(wd)
	tg := resolve(t, root, Latest)
	if tg.Kind != TargetSession || tg.Session != idB || tg.Project != folder {
		t.Errorf("latest: %v %s in %q, want session %s in %s", tg.Kind, tg.Session, tg.Project, idB, folder)
	}
	if err := os.Chtimes(filepath.Join(dir, older+".jsonl"), now, now); err != nil {
		t.Fatal(err)
	}
	if tg := resolve(t, root, Latest); tg.Session != older {
		t.Errorf("latest after %s was written: %s", older, tg.Session)
	}

	t.Chdir(t.TempDir())
	_, err := NewResolver(root, nil).Resolve(Latest)
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "has no project folder") {
		t.Errorf("latest in a directory with no sessions: %v", err)
	}
}

// TestResolveGoneDir: a project path that ls printed resolves when that
// directory is no longer on disk: by the folder it encodes to, else by the
// cwd the sessions of a folder record (a folder named otherwise, as
// CLAUDE_CODE_PROJECT_DIR_NAME makes).
func TestResolveGoneDir(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "claude")
	gone := filepath.Join(tmp, "work", "deleted project")
	renamed := filepath.Join(tmp, "work", "renamed")
	line := func(id, cwd string) string {
		return `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","cwd":"` + cwd + `","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n"
	}
	writeFile(t, filepath.Join(root, "projects", EncodeProject(gone), idA+".jsonl"), line(idA, gone))
	writeFile(t, filepath.Join(root, "projects", "named-by-env", idB+".jsonl"), line(idB, renamed))
	r := NewResolver(root, nil)
	for _, c := range []struct{ arg, folder string }{
		{gone, EncodeProject(gone)},
		{renamed, "named-by-env"},
	} {
		tg, err := r.Resolve(c.arg)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", c.arg, err)
		}
		if tg.Kind != TargetProject || tg.Project != c.folder {
			t.Errorf("Resolve(%q) = %s %q, want the project folder %q", c.arg, tg.Kind, tg.Project, c.folder)
		}
	}
	var te *TargetError
	if _, err := r.Resolve(filepath.Join(tmp, "work", "never")); !errors.As(err, &te) {
		t.Errorf("a directory no session names: %v, want a TargetError", err)
	}
}

// TestResolveByName: a main transcript whose file name is no session id
// (cfix ls lists it by that name) is named by that name; one name in two
// folders is refused, naming both; a name that only starts one is not it.
func TestResolveByName(t *testing.T) {
	root, _, _ := testStore(t)
	t.Chdir(t.TempDir())
	line := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + idA + `","cwd":"/w","message":{"role":"user","content":"hi"}}` + "\n"
	writeFile(t, filepath.Join(root, "projects", "-w", "short.jsonl"), line)
	tg, err := NewResolver(root, nil).Resolve("short")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != TargetFile || len(tg.Layout.Files) == 0 || tg.Layout.Files[0].Path != filepath.Join(root, "projects", "-w", "short.jsonl") {
		t.Fatalf("short resolved to %+v", tg)
	}
	if _, err := NewResolver(root, nil).Resolve("shor"); err == nil {
		t.Errorf("shor (a part of a name) resolved")
	}
	writeFile(t, filepath.Join(root, "projects", "-x", "short.jsonl"), line)
	_, err = NewResolver(root, nil).Resolve("short")
	if err == nil || !strings.Contains(err.Error(), "2 project folders (-w, -x)") {
		t.Errorf("short in two folders: %v", err)
	}
}
