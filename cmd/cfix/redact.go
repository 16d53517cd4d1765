package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/secrets"
)

type redactOptions struct {
	planFlags
	allow    []string
	noBackup bool
	targets  []string
}

func newRedactCmd() *cobra.Command {
	opts := &redactOptions{}
	cmd := &cobra.Command{
		Use: "redact [TARGET...]",
		Example: `  cfix redact
  cfix redact --apply 2bc4b42d
  cfix redact --apply --no-backup --yes /home/me/work/app`,
		Short: "Plan (and with --apply, make) the replacement of every secret the store keeps by [REDACTED:rule]",
		Long: `Redact takes out what cfix secrets finds: each secret is replaced by
[REDACTED:<rule>] wherever it is in the scope (also where no rule finds it,
as when the model repeats a key), in the decoded text of JSON strings and in
the bytes of the store's other files. Every entry keeps its members, its
uuid, its parentUuid and its structure, so the session still loads and
resumes; a thinking block keeps its signature (the clients send it as it is,
and the API rejects a thinking block without one).

The plan is shown as a diff in which every secret is masked (its first
characters, then its marker); nothing is written unless --apply is given.
The apply keeps a journal, as every apply does: it holds a copy of each file
it changed, secrets included, so that cfix undo can put them back. Once the
redaction is checked, remove it with cfix journal prune --journal ID --apply,
or apply with --no-backup, which removes it as soon as the apply is done
(asked on a terminal; --yes elsewhere). A live session's files are refused,
as by every apply (--force).

A TARGET is what cfix secrets takes; --allow and .cfix-secrets-ignore leave
secrets in place as they leave them out of cfix secrets.

` + plannerExitStatus,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.targets = args
			opts.streams(cmd)
			return runRedact(opts)
		},
		ValidArgsFunction: completeSessions,
	}
	opts.register(cmd, true)
	cmd.Flags().StringSliceVar(&opts.allow, "allow", nil, "leave the findings of this rule in place (repeatable, or a comma list)")
	cmd.Flags().BoolVar(&opts.noBackup, "no-backup", false, "remove the apply's journal, which holds the secrets, once the apply is done (cfix undo cannot take it back)")
	return cmd
}

// redactJSON is what the --json document says of a redaction.
type redactJSON struct {
	Secrets      int `json:"secrets"`
	Findings     int `json:"findings"`
	Replacements int `json:"replacements"`
}

func runRedact(opts *redactOptions) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	plan, err := secrets.PlanRedact(secrets.Options{Root: root, Targets: opts.targets, Allow: opts.allow})
	if err != nil {
		var oe *secrets.OptionError
		if errors.As(err, &oe) {
			return usageError(err)
		}
		return planError(err)
	}
	opts.differ = func(w io.Writer, _ *changeset.ChangeSet, _ changeset.DiffOptions) error { return plan.Diff(w) }
	opts.redact = redactJSON{Secrets: plan.Secrets, Findings: len(plan.Findings), Replacements: plan.Replaced}
	opts.applied = func(journal string) (string, bool, error) {
		if !opts.noBackup {
			return fmt.Sprintf("backup journal: %s (it holds the secrets taken out)\nundo with: cfix undo --apply %s\nonce checked, remove it: cfix journal prune --journal %s --apply",
				journal, shell.Quote(journal), shell.Quote(filepath.Base(journal))), false, nil
		}
		if !opts.yes {
			fmt.Fprintf(opts.errOut, "remove the journal %s, which holds the secrets taken out? cfix undo can no longer put them back [y/N] ", journal)
			line, _ := bufio.NewReader(opts.in).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				return fmt.Sprintf("backup journal: %s (kept: it holds the secrets taken out)\nundo with: cfix undo --apply %s\nonce checked, remove it: cfix journal prune --journal %s --apply",
					journal, shell.Quote(journal), shell.Quote(filepath.Base(journal))), false, nil
			}
		}
		base, err := changeset.DefaultJournalDir()
		if err != nil {
			return "", false, err
		}
		if err := changeset.RemoveJournal(base, journal); err != nil {
			return "", false, fmt.Errorf("the redaction is applied, but its journal was not removed: %w (cfix journal prune --journal %s --apply)", err, filepath.Base(journal))
		}
		return "its journal is removed: nothing outside the store holds the secrets taken out, and cfix undo cannot put them back", true, nil
	}
	return runPlan(&opts.planFlags, plan.CS)
}

// redactFilter is what takes the secrets out of what cfix export --redact
// and cfix mcp write: the default rules, but for the fingerprints the
// store's ignore file names.
func redactFilter(root string) (*secrets.Filter, error) {
	ig, err := secrets.ReadIgnore(root)
	if err != nil {
		return nil, usageError(err)
	}
	f, err := secrets.NewFilter(secrets.RedactorOptions{Ignore: ig})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return f, nil
}
