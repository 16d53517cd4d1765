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

Each hit is one line: session (short id), time, role, tool, then the text
around the match, highlighted on a terminal (--color). Brackets say where
else than a main session's message it is: a subagent, thinking, a tool's
input or output, history, a transcript export, a pre-compact history.

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
	var emit func(*search.Hit) error
	if opts.json {
		head, _ := json.Marshal(struct {
			Root    string `json:"root"`
			Pattern string `json:"pattern"`
		}{root, pattern})
		w.Write(head[:len(head)-1])
		w.WriteString(`,"hits":[`)
		first := true
		emit = func(h *search.Hit) error {
			if !first {
				w.WriteByte(',')
			}
			first = false
			w.WriteString("\n  ")
			b, err := marshalHit(h)
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
	} else {
		emit = func(h *search.Hit) error {
			_, err := w.WriteString(formatHit(h, color))
			return err
		}
	}
	st, err := search.Run(so, emit)
	var oe *search.OptionError
	if errors.As(err, &oe) || userError(err) {
		return usageError(err)
	}
	if opts.json {
		if st.Hits > 0 {
			w.WriteString("\n")
		}
		fmt.Fprintf(w, "],\"files_searched\":%d,\"bytes_searched\":%d,\"hit_count\":%d}\n", st.Files, st.Bytes, st.Hits)
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return usageError(err)
	}
	if st.Hits == 0 {
		return &exitError{code: exitFound}
	}
	return nil
}

// hitJSON is a hit in the --json document (docs/search.md).
type hitJSON struct {
	Source    string  `json:"source"`
	Path      string  `json:"path"`
	Line      int     `json:"line"`
	Session   string  `json:"session"`
	Agent     string  `json:"agent,omitempty"`
	Project   string  `json:"project,omitempty"`
	Time      *string `json:"time"`
	Role      string  `json:"role"`
	Tool      string  `json:"tool,omitempty"`
	Kind      string  `json:"kind"`
	Field     string  `json:"field,omitempty"`
	Before    string  `json:"before"`
	Match     string  `json:"match"`
	After     string  `json:"after"`
	CutBefore bool    `json:"cut_before"`
	CutAfter  bool    `json:"cut_after"`
	Count     int     `json:"count"`
}

func marshalHit(h *search.Hit) ([]byte, error) {
	j := hitJSON{Source: string(h.Source), Path: h.Path, Line: h.Line, Session: h.Session, Agent: h.Agent, Project: h.Project,
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
	hlOn  = "\x1b[1;31m"
	hlOff = "\x1b[0m"
)

// formatHit writes one line: session, time, role, tool, [where] snippet.
func formatHit(h *search.Hit, color bool) string {
	var b strings.Builder
	when := "-"
	if !h.Time.IsZero() {
		when = h.Time.Local().Format("2006-01-02 15:04")
	}
	tool := visible.String(h.Tool)
	if tool == "" {
		tool = "-"
	}
	fmt.Fprintf(&b, "%-8s  %-16s  %-9s  %-6s  ", visible.String(shortID(h.Session)), when, visible.String(h.Role), tool)
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
