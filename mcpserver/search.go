package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/search"
	"github.com/cfix-dev/cfix/store"
)

const searchDescription = `Search the user's past Claude Code sessions (prompts, answers, thinking, tool inputs and outputs, titles) for a text. Use it to recall what was discussed, decided or run before, in this project or any.

Sessions whose title or first prompt matches come first (match "title" or "first prompt"), then the places in the conversations, in file order. Each hit has the session id (give it to read_session to read around it), the session's title, the project path, the time, the role (user, assistant, tool, title, summary) and a snippet around the match.

By default it searches the client's current project when the store has sessions of it, else every project; project "all" searches every project. The answer stays within max_chars and says when hits were left out: narrow the query (role, tool, since, project) or raise limit/max_chars.`

// SearchInput is what search_sessions takes.
type SearchInput struct {
	Query      string `json:"query" jsonschema:"the text to find, a literal string (case-sensitive unless ignore_case); a regular expression when regex is true"`
	Regex      bool   `json:"regex,omitempty" jsonschema:"query is a Go (RE2) regular expression"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"ignore case"`
	Project    string `json:"project,omitempty" jsonschema:"the directory of the project to search (where its sessions were started); \"all\" for every project; default: the client's current project when it has sessions, else every project"`
	Since      string `json:"since,omitempty" jsonschema:"only text written at or after this time: RFC 3339, a date (2026-01-29), or a duration back from now (7d, 12h, 30m)"`
	Until      string `json:"until,omitempty" jsonschema:"only text written at or before this time: RFC 3339, a date (the whole day), or a duration back from now"`
	Role       string `json:"role,omitempty" jsonschema:"only text of this role: user, assistant, tool, title or summary"`
	Tool       string `json:"tool,omitempty" jsonschema:"only the inputs and outputs of this tool (Bash, Edit, Read, ...)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"the most hits to return (default 20, at most 200)"`
	MaxChars   int    `json:"max_chars,omitempty" jsonschema:"the most characters of hits to return (default 8000, at most 100000)"`
}

// SearchHit is one hit of search_sessions.
type SearchHit struct {
	Session string `json:"session"`
	Title   string `json:"title,omitempty"`
	Project string `json:"project,omitempty"`
	Time    string `json:"time,omitempty"`
	Role    string `json:"role"`
	Match   string `json:"match"` // "title", "first prompt", or where in the conversation
	Tool    string `json:"tool,omitempty"`
	Snippet string `json:"snippet"`
}

// SearchOutput is what search_sessions returns.
type SearchOutput struct {
	Scope string      `json:"scope"`
	Hits  []SearchHit `json:"hits"`
	// Cut says that hits were left out, and why.
	Cut  string `json:"cut,omitempty"`
	Note string `json:"note,omitempty"`
}

const (
	defaultLimit    = 20
	maxLimit        = 200
	defaultMaxChars = 8000
	maxMaxChars     = 100000
	snippetChars    = 300
)

// errFull stops a search whose answer is full.
var errFull = errors.New("answer full")

