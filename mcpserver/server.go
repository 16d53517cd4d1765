// Package mcpserver serves a Claude Code store to a model over the Model
// Context Protocol: search the sessions, list them, read one a page at a
// time, and tell what is wrong with one. It only reads the store.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/secrets"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
)

// Options configure a server.
type Options struct {
	// Root is the store directory.
	Root string
	// Version is cfix's version, told to the client.
	Version string
	// Dir is the directory that stands for "this project" when the client
	// names no root (default: the process's working directory).
	Dir string
	// Index is the folder where read_session keeps what it read of a big
	// transcript (export.Options.Index), so that a page of it costs a
	// page's reading the next time; "" keeps nothing.
	Index string
	// Redact, when set, takes the secrets out of every answer: the pages
	// of read_session, the snippets of search_sessions, titles and
	// messages (cfix mcp sets it unless --no-redact).
	Redact *secrets.Filter
}

// redactText is s without its secrets, when the server redacts.
func (s *server) redactText(t string) string {
	if s.opts.Redact == nil {
		return t
	}
	out, _ := s.opts.Redact.Text(t)
	return out
}

// New returns a server with the tools search_sessions, list_sessions,
// read_session and session_health over the store at opts.Root.
func New(opts Options) *mcp.Server { return newServer(&server{opts: opts}) }

// newServer returns the MCP server of s.
func newServer(s *server) *mcp.Server {
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "cfix", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "cfix reads the Claude Code session store (" + s.opts.Root + "): every past conversation " +
			"with Claude Code, by project. Use search_sessions to find where something was discussed or done, " +
			"list_sessions to see a project's sessions, read_session to read one a page at a time, and " +
			"session_health to see why a session fails to resume. Nothing here changes the store.",
	})
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	mcp.AddTool(srv, &mcp.Tool{Name: "search_sessions", Annotations: ro, Description: searchDescription}, inTurn(s, s.search))
	mcp.AddTool(srv, &mcp.Tool{Name: "list_sessions", Annotations: ro, Description: listDescription}, inTurn(s, s.list))
	mcp.AddTool(srv, &mcp.Tool{Name: "read_session", Annotations: ro, Description: readDescription}, inTurn(s, s.read))
	mcp.AddTool(srv, &mcp.Tool{Name: "session_health", Annotations: ro, Description: healthDescription}, inTurn(s, s.health))
	return srv
}

type server struct {
	opts  Options
	pager pager

	slotOnce sync.Once
	slot     chan struct{} // the turn of the one call (or warming) that reads the store
	allocs   uint64        // bytes allocated when the last turn began (held with the turn)
}

// turn waits for the turn to read the store, which one tool call or one
// transcript's warming has at a time, and returns the function that gives
// it back; an error when ctx ends first. Each call reading the store holds
// a reader's buffers (a line of up to 64 MB, a long line's skeleton):
// served side by side, calls a client sends at once would hold as many
// (twelve pipelined session_health calls of a session ending in 512 MB of
// NUL bytes peaked at 1.25 GB); in turn, the server's memory is that of
// one call, however many come in.
func (s *server) turn(ctx context.Context) (func(), error) {
	s.slotOnce.Do(func() { s.slot = make(chan struct{}, 1) })
	select {
	case s.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	if a := sample[0].Value.Uint64(); a-s.allocs > turnGC {
		// What the turn before read is garbage now: collected before
		// this one allocates as much again, not beside it (a few
		// milliseconds: little is live between calls).
		runtime.GC()
		metrics.Read(sample)
	}
	s.allocs = sample[0].Value.Uint64()
	return func() { <-s.slot }, nil
}

// turnGC is how many bytes allocated since a turn began make the next
// turn collect the garbage first.
const turnGC = 32 << 20

// inTurn is the tool handler h, run in its turn (see server.turn).
func inTurn[In, Out any](s *server, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		done, err := s.turn(ctx)
		if err != nil {
			var zero Out
			return nil, zero, err
		}
		defer done()
		return h(ctx, req, in)
	}
}

// toolError is an error the model reads: the tool call fails with it.
func toolError(format string, args ...any) error { return fmt.Errorf(format, args...) }

// The bounds of the tools' text arguments, in bytes: a query (a 10 MB one
// held the server's memory at 1.7 GB); a session or a project (a path is
// at most 4096 bytes); a time, a role or a tool's name. Numbers are
// clamped where they are read.
const (
	maxQuery = 64 << 10
	maxName  = 4096
	maxWord  = 256
)

