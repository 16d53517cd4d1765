// Package archive plans the removal of whole sessions (rm), their move
// out of the store into compressed archive files (archive), and their
// return (restore). All three are change sets: shown first, written only
// by changeset.Apply, with a journal that cfix undo restores.
package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/store"
)

// Part is one file or folder a session owns, named by its path.
type Part struct {
	Path string // absolute
	Rel  string // relative to the store's root, with forward slashes
	Dir  bool
	What string // what it is, for the plan: "main transcript", "file-history", ...
}

// Session is a session and everything it owns.
type Session struct {
	ID       string
	Projects []string // project folders holding its main transcripts
	Mains    []store.File
	Parts    []Part
	// LastActivity is the newest modification time of its files, Bytes
	// their size.
	LastActivity time.Time
	Bytes        int64
	// Kept are files that name the session but stay, with why.
	Kept []string
	// StubOf is the session this one is a stub of, when it goes with it.
	StubOf string
	// dirFPs are the fingerprints of its folder parts, in order, when
	// the archive was built.
	dirFPs []changeset.Fingerprint
}

// owner finds what the sessions of one store own.
type owner struct {
	root   string
	layout *store.Layout
	latest string // the real path of the log debug/latest points to
}

func newOwner(root string, l *store.Layout) *owner {
	o := &owner{root: root, layout: l}
	o.latest, _ = filepath.EvalSymlinks(filepath.Join(root, "debug", "latest"))
	return o
}

