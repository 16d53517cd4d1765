package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpExamples checks every command's help: an Examples section of two
// to four lines, each a cfix command line whose flags and arguments the
// command accepts; a group in cfix --help; no flags listed in its usage
// line before cobra's [flags].
func TestHelpExamples(t *testing.T) {
	root := newRootCmd()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.GroupID == "" {
			t.Errorf("%s: in no group of cfix --help", c.Name())
		}
		if strings.Contains(strings.ReplaceAll(c.Use, "[-- ", ""), "[--") || strings.Count(c.UseLine(), "[flags]") > 1 {
			t.Errorf("%s: usage line %q lists flags", c.Name(), c.UseLine())
		}
		lines := strings.Split(c.Example, "\n")
		if c.Example == "" || len(lines) < 2 || len(lines) > 4 {
			t.Errorf("%s: %d example lines, want 2 to 4", c.Name(), len(lines))
			continue
		}
		for _, l := range lines {
			checkExample(t, c, l)
		}
	}
}

// checkExample parses one example line as cfix would, up to running it.
func checkExample(t *testing.T, c *cobra.Command, line string) {
	t.Helper()
	words := shellWords(strings.TrimSpace(line))
	if len(words) < 2 || words[0] != "cfix" {
		t.Errorf("%s: example %q is not a cfix command line", c.Name(), line)
		return
	}
	if i := indexOf(words, ">"); i >= 0 {
		words = words[:i] // a redirection
	}
	root := newRootCmd()
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		t.Errorf("%s: example %q: %v", c.Name(), line, err)
		return
	}
	// apply's first example makes the plan; cfix --version is version's.
	if cmd.Name() != c.Name() && c.Name() != "apply" && !(cmd == root && c.Name() == "version") && !(cmd.HasParent() && cmd.Parent().Name() == c.Name()) {
		t.Errorf("%s: example %q runs cfix %s", c.Name(), line, cmd.Name())
	}
	root.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", c.Name(), line, err)
		return
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: example %q: %v", c.Name(), line, err)
	}
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// shellWords splits a command line at spaces outside single quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}
