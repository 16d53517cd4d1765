package main

import (
	"errors"
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/trim"
)

type trimOptions struct {
	planFlags
	opts trim.Options
}

func newTrimCmd() *cobra.Command {
	o := &trimOptions{}
	cmd := &cobra.Command{
		Use: "trim SESSION",
		Example: `  cfix trim latest --thinking --tool-output
  cfix trim 2bc4b42d --tool-output --keep-turns 10 --apply
  cfix trim 2bc4b42d --images --in-place --apply`,
		Short: "Make a session with less context: thinking, old tool output, images or progress entries taken out",
		Long: `Trim plans a new session (a clone, as cfix clone makes it; the source is never
modified) that holds less context, or with --in-place rewrites the session
itself. What goes:

  --thinking      thinking blocks (an entry left empty goes, its children
                  re-parented)
  --tool-output   the content of tool results, replaced by a marker that says
                  what was removed and its size; the tool_result block and its
                  tool_use_id stay, so every call keeps its result; the
                  entry's toolUseResult becomes the same kind of marker
  --images        image blocks (also inside tool results), replaced by a text
                  marker
  --progress      progress entries, parentUuid bridged over them

Nothing in the last N turns changes (--keep-turns, default 3; a turn is a user
prompt and all that follows it on the history a resume loads), nor the
thinking of the last reply. Uuids, ids and every field trim does not edit stay
byte for byte. An entry that something names (a leafUuid, a
logicalParentUuid), that is the parent of an entry left alone, or that a
resume starts from is never dropped. A transcript with glued records or NUL
bytes on a line is refused: cfix repair it first.

The plan says how many bytes the transcript loses and how many bytes and
tokens of message content a resume's request loses (tokens scaled by what the
session's message.usage says, else bytes/4; the plan says which).

The new session gets a new id (--id to choose it) in the session's project
folder, or in that of DIR with --to, with its subagents, tool-results,
file-history, todos and tasks, as clone copies them. A live session is never
trimmed in place. Nothing is written without --apply; cfix undo takes it back.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.opts.Session = args[0]
			o.streams(cmd)
			return runTrim(o)
		},
		ValidArgsFunction: completeFirstSession,
	}
	o.register(cmd, true)
	f := cmd.Flags()
	f.BoolVar(&o.opts.Thinking, "thinking", false, "drop thinking blocks")
	f.BoolVar(&o.opts.ToolOutput, "tool-output", false, "replace the output of tool results older than the last turns by a marker")
	f.BoolVar(&o.opts.Images, "images", false, "replace image blocks by a marker")
	f.BoolVar(&o.opts.Progress, "progress", false, "drop progress entries, bridging parentUuid over them")
	f.IntVar(&o.opts.KeepTurns, "keep-turns", trim.DefaultKeepTurns, "leave the last N turns as they are")
	f.BoolVar(&o.opts.InPlace, "in-place", false, "rewrite the session itself instead of making a new one")
	f.StringVar(&o.opts.To, "to", "", "the working directory the new session belongs to (default the session's own)")
	f.StringVar(&o.opts.ID, "id", "", "the new session's id (a UUID; default one derived from the session)")
	f.StringVar(&o.opts.Title, "title", "", `the new session's title in /resume and cfix ls (default the session's title with " (trimmed)")`)
	return cmd
}

func runTrim(o *trimOptions) error {
	root, err := resolveRoot(o.root)
	if err != nil {
		return err
	}
	o.opts.Root = root
	if o.opts.InPlace && o.opts.Title != "" {
		return usageError(errors.New("--title names a new session; trim --in-place keeps the session and its title"))
	}
	p, err := trim.Trim(o.opts)
	if err != nil {
		return planError(err)
	}
	o.trim = p.Figures
	return runSessionPlan(&o.planFlags, p.Plan)
}
