package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/repair"
)

func newJournalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "List the backup journals of a store, and remove old ones",
		Long: `Every apply keeps a journal: the plan, a log of what was done, and a backup of
every file it replaced or removed, so that cfix undo can put them back. The bytes
that prune, rm and archive take out of the store stay in the journal until it
goes. cfix journal list shows the journals of a store; cfix journal prune removes
old ones (what it removes can no longer be undone).

Journals live in $CFIX_JOURNAL_DIR, else $XDG_STATE_HOME/cfix/journal, else
~/.local/state/cfix/journal.`,
		Example: `  cfix journal list
  cfix journal prune
  cfix journal prune --older-than 7d --keep 5 --apply`,
	}
	cmd.AddCommand(newJournalListCmd(), newJournalPruneCmd())
	return cmd
}

// journalJSON is a journal in the --json documents of journal list and prune.
type journalJSON struct {
	changeset.JournalInfo
	changeset.JournalSize
}

func newJournalListCmd() *cobra.Command {
	var root string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the journals of a store: when, command, files, bytes, state",
		Long: `List lists the journals of the store, newest first: when the apply was made,
its command, the number of changes, the files and bytes the journal holds (and
of those the bytes only it holds, which removing it frees: a backup that is a
hard link to a file still in the store frees nothing), and its state (applied,
rolled-back, undone, or incomplete: an apply that is running or was killed).
A journal whose log.jsonl no longer names all its backups (cut or edited) is
said to be damaged: cfix undo puts back what those backups verify, and journal
prune never removes it.`,
		Example: `  cfix journal list
  cfix journal list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, base, err := journalBase(root)
			if err != nil {
				return err
			}
			js, err := changeset.ListJournals(base, r)
			if err != nil {
				return &exitError{code: exitFound, err: err}
			}
			out := cmd.OutOrStdout()
			list := []journalJSON{}
			var total changeset.JournalSize
			for _, j := range js {
				s := changeset.SizeOf(j.Dir)
				total.Files += s.Files
				total.Bytes += s.Bytes
				total.Frees += s.Frees
				list = append(list, journalJSON{j, s})
			}
			if asJSON {
				return printJSON(out, list)
			}
			if len(list) == 0 {
				fmt.Fprintf(out, "no journal for store %s in %s\n", r, base)
				return nil
			}
			fmt.Fprintf(out, "%-19s  %-12s %7s %6s %10s %10s  %s\n", "CREATED", "COMMAND", "CHANGES", "FILES", "SIZE", "FREES", "STATE")
			for _, j := range list {
				fmt.Fprintf(out, "%-19s  %-12s %7d %6d %10s %10s  %s\n", j.Created.Local().Format("2006-01-02 15:04:05"), j.Command, j.Ops,
					j.Files, changeset.Size(j.Bytes), changeset.Size(j.Frees), j.State)
				fmt.Fprintf(out, "    %s\n", j.Dir)
				if j.Damage != "" {
					fmt.Fprintf(out, "    damaged: %s; journal prune keeps it\n", j.Damage)
				}
			}
			fmt.Fprintf(out, "\n%d %s in %s: %s, %s only they hold (cfix journal prune removes old ones)\n",
				len(list), plural.Of(len(list), "journal"), base, changeset.Size(total.Bytes), changeset.Size(total.Frees))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newJournalPruneCmd() *cobra.Command {
	var root, olderThan string
	var keep int
	var apply, yes, asJSON bool
	var named []string
	def := changeset.DefaultRetention
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove old journals (what they hold can no longer be undone)",
		Long: fmt.Sprintf(`Prune removes the journals of the store that the retention does not keep: by
default every journal but the newest %d and those of the last %d days (--keep N,
--older-than D change either). A journal whose apply did not end (incomplete)
is never removed. It is a dry run unless --apply: the list says what goes and
how many bytes that frees. What it removes can no longer be undone: the bytes
that prune, rm and archive took out of the store are gone with their journal.
A damaged journal (its log.jsonl no longer names all its backups) is never
removed either: remove it by hand once you know you do not need it.

--journal ID removes that journal (its folder, or the folder's name, as apply
prints it), whatever its age: the journal of cfix redact holds the secrets it
took out of the store.`, def.Keep, int(def.KeepFor/(24*time.Hour))),
		Example: `  cfix journal prune
  cfix journal prune --apply
  cfix journal prune --older-than 0 --keep 0 --apply --yes
  cfix journal prune --journal 20261126T201620.894Z-redact-69ec0f --apply`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, base, err := journalBase(root)
			if err != nil {
				return err
			}
			ret := def
			if cmd.Flags().Changed("keep") {
				if keep < 0 {
					return usageError(errors.New("--keep: not a number of journals"))
				}
				ret.Keep = keep
			}
			if olderThan != "" {
				d, err := repair.ParseAge(olderThan)
				if err != nil {
					return usageError(fmt.Errorf("--older-than %s: %w", olderThan, err))
				}
				ret.KeepFor = d
			}
			var js []changeset.JournalInfo
			if len(named) > 0 {
				if cmd.Flags().Changed("keep") || olderThan != "" {
					return usageError(errors.New("--journal names the journals to remove: --keep and --older-than do not go with it"))
				}
				js, err = namedJournals(base, r, named)
				if err != nil {
					return err
				}
			} else {
				js, err = changeset.PruneJournals(base, r, ret, time.Now())
				if err != nil {
					return &exitError{code: exitFound, err: err}
				}
			}
			out := cmd.OutOrStdout()
			list := []journalJSON{}
			var frees int64
			for _, j := range js {
				s := changeset.SizeOf(j.Dir)
				frees += s.Frees
				list = append(list, journalJSON{j, s})
			}
			if !asJSON {
				if len(list) == 0 {
					fmt.Fprintf(out, "cfix journal prune: nothing to do (keeping the newest %s and those of the last %s)\n", plural.Count(ret.Keep, "journal"), age(ret.KeepFor))
					return nil
				}
				fmt.Fprintf(out, "cfix journal prune: %d %s, frees %s; the applies they journal can no longer be undone\n", len(list), plural.Of(len(list), "journal"), changeset.Size(frees))
				for _, j := range list {
					fmt.Fprintf(out, "  remove  %s  %s %s, %d %s, frees %s (%s)\n", j.Created.Local().Format("2006-01-02 15:04:05"), j.Command,
						j.State, j.Ops, plural.Of(j.Ops, "change"), changeset.Size(j.Frees), shell.Quote(j.Dir))
				}
			}
			if !apply {
				if asJSON {
					return printJSON(out, map[string]any{"journals": list, "frees": frees, "applied": false})
				}
				fmt.Fprintf(out, "\ndry run: nothing was removed; run again with --apply to remove these journals\n")
				return nil
			}
			if len(list) > 0 {
				f := &planFlags{yes: yes, in: cmd.InOrStdin(), errOut: cmd.ErrOrStderr()}
				if err := confirm(f, len(list)); err != nil {
					return err
				}
			}
			removed := 0
			for _, j := range list {
				if err := changeset.RemoveJournal(base, j.Dir); err != nil {
					return &exitError{code: exitFound, err: fmt.Errorf("%w (%d of %s removed)", err, removed, plural.Count(len(list), "journal"))}
				}
				removed++
			}
			if asJSON {
				return printJSON(out, map[string]any{"journals": list, "frees": frees, "applied": true})
			}
			fmt.Fprintf(out, "\nremoved %d %s\n", removed, plural.Of(removed, "journal"))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().StringVar(&olderThan, "older-than", "", fmt.Sprintf("remove journals older than this (default %dd; 0 for any age)", int(def.KeepFor/(24*time.Hour))))
	cmd.Flags().IntVar(&keep, "keep", def.Keep, "always keep the newest N journals")
	cmd.Flags().BoolVar(&apply, "apply", false, "remove the journals (the default is a dry run that lists them)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "remove without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the journals removed as JSON")
	cmd.Flags().StringArrayVar(&named, "journal", nil, "remove this journal (its folder or the folder's name), whatever its age; repeatable")
	return cmd
}

// namedJournals returns the journals of the store that --journal names,
// each by its folder or the folder's name. A name that is no journal of
// the store, or one whose apply did not end, is refused.
func namedJournals(base, root string, names []string) ([]changeset.JournalInfo, error) {
	all, err := changeset.ListJournals(base, root)
	if err != nil {
		return nil, &exitError{code: exitFound, err: err}
	}
	var out []changeset.JournalInfo
	for _, n := range names {
		found := false
		for _, j := range all {
			if j.Dir == n || filepath.Base(j.Dir) == n || filepath.Clean(n) == j.Dir {
				if j.State == "incomplete" {
					return nil, usageError(fmt.Errorf("--journal %s: its apply did not end (it may be all that can put its files back); run cfix undo first", n))
				}
				out = append(out, j)
				found = true
				break
			}
		}
		if !found {
			return nil, usageError(fmt.Errorf("--journal %s: no journal of store %s in %s (cfix journal list lists them)", n, root, base))
		}
	}
	return out, nil
}

// journalBase resolves --root and the journal folder.
func journalBase(root string) (string, string, error) {
	r, err := resolveRoot(root)
	if err != nil {
		return "", "", err
	}
	base, err := changeset.DefaultJournalDir()
	if err != nil {
		return "", "", usageError(err)
	}
	return r, base, nil
}

// age renders a retention period: 14d, 36h, 90m.
func age(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
