package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
)

// Exit codes, in one place. Planners add exitChanges for --exit-code.
const (
	exitOK      = 0
	exitFound   = 1 // validate found errors; planners: an error happened
	exitUsage   = 2 // bad command line or I/O error
	exitChanges = 3
)

// exitError carries an exit code out of a command's RunE.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks an error as a usage or I/O error (exit 2).
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// userError reports whether err is about what the user named or asked,
// not about the store: a target that names nothing or names a session id
// prefix of several sessions, a bad option value, a bad SESSION or DIR.
func userError(err error) bool {
	var te *store.TargetError
	var ae *store.AmbiguousError
	var oe *repair.OptionError
	var ie *carry.InputError
	return errors.As(err, &te) || errors.As(err, &ae) || errors.As(err, &oe) || errors.As(err, &ie)
}

// planError maps a planner's error to an exit status: what the user asked
// is wrong (exit 2), or the store refuses it or an error happened (exit 1).
func planError(err error) error {
	if userError(err) {
		return usageError(err)
	}
	return &exitError{code: exitFound, err: err}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "cfix",
		Short:         "Find and fix damage in Claude Code's session store",
		SilenceUsage:  true,
		SilenceErrors: true,
		// One writer at a time (see lockBeforePlan).
		PersistentPreRunE: lockBeforePlan,
	}
	root.AddCommand(newValidateCmd(), newRepairCmd(), newPruneCmd(), newApplyCmd(), newUndoCmd(), newCloneCmd(), newMoveCmd(), newMoveProjectCmd())
	root.AddCommand(newShowCmd(), newExportCmd())
	root.AddCommand(newTrimCmd(), newForkCmd())
	root.AddCommand(newLsCmd(), newDuCmd())
	root.AddCommand(newRmCmd(), newArchiveCmd(), newRestoreCmd())
	root.AddCommand(newUsageCmd(), newStatusLineCmd())
	root.AddCommand(newPackCmd(), newUnpackCmd(), newPushCmd(), newPullCmd())
	root.AddCommand(newSearchCmd(), newExplainCmd(), newJournalCmd(), newResumeCmd(), newBrowseCmd(), newMCPCmd())
	root.AddCommand(newVersionCmd(), newManCmd(), newGuardCmd(), newHookCmd())
	root.AddCommand(newSecretsCmd(), newRedactCmd())
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(err) })
	setGroups(root)
	friendlyArgs(root)
	groupCommands(root)
	return root
}

func run(args []string) int {
	root := newRootCmd()
	root.SetFlagErrorFunc(flagError(args))
	root.SetArgs(projectArgs(args))
	// On a terminal, what cfix prints goes through internal/visible: no
	// escape sequence a store holds reaches it (isTerminal, browse and the
	// pager see the terminal under it).
	stdout, stderr := terminalSafe(os.Stdout), terminalSafe(os.Stderr)
	if v, ok := stdout.(*visible.Writer); ok {
		root.SetOut(v)
		defer v.Flush()
	}
	if v, ok := stderr.(*visible.Writer); ok {
		root.SetErr(v)
		defer v.Flush()
	}
	err := root.Execute()
	releaseLock()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "cfix: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "cfix: %v\n", err)
	return exitUsage
}

// terminalSafe is f behind a visible.Writer when f is a terminal, else f.
func terminalSafe(f *os.File) io.Writer {
	if term.IsTerminal(int(f.Fd())) {
		return visible.NewWriter(f)
	}
	return f
}
