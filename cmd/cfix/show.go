package main

import (
	"encoding/json"

	"io"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/validate"
)

type showOptions struct {
	root       string
	desktopDir string
	json       bool
	session    string
	out        io.Writer
}

func newShowCmd() *cobra.Command {
	opts := &showOptions{}
	cmd := &cobra.Command{
		Use: "show SESSION",
		Example: `  cfix show latest
  cfix show 2bc4b42d
  cfix show --json 2bc4b42d`,
		Short: "Describe a session: its files as a tree, what its transcripts hold, what a resume loads, its findings",
		Long: `Show describes one session without changing anything: its family of files as
a tree (the main transcript, subagents in both layouts and those of workflows
with the agentType and description of their .meta.json, side files of
compactions, prompt suggestions and side questions, and the sidecars:
tool-results, file-history, todos, session-env, debug, tasks, plans,
usage-data, with sizes); its titles (with the one Claude Desktop lists it
under, from --desktop-dir or Desktop's own index), slug, cwds, versions,
models, time span, prompts, entries, token usage (message.usage, each API
message once), compactions; what a resume loads, as the version that wrote
the transcript loads it, against what sits behind compactions and on other
branches; and the findings of cfix validate for the session's files.

SESSION is a session id, a unique prefix of one, the path of one of its
.jsonl transcripts, its session folder, or latest (the newest session of
the current directory's project). A .jsonl file that is no session of the
store (transcripts/ses_*.jsonl, pre-compact-session-histories/*.jsonl) is
shown too, marked as not resumable.

--json prints one document (docs/show.md describes it).

Exit status:
  0  shown, and validate found no error
  1  shown, and validate found an error
  2  usage or I/O error (a SESSION that names no session)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.session = args[0]
			opts.out = cmd.OutOrStdout()
			return runShow(opts)
		},
		ValidArgsFunction: completeFirstSession,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	addDesktopFlag(cmd, &opts.desktopDir)
	return cmd
}

func runShow(opts *showOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	fam, err := show.Resolve(root, opts.session)
	if err != nil {
		return usageError(err)
	}
	fam.DesktopDir = desktop.Dir(opts.desktopDir, root)
	rep, err := show.Build(fam)
	if err != nil {
		return usageError(err)
	}
	if opts.json {
		enc := json.NewEncoder(opts.out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(rep)
	} else {
		err = show.Text(opts.out, rep)
	}
	if err != nil {
		return usageError(err)
	}
	for _, f := range rep.Findings {
		if f.Severity >= validate.Error {
			return &exitError{code: exitFound}
		}
	}
	return nil
}
