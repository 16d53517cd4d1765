package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// relocatedFact is the store 2.1.219 wrote when a session entered a
// worktree (EnterWorktree): Claude Code moved its transcript into the
// worktree's project folder and appended relocated entries naming the
// worktree; the entries before name the repository.
func relocatedFact(t *testing.T) string {
	return fact("relocated-2.1.219")
}

const (
	relocatedFolder = "-tmp-fid-wt-repo--claude-worktrees-feat"
	relocatedID     = "2af12a98-b146-4d16-ac2f-3a168545c8fe"
)

// relocatedNoTurn writes the fact's transcript cut right after its first
// relocated entry (the session entered the worktree and stopped there:
// every entry names the repository) into a store of its own.
func relocatedNoTurn(t *testing.T) (root, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(relocatedFact(t), "projects", relocatedFolder, relocatedID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		keep = append(keep, l)
		if strings.Contains(l, `"type":"relocated"`) {
			break
		}
	}
	root = t.TempDir()
	path = filepath.Join(root, "projects", relocatedFolder, relocatedID+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(strings.Join(keep, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// TestRelocated: a transcript Claude Code relocated into another project
// folder holds entries naming the directory it left; its relocated entry
// names the one it is listed and resumed from (2.1.219 resumes it with -r
// from either directory, measured). Not a cwd-mismatch warning (and no
// cfix move hint): a notice saying so. Its relocated entries have a schema.
func TestRelocated(t *testing.T) {
	for _, c := range []struct {
		name string
		root func(t *testing.T) string
	}{
		{"as written", func(t *testing.T) string { return relocatedFact(t) }},
		{"relocated, no turn after", func(t *testing.T) string { r, _ := relocatedNoTurn(t); return r }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := validate.Run(validate.Options{Root: c.root(t)})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range rep.Findings {
				switch f.Code {
				case validate.CWDMismatch:
					n++
					if f.Severity != validate.Notice || f.Hint != "" || !strings.Contains(f.Message, "relocated here") {
						t.Errorf("%s %s: %s (hint %q)", f.Severity, f.Code, f.Message, f.Hint)
					}
				case validate.TypeUnknown, validate.SchemaInvalid:
					t.Errorf("%s: %s", f.Code, f.Message)
				}
			}
			if n != 1 {
				t.Errorf("%d cwd-mismatch findings, want 1", n)
			}
		})
	}
}
