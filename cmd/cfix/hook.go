package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/guard"
)

func newHookCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use: "hook EVENT",
		Example: `  cfix hook SessionStart
  cfix hook SessionEnd`,
		Short: "Run cfix's hook for a Claude Code event (SessionStart, SessionEnd), as cfix guard install sets it up",
		Long: `Hook is what Claude Code runs for the hooks cfix guard install adds: it reads
the hook's JSON from stdin (session_id, transcript_path, cwd, source,
hook_event_name), as Claude Code sends it, and never writes to the store.
Try it by hand: echo '{"source":"resume","transcript_path":"PATH.jsonl"}' | cfix hook SessionStart

It acts on one store: --root, which cfix guard install records in the hook's
command line, else $CLAUDE_CONFIG_DIR or ~/.claude (the store of the Claude
Code that runs it: hooks written by an earlier cfix, or a project's). Input
whose transcript_path is not a transcript of that store
(STORE/projects/FOLDER/NAME.jsonl) is refused whole: nothing is checked or
archived, and the log says why.

SessionStart with source resume checks the session being resumed as the
version that wrote it loads it (the findings of severity error of cfix
validate); when the resume will fail or lose history, it answers with a
message Claude Code shows and gives the model (systemMessage and
additionalContext), naming what is wrong and the command that fixes it.
SessionEnd checks the session just written (a torn last line, a tool call
left without result) and records what it found for cfix guard status.

SessionStart of a new or a resumed session (source startup or resume) also
starts, once a day and in the background, cfix archive --older-than N
--by-transcript --apply --yes in that store, N being its cleanupPeriodDays
(30 by default) less 5 days: Claude Code sweeps the sessions older than
cleanupPeriodDays after the first prompt of an interactive session (never
in -p mode), and what it would delete soon is in the archive first (cfix
restore puts it back). The session resumed stays (--except).

Hook is silent when there is nothing to say, and always exits 0: what goes
wrong goes to its log ($XDG_STATE_HOME/cfix/guard.log, else
~/.local/state/cfix/guard.log, moved to guard.log.1 at 1 MiB).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := guard.StateDir()
			if err != nil {
				return nil // nowhere to log; Claude Code is never blocked
			}
			if len(args) != 1 {
				guard.Log(dir, fmt.Sprintf("hook: needs one event (%v), got %q", guard.Events, args))
				return nil
			}
			var out bytes.Buffer
			if err := guard.Hook(dir, root, args[0], cmd.InOrStdin(), &out); err != nil {
				guard.Log(dir, err.Error())
			}
			// The answer goes out whole or not at all.
			if _, err := cmd.OutOrStdout().Write(out.Bytes()); err != nil {
				guard.Log(dir, fmt.Sprintf("hook %s: stdout: %v", args[0], err))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "the store the hook acts on, as cfix guard install records it (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	return cmd
}
