package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/shell"
)

type moveProjectOptions struct {
	planFlags
	merge bool
}

func newMoveProjectCmd() *cobra.Command {
	opts := &moveProjectOptions{}
	cmd := &cobra.Command{
		Use: "move-project OLD_DIR NEW_DIR",
		Example: `  cfix move-project ~/work/old ~/work/new
  cfix move-project ~/work/old ~/work/new --merge --apply`,
		Short: "Move a renamed or moved project's history to its new directory",
		Long: `Move-project plans the move of every session of OLD_DIR's project folder to the
folder of NEW_DIR, with the folder's other contents (memory/, session folders with
subagents and tool-results, sessions-index.json). Projects under OLD_DIR move too
(OLD_DIR/sub goes to NEW_DIR/sub). The old path becomes the new one, matching
whole path components only (/a/foo never touches /a/foobar), in:

  - the cwd of every entry, in the moved sessions and in any other session that
    ran in OLD_DIR;
  - the target sessions-index.json (fullPath, projectPath, originalPath);
  - the project field of history.jsonl lines (nothing else in them);
  - the keys of the projects map of the settings file next to the store
    ($HOME/.claude.json for ~/.claude, $CLAUDE_CONFIG_DIR/.claude.json when
    CLAUDE_CONFIG_DIR names the store), keeping every other byte.

OLD_DIR is made absolute and clean (it is the path the sessions recorded; it
need not exist). NEW_DIR is made absolute and clean, and resolved through
symlinks when it exists.

When NEW_DIR's project folder already holds sessions, move-project refuses
(exit 1) unless --merge is given; two files of one name are never merged.
A folder whose name is shared by another directory's sessions (the folder
encoding is lossy: /a-b and /a.b) is refused too: move those with cfix move.

` + plannerExitStatus,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runMoveProject(opts, args[0], args[1])
		},
	}
	opts.register(cmd, true)
	cmd.Flags().BoolVar(&opts.merge, "merge", false, "move the sessions into a target folder that already holds sessions")
	return cmd
}

func runMoveProject(opts *moveProjectOptions, old, nw string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	p, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: old, New: nw, Merge: opts.merge})
	if err != nil {
		return planError(err)
	}
	if err := runPlan(&opts.planFlags, p.ChangeSet); err != nil {
		return err
	}
	if opts.apply && !opts.json && !p.ChangeSet.Empty() {
		printResumeHint(opts.out, p.New)
	}
	return nil
}

func printResumeHint(w io.Writer, dir string) {
	fmt.Fprintf(w, "continue there with:\n  cd %s && claude --continue\n", shell.Quote(dir))
}
