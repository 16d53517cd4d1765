package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/usage"
	"github.com/cfix-dev/cfix/usage/pricelist"
)

type usageOptions struct {
	root, archiveDir    string
	since, until        string
	project, timezone   string
	prices, html        string
	breakdown, json     bool
	heatmap, noArchived bool
	group               string
	out, errOut         io.Writer
	now                 time.Time
}

func newUsageCmd() *cobra.Command {
	opts := &usageOptions{}
	cmd := &cobra.Command{
		Use: "usage [daily|weekly|monthly|session|project|model|blocks]",
		Example: `  cfix usage monthly --breakdown
  cfix usage blocks --since 2026-11-01
  cfix usage session --project ~/work/app
  cfix usage --heatmap --html usage.html`,
		Short: "Show what Claude Code cost: tokens and cost by day, week, month, session, project, model or 5-hour block",
		Long: `Usage adds up the tokens of every reply of the API the store's transcripts
hold, and of the sessions cfix archive took out of it (the history Claude
Code's start-up sweep would have deleted; --no-archived leaves them out),
and prices them from a price list of Anthropic's published prices.

A reply is counted once, by its message id, with the usage of its last
written entry: streamed entries of one reply repeat its id and grow its
output count, and a copy of a reply in a fork, a resumed session or a
subagent file is the same reply. <synthetic> and API error entries count
nothing. Every field of the usage is read: input, output, cache writes for
5 minutes and for an hour, cache reads, web search and fetch requests.

Cost: each model's prices per token, its cache writes by duration, the
long-context rates of a request whose prompt is over a model's threshold,
and each web search request. A model the list does not know (another
provider's, a new one) is shown with its tokens and "no price", never
guessed; --prices FILE reads another list (the format of usage/prices.json).

Rows: daily (the default), weekly (weeks from Monday), monthly, session,
project, model, or blocks (the 5-hour billing blocks from the hour of their
first reply; the active one says what is left of it). Days are in
--timezone (default the local zone). What each file gave is kept in cfix's
cache by file identity, so a report of a store that has not changed reads
no transcript.

Exit status: 0; 1 when a file or archive could not be read (the report
counts the rest and names it); 2 for a usage or I/O error.`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"daily", "weekly", "monthly", "session", "project", "model", "blocks"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.group = "daily"
			if len(args) == 1 {
				opts.group = args[0]
			}
			opts.out, opts.errOut, opts.now = cmd.OutOrStdout(), cmd.ErrOrStderr(), time.Now()
			return runUsage(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&opts.since, "since", "", "count from this day on (YYYY-MM-DD or YYYYMMDD)")
	f.StringVar(&opts.until, "until", "", "count up to this day (YYYY-MM-DD or YYYYMMDD)")
	f.StringVar(&opts.project, "project", "", "count only the sessions of this project (a directory or a project folder)")
	f.StringVar(&opts.timezone, "timezone", "", "the time zone of days (an IANA name such as Europe/Paris, or UTC; default local)")
	f.BoolVar(&opts.breakdown, "breakdown", false, "split each row by model")
	f.BoolVar(&opts.json, "json", false, "print one JSON document")
	f.BoolVar(&opts.heatmap, "heatmap", false, "draw a calendar of the cost of each day")
	f.StringVar(&opts.html, "html", "", "write the report as one HTML page with charts to FILE")
	f.StringVar(&opts.prices, "prices", "", "price list to use instead of the built-in one (JSON, as usage/prices.json)")
	f.BoolVar(&opts.noArchived, "no-archived", false, "leave out the sessions cfix archive holds")
	f.StringVar(&opts.archiveDir, "archive-dir", "", "archive folder (default $CFIX_ARCHIVE_DIR, else ~/.local/share/cfix/archive)")
	return cmd
}

// usageDay reads a --since or --until day.
func usageDay(flag, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02"), nil
		}
	}
	return "", fmt.Errorf("--%s %s: not a day (YYYY-MM-DD or YYYYMMDD)", flag, s)
}

