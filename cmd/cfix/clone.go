package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/clone"
)

type cloneOptions struct {
	planFlags
	to           string
	id           string
	rewritePaths bool
	session      string
}

func newCloneCmd() *cobra.Command {
	opts := &cloneOptions{}
	cmd := &cobra.Command{
		Use: "clone SESSION --to DIR",
		Example: `  cfix clone 2bc4b42d --to ~/work/other
  cfix clone latest --to ../copy --rewrite-paths --apply`,
		Short: "Copy a session, under a new id, into the project folder of another directory",
		Long: `Clone plans a copy of a session that Claude Code finds when it runs in DIR: the
copy gets a new session id (--id to choose it) and lands in the project folder
Claude Code uses for DIR. It carries the whole session: the main transcript, its
subagents (flat agent-*.jsonl files and <id>/subagents/ with .meta.json), the
session folder (tool-results/), file-history/<id>/ and todos/<id>-agent-*.json,
renamed to the new id.

In every copied entry, sessionId becomes the new id and a cwd that is the
session's old directory, or a path under it, becomes the same path under DIR
(whole path components: /a/foo never touches /a/foobar). With --rewrite-paths,
paths under the old directory inside message content and tool inputs are
rewritten the same way (never inside thinking blocks, whose text is signed).
Entry uuids, unknown fields and unknown entry types are copied byte for byte.
Where the target folder has a sessions-index.json, the clone is added to it.
The source is never modified.

SESSION is a session id, a unique prefix of one, or the path of its .jsonl
transcript. DIR need not exist; it is made absolute and clean, and resolved
through symlinks when it exists. Nothing is written without --apply; cfix undo
removes the clone. Nothing is written through a symbolic link leading out of
the store (a project folder moved to another disk): such a clone is refused.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.session = args[0]
			opts.streams(cmd)
			return runClone(opts)
		},
		ValidArgsFunction: completeFirstSession,
	}
	opts.register(cmd, true)
	cmd.Flags().StringVar(&opts.to, "to", "", "the working directory the clone belongs to (required)")
	cmd.Flags().StringVar(&opts.id, "id", "", "the clone's session id (a UUID; default a random one)")
	cmd.Flags().BoolVar(&opts.rewritePaths, "rewrite-paths", false, "also rewrite paths under the old directory in message content and tool inputs")
	cmd.MarkFlagRequired("to")
	return cmd
}

func runClone(opts *cloneOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	p, err := clone.Clone(clone.Options{Root: root, Session: opts.session, To: opts.to, ID: opts.id, RewritePaths: opts.rewritePaths})
	if err != nil {
		return planError(err)
	}
	return runSessionPlan(&opts.planFlags, p)
}

// runSessionPlan shows or applies a clone or move plan, then prints how to
// resume the session.
func runSessionPlan(f *planFlags, p *carry.Plan) error {
	if err := runPlan(f, p.ChangeSet); err != nil {
		return err
	}
	if f.apply && !f.json && !p.ChangeSet.Empty() {
		fmt.Fprintf(f.out, "resume it with:\n  %s\n", p.ResumeCommand())
	}
	return nil
}