// sessions returns what each of ids owns: its family (main transcripts in
// every project folder, subagents of both layouts, session folders with
// tool-results and .meta.json, see store.Family) and the sidecars named by
// its id beside projects/: file-history/<id>/, session-env/<id>/,
// tasks/<id>/, todos/<id>-agent-*.json, debug/<id>.txt (not the log
// debug/latest points to), usage-data/session-meta/<id>.json and
// usage-data/facets/<id>.json. Plans and pasted texts are shared by name
// and content, and stay (prune removes those nothing names any more).
func (o *owner) sessions(ids []string) ([]*Session, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	fams := store.Families(o.layout, want)
	todos, err := readDir(filepath.Join(o.root, "todos"))
	if err != nil {
		return nil, err
	}
	// The todo lists by the id before "-agent-", and the names in each
	// folder of sidecars, listed once: thousands of sessions would look up
	// each sidecar path (most missing) and go through every todo list.
	todoOf := map[string][]string{}
	for _, name := range todos {
		if k := strings.Index(name, "-agent-"); k >= 0 {
			todoOf[name[:k]] = append(todoOf[name[:k]], name)
		}
	}
	listed := map[string]map[string]bool{}
	for _, d := range []string{"file-history", "session-env", "tasks", "usage-data/session-meta", "usage-data/facets", "debug"} {
		dir := filepath.Join(o.root, filepath.FromSlash(d))
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue // not listed: each path is looked up
		}
		set := map[string]bool{}
		for _, e := range ents {
			set[e.Name()] = true
		}
		listed[dir] = set
	}
	// absent reports whether path is known not to exist.
	absent := func(path string) bool {
		set, ok := listed[filepath.Dir(path)]
		return ok && !set[filepath.Base(path)]
	}
	// Each session on every core: each looks up and walks its own files.
	out := make([]*Session, len(ids))
	errs := make([]error, len(ids))
	one := func(k int) error {
		id := ids[k]
		fam := fams[id]
		s := &Session{ID: id}
		add := func(path, what string) error {
			if absent(path) {
				return nil
			}
			fi, err := os.Lstat(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				s.Kept = append(s.Kept, fmt.Sprintf("%s is a symbolic link: left alone", path))
				return nil
			}
			rel, err := filepath.Rel(o.root, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				return fmt.Errorf("%s is not under the store %s", path, o.root)
			}
			s.Parts = append(s.Parts, Part{Path: path, Rel: filepath.ToSlash(rel), Dir: fi.IsDir(), What: what})
			return newest(path, &s.LastActivity, &s.Bytes)
		}
		for _, f := range fam.Files {
			var err error
			switch f.Kind {
			case store.KindSession:
				s.Mains = append(s.Mains, f)
				err = add(f.Path, "main transcript")
			case store.KindAgentFlat:
				err = add(f.Path, "subagent "+f.Agent+" (flat layout)")
			}
			if err != nil {
				return err
			}
		}
		for _, d := range fam.SessionDirs {
			if err := add(d.Path, "session folder (subagents, tool-results)"); err != nil {
				return err
			}
		}
		s.Projects = fam.Projects
		side := []struct{ path, what string }{
			{filepath.Join(o.root, "file-history", id), "file-history (the /rewind backups)"},
			{filepath.Join(o.root, "session-env", id), "session-env"},
			{filepath.Join(o.root, "tasks", id), "task list"},
			{filepath.Join(o.root, "usage-data", "session-meta", id+".json"), "/insights summary"},
			{filepath.Join(o.root, "usage-data", "facets", id+".json"), "/insights facets"},
		}
		for _, sc := range side {
			if err := add(sc.path, sc.what); err != nil {
				return err
			}
		}
		names := todoOf[id]
		if strings.Contains(id, "-agent-") {
			names = todos
		}
		for _, name := range names {
			if strings.HasPrefix(name, id+"-agent-") && strings.HasSuffix(name, ".json") {
				if err := add(filepath.Join(o.root, "todos", name), "todo list"); err != nil {
					return err
				}
			}
		}
		dbg := filepath.Join(o.root, "debug", id+".txt")
		if absent(dbg) {
			// Nothing to add.
		} else if real, err := filepath.EvalSymlinks(dbg); err == nil && o.latest != "" && real == o.latest {
			s.Kept = append(s.Kept, fmt.Sprintf("%s is the log debug/latest points to: left alone", dbg))
		} else if err := add(dbg, "debug log"); err != nil {
			return err
		}
		sort.Slice(s.Parts, func(i, j int) bool { return s.Parts[i].Path < s.Parts[j].Path })
		out[k] = s
		return nil
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(ids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				errs[k] = one(k)
			}
		}()
	}
	for k := range ids {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// linkedMain says why s cannot be archived when a main transcript of it is
// a symbolic link, and "" otherwise: an archive keeps files, not links,
// and the session would stay in the store (its link left alone) while
// its index entries and prompt history went, with an archive that holds
// none of its transcript's bytes.
func linkedMain(s *Session) string {
	for _, m := range s.Mains {
		if target, ok := carry.Linked(m.Path); ok {
			return fmt.Sprintf("session %s: its transcript %s is a symbolic link to %s, and an archive keeps files, not links; put the file itself in place of the link to archive the session", s.ID, m.Path, target)
		}
	}
	return ""
}

// readDir lists the names in dir; a missing dir has none.
func readDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

// newest moves t to the newest modification time of a file under path,
// and adds the sizes of its files to size.
func newest(path string, t *time.Time, size *int64) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.ModTime().After(*t) {
			*t = fi.ModTime()
		}
		*size += fi.Size()
		return nil
	})
}

