package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
)

type undoOptions struct {
	planFlags
	list bool
}

func newUndoCmd() *cobra.Command {
	opts := &undoOptions{}
	cmd := &cobra.Command{
		Use: "undo [JOURNAL]",
		Example: `  cfix undo --list
  cfix undo
  cfix undo --apply`,
		Short: "Restore what an apply changed, from its backup journal",
		Long: `Undo restores the files an apply changed, from the journal it left (the last one
for the store, or the one named, which must be of the store given: --root,
$CLAUDE_CONFIG_DIR or ~/.claude; a journal of a project's settings is undone in
that project's folder). It is itself a plan: a dry run first, --apply to write.
--list lists the journals of the store.

` + plannerExitStatus,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runUndo(opts, args)
		},
	}
	opts.register(cmd, false)
	cmd.Flags().BoolVar(&opts.list, "list", false, "list the journals of the store")
	return cmd
}

func runUndo(opts *undoOptions, args []string) error {
	base, err := changeset.DefaultJournalDir()
	if err != nil {
		return usageError(err)
	}
	// A journal named must be of the store given (or, for a project's
	// settings, of the project undo runs in).
	var root, dir string
	if len(args) == 1 && !opts.list {
		dir, _ = filepath.Abs(args[0])
		info, err := changeset.ReadJournalInfo(dir)
		if err != nil {
			return &exitError{code: exitFound, err: fmt.Errorf("journal %s: %w", dir, err)}
		}
		if root, err = undoTarget(opts.root, info); err != nil {
			return err
		}
		if err := info.CheckStore(root); err != nil {
			return &exitError{code: exitFound, err: err}
		}
	} else if root, err = resolveRoot(opts.root); err != nil {
		return err
	}
	if opts.list {
		js, err := changeset.ListJournals(base, root)
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		if opts.json {
			if js == nil {
				js = []changeset.JournalInfo{}
			}
			return printJSON(opts.out, js)
		}
		if len(js) == 0 {
			fmt.Fprintf(opts.out, "no journal for store %s in %s\n", root, base)
		}
		for _, j := range js {
			fmt.Fprintf(opts.out, "%s  %-7s %3d %s  %s\n", j.Created.Local().Format("2006-01-02 15:04:05"), j.Command, j.Ops, plural.Of(j.Ops, "change"), j.State)
			fmt.Fprintf(opts.out, "    %s\n", j.Dir)
			if j.Damage != "" {
				fmt.Fprintf(opts.out, "    damaged: %s\n", j.Damage)
			}
		}
		return nil
	}
	// The store's lock is held from before the journal is picked until it
	// is marked undone: a journal whose apply still runs is never picked,
	// and an incomplete one is one whose apply was killed.
	lock, err := changeset.LockStore(base, root)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	defer lock.Unlock()
	opts.lock = lock
	if dir == "" {
		js, err := changeset.ListJournals(base, root)
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		for _, j := range js {
			if j.State != "undone" && j.State != "rolled-back" && j.Command != "undo" {
				dir = j.Dir
				break
			}
		}
		if dir == "" {
			return usageError(errors.New("no journal to undo for store " + root))
		}
	}
	info, err := changeset.ReadJournalInfo(dir)
	if err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("journal %s: %w", dir, err)}
	}
	if info.State == "incomplete" && opts.apply {
		gone, err := changeset.RemoveTemps(dir)
		for _, p := range gone {
			fmt.Fprintf(opts.errOut, "%s: removed, a temporary file of a cfix that was killed\n", p)
		}
		if err != nil {
			return &exitError{code: exitFound, err: fmt.Errorf("journal %s: %w", dir, err)}
		}
	}
	cs, err := changeset.Undo(dir)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "journal "+dir+": ") {
			err = fmt.Errorf("journal %s: %w", dir, err)
		}
		return &exitError{code: exitFound, err: err}
	}
	if !opts.json {
		fmt.Fprintf(opts.out, "undo of %s\n", dir)
		if info.State == "incomplete" {
			fmt.Fprintf(opts.out, "its apply was killed before it ended: undo puts back what it changed\n")
		}
	}
	if err := runPlan(&opts.planFlags, cs); err != nil {
		return err
	}
	if opts.apply && !cs.Empty() {
		return changeset.MarkUndone(dir)
	}
	return nil
}

// undoTarget is the folder a journal named to undo must be of: the store
// given (--root, $CLAUDE_CONFIG_DIR or ~/.claude), or for a journal of a
// project's settings without --root, the .claude folder of the current
// directory.
func undoTarget(rootFlag string, info changeset.JournalInfo) (string, error) {
	if rootFlag == "" && info.Scope == changeset.ScopeProjectSettings {
		wd, err := os.Getwd()
		if err != nil {
			return "", usageError(fmt.Errorf("the current directory: %w", err))
		}
		return filepath.Join(wd, ".claude"), nil
	}
	return resolveRoot(rootFlag)
}
