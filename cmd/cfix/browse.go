package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/browse"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
)

func newBrowseCmd() *cobra.Command {
	o := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "browse [-- CLAUDE-ARGS...]",
		Short: "Browse every session of the store, preview it, repair or remove it, and resume it",
		Long: `Browse is a full-screen browser of every session of every project, newest
first, with what cfix ls shows of each (last activity, messages, size,
subagents, health, live and stub marks). Typing filters the list (the words
are found in the title, the first prompt, the project path or the id, as
they are or with letters between); Tab switches between this directory's
project and the whole store. Below the list, the selected conversation as
cfix export writes it, its last messages in view.

Enter resumes the selected session as cfix resume does (the check, the
repair it offers, then claude --resume in the session's directory;
arguments after -- go to claude). Esc leaves the filter for the action
keys: r repairs, d removes the session; each shows its plan and applies it
only on y, with the same journal as the command line (cfix undo takes it
back). A live session is not changed. ? lists the keys; q or Ctrl+C quits.

Exit status: that of claude after Enter; 0 when quit; 2 when stdin or
stdout is not a terminal.`,
		Example: `  cfix browse
  cfix browse --root /backup/.claude
  cfix browse -- --fork-session`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.streams(cmd)
			var extra []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				args, extra = args[:at], args[at:]
			}
			if len(args) > 0 {
				return usageError(fmt.Errorf("browse takes no session (%s): cfix resume SESSION opens one", args[0]))
			}
			return runBrowse(o, extra)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&o.claude, "claude", "", "the Claude Code program Enter starts (default $CFIX_CLAUDE, else claude from PATH)")
	return cmd
}

func runBrowse(o *resumeOptions, extra []string) error {
	root, err := resolveRoot(o.root)
	if err != nil {
		return err
	}
	in, iok := o.in.(*os.File)
	out, ook := o.out.(*os.File)
	if !iok || !ook || !isTerminal(in) || !isTerminal(out) {
		return usageError(errors.New("browse needs a terminal (cfix ls lists the sessions)"))
	}
	here := ""
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		here = store.FolderFor(root, wd)
	}
	m := browse.New(browse.Options{
		Root:  root,
		Here:  here,
		Plan:  func(a browse.Action, path string) (*changeset.ChangeSet, error) { return browsePlan(root, a, path) },
		Apply: func(cs *changeset.ChangeSet) (string, error) { return browseApply(root, cs) },
	})
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out))
	if _, err := p.Run(); err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("browse: %w", err)}
	}
	if m.Chosen == "" {
		return nil
	}
	o.root = root
	return runResume(o, []string{m.Chosen}, extra)
}

// browsePlan plans an action of browse as its command does.
func browsePlan(root string, a browse.Action, path string) (*changeset.ChangeSet, error) {
	switch a {
	case browse.Repair:
		return repair.Plan(repair.Options{Root: root, Targets: []string{path}})
	case browse.Remove:
		return archive.Rm(archive.RmOptions{Root: root, Sessions: []string{path}})
	}
	return nil, fmt.Errorf("browse: no action %q", a)
}

// browseApply applies a plan the user confirmed in browse, as --apply
// --yes does (the lock, the journal), and returns what it printed.
func browseApply(root string, cs *changeset.ChangeSet) (string, error) {
	var b bytes.Buffer
	f := planFlags{root: root, apply: true, yes: true, stat: true, out: &b, errOut: &b}
	err := runPlan(&f, cs)
	return b.String(), err
}
