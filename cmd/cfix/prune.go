package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/repair"
)

type pruneOptions struct {
	planFlags
	what      []string
	olderThan string
}

func newPruneCmd() *cobra.Command {
	opts := &pruneOptions{}
	cmd := &cobra.Command{
		Use: "prune",
		Example: `  cfix prune
  cfix prune --what empty-sessions,husks --apply
  cfix prune --older-than 30d --apply`,
		Short: "Plan (and with --apply, make) the removal of what the store no longer needs",
		Long: `Prune removes what grows forever in a Claude Code store: empty session-env
folders; session-env, file-history, todos and debug files of sessions that no
longer exist; 0-byte and metadata-only session files (transcripts never
written); session folders left without a transcript (husks); the task lists
(tasks/<id>/) and /insights data (usage-data/) of sessions that no longer exist;
plans no transcript names; pasted texts no prompt of history.jsonl names; shell
snapshots of processes that are gone. With --older-than, it also removes whole
sessions (all their files, as Claude Code's own cleanup does) last written
longer ago than the duration (30d, 2w, 36h).

It never removes debug/latest (nor the log it points to), a session folder that
holds subagent transcripts, or anything of a live session. Removed files stay in the backup journal until you delete it; cfix undo
puts them back.

` + plannerExitStatus,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runPrune(opts)
		},
	}
	opts.register(cmd, true)
	cmd.Flags().StringSliceVar(&opts.what, "what", nil, "what to prune: "+strings.Join(repair.PruneKinds, ","))
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "also remove whole sessions older than this (30d, 2w, 36h)")
	return cmd
}

func runPrune(opts *pruneOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	var age time.Duration
	if opts.olderThan != "" {
		if age, err = repair.ParseAge(opts.olderThan); err != nil {
			return usageError(err)
		}
	}
	cs, err := repair.Prune(repair.PruneOptions{Root: root, What: opts.what, OlderThan: age})
	if err != nil {
		return planError(err)
	}
	return runPlan(&opts.planFlags, cs)
}
