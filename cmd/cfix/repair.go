package main

import (
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/repair"
)

type repairOptions struct {
	planFlags
	only       []string
	aggressive bool
	targets    []string
	client     string
}

func newRepairCmd() *cobra.Command {
	opts := &repairOptions{}
	cmd := &cobra.Command{
		Use: "repair [TARGET...]",
		Example: `  cfix repair
  cfix repair --apply 2bc4b42d
  cfix repair --only index --apply
  cfix repair --plan-out plan.json .`,
		Short: "Plan (and with --apply, make) the safe fixes of what validate finds",
		Long: `Repair plans the fixes of what cfix validate finds and shows them as a diff.
Nothing is written unless --apply is given; then every file is backed up into a
journal first and replaced atomically (cfix undo restores it).

Safe fixes: drop a torn last line and NUL bytes; split glued records; move lines
that are not JSON into the backup; add the final newline; replace lone surrogate
escapes and invalid UTF-8 with U+FFFD; drop byte-identical duplicate entries;
break parentUuid cycles; add an error tool_result after a tool_use that has
none; remove tool_results that answer no tool_use in sessions of 1.0.x and
2.0.x, which send them (2.1.x drops them itself; they stay); strip thinking
blocks with an empty signature; remove stub files whose transcript lives elsewhere;
rebuild sessions-index.json; append a session's title line again at the end
when it sits beyond the 64 KB the /resume picker reads of each end.

With --aggressive, also the fixes that guess: re-parent an entry whose parent
was never written to the previous entry in file order, and drop progress
entries after bridging parentUuid over them.

A TARGET is a session id or a unique prefix of one, a .jsonl file, a project
folder or a working directory, as for validate. --only takes finding codes (and
"index", "progress"). Nothing is written through a symbolic link leading out of
the store (a project folder moved to another disk): the plan notes what it left
out.

` + plannerExitStatus,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.targets = args
			opts.streams(cmd)
			return runRepair(opts)
		},
		ValidArgsFunction: completeSessions,
	}
	opts.register(cmd, true)
	cmd.Flags().StringSliceVar(&opts.only, "only", nil, "limit the repairs to these finding codes")
	cmd.Flags().BoolVar(&opts.aggressive, "aggressive", false, "also make the repairs that guess")
	addClientFlag(cmd, &opts.client)
	return cmd
}

func runRepair(opts *repairOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	client, _, err := resumingClient(opts.client)
	if err != nil {
		return usageError(err)
	}
	cs, err := repair.Plan(repair.Options{Root: root, Targets: opts.targets, Only: opts.only, Aggressive: opts.aggressive, Client: client})
	if err != nil {
		return planError(err)
	}
	return runPlan(&opts.planFlags, cs)
}
