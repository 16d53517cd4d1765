package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestHintsRun: every hint validate gives on the corpus and wild stores
// names a command that accepts what it names: run as a dry run (without
// --apply) on a copy of the store, each exits 0. A hint that names a
// command that refuses (cfix move of a subagent transcript) fails here.
func TestHintsRun(t *testing.T) {
	for _, src := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
				t.Fatalf("copy: %v\n%s", err, out)
			}
			if out, err := exec.Command("chmod", "-R", "u+w", root).CombinedOutput(); err != nil {
				t.Fatalf("chmod: %v\n%s", err, out)
			}
			// A fresh clone's files were all written just now: as live
			// sessions, planners would refuse them.
			damage.Age(t, root)
			rep, err := validate.Run(validate.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			dir := t.TempDir()
			for _, f := range rep.Findings {
				if f.Hint == "" || seen[f.Hint] {
					continue
				}
				seen[f.Hint] = true
				// A hint may chain commands (export, then rm): each runs.
				var cmds [][]string
				for _, w := range shellWords(f.Hint) {
					if w == "&&" || len(cmds) == 0 {
						cmds = append(cmds, nil)
						if w == "&&" {
							continue
						}
					}
					cmds[len(cmds)-1] = append(cmds[len(cmds)-1], w)
				}
				for _, words := range cmds {
					if len(words) < 2 || words[0] != "cfix" {
						t.Errorf("%s: hint %q is not a cfix command line", f.Code, f.Hint)
						continue
					}
					args := []string{"--root", root}
					for k, w := range words[1:] {
						switch {
						case w == "--apply":
							continue
						case w == "DIR":
							w = dir
						case k > 0 && words[k] == "-o":
							w = filepath.Join(dir, w) // an output file: not in the test's folder
						}
						args = append(args, w)
					}
					if out, errOut, code := cliErr(args...); code != exitOK {
						t.Errorf("%s: hint %q: %s: exit %d\n%s%s", f.Code, f.Hint, strings.Join(words, " "), code, out, errOut)
					}
				}
			}
		})
	}
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
