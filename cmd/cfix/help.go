package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/store"
)

// Command groups of cfix --help.
var groups = []struct {
	id, title string
	commands  []string
}{
	{"open", "Open a session:", []string{"browse", "resume"}},
	{"look", "Look at the store (never writes):", []string{"ls", "show", "search", "du", "usage", "export", "validate", "secrets", "explain"}},
	{"change", "Change the store (a dry run unless --apply; cfix undo takes it back):", []string{"repair", "prune", "trim", "fork", "clone", "move", "move-project", "rm", "archive", "restore", "redact"}},
	{"carry", "Carry sessions to another machine or person:", []string{"pack", "unpack", "push", "pull"}},
	{"journal", "Plans and journals:", []string{"apply", "undo", "journal"}},
	{"guard", "Set and forget (Claude Code runs cfix from its hooks):", []string{"guard", "hook", "statusline"}},
	{"other", "Other commands:", []string{"mcp", "version"}},
}

// setGroups sorts the root's commands into groups; help and completion
// go to "other".
func setGroups(root *cobra.Command) {
	byName := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, name := range g.commands {
			if c := byName[name]; c != nil {
				c.GroupID = g.id
			}
		}
	}
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
}

const sessionArg = "an id, a prefix of one (4 characters at least), a .jsonl path or latest (cfix ls lists them)"

// argSpecs says, for each command that checks its arguments, what it
// needs (when too few are given) and what it takes (when too many are).
var argSpecs = map[string]struct{ needs, takes string }{
	"show":         {"a session: " + sessionArg, "one session"},
	"export":       {"a session: " + sessionArg, "one session"},
	"trim":         {"a session: " + sessionArg, "one session"},
	"fork":         {"a session: " + sessionArg, "one session"},
	"clone":        {"a session: " + sessionArg, "one session"},
	"move":         {"a session: " + sessionArg, "one session"},
	"rm":           {"one session or more: " + sessionArg, ""},
	"restore":      {"one archived session or more: an id or a prefix of one (cfix archive --list lists them)", ""},
	"pack":         {"one session or more: " + sessionArg, ""},
	"unpack":       {"a pack file (written by cfix pack -o FILE), or - for standard input", "one pack file"},
	"push":         {"a remote: s3://BUCKET/PREFIX or file:///DIR", ""},
	"pull":         {"a remote: s3://BUCKET/PREFIX or file:///DIR", ""},
	"apply":        {"a plan file saved by a planner's --plan-out (cfix repair --plan-out plan.json, then cfix apply plan.json)", "one plan file"},
	"move-project": {"two directories, the project's old one and its new one (cfix move-project OLD_DIR NEW_DIR)", "two directories, the project's old one and its new one"},
	"search":       {"a pattern, the text to find (cfix search 'connection refused')", "one pattern (quote one with spaces: cfix search 'two words')"},
	"ls":           {"", "at most one directory or project folder"},
	"du":           {"", "at most one directory or project folder"},
	"undo":         {"", "at most one journal (cfix undo --list lists them)"},
	"prune":        {"", "no argument: it works on the whole store (--what and --older-than narrow it)"},
	"man":          {"a folder to write the man pages into (cfix man man)", "one folder"},
}

// friendlyArgs replaces cobra's argument messages ("accepts 1 arg(s),
// received 0") and required-flag messages with sentences that say what
// to type, for every command of argSpecs.
func friendlyArgs(root *cobra.Command) {
	for _, c := range root.Commands() {
		spec, ok := argSpecs[c.Name()]
		if !ok || c.Args == nil {
			continue
		}
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				// Too few when one more argument would do.
				if spec.needs != "" && check(cmd, append(args[:len(args):len(args)], "x")) == nil {
					return usageError(fmt.Errorf("%s needs %s", cmd.Name(), spec.needs))
				}
				if spec.takes == "" {
					return usageError(err)
				}
				quoted := make([]string, len(args))
				for i, a := range args {
					quoted[i] = shell.Quote(a)
				}
				return usageError(fmt.Errorf("%s takes %s; got %s", cmd.Name(), spec.takes, strings.Join(quoted, " ")))
			}
			return requiredFlags(cmd)
		}
	}
}

