package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

const listDescription = `List the user's past Claude Code sessions, newest first (stubs, which hold no conversation, last): session id, title, project path, when it started and was last active, how many messages, and its health ("ok", or errors and warnings that session_health explains).

By default it lists the client's current project when the store has sessions of it, else every project; project "all" lists every project. Give a session id to read_session to read it.`

// ListInput is what list_sessions takes.
type ListInput struct {
	Project string `json:"project,omitempty" jsonschema:"the directory of the project to list (where its sessions were started); \"all\" for every project; default: the client's current project when it has sessions, else every project"`
	Limit   int    `json:"limit,omitempty" jsonschema:"the most sessions to return (default 50, at most 500)"`
}

// SessionRow is one session of list_sessions.
type SessionRow struct {
	Session    string `json:"session"`
	Title      string `json:"title"`
	Project    string `json:"project"`
	Started    string `json:"started,omitempty"`
	LastActive string `json:"last_active"`
	Messages   *int   `json:"messages,omitempty"`
	Health     string `json:"health"`
	Live       bool   `json:"live,omitempty"`
}

// ListOutput is what list_sessions returns.
type ListOutput struct {
	Scope    string       `json:"scope"`
	Sessions []SessionRow `json:"sessions"`
	Total    int          `json:"total"`
	Cut      string       `json:"cut,omitempty"`
}

func (s *server) list(ctx context.Context, req *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	var out ListOutput
	if err := bounded(arg{"project", in.Project, maxName}); err != nil {
		return nil, out, err
	}
	sc, words, err := s.scopeOf(ctx, req, in.Project)
	if err != nil {
		return nil, out, err
	}
	out.Scope = words
	// Through the catalog's cache: a store that has not changed since
	// the last listing is not read again.
	cat := catalog.Open(s.opts.Root)
	defer cat.Close()
	ss, err := cat.Sessions(sc.layout, true)
	if err != nil {
		// Which sessions are live cannot be told: listed as none.
		ss = store.SessionsWith(sc.layout, nil, cat.Cache)
	}
	// The sessions listed are all in the scope's folders, which their
	// sessions name the paths of.
	paths := projectPaths(sc.layout, ss)
	// Newest first, the stubs last, as every listing has them.
	catalog.SortSessions(ss, "last")
	limit := clamp(in.Limit, 50, 500)
	out.Sessions = []SessionRow{}
	for i := range ss {
		si := &ss[i]
		if si.Hidden() || si.Side() {
			continue
		}
		out.Total++
		if len(out.Sessions) >= limit {
			continue
		}
		r := SessionRow{Session: si.Session, Title: clip(s.redactText(si.Title), 200), Project: paths[si.Project], Started: stamp(si.Started),
			LastActive: stamp(si.LastActive), Health: healthWords(si.Errors(), si.Warnings()), Live: si.Live}
		if si.MessagesKnown {
			n := si.Messages
			r.Messages = &n
		}
		out.Sessions = append(out.Sessions, r)
	}
	if out.Total > len(out.Sessions) {
		out.Cut = fmt.Sprintf("%d of %d sessions listed; raise limit to see more", len(out.Sessions), out.Total)
	}
	return nil, out, nil
}

const healthDescription = `Check one past Claude Code session for damage (cut-off or invalid lines, broken message chains, lost subagents, ...) as "cfix validate" does. Each finding says what is wrong, where (file and line), what Claude Code does with it when the session is resumed, and the cfix command that fixes it (the user runs it: it shows its change first, and --apply makes it with a backup that "cfix undo" restores).`

// HealthInput is what session_health takes.
type HealthInput struct {
	Session string `json:"session" jsonschema:"a session id, a unique prefix of one (at least 4 characters), or \"latest\" for the newest session of the project"`
	Project string `json:"project,omitempty" jsonschema:"for \"latest\": the project's directory (default: the client's current project)"`
}

// HealthFinding is one finding of session_health.
type HealthFinding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
	OnResume string `json:"on_resume,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

// HealthOutput is what session_health returns.
type HealthOutput struct {
	Session  string          `json:"session"`
	Health   string          `json:"health"`
	Files    int             `json:"files_checked"`
	Findings []HealthFinding `json:"findings"`
}

func (s *server) health(ctx context.Context, req *mcp.CallToolRequest, in HealthInput) (*mcp.CallToolResult, HealthOutput, error) {
	var out HealthOutput
	if err := bounded(arg{"session", in.Session, maxName}, arg{"project", in.Project, maxName}); err != nil {
		return nil, out, err
	}
	fam, err := s.resolveSession(ctx, req, in.Session, in.Project)
	if err != nil {
		return nil, out, err
	}
	target := fam.Session
	out.Session = fam.Session
	if target == "" && fam.Loose != "" {
		// A transcript whose name is no session id: its file.
		target, out.Session = fam.Loose, strings.TrimSpace(in.Session)
	}
	if target == "" {
		return nil, out, toolError("%s is not a session of the store's projects", in.Session)
	}
	rep, err := validate.Run(validate.Options{Root: s.opts.Root, Targets: []string{target}, Resolver: store.NewResolver(s.opts.Root, nil).InStore()})
	if err != nil {
		return nil, out, toolError("session %s cannot be checked: %v", out.Session, err)
	}
	out.Files = rep.FilesChecked
	out.Findings = []HealthFinding{}
	for _, f := range rep.Findings {
		h := HealthFinding{Code: string(f.Code), Severity: f.Severity.String(), File: f.Path, Line: f.Line, Message: s.redactText(f.Message), Fix: f.Hint}
		if info, ok := validate.Lookup(f.Code); ok {
			h.OnResume = info.Meaning
		}
		if h.Fix == "" && f.Severity > validate.Notice {
			h.Fix = strings.ReplaceAll(validate.FixFor(f.Code), "FILE", f.Path)
		}
		out.Findings = append(out.Findings, h)
	}
	out.Health = healthWords(rep.Counts["error"], rep.Counts["warning"])
	if n := rep.Counts["notice"]; n > 0 {
		out.Health += fmt.Sprintf(" (%s)", plural.Count(n, "notice"))
	}
	return nil, out, nil
}