// arg is a text argument of a tool and its bound.
type arg struct {
	name, value string
	most        int
}

// bounded refuses the first argument longer than its bound.
func bounded(args ...arg) error {
	for _, a := range args {
		if len(a.value) > a.most {
			return toolError("%s is %d bytes: at most %d", a.name, len(a.value), a.most)
		}
	}
	return nil
}

// clientDir is the directory that stands for "this project": opts.Dir,
// else the working directory, which a client such as Claude Code starts
// the server in. (The protocol's roots cannot be asked for while a tool
// call is served from protocol version 2026-07-28 on, and are deprecated.)
func (s *server) clientDir() string {
	if s.opts.Dir != "" {
		return s.opts.Dir
	}
	wd, _ := os.Getwd()
	return wd
}

// scope is the sessions a call is about: one project folder, or all.
type scope struct {
	all    *store.Layout
	layout *store.Layout // the project's files, or all
	folder string        // "" for the whole store
	dir    string        // the directory that named the folder
}

// scopeOf resolves a project argument: "all", a directory (a project
// folder's name too), or "" for the client's project when it has sessions
// in the store, else all.
func (s *server) scopeOf(ctx context.Context, req *mcp.CallToolRequest, project string) (*scope, string, error) {
	all, err := store.Scan(s.opts.Root)
	if err != nil {
		return nil, "", toolError("the store %s cannot be read: %v", s.opts.Root, err)
	}
	// A transcript that leads outside the store is none of its sessions.
	conf := store.NewConfine(s.opts.Root)
	all = conf.Keep(all)
	sc := &scope{all: all, layout: all}
	if project == "all" {
		return sc, "every project", nil
	}
	explicit := project != ""
	r := store.NewResolver(s.opts.Root, all)
	if explicit {
		// A name from the client: the store's names only.
		r = r.InStore()
	} else if project = s.clientDir(); project == "" {
		return sc, "every project", nil
	}
	t, err := r.Resolve(project)
	if err == nil && t.Kind == store.TargetProject {
		sc.layout, sc.folder, sc.dir = conf.Keep(t.Layout), t.Project, project
		return sc, "project " + project, nil
	}
	if !explicit {
		return sc, "every project (the client's directory " + project + " has no sessions)", nil
	}
	// A path as list_sessions and search_sessions give it: a project's
	// path its sessions name, a Windows one too (which no path of this
	// system names).
	if err == nil || errors.As(err, new(*store.TargetError)) {
		for _, p := range store.ProjectsOf(all, store.SessionsOf(all, nil)) {
			if slices.Contains(p.Paths, project) {
				if t, err := store.NewResolver(s.opts.Root, all).InStore().Resolve(p.Folder); err == nil && t.Kind == store.TargetProject {
					sc.layout, sc.folder, sc.dir = conf.Keep(t.Layout), t.Project, project
					return sc, "project " + project, nil
				}
			}
		}
	}
	return nil, "", toolError("project %q names no project of the store: give the directory a session was started in (list_sessions with project \"all\" lists every project's path), or \"all\"", project)
}

// projectPaths maps project folders to the real path of their project.
func projectPaths(l *store.Layout, ss []store.SessionInfo) map[string]string {
	m := map[string]string{}
	for _, p := range store.ProjectPathsOf(l, ss) {
		if len(p.Paths) > 0 {
			m[p.Folder] = p.Paths[0]
		} else {
			m[p.Folder] = "? (folder " + p.Folder + ")"
		}
	}
	return m
}

// resolveSession resolves a session argument: an id, a prefix of one, a
// transcript's name, or latest (the newest session of the project), in
// the store only (store.Resolver.InStore). Paths are refused, and so is a
// session one of whose files leads outside the store (store.Confine): the
// server reads the store only.
func (s *server) resolveSession(ctx context.Context, req *mcp.CallToolRequest, arg, project string) (*show.Family, error) {
	fam, err := s.findSession(ctx, req, arg, project)
	if err != nil {
		return nil, err
	}
	conf := store.NewConfine(s.opts.Root)
	if fam.Loose != "" {
		if _, out := conf.Outside(fam.Loose); out {
			return nil, outsideError(arg, fam.Loose)
		}
	}
	var oe *store.OutsideError
	if err := conf.Check(fam.Layout); errors.As(err, &oe) {
		return nil, outsideError(arg, oe.Path)
	}
	return fam, nil
}

