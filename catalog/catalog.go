// Package catalog is what cfix knows of the sessions of a store as a
// listing shows them: every session with its title as the /resume picker
// shows it, first prompt, dates, messages, subagents, the health of the
// quick checks, and its marks (live, stub, swept); every project with its
// real paths and sums. cfix ls, browse, the completion of session
// arguments, resume's lookup by title and the MCP server's list_sessions
// read it from here.
//
// What it reads of transcripts (the glances, flat subagents' sessions,
// message counts) goes through a Cache keyed by file identity, so that a
// listing of a store that has not changed reads no transcript. What is
// live is read anew each time.
package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
)

// Catalog lists the sessions of one store through its Cache.
type Catalog struct {
	Root  string
	Cache *Cache
	// Now is the time the listing is of (the retention sweep's).
	Now time.Time

	live   map[string]bool
	layout *store.Layout
	whole  *Store
	short  *store.ShortIDs
	mains  map[string][]store.File // session id → its main transcripts (About)
}

// Open opens the catalog of the store at root, its cache in CacheDir.
func Open(root string) *Catalog { return OpenIn(root, CacheDir()) }

// OpenIn opens the catalog of the store at root with its cache in dir
// ("": no cache kept between runs; nor is one for a root that is not an
// absolute path, as store.Resolve gives).
func OpenIn(root, dir string) *Catalog {
	file := ""
	if dir != "" && filepath.IsAbs(root) {
		file = CacheFile(dir, root)
	}
	return &Catalog{Root: root, Cache: OpenCache(file, root), Now: time.Now()}
}

// Close writes the cache. A cache that cannot be written costs only the
// next listing's time: the error says why, and the listing stands.
func (c *Catalog) Close() error { return c.Cache.Save() }

// Live returns the sessions a running Claude Code has open (read each
// time a catalog is opened, never kept).
func (c *Catalog) Live() (map[string]bool, error) {
	if c.live != nil {
		return c.live, nil
	}
	ls, err := store.LiveSessions(c.Root)
	if err != nil {
		return nil, err
	}
	c.live = map[string]bool{}
	for _, l := range ls {
		if l.Running && l.SessionID != "" {
			c.live[l.SessionID] = true
		}
	}
	return c.live, nil
}

// Layout is the scan of the whole store (made once).
func (c *Catalog) Layout() (*store.Layout, error) {
	if c.layout == nil {
		l, err := store.Scan(c.Root)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", c.Root, err)
		}
		c.layout = l
	}
	return c.layout, nil
}

// ShortIDs are the short ids of the sessions of the whole store (computed
// once, from its scan): what every listing prints of a session's id.
func (c *Catalog) ShortIDs() (store.ShortIDs, error) {
	if c.short == nil {
		l, err := c.Layout()
		if err != nil {
			return store.ShortIDs{}, err
		}
		s := store.ShortIDsOf(l)
		c.short = &s
	}
	return *c.short, nil
}

// Sessions glances at the sessions of l (a scan of the store or of part
// of it; live: with the live ones marked), through the cache.
func (c *Catalog) Sessions(l *store.Layout, live bool) ([]store.SessionInfo, error) {
	var lv map[string]bool
	if live {
		var err error
		if lv, err = c.Live(); err != nil {
			return nil, err
		}
	}
	return store.SessionsWith(l, lv, c.Cache), nil
}

// Glance glances at one transcript through the cache.
func (c *Catalog) Glance(f store.File) store.Glance { return store.GlanceWith(f, c.Cache) }

// GlanceExtra glances at an extra through the cache.
func (c *Catalog) GlanceExtra(x store.Extra) store.Glance { return store.GlanceExtraWith(x, c.Cache) }

// Extras lists the extras of the store, glanced at (through the cache)
// when glance is set.
func (c *Catalog) Extras(glance bool) ([]store.Extra, []store.Glance, error) {
	xs, err := store.Extras(c.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("store %s: %w", c.Root, err)
	}
	if !glance {
		return xs, nil, nil
	}
	gs := make([]store.Glance, len(xs))
	for i, x := range xs {
		gs[i] = c.GlanceExtra(x)
	}
	for _, k := range []store.ExtraKind{store.ExtraExport, store.ExtraPreCompact} {
		c.Cache.Listed(filepath.Join(c.Root, k.Dir()))
	}
	return xs, gs, nil
}