func runUsage(opts *usageOptions) error {
	g, ok := usage.Groups[opts.group]
	if !ok {
		return usageError(fmt.Errorf("usage %s: not a report (daily, weekly, monthly, session, project, model or blocks)", opts.group))
	}
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	var filter usage.Filter
	if filter.Since, err = usageDay("since", opts.since); err != nil {
		return usageError(err)
	}
	if filter.Until, err = usageDay("until", opts.until); err != nil {
		return usageError(err)
	}
	filter.Loc = time.Local
	if opts.timezone != "" {
		if filter.Loc, err = time.LoadLocation(opts.timezone); err != nil {
			return usageError(fmt.Errorf("--timezone %s: %w", opts.timezone, err))
		}
	}
	if opts.project != "" {
		t, err := store.NewResolver(root, nil).Resolve(opts.project)
		if err != nil {
			return usageError(err)
		}
		if t.Kind != store.TargetProject {
			return usageError(fmt.Errorf("--project %s names a %s: give a directory or a project folder", opts.project, t.Kind))
		}
		filter.Project = t.Project
	}
	filter.NoArchived = opts.noArchived
	list := usage.Builtin
	if opts.prices != "" {
		b, err := os.ReadFile(opts.prices)
		if err != nil {
			return usageError(err)
		}
		if list, err = pricelist.Parse(opts.prices, b); err != nil {
			return usageError(err)
		}
	}
	copts := usage.Options{Root: root, CacheDir: catalog.CacheDir()}
	if !opts.noArchived {
		if copts.ArchiveDir, err = archive.DefaultDir(); opts.archiveDir != "" {
			copts.ArchiveDir = opts.archiveDir
		} else if err != nil {
			copts.ArchiveDir = ""
		}
	}
	defer catalog.Loading()()
	set, err := usage.Collect(copts)
	if err != nil {
		return usageError(err)
	}
	if opts.heatmap || opts.html != "" {
		if opts.group != "daily" && opts.heatmap {
			return usageError(fmt.Errorf("--heatmap draws days: it takes no %s", opts.group))
		}
	}
	rep := usage.Build(set, g, filter, usage.NewPricer(list), opts.breakdown, opts.now)
	view := usage.View{Now: opts.now, Color: isTerminal(opts.out)}
	if g == usage.Session || g == usage.Project || opts.html != "" {
		view.ProjectPath = projectPaths(root)
	}
	switch {
	case opts.json:
		if err := jsonOut(opts.out, usage.DocOf(rep)); err != nil {
			return err
		}
	case opts.html != "":
		days := rep
		if g != usage.Day {
			days = usage.Build(set, usage.Day, filter, usage.NewPricer(list), false, opts.now)
		}
		if err := writeUsageHTML(opts.html, rep, days, view); err != nil {
			return usageError(err)
		}
		fmt.Fprintf(opts.out, "wrote %s: %s over %s, %s\n", visible.String(opts.html), usage.CostWords(&rep.Total),
			plural.Count(len(days.Rows), "day"), nWords(rep.Total.Replies, "reply", "replies"))
	case opts.heatmap:
		view.Heatmap(opts.out, rep)
	default:
		view.Table(opts.out, rep)
	}
	if !opts.json && opts.html == "" {
		usageFooter(opts.out, set, rep, opts)
	}
	for _, w := range set.Warnings {
		fmt.Fprintf(opts.errOut, "cfix usage: %s\n", visible.String(w.Error()))
	}
	if set.CacheErr != nil {
		fmt.Fprintf(opts.errOut, "cfix usage: %s (the next report reads the transcripts again)\n", visible.String(set.CacheErr.Error()))
	}
	if len(set.Warnings) > 0 {
		return &exitError{code: exitFound, err: fmt.Errorf("%s could not be read; the report counts the rest", plural.Count(len(set.Warnings), "file"))}
	}
	return nil
}

// usageFooter says where the figures come from: the archive's share, the
// models without a price, the price list.
func usageFooter(w io.Writer, set *usage.Set, rep *usage.Report, opts *usageOptions) {
	var notes []string
	if rep.Archived > 0 {
		notes = append(notes, fmt.Sprintf("%s of %s from cfix's archive (history the sweep would have deleted)",
			nWords(rep.Archived, "reply", "replies"), plural.Count(rep.ArchivedSessions, "session")))
	}
	if len(rep.Total.UnpricedModels) > 0 {
		notes = append(notes, "no price for "+visible.String(strings.Join(rep.Total.UnpricedModels, ", ")))
	}
	src := "prices of " + rep.Prices.Date
	if opts.prices != "" {
		src += " from " + visible.String(opts.prices)
	}
	notes = append(notes, src)
	fmt.Fprintf(w, "\n%s in %s, %s; %s.\n", nWords(rep.Total.Replies, "reply", "replies"), plural.Count(set.Files, "transcript"),
		plural.Count(set.Archives, "archive"), strings.Join(notes, "; "))
}

// projectPaths names project folders by their real paths, as cfix ls does.
func projectPaths(root string) func(string) string {
	c := catalog.Open(root)
	st, err := c.Store()
	c.Close()
	if err != nil {
		return nil
	}
	return func(folder string) string {
		if folder == "" {
			return ""
		}
		return st.ProjectPath(folder)
	}
}

// nWords is n and the word for n of them.
func nWords(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%s %s", usage.Thousands(int64(n)), many)
}
