package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/trim"
)

type forkOptions struct {
	planFlags
	opts trim.ForkOptions
}

func newForkCmd() *cobra.Command {
	o := &forkOptions{}
	cmd := &cobra.Command{
		Use: "fork SESSION (--at UUID | --turn N)",
		Example: `  cfix fork 2bc4b42d --turn 12
  cfix fork latest --at 7f3e9a10 --apply`,
		Short: "Make a new session that holds the history of a session up to one entry",
		Long: `Fork plans a new session (a new id, its own transcript, the subagents,
tool-results, file-history, todos and tasks a clone carries) whose history ends
at one entry of SESSION, so that a resume starts from before things went wrong.
The source is never modified.

  --at UUID   the entry the history ends at (its uuid, or a unique prefix of
              at least 4 characters)
  --turn N    the history through turn N (1 is the first user prompt of the
              history a resume loads)

One of them is required. The fork keeps the chain from the first entry to
that one (on through compactions), the parallel calls and results a client
puts back beside it, and the file-history snapshots of its messages; titles,
last-prompt and other lines go. At an entry of a reply that made tool calls,
the fork takes the rest of that reply and the calls' results with it, so no
call is left unanswered. The new session lands in the session's project
folder, or in that of DIR with --to. Nothing is written without --apply; cfix
undo takes it back.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.opts.Session = args[0]
			o.streams(cmd)
			if cmd.Flags().Changed("turn") && o.opts.Turn == 0 {
				// Turn 0 is also what no --turn leaves.
				return usageError(errors.New("--turn 0: turns count from 1 (cfix show SESSION lists them)"))
			}
			return runFork(o)
		},
		ValidArgsFunction: completeFirstSession,
	}
	o.register(cmd, true)
	f := cmd.Flags()
	f.StringVar(&o.opts.At, "at", "", "the uuid of the entry the fork's history ends at")
	f.IntVar(&o.opts.Turn, "turn", 0, "end the fork's history with turn N (1-based)")
	f.StringVar(&o.opts.To, "to", "", "the working directory the fork belongs to (default the session's own)")
	f.StringVar(&o.opts.ID, "id", "", "the fork's session id (a UUID; default one derived from the session)")
	f.StringVar(&o.opts.Title, "title", "", `the fork's title in /resume and cfix ls (default the session's title with " (fork)")`)
	return cmd
}

func runFork(o *forkOptions) error {
	root, err := resolveRoot(o.root)
	if err != nil {
		return err
	}
	o.opts.Root = root
	p, err := trim.Fork(o.opts)
	if err != nil {
		return planError(err)
	}
	o.fork = struct {
		ID       string `json:"session_id"`
		Leaf     string `json:"leaf"`
		LeafLine int    `json:"leaf_line"`
		Entries  int    `json:"entries"`
	}{p.SessionID, p.Leaf, p.LeafLine, p.Entries}
	return runSessionPlan(&o.planFlags, p.Plan)
}
