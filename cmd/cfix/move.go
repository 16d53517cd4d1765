package main

import (
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/clone"
)

type moveOptions struct {
	planFlags
	to      string
	session string
}

func newMoveCmd() *cobra.Command {
	opts := &moveOptions{}
	cmd := &cobra.Command{
		Use: "move SESSION --to DIR",
		Example: `  cfix move 2bc4b42d --to ~/work/renamed
  cfix move 2bc4b42d --to ~/work/renamed --apply`,
		Short: "Move a session, keeping its id, into the project folder of another directory",
		Long: `Move plans what clone does, keeping the session id, and then removes the
originals (main transcript, flat subagents, the session folder), all in one
change set: cfix undo puts everything back. cwd fields are rewritten from the
session's old directory to DIR as clone does; file-history and todos are keyed
by the session id and stay. The session is dropped from the old folder's
sessions-index.json and added to the new folder's.

SESSION is a session id, a unique prefix of one, or the path of its .jsonl
transcript. DIR need not exist; it is made absolute and clean, and resolved
through symlinks when it exists. Nothing is written without --apply, and
nothing through a symbolic link leading out of the store (a project folder
moved to another disk): such a move is refused.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.session = args[0]
			opts.streams(cmd)
			return runMove(opts)
		},
		ValidArgsFunction: completeFirstSession,
	}
	opts.register(cmd, true)
	cmd.Flags().StringVar(&opts.to, "to", "", "the working directory the session is to belong to (required)")
	cmd.MarkFlagRequired("to")
	return cmd
}

func runMove(opts *moveOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	p, err := clone.Move(clone.Options{Root: root, Session: opts.session, To: opts.to})
	if err != nil {
		return planError(err)
	}
	return runSessionPlan(&opts.planFlags, p)
}
