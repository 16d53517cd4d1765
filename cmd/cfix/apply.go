package main

import (
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
)

func newApplyCmd() *cobra.Command {
	f := &planFlags{}
	cmd := &cobra.Command{
		Use:   "apply FILE [--yes]",
		Short: "Apply a plan saved with --plan-out, after the same checks",
		Long: `Apply applies a change set saved by a planner's --plan-out. Every file must still
be as it was when the plan was made (size, mtime and content hash); otherwise
nothing is applied.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.streams(cmd)
			cs, err := changeset.Load(args[0])
			if err != nil {
				return usageError(err)
			}
			f.apply = true
			return runPlan(f, cs)
		},
	}
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "apply without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the plan and the result as JSON")
	cmd.Flags().BoolVar(&f.force, "force", false, "also change files of live sessions")
	return cmd
}
