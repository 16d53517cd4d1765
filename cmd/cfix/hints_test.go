package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestHintsRun: every hint validate gives on the corpus and wild stores
// fixes the finding it is given for. Each hint runs, with --apply, on a
// fresh copy of the store; then validate runs again, and no finding of the
// hint's code is left on the file it named, and the store holds fewer
// findings of that code and severity by at least as many as had the hint
// (a move takes the file elsewhere; what it leaves of a cwd-mismatch, the
// entries that ran in subfolders, is a notice). A hint that names a command that refuses (cfix
// move of a subagent transcript), or one that runs and leaves its finding
// (cfix repair of a call whose result sits on another branch), fails here.
func TestHintsRun(t *testing.T) {
	t.Setenv("CFIX_JOURNAL_DIR", t.TempDir())
	for _, src := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			pristine := filepath.Join(tmp, "pristine")
			if out, err := exec.Command("cp", "-a", src, pristine).CombinedOutput(); err != nil {
				t.Fatalf("copy: %v\n%s", err, out)
			}
			if out, err := exec.Command("chmod", "-R", "u+w", pristine).CombinedOutput(); err != nil {
				t.Fatalf("chmod: %v\n%s", err, out)
			}
			// A fresh clone's files were all written just now: as live
			// sessions, planners would refuse them.
			damage.Age(t, pristine)
			// The hints name the store each runs on: every copy is made
			// at the same path.
			root := filepath.Join(tmp, ".claude")
			fresh := func() {
				t.Helper()
				if err := os.RemoveAll(root); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("cp", "-a", pristine, root).CombinedOutput(); err != nil {
					t.Fatalf("copy: %v\n%s", err, out)
				}
			}
			fresh()
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			var hints []string
			byHint := map[string][]validate.Finding{}
			for _, f := range rep.Findings {
				if f.Hint == "" {
					continue
				}
				if byHint[f.Hint] == nil {
					hints = append(hints, f.Hint)
				}
				byHint[f.Hint] = append(byHint[f.Hint], f)
			}
			for _, hint := range hints {
				fresh()
				dir := t.TempDir()
				if !runHint(t, root, dir, hint, byHint[hint][0].Code) {
					continue
				}
				after, err := validate.Run(validate.Options{Root: root})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range byHint[hint] {
					for _, g := range after.Findings {
						if g.Code == f.Code && g.Path == f.Path && g.Severity >= f.Severity {
							t.Errorf("%s: hint %q leaves the finding: %s:%d: %s", f.Code, hint, g.Path, g.Line, g.Message)
							break
						}
					}
				}
				type kind struct {
					code validate.Code
					sev  validate.Severity
				}
				count := func(r *validate.Report) map[kind]int {
					m := map[kind]int{}
					for _, f := range r.Findings {
						m[kind{f.Code, f.Severity}]++
					}
					return m
				}
				hinted := map[kind]int{}
				for _, f := range byHint[hint] {
					hinted[kind{f.Code, f.Severity}]++
				}
				was, got := count(rep), count(after)
				for k, n := range hinted {
					if got[k] > was[k]-n {
						t.Errorf("%s: hint %q: %d %s findings of the code before, %d after (%d had the hint)", k.code, hint, was[k], k.sev, got[k], n)
					}
				}
			}
		})
	}
}

// runHint runs the commands of a hint on the store root (an output file,
// or DIR, in dir), and reports whether each exited 0.
func runHint(t *testing.T, root, dir, hint string, code validate.Code) bool {
	t.Helper()
	// A hint may chain commands (export, then rm): each runs.
	var cmds [][]string
	for _, w := range shellWords(hint) {
		if w == "&&" || len(cmds) == 0 {
			cmds = append(cmds, nil)
			if w == "&&" {
				continue
			}
		}
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], w)
	}
	ok := true
	for _, words := range cmds {
		if len(words) < 2 || words[0] != "cfix" {
			t.Errorf("%s: hint %q is not a cfix command line", code, hint)
			return false
		}
		args := []string{"--root", root}
		// A hint that needs a folder of the user's (DIR) leaves --apply
		// out, so that its dry run shows what it would do: it is applied
		// here, as the user would after reading it.
		if c, _, err := newRootCmd().Find(words[1:]); err == nil && c.Flags().Lookup("apply") != nil && !slices.Contains(words, "--apply") {
			args = append(args, "--apply", "--yes")
		}
		for k, w := range words[1:] {
			switch {
			case w == "--apply":
				args = append(args, "--yes")
			case w == "DIR":
				w = dir
			case k > 0 && words[k] == "-o":
				w = filepath.Join(dir, w) // an output file: not in the test's folder
			}
			args = append(args, w)
		}
		out, errOut, status := cliErr(args...)
		if os.Getenv("HINTDEBUG") != "" {
			t.Logf("%v\n%s%s", args, out, errOut)
		}
		if status != exitOK {
			t.Errorf("%s: hint %q: %s: exit %d\n%s%s", code, hint, strings.Join(words, " "), status, out, errOut)
			ok = false
		}
	}
	return ok
}

// cliErr runs cfix with args and returns its stdout, stderr and exit status.
func cliErr(args ...string) (string, string, int) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(args)
	code := exitOK
	if err := root.Execute(); err != nil {
		code = exitUsage
		if ee, ok := err.(*exitError); ok {
			code = ee.code
		}
		errOut.WriteString(err.Error())
	}
	releaseLock() // as run does
	return out.String(), errOut.String(), code
}
