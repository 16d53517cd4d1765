package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/internal/visible"
)

type restoreOptions struct {
	planFlags
	dir  string
	to   string
	keep bool
}

func newRestoreCmd() *cobra.Command {
	opts := &restoreOptions{}
	cmd := &cobra.Command{
		Use: "restore SESSION...",
		Example: `  cfix restore 2bc4b42d
  cfix restore 2bc4b42d --to ~/work/new --apply`,
		Short: "Plan (and with --apply, make) putting archived sessions back into the store",
		Long: `Restore puts sessions that cfix archive moved out back into the store, byte for
byte with their modes and mtimes, into the project folder they came from (or,
with --to, the project folder of DIR; entries keep the cwd they name), lists
them in the folder's sessions-index.json again and removes the archive file
(--keep leaves it). A SESSION is a session id or a unique prefix of one among
the archives, or the path of an archive file.

Each archive is read whole and checked before anything is planned: the zstd
checksums, the tar stream, the sha256 of every file against the manifest. A
damaged or truncated archive is refused, named, and nothing is restored; so is
one whose manifest names anything but its session's own files. A dry run
writes nothing (the archive is read as a stream); --apply extracts the files
into a staging folder beside the archive first. A
file of the store that exists and differs from the archived one is never
overwritten: the plan is refused.

` + plannerExitStatus,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeArchived,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runRestore(opts, args)
		},
	}
	opts.register(cmd, false)
	cmd.Flags().StringVar(&opts.dir, "archive-dir", "", "the archive folder (default $CFIX_ARCHIVE_DIR, else $XDG_DATA_HOME/cfix/archive)")
	cmd.Flags().StringVar(&opts.to, "to", "", "restore into the project folder of this directory")
	cmd.Flags().BoolVar(&opts.keep, "keep", false, "keep the archive files")
	return cmd
}

func runRestore(opts *restoreOptions, args []string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	dir, err := archiveDir(opts.dir)
	if err != nil {
		return err
	}
	// Only an apply extracts the archives (a dry run streams them).
	p, err := archive.Restore(archive.RestoreOptions{Root: root, Dir: dir, Archives: args, To: opts.to, Keep: opts.keep, Extract: opts.apply})
	if err != nil {
		return planError(err)
	}
	defer p.Cleanup()
	opts.differ = p.Diff
	return runPlan(&opts.planFlags, p.ChangeSet)
}

// completeArchived completes a restore's SESSION: the ids of the sessions
// in the archive folder (--archive-dir, else the default) that start with
// what is typed, newest first, each described by its title. What looks
// like a path completes as a file name.
func completeArchived(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.ContainsAny(toComplete, `/\`) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	flag := ""
	if f := cmd.Flags().Lookup("archive-dir"); f != nil {
		flag = f.Value.String()
	}
	dir, err := archiveDir(flag)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, _, err := archive.List(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	want := strings.ToLower(toComplete)
	var out []cobra.Completion
	for _, a := range list {
		m := a.Manifest
		if !strings.HasPrefix(strings.ToLower(m.Session), want) || visible.String(m.Session) != m.Session {
			continue
		}
		desc := cut(textCell(m.Title), 60)
		if desc == "" {
			desc = "(untitled)"
		}
		out = append(out, cobra.CompletionWithDesc(m.Session, desc))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}