// Count counts the messages of the sessions a glance did not read whole
// (their MessagesKnown false, or known only from a sessions index),
// through the cache, on every core.
func (c *Catalog) Count(ss []store.SessionInfo) {
	var todo []int
	for i := range ss {
		if !ss[i].Whole && ss[i].Err == nil {
			todo = append(todo, i)
		}
	}
	store.Parallel(len(todo), func(k int) {
		s := &ss[todo[k]]
		if n, err := c.Cache.Count(s.File); err == nil {
			s.Messages, s.MessagesKnown = n, true
		}
	})
}

// Store is the whole store as cfix ls lists it.
type Store struct {
	Root   string
	Layout *store.Layout
	// Sessions holds every main transcript, in the order of
	// Layout.Files, the live ones and those the sweep deletes marked.
	Sessions []store.SessionInfo
	// Projects holds every project folder, by name.
	Projects []store.ProjectInfo
	Sweep    store.Sweep
	// Swept and SweptBytes: the sessions the sweep deletes, and their
	// bytes.
	Swept      int
	SweptBytes int64
	paths      map[string]string
}

// Store lists the whole store (once; the session messages of big
// transcripts are not counted: see Count).
func (c *Catalog) Store() (*Store, error) {
	st, err := c.sessions()
	if err != nil || st.Projects != nil {
		return st, err
	}
	st.Projects = store.ProjectsOf(st.Layout, st.Sessions)
	st.paths = nil
	return st, nil
}

// sessions lists the sessions of the whole store (once): Store without
// its Projects.
func (c *Catalog) sessions() (*Store, error) {
	if c.whole != nil {
		return c.whole, nil
	}
	l, err := c.Layout()
	if err != nil {
		return nil, err
	}
	ss, err := c.Sessions(l, true)
	if err != nil {
		return nil, err
	}
	c.Cache.Listed(store.ProjectsDir(c.Root))
	s := &Store{Root: c.Root, Layout: l, Sessions: ss, Sweep: store.SweepOf(c.Root, c.Now)}
	s.Swept, s.SweptBytes = store.MarkSwept(ss, s.Sweep)
	c.whole = s
	return s, nil
}

// ProjectPath is the real path of a project folder's project as a list
// shows it beside a session: its paths, joined; the folder's name when no
// path is known.
func (s *Store) ProjectPath(folder string) string {
	if s.paths == nil {
		ps := s.Projects
		if ps == nil {
			ps = store.ProjectPathsOf(s.Layout, s.Sessions)
		}
		s.paths = map[string]string{}
		for _, p := range ps {
			if len(p.Paths) > 0 {
				s.paths[p.Folder] = strings.Join(p.Paths, ", ")
			}
		}
	}
	if p, ok := s.paths[folder]; ok {
		return p
	}
	return folder
}

// Session is a session as the lists of browse, completion and resume
// show it: what cfix ls shows of it, and its project's path.
type Session struct {
	store.SessionInfo
	// ProjectPath is the real path of its project (Store.ProjectPath).
	ProjectPath string
	// Short is its short id (ShortIDs).
	Short string
}

// List is every session of the store that a listing shows (empty files
// and Warmup probes left out unless hidden), newest first and the stubs
// last (SortNewest), as cfix ls has them.
func (c *Catalog) List(hidden bool) ([]Session, error) {
	st, err := c.sessions()
	if err != nil {
		return nil, err
	}
	ids, err := c.ShortIDs()
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(st.Sessions))
	for _, s := range st.Sessions {
		if s.Hidden() && !hidden {
			continue
		}
		out = append(out, Session{SessionInfo: s, ProjectPath: st.ProjectPath(s.Project), Short: ids.Of(s.Session)})
	}
	SortNewest(out, func(s *Session) (bool, time.Time, string) { return s.MetaOnly, s.LastActive, s.Path })
	return out, nil
}

// About is what a list of hits (cfix search) says of a session beside
// them: its short id, its title and the real path of its project.
type About struct {
	Short, Title string
	// ProjectPath is the cwd of its main transcript that encodes to its
	// folder, else its first cwd, else the folder's name ("" when it has
	// no main transcript).
	ProjectPath string
}

// About tells of the session id whose main transcript is in project
// folder folder ("": in whichever folder holds one), glancing at that
// transcript only (through the cache). A name that is no session of the
// store (a transcript export's) gets its short id only.
func (c *Catalog) About(id, folder string) (About, error) {
	ids, err := c.ShortIDs()
	if err != nil {
		return About{}, err
	}
	a := About{Short: ids.Of(id)}
	l, _ := c.Layout()
	if c.mains == nil {
		c.mains = map[string][]store.File{}
		for _, f := range l.Files {
			if f.Kind == store.KindSession {
				c.mains[f.Session] = append(c.mains[f.Session], f)
			}
		}
	}
	for _, f := range c.mains[id] {
		if folder != "" && f.Project != folder || f.Size == 0 {
			continue
		}
		g := c.Glance(f)
		a.Title, a.ProjectPath = g.Title, f.Project
		if len(g.CWDs) > 0 {
			a.ProjectPath = g.CWDs[0]
		}
		for _, cwd := range g.CWDs {
			if store.FolderFor(c.Root, cwd) == f.Project {
				a.ProjectPath = cwd
				break
			}
		}
		if !g.MetaOnly {
			break // else a transcript with a conversation, in another folder, says more
		}
	}
	return a, nil
}