// outsideError refuses a session whose file at path leads outside the
// store (where to is not told).
func outsideError(arg, path string) error {
	return toolError("session %s: %s is a symbolic link that leads outside the store: the server reads the store only", arg, path)
}

// findSession is resolveSession but for the files' confinement.
func (s *server) findSession(ctx context.Context, req *mcp.CallToolRequest, arg, project string) (*show.Family, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, toolError("session is empty: give a session id, a prefix of one (at least %d characters), or \"latest\"; list_sessions and search_sessions give the ids", store.MinPrefix)
	}
	if strings.ContainsAny(arg, `/\`) {
		return nil, toolError("session %q is a path: give a session id, a prefix of one, or \"latest\"", arg)
	}
	if arg == store.Latest {
		sc, _, err := s.scopeOf(ctx, req, project)
		if err != nil {
			return nil, err
		}
		if sc.folder == "" {
			return nil, toolError("\"latest\" needs a project: the client's directory has no sessions in the store; pass project (a directory), or a session id from list_sessions")
		}
		var best *store.File
		for i := range sc.layout.Files {
			f := &sc.layout.Files[i]
			if f.Kind != store.KindSession || f.Side() || f.Size == 0 {
				continue
			}
			if best == nil || f.ModTime.After(best.ModTime) || f.ModTime.Equal(best.ModTime) && f.Path > best.Path {
				best = f
			}
		}
		if best == nil {
			return nil, toolError("project %s holds no session", sc.dir)
		}
		arg = best.Session
	}
	fam, err := show.ResolveWith(s.opts.Root, store.NewResolver(s.opts.Root, nil).InStore(), arg)
	if err == nil {
		return fam, nil
	}
	var ae *store.AmbiguousError
	var te *store.TargetError
	switch {
	case errors.As(err, &ae):
		var ids []string
		for _, c := range ae.Candidates {
			ids = append(ids, c.Session)
		}
		return nil, toolError("session prefix %s matches %d sessions (%s): give more characters of the id", arg, len(ids), strings.Join(ids, ", "))
	case errors.As(err, &te) && len(te.Folders) > 1:
		// A transcript whose file name is no session id (list_sessions
		// gives that name as its id; the resolver finds it when one
		// folder holds that name).
		return nil, toolError("session %s names transcripts in %d project folders (%s): read one by a session id from list_sessions of one project", arg, len(te.Folders), strings.Join(te.Folders, ", "))
	case errors.As(err, &te):
		return nil, toolError("no session matches %s%s; list_sessions gives the ids of a project's sessions, search_sessions finds one by its text", arg, suggest(s.opts.Root, arg))
	}
	return nil, toolError("session %s: %v", arg, err)
}

// suggest names the sessions whose id is nearest arg's start: those that
// share the longest prefix with it, at most three.
func suggest(root, arg string) string {
	all, err := store.Scan(root)
	if err != nil {
		return ""
	}
	all = store.NewConfine(root).Keep(all)
	best, n := []string{}, 0
	seen := map[string]bool{}
	for _, f := range all.Files {
		if f.Kind != store.KindSession || seen[f.Session] {
			continue
		}
		seen[f.Session] = true
		k := 0
		for k < len(arg) && k < len(f.Session) && strings.EqualFold(arg[k:k+1], f.Session[k:k+1]) {
			k++
		}
		switch {
		case k > n:
			best, n = []string{f.Session}, k
		case k == n && k > 0:
			best = append(best, f.Session)
		}
	}
	if n == 0 {
		return ""
	}
	sort.Strings(best)
	if len(best) > 3 {
		best = best[:3]
	}
	return " (did you mean " + strings.Join(best, " or ") + "?)"
}

// health sums up quick findings in words: "ok", or errors and warnings.
func healthWords(errs, warns int) string {
	switch {
	case errs == 0 && warns == 0:
		return "ok"
	case warns == 0:
		return plural.Count(errs, "error")
	case errs == 0:
		return plural.Count(warns, "warning")
	}
	return plural.Count(errs, "error") + ", " + plural.Count(warns, "warning")
}

// stamp renders a time for the model, or "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
