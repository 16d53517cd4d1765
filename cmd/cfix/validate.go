package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

type validateOptions struct {
	root     string
	json     bool
	quiet    bool
	codes    []string
	severity string
	targets  []string
	client   string
	// desktopDir is --desktop-dir: Claude Desktop's index folder.
	desktopDir string
	out        io.Writer
	errOut     io.Writer
	// table prints the counts per code as a table (on a terminal).
	table bool
}

func newValidateCmd() *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use: "validate [TARGET...]",
		Example: `  cfix validate
  cfix validate .
  cfix validate --severity warning 2bc4b42d
  cfix validate --json ~/work/project`,
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
or wasteful), notice (worth knowing). Codes are stable; cfix explain CODE and docs/codes.md describe each.
The output ends with the count of each code found (a table on a terminal)
and the totals. --code and --severity narrow the findings printed (not the
counts, nor the exit status): --code takes codes, comma-separated;
--severity the lowest severity printed (error, warning or notice). Notices
are counted, and listed only with --severity notice or their --code; --json
holds every finding unless narrowed.

Exit status:
  0  no finding of severity error
  1  at least one error found
  2  usage or I/O error (bad flag, missing store or a folder that is not one,
     a target that names nothing, an ambiguous session id prefix)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.targets = args
			opts.out = cmd.OutOrStdout()
			opts.errOut = cmd.ErrOrStderr()
			opts.table = isTerminal(opts.out)
			return runValidate(opts)
		},
		ValidArgsFunction: completeSessions,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	cmd.Flags().BoolVarP(&opts.quiet, "quiet", "q", false, "print only errors, no summary or progress")
	cmd.Flags().StringSliceVar(&opts.codes, "code", nil, "print only findings of these codes (comma-separated)")
	cmd.Flags().StringVar(&opts.severity, "severity", "", "print only findings of this severity or worse: error, warning, notice")
	addClientFlag(cmd, &opts.client)
	addDesktopFlag(cmd, &opts.desktopDir)
	cmd.RegisterFlagCompletionFunc("code", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, c := range validate.Codes {
			out = append(out, cobra.CompletionWithDesc(string(c.Code), c.Severity.String()))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.RegisterFlagCompletionFunc("severity", cobra.FixedCompletions([]cobra.Completion{"error", "warning", "notice"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// findingFilter is what --code, --severity and --quiet let through.
type findingFilter struct {
	codes map[validate.Code]bool // nil: every code
	min   validate.Severity
	// notices is set when notices are left out by default, not asked
	// to be: the summary says how to list them.
	notices bool
}

func (f findingFilter) keep(x validate.Finding) bool {
	return x.Severity >= f.min && (f.codes == nil || f.codes[x.Code])
}

// newFindingFilter parses --code and --severity.
func newFindingFilter(opts *validateOptions) (findingFilter, error) {
	f := findingFilter{min: validate.Notice}
	if opts.severity != "" {
		if err := f.min.UnmarshalText([]byte(opts.severity)); err != nil {
			return f, fmt.Errorf("--severity %s: not one of error, warning, notice", opts.severity)
		}
	}
	if opts.quiet {
		f.min = validate.Error
	}
	known := map[validate.Code]bool{}
	for _, c := range validate.Codes {
		known[c.Code] = true
	}
	for _, c := range opts.codes {
		for _, c := range strings.Split(c, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			if !known[validate.Code(c)] {
				return f, fmt.Errorf("--code %s: no such code%s", c, closeCodes(c))
			}
			if f.codes == nil {
				f.codes = map[validate.Code]bool{}
			}
			f.codes[validate.Code(c)] = true
		}
	}
	return f, nil
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
	filter, err := newFindingFilter(opts)
	if err != nil {
		return usageError(err)
	}
	// Text lists what needs attention: notices are counted, and listed
	// only when asked for (--severity notice, or their --code). The JSON
	// document holds every finding unless narrowed.
	if !opts.json && opts.severity == "" && len(opts.codes) == 0 && filter.min < validate.Warning {
		filter.min, filter.notices = validate.Warning, true
	}
	client, from, err := resumingClient(opts.client)
	if err != nil {
		return usageError(err)
	}
	vo := validate.Options{Root: root, Targets: opts.targets, Client: client, ClientFrom: from, DesktopDir: desktop.Dir(opts.desktopDir, root)}
	showProgress := len(opts.targets) == 0 && !opts.quiet && isTerminal(opts.errOut)
	if showProgress {
		vo.Progress = func(done, total int) {
			if done == total || done%64 == 0 {
				visible.Raw(opts.errOut, fmt.Sprintf("\rchecking %d/%d files", done, total))
			}
		}
	}
	rep, err := validate.Run(vo)
	if showProgress {
		visible.Raw(opts.errOut, "\r\033[K")
	}
	if err != nil {
		// An unknown target and an unreadable store alike: exit 2.
		return usageError(err)
	}
	failed := rep.Has(validate.Error)
	if opts.json {
		kept := []validate.Finding{}
		for _, f := range rep.Findings {
			if filter.keep(f) {
				kept = append(kept, f)
			}
		}
		rep.Findings = kept
		enc := json.NewEncoder(opts.out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return usageError(err)
		}
	} else {
		printFindings(opts.out, rep, filter, opts.quiet, opts.table)
	}
	if failed {
		return &exitError{code: exitFound}
	}
	return nil
}

// printFindings prints the findings filter keeps, grouped by file, then
// (unless quiet) the count of each code found, as a table when table is
// set, and the totals.
func printFindings(w io.Writer, rep *validate.Report, filter findingFilter, quiet, table bool) {
	last := ""
	shown := 0
	for _, f := range rep.Findings {
		if !filter.keep(f) {
			continue
		}
		shown++
		if f.Path != last && last != "" {
			fmt.Fprintln(w)
		}
		last = f.Path
		loc := f.Path
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
		}
		// A message may quote the file (a damaged uuid, a cwd): its
		// control characters are shown as Go escapes (visible.String).
		fmt.Fprintf(w, "%s: %s %s: %s\n", visible.String(loc), f.Severity, f.Code, visible.String(f.Message))
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
	printCodeCounts(w, rep, table)
	if n := writerDiffers(rep); n > 0 {
		fmt.Fprintf(w, "judged as Claude Code %s resumes the sessions (%s); the versions that wrote them judge %s otherwise (--json: writer, writer_findings)\n",
			rep.Client.Version, rep.Client.From, plural.Count(n, "finding"))
	}
	fmt.Fprintf(w, "%s checked: %s, %s, %s", plural.Count(rep.FilesChecked, "file"),
		plural.Count(rep.Counts["error"], "error"), plural.Count(rep.Counts["warning"], "warning"), plural.Count(rep.Counts["notice"], "notice"))
	notices := 0 // findings listed of severity notice (one may stand for more)
	for _, f := range rep.Findings {
		if f.Severity == validate.Notice {
			notices++
		}
	}
	if n := rep.Counts["notice"]; filter.notices && n > 0 && shown == len(rep.Findings)-notices {
		fmt.Fprintf(w, " (--severity notice lists the %s)", plural.Of(n, "notice"))
	} else if shown < len(rep.Findings) {
		fmt.Fprintf(w, " (%d shown)", shown)
	}
	fmt.Fprintln(w)
}

// writerDiffers counts the findings the versions that wrote their files
// judge otherwise than the resuming client.
func writerDiffers(rep *validate.Report) int {
	n := len(rep.WriterFindings)
	for _, f := range rep.Findings {
		if f.Writer != nil {
			n++
		}
	}
	return n
}

// printCodeCounts prints how many findings of each code the run gave,
// worst severity first, then most found: a table, or one line.
func printCodeCounts(w io.Writer, rep *validate.Report, table bool) {
	type row struct {
		code validate.Code
		sev  validate.Severity
		n    int
	}
	var rows []row
	for _, c := range validate.Codes {
		if n := rep.Counts[string(c.Code)]; n > 0 {
			sev := validate.Notice // the worst a finding of the code has
			for _, f := range rep.Findings {
				if f.Code == c.Code && f.Severity > sev {
					sev = f.Severity
				}
			}
			rows = append(rows, row{c.Code, sev, n})
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].sev != rows[j].sev {
			return rows[i].sev > rows[j].sev
		}
		return rows[i].n > rows[j].n
	})
	if !table {
		var parts []string
		for _, r := range rows {
			parts = append(parts, fmt.Sprintf("%s %d", r.code, r.n))
		}
		fmt.Fprintf(w, "by code: %s\n", strings.Join(parts, ", "))
		return
	}
	width := len("CODE")
	for _, r := range rows {
		if len(r.code) > width {
			width = len(r.code)
		}
	}
	fmt.Fprintf(w, "%-*s  %-8s  %6s\n", width, "CODE", "SEVERITY", "COUNT")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %-8s  %6d\n", width, r.code, r.sev, r.n)
	}
	fmt.Fprintln(w)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := visible.Unwrap(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