// groupCommands makes each command that only groups others (cfix guard,
// cfix journal, cfix mcp) refuse a word that names none of them, with
// the command it was likely meant as (exit 2); cobra printed the group's
// help and exited 0, so a mistyped cfix guard instal looked done.
// Without a word, the help is printed, as before.
func groupCommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		groupCommands(sub)
	}
	if !c.HasParent() || c.Runnable() || !c.HasSubCommands() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.DisableFlagsInUseLine = true
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("%s has no command %s", cmd.CommandPath(), shell.Quote(args[0]))
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(": did you mean %s %s?", cmd.CommandPath(), strings.Join(s, " or "))
		} else {
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			msg += fmt.Sprintf(" (its commands: %s)", strings.Join(names, ", "))
		}
		return usageError(errors.New(msg))
	}
}

// requiredFlags says which required flag is missing, with the command
// line that gives it (cobra checks them after Args, in its own words).
func requiredFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || len(f.Annotations[cobra.BashCompOneRequiredFlag]) == 0 {
			return
		}
		use := strings.TrimSuffix(cmd.Use, " [flags]")
		err = usageError(fmt.Errorf("%s needs --%s: %s (cfix %s)", cmd.Name(), f.Name, strings.TrimSuffix(f.Usage, " (required)"), use))
	})
	return err
}

// dashCommands take project folders as arguments; a project folder's name
// starts with - (Claude Code encodes /home/dev as -home-dev).
var dashCommands = map[string]bool{"ls": true, "du": true, "validate": true, "repair": true, "move-project": true}

// projectArgs rewrites an argument that starts with - and names a project
// folder of the store (cfix ls -home-dev-work) into that folder's path,
// which names the same folder and cannot be read as flags. Arguments after
// -- are left alone; so is everything when the store cannot be found.
func projectArgs(args []string) []string {
	if len(args) < 2 || !dashCommands[args[0]] {
		return args
	}
	flag, dashed := "", false
	for i, a := range args {
		if a == "--" {
			break
		}
		dashed = dashed || len(a) > 2 && a[0] == '-' && a[1] != '-'
		if v, ok := strings.CutPrefix(a, "--root="); ok {
			flag = v
		} else if a == "--root" && i+1 < len(args) {
			flag = args[i+1]
		}
	}
	if !dashed {
		return args
	}
	root, err := store.Resolve(flag)
	if err != nil {
		return args
	}
	out := append([]string(nil), args...)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' || strings.ContainsRune(a, filepath.Separator) {
			continue
		}
		p := filepath.Join(store.ProjectsDir(root), a)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out[i] = p
		}
	}
	return out
}

// flagError turns pflag's message for an unknown flag into one that says
// what to type: an argument that looks like a project folder's name gets
// "put -- before it"; any other, where the flags are listed.
func flagError(args []string) func(*cobra.Command, error) error {
	return func(c *cobra.Command, err error) error {
		msg := err.Error()
		if !strings.HasPrefix(msg, "unknown") {
			return usageError(err)
		}
		for _, a := range args {
			if a == "--" {
				break
			}
			// -home-dev-work: pflag reads -h, then stops at 'o' in -ome-dev-work.
			if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.Contains(a[1:], "-") {
				if _, tail, ok := strings.Cut(msg, " in -"); ok && strings.HasSuffix(a, tail) {
					return usageError(fmt.Errorf("%s: no such flag; to name a project folder whose name starts with -, put -- before it: cfix %s -- %s", a, c.Name(), a))
				}
			}
		}
		return usageError(fmt.Errorf("%s (cfix %s --help lists the flags)", msg, c.Name()))
	}
}
