package main

import (
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
)

type rmOptions struct {
	planFlags
	history bool
}

func newRmCmd() *cobra.Command {
	opts := &rmOptions{}
	cmd := &cobra.Command{
		Use: "rm SESSION...",
		Example: `  cfix rm 2bc4b42d
  cfix rm 2bc4b42d 9a0c11ee --history --apply`,
		Short: "Plan (and with --apply, make) the removal of whole sessions",
		Long: `Rm removes sessions with everything they own: the main transcript (in every
project folder holding one), subagents of both layouts with their .meta.json,
the session folder (tool-results, custom-title.json), file-history/<id>/,
session-env/<id>/, tasks/<id>/, todos/<id>-agent-*.json, debug/<id>.txt (not the
log debug/latest points to), usage-data/session-meta/<id>.json and
usage-data/facets/<id>.json, and the session's entry in its folder's
sessions-index.json. With --history also its prompts in history.jsonl: the lines
whose sessionId names it (lines written without a sessionId cannot be told
apart, and stay; the plan counts them).

A SESSION is a session id, a unique prefix of one, the path of its .jsonl, or
latest. A live session (a running Claude Code holds it, or it was written in
the last 60 seconds) is refused. Every removed byte stays in the backup
journal: cfix undo puts it all back, modes and mtimes too.

` + plannerExitStatus,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runRm(opts, args)
		},
		ValidArgsFunction: completeSessions,
	}
	opts.register(cmd, true)
	cmd.Flags().BoolVar(&opts.history, "history", false, "also remove the sessions' prompts from history.jsonl")
	return cmd
}

func runRm(opts *rmOptions, args []string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	cs, err := archive.Rm(archive.RmOptions{Root: root, Sessions: args, History: opts.history, Force: opts.force})
	if err != nil {
		return planError(err)
	}
	return runPlan(&opts.planFlags, cs)
}
