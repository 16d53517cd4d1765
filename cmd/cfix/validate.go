package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

type validateOptions struct {
	root    string
	json    bool
	quiet   bool
	targets []string
	out     io.Writer
	errOut  io.Writer
}

func newValidateCmd() *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate [--root DIR] [--json] [--quiet] [TARGET...]",
		Short: "Check a Claude Code store: lines, entry schemas, parentUuid chains, the store against itself",
		Long: `Validate checks a Claude Code store without changing it.

The store is --root, else $CLAUDE_CONFIG_DIR, else ~/.claude; it must hold a
projects folder. A TARGET is, as for every cfix command:
  - a session id (looked up in every project folder, with its subagents), even
    where a folder of that name exists, or a unique prefix of one (at least 4
    characters, as in git: cfix validate 2bc4b42d; an ambiguous one lists the
    candidates);
  - a path to a .jsonl file;
  - a project folder (its name or path) or a session folder;
  - a working directory: the project folder of its sessions (cfix validate .).
None means the whole store. A project folder that is a symbolic link is read
through and reported (project-symlink): Claude Code's /resume picker does not
list the sessions behind one.

Each finding is printed as "path:line: severity code: message", followed by a
"hint:" naming the cfix command that fixes it. Severities: error (data is
broken, or a resume will fail or silently lose history), warning (suspicious
or wasteful), notice (worth knowing). Codes are stable; README.md lists them.

Exit status:
  0  no finding of severity error
  1  at least one error found
  2  usage or I/O error (bad flag, missing store or a folder that is not one,
     a target that names nothing, an ambiguous session id prefix)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.targets = args
			opts.out = cmd.OutOrStdout()
			opts.errOut = cmd.ErrOrStderr()
			return runValidate(opts)
		},
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	cmd.Flags().BoolVarP(&opts.quiet, "quiet", "q", false, "print only errors, no summary or progress")
	return cmd
}

func runValidate(opts *validateOptions) error {
	// A check allocates per line and keeps little (a file's graph per
	// core): collecting when the heap reaches three times what is live,
	// not twice, spares half the collections, and the 200 MB bench
	// session still peaks near 70 MB. A GOGC the user sets wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(200))
	}
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	vo := validate.Options{Root: root, Targets: opts.targets}
	showProgress := len(opts.targets) == 0 && !opts.quiet && isTerminal(opts.errOut)
	if showProgress {
		vo.Progress = func(done, total int) {
			if done == total || done%64 == 0 {
				fmt.Fprintf(opts.errOut, "\rchecking %d/%d files", done, total)
			}
		}
	}
	rep, err := validate.Run(vo)
	if showProgress {
		fmt.Fprint(opts.errOut, "\r\033[K")
	}
	if err != nil {
		// An unknown target and an unreadable store alike: exit 2.
		return usageError(err)
	}
	if opts.json {
		if rep.Findings == nil {
			rep.Findings = []validate.Finding{}
		}
		enc := json.NewEncoder(opts.out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return usageError(err)
		}
	} else {
		printFindings(opts.out, rep, opts.quiet)
	}
	if rep.Has(validate.Error) {
		return &exitError{code: exitFound}
	}
	return nil
}

// printFindings prints findings grouped by file, then a summary line.
func printFindings(w io.Writer, rep *validate.Report, quiet bool) {
	last := ""
	for _, f := range rep.Findings {
		if quiet && f.Severity < validate.Error {
			continue
		}
		if f.Path != last && last != "" {
			fmt.Fprintln(w)
		}
		last = f.Path
		loc := f.Path
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
		}
		fmt.Fprintf(w, "%s: %s %s: %s\n", loc, f.Severity, f.Code, f.Message)
		if f.Hint != "" {
			fmt.Fprintf(w, "  hint: %s\n", f.Hint)
		}
	}
	if quiet {
		return
	}
	if last != "" {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d files checked: %s, %s, %s\n", rep.FilesChecked,
		plural(rep.Counts["error"], "error"), plural(rep.Counts["warning"], "warning"), plural(rep.Counts["notice"], "notice"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
