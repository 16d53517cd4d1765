package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/search"
	"github.com/cfix-dev/cfix/store"
)

type searchOptions struct {
	root       string
	regex      bool
	ignoreCase bool
	role       string
	tool       string
	project    string
	since      string
	until      string
	sessions   []string
	json       bool
	color      string
	limit      int
	files      bool
	heading    bool
	noHeading  bool
	out        io.Writer
	errOut     io.Writer
}

func newSearchCmd() *cobra.Command {
	opts := &searchOptions{}
	cmd := &cobra.Command{
		Use: "search PATTERN",
		Example: `  cfix search 'connection refused'
  cfix search -i --role user --since 7d migration
  cfix search --regex --tool Bash 'git (push|reset)'`,
		Short: "Find text in what people and the model wrote: prompts, answers, thinking, tool inputs and outputs, titles",
		Long: `Search finds PATTERN in the text of a Claude Code store: prompts and answers,
thinking, tool inputs and outputs, titles and summaries, the prompts of
history.jsonl, in main sessions, subagents, transcript exports
(transcripts/ses_*.jsonl) and pre-compact histories. It matches the decoded
text, so a newline, a quote or a non-ASCII character in PATTERN matches what
the JSON escapes, and never matches member names, ids or other metadata.

PATTERN is a literal string, or with --regex a Go regular expression (RE2
syntax, matched against each text whole: (?m) for ^ and $ at line ends,
(?s) for a . that matches newlines). -i ignores case.

  --role user|assistant|tool|title|summary   only that role's text
  --tool NAME      only the inputs and outputs of that tool (any case)
  --project DIR    only the sessions of DIR's project folder (a directory,
                   encoded as Claude Code does, or a project folder)
  --session S      only that session (an id, a unique prefix, a path, latest,
                   or a transcript export's name); repeatable
  --since T, --until T   an RFC 3339 time, a date (2026-01-29: --until takes
                   the whole day), or a duration back from now (7d, 12h, 30m)

  --limit N        stop after N hits (with -l, N sessions)
  -l               list the sessions that hold a hit, not the hits: short
                   id, hits, project, title

Each hit is one line: time, role, tool, then the text around the match,
highlighted on a terminal (--color). Brackets say where else than a main
session's message it is: a subagent, thinking, a tool's input or output,
history, a transcript export, a pre-compact history. On a terminal the hits
are grouped by session, under a line with its short id, project and title
(--heading); else (--no-heading) each line starts with the short id and
ends its fixed columns with the project.

Exit status: 0 a hit, 1 none, 2 usage or I/O error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.out = cmd.OutOrStdout()
			opts.errOut = cmd.ErrOrStderr()
			return runSearch(opts, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.BoolVar(&opts.regex, "regex", false, "PATTERN is a regular expression (Go RE2 syntax)")
	f.BoolVarP(&opts.ignoreCase, "ignore-case", "i", false, "ignore case")
	f.StringVar(&opts.role, "role", "", "only text of this role: user, assistant, tool, title or summary")
	f.StringVar(&opts.tool, "tool", "", "only inputs and outputs of this tool")
	f.StringVar(&opts.project, "project", "", "only sessions of this directory's project folder")
	f.StringVar(&opts.since, "since", "", "only text written at or after T (RFC 3339, a date, or 7d, 12h)")
	f.StringVar(&opts.until, "until", "", "only text written at or before T (RFC 3339, a date, or 7d, 12h)")
	f.StringArrayVar(&opts.sessions, "session", nil, "only this session (id, prefix, path, latest); repeatable")
	f.BoolVar(&opts.json, "json", false, "print one JSON document")
	f.StringVar(&opts.color, "color", "auto", "highlight matches: auto (on a terminal), always or never")
	f.IntVar(&opts.limit, "limit", 0, "stop after N hits (with -l, N sessions; 0: all)")
	f.BoolVarP(&opts.files, "files-with-matches", "l", false, "list the sessions with a hit (short id, hits, project, title), not the hits")
	f.BoolVar(&opts.heading, "heading", false, "group the hits by session under a heading (the default on a terminal)")
	f.BoolVar(&opts.noHeading, "no-heading", false, "one line per hit, its session and project on it (the default off a terminal)")
	cmd.MarkFlagsMutuallyExclusive("heading", "no-heading")
	cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions(search.Roles, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("session", completeSessions)
	cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runSearch(opts *searchOptions, pattern string) error {
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	so := search.Options{Root: root, Pattern: pattern, Regex: opts.regex, IgnoreCase: opts.ignoreCase,
		Role: opts.role, Tool: opts.tool, Project: opts.project, Sessions: opts.sessions}
	now := time.Now()
	if opts.since != "" {
		if so.Since, err = search.ParseTime(opts.since, now, false); err != nil {
			return usageError(fmt.Errorf("--since: %w", err))
		}
	}
	if opts.until != "" {
		if so.Until, err = search.ParseTime(opts.until, now, true); err != nil {
			return usageError(fmt.Errorf("--until: %w", err))
		}
	}
	color := false
	switch opts.color {
	case "always":
		color = true
	case "auto":
		color = isTerminal(opts.out) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	case "never":
	default:
		return usageError(fmt.Errorf("--color %q: want auto, always or never", opts.color))
	}
	if opts.limit < 0 {
		return usageError(fmt.Errorf("--limit %d: not a number of hits", opts.limit))
	}
	heading := opts.heading || !opts.noHeading && !opts.files && isTerminal(opts.out)
	out := opts.out
	if color && !opts.json {
		// formatHit escapes what the store holds itself: the highlight
		// is cfix's own.
		out = visible.Unwrap(out)
	}
	w := bufio.NewWriterSize(out, 64<<10)
	errW := opts.errOut
	so.Warn = func(msg string) {
		w.Flush()
		fmt.Fprintf(errW, "cfix: warning: %s\n", msg)
	}
	// What the hits say of their sessions (short id, title, project),
	// from the catalog: only the sessions with a hit are glanced at.
	cat := catalog.Open(root)
	// A cache that cannot be written costs only the next search's time.
	defer cat.Close()
	abouts := map[string]catalog.About{}
	about := func(h *search.Hit) catalog.About {
		k := h.Session + "\x00" + h.Project
		a, ok := abouts[k]
		if !ok {
			if h.Session != "" {
				a, _ = cat.About(h.Session, h.Project)
			}
			if a.Short == "" {
				a.Short = shortID(h.Session)
			}
			abouts[k] = a
		}
		return a
	}
	// -l: the sessions with a hit, in the order of their first hit.
	var rows []*sessionRow
	bySession := map[string]*sessionRow{}
	hits, limited := 0, false
	errLimit := errors.New("limit reached")
	// count counts a hit, or its session with -l; false once past --limit.
	count := func(h *search.Hit) bool {
		if opts.files {
			k := h.Session
			if k == "" {
				k = h.Path
			}
			r := bySession[k]
			if r == nil {
				if opts.limit > 0 && len(rows) == opts.limit {
					limited = true
					return false
				}
				r = &sessionRow{id: h.Session, folder: h.Project, about: about(h)}
				bySession[k] = r
				rows = append(rows, r)
			}
			r.hits++
			hits++
			return true
		}
		if opts.limit > 0 && hits == opts.limit {
			limited = true
			return false
		}
		hits++
		return true
	}
	var emit func(*search.Hit) error
	switch {
	case opts.files:
		emit = func(h *search.Hit) error {
			if !count(h) {
				return errLimit
			}
			return nil
		}
	case opts.json:
		head, _ := json.Marshal(struct {
			Root    string `json:"root"`
			Pattern string `json:"pattern"`
		}{root, pattern})
		w.Write(head[:len(head)-1])
		w.WriteString(`,"hits":[`)
		emit = func(h *search.Hit) error {
			if !count(h) {
				return errLimit
			}
			if hits > 1 {
				w.WriteByte(',')
			}
			w.WriteString("\n  ")
			b, err := marshalHit(h, about(h))
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
	default:
		group := "\x01" // the session of the last hit written
		width := termWidth(opts.out)
		emit = func(h *search.Hit) error {
			if !count(h) {
				return errLimit
			}
			a := about(h)
			if !heading {
				_, err := w.WriteString(formatHit(h, a, color))
				return err
			}
			k := h.Session
			if k == "" {
				k = "\x00" + h.Path
			}
			if k != group {
				if group != "\x01" {
					w.WriteByte('\n')
				}
				group = k
				w.WriteString(headingLine(a, color, width))
			}
			_, err := w.WriteString("  " + formatLine(h, color, ""))
			return err
		}
	}
	st, err := search.Run(so, emit)
	if errors.Is(err, errLimit) {
		err = nil
	}
	var oe *search.OptionError
	if errors.As(err, &oe) || userError(err) {
		return usageError(err)
	}
	switch {
	case opts.files && opts.json:
		head, _ := json.Marshal(struct {
			Root    string `json:"root"`
			Pattern string `json:"pattern"`
		}{root, pattern})
		w.Write(head[:len(head)-1])
		w.WriteString(`,"sessions":[`)
		for i, r := range rows {
			if i > 0 {
				w.WriteByte(',')
			}
			b, _ := json.Marshal(sessionJSON{Session: r.id, Short: r.about.Short, Project: r.folder, ProjectPath: r.about.ProjectPath,
				Title: r.about.Title, Hits: r.hits})
			w.WriteString("\n  ")
			w.Write(b)
		}
		if len(rows) > 0 {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "],\"files_searched\":%d,\"bytes_searched\":%d,\"hit_count\":%d,\"session_count\":%d,\"limit_reached\":%t}\n",
			st.Files, st.Bytes, hits, len(rows), limited)
	case opts.json:
		if hits > 0 {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "],\"files_searched\":%d,\"bytes_searched\":%d,\"hit_count\":%d,\"limit_reached\":%t}\n", st.Files, st.Bytes, hits, limited)
	case opts.files:
		writeSessions(w, rows, termWidth(opts.out))
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return usageError(err)
	}
	if limited && !opts.json {
		what := plural.Count(opts.limit, "hit")
		if opts.files {
			what = plural.Count(opts.limit, "session")
		}
		fmt.Fprintf(errW, "cfix: stopped at --limit %s; more match (raise --limit, or narrow with --project, --role, --tool, --since)\n", what)
	}
	if hits == 0 {
		return &exitError{code: exitFound}
	}
	return nil
}

// sessionJSON is a session of the --json document of search -l.
type sessionJSON struct {
	Session     string `json:"session"`
	Short       string `json:"short_id"`
	Project     string `json:"project,omitempty"`
	ProjectPath string `json:"project_path,omitempty"`
	Title       string `json:"title,omitempty"`
	Hits        int    `json:"hits"`
}

// sessionRow is a session of search -l: its id and folder, what the
// catalog says of it, its hits.
type sessionRow struct {
	id, folder string
	about      catalog.About
	hits       int
}

// writeSessions writes the sessions of search -l, one a line: short id,
// hits, project, title (cut to the terminal's width, when one).
func writeSessions(w io.Writer, rows []*sessionRow, width int) {
	idw, hw, pw := 0, 0, 0
	for _, r := range rows {
		idw = max(idw, cells(visible.String(r.about.Short)))
		hw = max(hw, len(plural.Count(r.hits, "hit")))
		pw = max(pw, cells(projectCell(r.about)))
	}
	for _, r := range rows {
		line := pad(visible.String(r.about.Short), idw) + "  " + pad(plural.Count(r.hits, "hit"), hw) + "  " + pad(projectCell(r.about), pw) + "  "
		title := textCell(r.about.Title)
		if width > 0 {
			title = cut(title, max(12, width-cells(line)))
		}
		fmt.Fprintln(w, strings.TrimRight(line+title, " "))
	}
}

// projectCell is the project of a session as search shows it: its path,
// "-" when none is known.
func projectCell(a catalog.About) string {
	if a.ProjectPath == "" {
		return "-"
	}
	return visible.String(a.ProjectPath)
}

// pad pads s with spaces to n columns.
func pad(s string, n int) string {
	if k := cells(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// headingLine is the line above the hits of a session: its short id,
// project and title (cut to the terminal's width, when one), bold when
// in color.
func headingLine(a catalog.About, color bool, width int) string {
	line := visible.String(a.Short)
	if a.ProjectPath != "" {
		line += "  " + visible.String(a.ProjectPath)
	}
	if a.Title != "" {
		line += "  " + textCell(a.Title)
	}
	if width > 0 {
		line = cut(line, width)
	}
	if color {
		line = hlHead + line + hlOff
	}
	return line + "\n"
}

// hitJSON is a hit in the --json document (docs/search.md).
type hitJSON struct {
	Source  string `json:"source"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Session string `json:"session"`
	Agent   string `json:"agent,omitempty"`
	Project string `json:"project,omitempty"`
	// ProjectPath and Title are its session's (the catalog's).
	ProjectPath string  `json:"project_path,omitempty"`
	Title       string  `json:"title,omitempty"`
	Time        *string `json:"time"`
	Role        string  `json:"role"`
	Tool        string  `json:"tool,omitempty"`
	Kind        string  `json:"kind"`
	Field       string  `json:"field,omitempty"`
	Before      string  `json:"before"`
	Match       string  `json:"match"`
	After       string  `json:"after"`
	CutBefore   bool    `json:"cut_before"`
	CutAfter    bool    `json:"cut_after"`
	Count       int     `json:"count"`
}

func marshalHit(h *search.Hit, a catalog.About) ([]byte, error) {
	j := hitJSON{Source: string(h.Source), Path: h.Path, Line: h.Line, Session: h.Session, Agent: h.Agent, Project: h.Project,
		ProjectPath: a.ProjectPath, Title: a.Title,
		Role: h.Role, Tool: h.Tool, Kind: h.Kind, Field: h.Field, Before: h.Before, Match: h.Match, After: h.After,
		CutBefore: h.CutBefore, CutAfter: h.CutAfter, Count: h.Count}
	if !h.Time.IsZero() {
		t := h.Time.UTC().Format(time.RFC3339Nano)
		j.Time = &t
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

const (
	hlOn   = "\x1b[1;31m"
	hlHead = "\x1b[1m"
	hlOff  = "\x1b[0m"
)

// formatHit writes the line of a hit without a heading: its session's
// short id, time, role, tool, its session's project, [where] snippet.
func formatHit(h *search.Hit, a catalog.About, color bool) string {
	return pad(visible.String(a.Short), 8) + "  " + formatLine(h, color, projectCell(a))
}

// formatLine writes the line of a hit under its session's heading: time,
// role, tool, the project when one is given, [where] snippet.
func formatLine(h *search.Hit, color bool, project string) string {
	var b strings.Builder
	when := "-"
	if !h.Time.IsZero() {
		when = h.Time.Local().Format("2006-01-02 15:04")
	}
	tool := visible.String(h.Tool)
	if tool == "" {
		tool = "-"
	}
	fmt.Fprintf(&b, "%-16s  %-9s  %-6s  ", when, visible.String(h.Role), tool)
	if project != "" {
		b.WriteString(project + "  ")
	}
	var marks []string
	switch h.Source {
	case search.SourceSubagent:
		marks = append(marks, "subagent "+visible.String(h.Agent))
	case search.SourceHistory:
		marks = append(marks, "history")
	case search.SourceExport:
		marks = append(marks, "transcript export")
	case search.SourcePreCompact:
		marks = append(marks, "pre-compact history")
	}
	switch h.Kind {
	case search.KindThinking:
		marks = append(marks, "thinking")
	case search.KindToolInput, search.KindToolOutput:
		m := "output"
		if h.Kind == search.KindToolInput {
			m = "input"
			if h.Field != "" {
				m += " " + visible.String(h.Field)
			}
		}
		marks = append(marks, m)
	}
	if len(marks) > 0 {
		b.WriteString("[" + strings.Join(marks, ", ") + "] ")
	}
	if h.CutBefore {
		b.WriteString("…")
	}
	visible.Write(&b, h.Before)
	if color {
		b.WriteString(hlOn)
	}
	visible.Write(&b, h.Match)
	if color {
		b.WriteString(hlOff)
	}
	visible.Write(&b, h.After)
	if h.CutAfter {
		b.WriteString("…")
	}
	b.WriteByte('\n')
	return b.String()
}

// shortID shortens a session id as git shortens hashes: 8 characters of a
// UUID, 12 of another name.
func shortID(id string) string {
	switch {
	case id == "":
		return "-"
	case store.IsUUID(id):
		return id[:8]
	case len(id) > 12:
		return id[:12]
	}
	return id
}
