package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCorpusStore writes the corpus store of one Claude Code version, the
// way scripts/new-version.sh asks for it: with CFIX_CORPUS_VERSION=V and
// CFIX_CORPUS_OUT=DIR (absolute, or relative to the repository root) it
// installs V, runs CorpusScenario with HOME=/home/dev (CorpusHome, which
// must be absent or empty; it is removed again) and writes DIR with
// WriteCorpus, then validates it. Without those variables it skips.
func TestCorpusStore(t *testing.T) {
	version, out := os.Getenv("CFIX_CORPUS_VERSION"), os.Getenv("CFIX_CORPUS_OUT")
	if version == "" || out == "" {
		t.Skip("set CFIX_CORPUS_VERSION and CFIX_CORPUS_OUT to write a corpus store (scripts/new-version.sh)")
	}
	if testing.Short() {
		t.Skip("runs Claude Code")
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(RepoRoot(), out)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Fatalf("corpus %s: exists already (remove it to write it again)", out)
	}
	if err := Install(version); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(CorpusHome)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(CorpusHome, 0o755); err != nil {
			t.Fatalf("corpus home %s: %v (the corpus stores were written with HOME=%s: run as a user who may make it)", CorpusHome, err, CorpusHome)
		}
		t.Cleanup(func() { os.RemoveAll(CorpusHome) })
	case err != nil:
		t.Fatalf("corpus home %s: %v", CorpusHome, err)
	case len(ents) > 0:
		t.Fatalf("corpus home %s: holds %d files; the corpus run needs it empty (it becomes the HOME of every run)", CorpusHome, len(ents))
	default:
		t.Cleanup(func() {
			ents, _ := os.ReadDir(CorpusHome)
			for _, e := range ents {
				os.RemoveAll(filepath.Join(CorpusHome, e.Name()))
			}
		})
	}

	sc := CorpusScenario(t, version, CorpusHome)
	if t.Failed() {
		t.Fatalf("the scenario failed: no corpus store written")
	}
	if err := WriteCorpus(sc, out); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d runs; corpus store written to %s", sc, len(sc.Runs), out)
	rep := ValidateStore(t, filepath.Join(out, ".claude"))
	t.Logf("cfix validate: %d findings, counts %v", len(rep.Findings), rep.Counts)
	for _, f := range rep.Findings {
		t.Logf("cfix validate: %s: %s:%d: %s: %s", f.Severity, f.Path, f.Line, f.Code, f.Message)
	}
	for _, f := range rep.Errors() {
		t.Errorf("cfix validate: an error on a store the real client wrote (a cfix bug): %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
	}
}
