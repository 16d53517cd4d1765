package main

import (
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/shell"
)

func newApplyCmd() *cobra.Command {
	f := &planFlags{}
	cmd := &cobra.Command{
		Use: "apply FILE",
		Example: `  cfix repair --plan-out plan.json
  cfix apply plan.json
  cfix apply --yes --json plan.json`,
		Short: "Apply a plan saved with --plan-out, after the same checks",
		Long: `Apply applies a change set saved by a planner's --plan-out. Every file must still
be as it was when the plan was made (size, mtime and content hash); otherwise
nothing is applied. A plan applies only to the store apply is given (--root,
$CLAUDE_CONFIG_DIR or ~/.claude): one made for another folder is refused.

Exit status:
  0  the changes were applied, or there was nothing to do
  1  an error (nothing is left half-applied)
  2  usage error (FILE is not a plan saved by --plan-out, or is of another store)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.streams(cmd)
			cs, err := changeset.Load(args[0])
			if err != nil {
				return usageError(err)
			}
			root, err := resolveRoot(f.root)
			if err != nil {
				return err
			}
			if err := cs.CheckStore("plan "+args[0], root); err != nil {
				return usageError(err)
			}
			f.apply, f.asked = true, "apply "+shell.Quote(args[0])
			return runPlan(f, cs)
		},
	}
	cmd.Flags().StringVar(&f.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude); the plan must be of it")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "apply without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the plan and the result as JSON")
	cmd.Flags().BoolVar(&f.force, "force", false, "also change files of live sessions")
	cmd.Flags().BoolVar(&f.stat, "stat", false, "print the summary of the plan without its diff")
	cmd.Flags().BoolVar(&f.diff, "diff", false, "print the whole diff of the plan, however long, through the pager on a terminal (the default shows it when the plan fits on a screen)")
	return cmd
}