// Matching glances (through the cache) at the sessions whose id starts
// with prefix (lower case), and only at those: newest first, the
// transcripts of one session in several folders each listed, empty ones
// left out.
func (c *Catalog) Matching(prefix string) ([]store.SessionInfo, error) {
	l, err := c.Layout()
	if err != nil {
		return nil, err
	}
	sub := &store.Layout{Root: l.Root, Projects: l.Projects, SessionDirs: l.SessionDirs}
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Size > 0 && strings.HasPrefix(strings.ToLower(f.Session), prefix) {
			sub.Files = append(sub.Files, f)
		}
	}
	ss := store.SessionsWith(sub, nil, c.Cache)
	slices.SortStableFunc(ss, func(a, b store.SessionInfo) int { return b.LastActive.Compare(a.LastActive) })
	return ss, nil
}

// Project is one project folder as cfix ls lists it.
type Project struct {
	Root, Folder string
	// Info sums the folder up (zero when it holds nothing).
	Info store.ProjectInfo
	// Sessions holds its main transcripts, their messages counted (all of
	// them: see Count), the live ones, the stubs (as the listing of the
	// whole store names them) and those the sweep deletes marked.
	Sessions   []store.SessionInfo
	Sweep      store.Sweep
	Swept      int
	SweptBytes int64
}

// Project lists the project folder folder, whose scan is l.
func (c *Catalog) Project(l *store.Layout, folder string) (*Project, error) {
	ss, err := c.Sessions(l, true)
	if err != nil {
		return nil, err
	}
	c.Cache.Listed(filepath.Join(store.ProjectsDir(c.Root), folder))
	c.Count(ss)
	for _, s := range ss {
		if s.MetaOnly {
			// Whether a metadata-only file is a stub depends on the
			// other folders: as the listing of the whole store says.
			all, err := c.Layout()
			if err != nil {
				return nil, err
			}
			store.RestubWith(ss, all, nil, c.Cache)
			break
		}
	}
	p := &Project{Root: c.Root, Folder: folder, Sessions: ss, Sweep: store.SweepOf(c.Root, c.Now)}
	p.Swept, p.SweptBytes = store.MarkSwept(ss, p.Sweep)
	if ps := store.ProjectsOf(l, ss); len(ps) > 0 {
		p.Info = ps[0]
	}
	return p, nil
}

// Cached reports whether the cache holds all a listing reads of the
// transcripts of l: List, Store and Sessions then read none.
func (c *Catalog) Cached(l *store.Layout) bool {
	for _, f := range l.Files {
		if !c.Cache.has(f) {
			return false
		}
	}
	return true
}

// HasSessions reports whether a layout holds a session a listing shows
// (neither empty nor a Warmup probe).
func (c *Catalog) HasSessions(l *store.Layout) bool {
	for _, f := range l.Files {
		// Only a file with something in it is glanced at.
		if f.Kind == store.KindSession && f.Size > 0 {
			if g := c.Glance(f); !g.Warmup {
				return true
			}
		}
	}
	return false
}

// PathWords is the PATH column of a project: its real paths, or its
// folder when none is known, its control characters made visible.
func PathWords(p store.ProjectInfo) string {
	switch {
	case p.MemoryOnly:
		return "memory only, no session (folder " + visible.String(p.Folder) + ")"
	case len(p.Paths) == 0:
		return "? (folder " + visible.String(p.Folder) + ")"
	case p.PathsFrom == "index":
		return visible.String(p.Paths[0]) + " (from sessions-index.json)"
	}
	return visible.String(strings.Join(p.Paths, ", "))
}

// Loading sets the collector for a listing's load and returns what sets
// it back: collecting when the heap reaches five times what is live
// (GOGC 400), not twice, unless the user set GOGC. A load keeps most of
// what it allocates (the glances, the rows), so the collections it spares
// would find little to free: about a fifth of ls's time on the bench
// store.
func Loading() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	return func() { debug.SetGCPercent(old) }
}
