package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncodeProject(t *testing.T) {
	cases := map[string]string{
		"/home/dev/work/alpha":            "-home-dev-work-alpha",
		"/home/dev/work/beta.dir/sub":     "-home-dev-work-beta-dir-sub",
		"/home/dev/work/gamma with space": "-home-dev-work-gamma-with-space",
		"/a-b":                            "-a-b",
		"/a.b":                            "-a-b",
		"/x/😀":                            "-x---",
		"/x/é":                            "-x--",
		`C:\git\x`:                        "C--git-x",
	}
	for in, want := range cases {
		if got := EncodeProject(in); got != want {
			t.Errorf("EncodeProject(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCorpusFolders checks the encoding against the folders real Claude
// Code versions made, through the cwd of their entries.
func TestCorpusFolders(t *testing.T) {
	for folder, cwd := range map[string]string{
		"-home-dev-work-alpha":            "/home/dev/work/alpha",
		"-home-dev-work-beta-dir-sub":     "/home/dev/work/beta.dir/sub",
		"-home-dev-work-gamma-with-space": "/home/dev/work/gamma with space",
	} {
		if _, err := os.Stat(filepath.Join("..", "testdata", "corpus", "2.1.330", ".claude", "projects", folder)); err != nil {
			t.Fatal(err)
		}
		if !FolderMatches(folder, cwd) {
			t.Errorf("%s does not match %s", folder, cwd)
		}
	}
}

func TestLongPaths(t *testing.T) {
	long := "/" + strings.Repeat("abcdefghij/", 25) // 276 characters
	enc := EncodeProject(long)
	if len(enc) <= MaxFolderLen || enc[MaxFolderLen] != '-' {
		t.Fatalf("long path encoded as %q", enc)
	}
	// Another build's hash: only the 200-character prefix has to match.
	other := enc[:MaxFolderLen] + "-zzzzzz"
	if !FolderMatches(other, long) {
		t.Error("a long folder with another hash does not match")
	}
	if FolderMatches(enc[:MaxFolderLen], long) {
		t.Error("a folder cut to 200 characters without hash matches")
	}
	if FolderMatches(strings.Replace(other, "a", "b", 1), long) {
		t.Error("a different prefix matches")
	}
	if FolderMatches("-home-dev-work-alphabet", "/home/dev/work/alpha") {
		t.Error("a short folder matched by prefix")
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	// A folder with no projects/ is not a Claude Code store.
	if _, err := Resolve(dir); err == nil || !strings.Contains(err.Error(), "not a Claude Code store (it has no projects folder)") {
		t.Errorf("no projects folder: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "projects"), 0o700)
	if got, err := Resolve(dir); err != nil || got != dir {
		t.Errorf("Resolve(%q) = %q, %v", dir, got, err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	if got, err := Resolve(""); err != nil || got != dir {
		t.Errorf("CLAUDE_CONFIG_DIR: %q, %v", got, err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("HOME", dir)
	os.MkdirAll(filepath.Join(dir, ".claude", "projects"), 0o700)
	if got, err := Resolve(""); err != nil || got != filepath.Join(dir, ".claude") {
		t.Errorf("HOME: %q, %v", got, err)
	}
	if _, err := Resolve(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing: no such directory") {
		t.Errorf("missing store: %v", err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := Resolve(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as store: %v", err)
	}
}

func TestScanBothLayouts(t *testing.T) {
	l, err := Scan(filepath.Join("..", "testdata", "corpus", "2.0.77", ".claude"))
	if err != nil {
		t.Fatal(err)
	}
	flat := 0
	for _, f := range l.Files {
		if f.Kind == KindAgentFlat {
			flat++
		}
	}
	if flat != 35 {
		t.Errorf("2.0.77: %d flat agents, want 35", flat)
	}
	l, err = Scan(filepath.Join("..", "testdata", "corpus", "2.1.88", ".claude"))
	if err != nil {
		t.Fatal(err)
	}
	nested, compaction := 0, 0
	for _, f := range l.Files {
		if f.Kind == KindAgent {
			nested++
			if f.Compaction() {
				compaction++
			}
		}
	}
	if nested != 3 || compaction != 1 || len(l.Metas) != 2 {
		t.Errorf("2.1.88: %d nested agents (%d compaction), %d metas", nested, compaction, len(l.Metas))
	}
	fam := Family(l, "3ba86ea1-3a44-408b-917b-a10e19d813f0")
	if len(fam.Files) != 3 {
		t.Errorf("family has %d files", len(fam.Files))
	}
}