// resolveSessions resolves what the user names (store.Resolver: an id, a
// unique id prefix, a main transcript's path, latest) to session ids, in
// the order named, each once.
func resolveSessions(root string, l *store.Layout, args []string, command string) ([]string, error) {
	r := store.NewResolver(root, l)
	var ids []string
	seen := map[string]bool{}
	for _, arg := range args {
		t, err := r.Resolve(arg)
		var te *store.TargetError
		switch {
		case errors.As(err, &te):
			return nil, &carry.InputError{Msg: err.Error()}
		case err != nil:
			return nil, err
		}
		id := ""
		switch t.Kind {
		case store.TargetSession:
			id = t.Session
		case store.TargetFile:
			if len(t.Layout.Files) == 1 && t.Layout.Files[0].Kind == store.KindSession && t.InStore {
				id = t.Session
			} else {
				return nil, &carry.InputError{Msg: fmt.Sprintf("%s is not a main transcript of the store: %s names sessions", arg, command)}
			}
		default:
			return nil, &carry.InputError{Msg: fmt.Sprintf("%s names a %s, not a session: %s takes session ids or their .jsonl transcripts", arg, t.Kind, command)}
		}
		hasMain, agents := false, false
		for _, f := range l.Files {
			hasMain = hasMain || f.Kind == store.KindSession && f.Session == id
			agents = agents || f.Kind == store.KindAgent && f.Session == id
		}
		// rm takes a session whose main transcript is gone and whose
		// subagents are left (validate's agent-orphan): export has read
		// them; archive keeps sessions that resume, and refuses it.
		if !hasMain && !(agents && command == "rm") {
			return nil, &carry.InputError{Msg: fmt.Sprintf("session %s has no main transcript in the store %s", id, root)}
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// liveGuard refuses sessions a running Claude Code holds, or whose
// transcripts were written in the last changeset.DefaultLiveWindow.
type liveGuard struct {
	live map[string]bool
	now  time.Time
}

func newLiveGuard(root string, now time.Time) (*liveGuard, error) {
	ls, err := store.LiveSessions(root)
	if err != nil {
		return nil, err
	}
	g := &liveGuard{live: map[string]bool{}, now: now}
	for _, l := range ls {
		if l.Running && l.SessionID != "" {
			g.live[l.SessionID] = true
		}
	}
	return g, nil
}

// why says why session s may be live, or "".
func (g *liveGuard) why(s *Session) string {
	if g.live[s.ID] {
		return fmt.Sprintf("session %s is live (a running Claude Code holds it, sessions/<pid>.json)", s.ID)
	}
	if g.now.Sub(s.LastActivity) >= changeset.DefaultLiveWindow {
		return "" // no file of it was written lately
	}
	for _, p := range s.Parts {
		if !strings.HasSuffix(p.Path, ".jsonl") && !p.Dir {
			continue
		}
		var t time.Time
		var n int64
		newest(p.Path, &t, &n)
		if age := g.now.Sub(t); age < changeset.DefaultLiveWindow && strings.HasPrefix(p.Rel, "projects/") {
			return fmt.Sprintf("session %s was written %s ago (%s): it may be live; wait %s", s.ID, age.Round(time.Second), p.Path, changeset.DefaultLiveWindow)
		}
	}
	return ""
}

// remove adds the ops removing the parts of s, with reason.
func remove(cs *changeset.ChangeSet, s *Session, reason string) error {
	for _, p := range s.Parts {
		fp, err := changeset.FingerprintOf(p.Path)
		if err != nil {
			return err
		}
		if !fp.Exists {
			continue
		}
		op := changeset.Op{Action: changeset.Delete, Path: p.Path, Expect: fp, Session: s.ID, Reason: reason + ": " + p.What}
		if fp.Dir {
			op.Action = changeset.DeleteDir
			op.Expect.Size = changeset.TreeSize(p.Path)
		}
		cs.Add(op)
	}
	return nil
}

// dropFromIndexes adds, for each project folder of the sessions whose
// sessions-index.json lists one of them, the rewrite that drops their
// entries (every other byte kept).
func dropFromIndexes(cs *changeset.ChangeSet, root string, sessions []*Session) error {
	byFolder := map[string][]string{}
	for _, s := range sessions {
		for _, p := range s.Projects {
			byFolder[p] = append(byFolder[p], s.ID)
		}
	}
	return carry.DropFromIndexes(cs, root, byFolder)
}

// emptiedFolders plans the removal of the project folders of sessions
// that the plan leaves empty (see carry.RemoveEmptied).
func emptiedFolders(cs *changeset.ChangeSet, root string, sessions []*Session) error {
	var dirs []string
	for _, s := range sessions {
		for _, p := range s.Projects {
			dirs = append(dirs, filepath.Join(store.ProjectsDir(root), p))
		}
	}
	return carry.RemoveEmptied(cs, dirs...)
}

func sessionWords(ids []string) string { return carry.SessionWords(ids) }