func (s *server) search(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	if err := bounded(arg{"query", in.Query, maxQuery}, arg{"project", in.Project, maxName}, arg{"since", in.Since, maxWord},
		arg{"until", in.Until, maxWord}, arg{"role", in.Role, maxWord}, arg{"tool", in.Tool, maxWord}); err != nil {
		return nil, out, err
	}
	if in.Query == "" {
		return nil, out, toolError("query is empty: give the text to find")
	}
	limit := clamp(in.Limit, defaultLimit, maxLimit)
	budget := clamp(in.MaxChars, defaultMaxChars, maxMaxChars)
	match, err := matcher(in.Query, in.Regex, in.IgnoreCase)
	if err != nil {
		return nil, out, toolError("query %q is not a valid regular expression (%v): fix it, or search for it literally with regex false", in.Query, err)
	}
	conf := store.NewConfine(s.opts.Root)
	so := search.Options{Root: s.opts.Root, Pattern: in.Query, Regex: in.Regex, IgnoreCase: in.IgnoreCase, Role: in.Role, Tool: in.Tool,
		Skip: func(path string) bool { _, out := conf.Outside(path); return out }}
	if s.opts.Redact != nil {
		so.Redact = s.opts.Redact.Bytes
	}
	now := time.Now()
	if in.Since != "" {
		if so.Since, err = search.ParseTime(in.Since, now, false); err != nil {
			return nil, out, toolError("since %q: %v; give an RFC 3339 time, a date like 2026-01-29, or a duration like 7d", in.Since, err)
		}
	}
	if in.Until != "" {
		if so.Until, err = search.ParseTime(in.Until, now, true); err != nil {
			return nil, out, toolError("until %q: %v; give an RFC 3339 time, a date like 2026-01-29, or a duration like 7d", in.Until, err)
		}
	}
	// The content search runs beside the listing of the store and the
	// glance at its sessions (for the metadata hits, which come first):
	// it keeps its first limit hits, which get their titles and project
	// paths after. Every project's search starts at once; a project's
	// once its folder is known.
	var sc *scope
	if in.Project != "all" {
		var words string
		if sc, words, err = s.scopeOf(ctx, req, in.Project); err != nil {
			return nil, out, err
		}
		out.Scope = words
		if sc.folder != "" {
			// The folder by its path in the store: never a name the
			// search resolves against the working directory.
			so.Project = filepath.Join(store.ProjectsDir(s.opts.Root), sc.folder)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type pending struct {
		hit              SearchHit
		session, project string
	}
	var content []pending
	more := false // the content search found more than it kept
	done := make(chan error, 1)
	go func() {
		_, err := search.Run(so, func(h *search.Hit) error {
			if err := sctx.Err(); err != nil {
				return err
			}
			if len(content) >= limit {
				more = true
				return errFull
			}
			hit := SearchHit{Session: h.Session, Time: stamp(h.Time), Role: h.Role, Match: where(h), Tool: h.Tool}
			var b strings.Builder
			if h.CutBefore {
				b.WriteString("…")
			}
			b.WriteString(h.Before + h.Match + h.After)
			if h.CutAfter {
				b.WriteString("…")
			}
			hit.Snippet = clip(b.String(), snippetChars)
			content = append(content, pending{hit, h.Session, h.Project})
			return nil
		})
		done <- err
	}()
	// stopped ends the content search before an early answer.
	stopped := func() { cancel(); <-done }
	if sc == nil {
		var words string
		if sc, words, err = s.scopeOf(ctx, req, in.Project); err != nil {
			stopped()
			return nil, out, err
		}
		out.Scope = words
	}

	cat := catalog.Open(s.opts.Root)
	defer cat.Close()
	ss := store.SessionsWith(sc.layout, nil, cat.Cache)
	// A project's hits are all in its folder: its sessions name its path.
	paths := projectPaths(sc.layout, ss)
	titles := map[string]string{}
	for i := range ss {
		ss[i].Title, ss[i].FirstPrompt = s.redactText(ss[i].Title), s.redactText(ss[i].FirstPrompt)
		if si := ss[i]; si.Title != "" {
			titles[si.Session] = si.Title
		}
	}
	used := 0
	add := func(h SearchHit) bool {
		b, _ := json.Marshal(h)
		if len(out.Hits) >= limit {
			out.Cut = limitCut(limit)
			return false
		}
		if used+len(b) > budget {
			out.Cut = fmt.Sprintf("stopped at %d characters (max_chars %d) after %s; raise max_chars, or narrow the search (project, role, tool, since)", used, budget, plural.Count(len(out.Hits), "hit"))
			return false
		}
		used += len(b)
		out.Hits = append(out.Hits, h)
		return true
	}
	// Metadata first: titles and first prompts, newest session first.
	if in.Role == "" && in.Tool == "" {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].LastActive.After(ss[j].LastActive) })
		for _, si := range ss {
			if si.Hidden() || si.Side() || !so.Since.IsZero() && si.LastActive.Before(so.Since) || !so.Until.IsZero() && si.Started.After(so.Until) {
				continue
			}
			h := SearchHit{Session: si.Session, Title: si.Title, Project: paths[si.Project], Time: stamp(si.LastActive)}
			if a, b, ok := match(si.Title); ok {
				h.Role, h.Match, h.Snippet = "title", "title", snippet(si.Title, a, b)
			} else if a, b, ok := match(si.FirstPrompt); ok {
				h.Role, h.Match, h.Snippet = "user", "first prompt", snippet(si.FirstPrompt, a, b)
			} else {
				continue
			}
			if !add(h) {
				stopped()
				return nil, out, nil
			}
		}
	}
	err = <-done
	full := false
	for _, p := range content {
		p.hit.Title, p.hit.Project = titles[p.session], paths[p.project]
		if !add(p.hit) {
			full = true
			break
		}
	}
	if more && !full {
		out.Cut = limitCut(limit)
	}
	var oe *search.OptionError
	switch {
	case errors.Is(err, errFull):
	case errors.Is(err, context.Canceled) && ctx.Err() == nil:
	case errors.As(err, &oe):
		return nil, out, toolError("%s", oe.Msg)
	case err != nil && len(out.Hits) == 0:
		return nil, out, toolError("search failed: %v", err)
	case err != nil:
		out.Note = "some files could not be read: " + clip(err.Error(), 500)
	}
	if out.Hits == nil {
		out.Hits = []SearchHit{}
		out.Note = "no hits in " + out.Scope + `; try ignore_case, fewer words, project "all", or a regex`
	}
	return nil, out, nil
}

// limitCut says that the answer stopped at limit hits.
func limitCut(limit int) string {
	return fmt.Sprintf("stopped at limit %s; raise limit, or narrow the search (project, role, tool, since)", plural.Count(limit, "hit"))
}

// where says where in a transcript a content hit is.
func where(h *search.Hit) string {
	var w []string
	switch h.Source {
	case search.SourceSubagent:
		w = append(w, "subagent "+h.Agent)
	case search.SourceHistory:
		w = append(w, "prompt history")
	case search.SourceExport:
		w = append(w, "transcript export")
	case search.SourcePreCompact:
		w = append(w, "pre-compact history")
	}
	switch h.Kind {
	case search.KindThinking:
		w = append(w, "thinking")
	case search.KindToolInput:
		w = append(w, "tool input")
	case search.KindToolOutput:
		w = append(w, "tool output")
	default:
		w = append(w, "message")
	}
	return strings.Join(w, ", ")
}

// matcher returns a function that finds the query in a text.
func matcher(q string, regex, fold bool) (func(string) (int, int, bool), error) {
	if !regex {
		q = regexp.QuoteMeta(q)
	}
	if fold {
		q = "(?i)" + q
	}
	re, err := regexp.Compile(q)
	if err != nil {
		return nil, err
	}
	return func(s string) (int, int, bool) {
		if s == "" {
			return 0, 0, false
		}
		loc := re.FindStringIndex(s)
		if loc == nil {
			return 0, 0, false
		}
		return loc[0], loc[1], true
	}, nil
}

// snippet is the text around s[a:b], at most snippetChars long.
func snippet(s string, a, b int) string {
	from, to := max(0, a-snippetChars/3), min(len(s), b+snippetChars/2)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	t := s[from:to]
	if from > 0 {
		t = "…" + t
	}
	if to < len(s) {
		t += "…"
	}
	return clip(t, snippetChars+10)
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func clamp(v, def, most int) int {
	switch {
	case v <= 0:
		return def
	case v > most:
		return most
	}
	return v
}
