package repair

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// What prune can remove.
const (
	PruneSessionEnv    = "session-env"
	PruneFileHistory   = "file-history"
	PruneTodos         = "todos"
	PruneDebug         = "debug"
	PruneEmptySessions = "empty-sessions"
	PruneHusks         = "husks"
	PruneTasks         = "tasks"
	PrunePlans         = "plans"
	PruneUsageData     = "usage-data"
	PrunePastes        = "paste-cache"
	PruneShellSnaps    = "shell-snapshots"
	PrunePIDFiles      = "stale-pid-files"
)

// PruneKinds lists the --what values, in the order prune plans them.
var PruneKinds = []string{PruneSessionEnv, PruneFileHistory, PruneTodos, PruneDebug, PruneEmptySessions,
	PruneHusks, PruneTasks, PrunePlans, PruneUsageData, PrunePastes, PruneShellSnaps, PrunePIDFiles}

// PruneOptions configure a prune plan.
type PruneOptions struct {
	Root string
	// What limits the kinds pruned; empty means all.
	What []string
	// OlderThan, when set, also removes whole sessions (all their files)
	// whose transcripts were last written longer ago than this.
	OlderThan time.Duration
	// Now is the time OlderThan counts from (time.Now when zero).
	Now time.Time
}

// ParseAge parses a duration with the units of time.ParseDuration plus d
// (days) and w (weeks): "30d", "2w", "36h".
func ParseAge(s string) (time.Duration, error) {
	if n, unit := strings.TrimRight(s, "dw"), strings.TrimLeft(s, "0123456789"); unit == "d" || unit == "w" {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("duration %q: not a number of %s", s, map[string]string{"d": "days", "w": "weeks"}[unit])
		}
		day := 24 * time.Hour
		if unit == "w" {
			day *= 7
		}
		return time.Duration(v) * day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("duration %q: use e.g. 30d, 2w or 36h", s)
	}
	return d, nil
}

// Prune plans the removal of what the store no longer needs: empty
// session-env folders, leftovers of sessions that no longer exist, empty
// and metadata-only session files, and with OlderThan whole old sessions.
// It never touches debug/latest or a live session.
func Prune(opts PruneOptions) (*changeset.ChangeSet, error) {
	what := map[string]bool{}
	for _, w := range opts.What {
		for _, k := range strings.Split(w, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			ok := false
			for _, known := range PruneKinds {
				ok = ok || k == known
			}
			if !ok {
				return nil, &OptionError{fmt.Sprintf("--what %s: not one of %s", k, strings.Join(PruneKinds, ", "))}
			}
			what[k] = true
		}
	}
	if len(what) == 0 {
		for _, k := range PruneKinds {
			what[k] = true
		}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	l, err := store.Scan(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", opts.Root, err)
	}
	live, err := store.LiveSessions(opts.Root)
	if err != nil {
		return nil, err
	}
	p := &pruner{root: opts.Root, layout: l, cs: changeset.New(opts.Root, "prune"), live: map[string]bool{}, planned: map[string]bool{}}
	var stale, running []store.LiveSession
	for _, s := range live {
		if _, ok := store.StalePIDFile(s, store.LayoutHolds(l, s.SessionID)); ok {
			stale = append(stale, s)
			continue
		}
		running = append(running, s)
		if s.Running && s.SessionID != "" {
			p.live[s.SessionID] = true
		}
	}
	p.sessions = map[string][]store.File{}
	for _, f := range l.Files {
		if f.Kind == store.KindSession {
			p.sessions[f.Session] = append(p.sessions[f.Session], f)
		}
	}
	if opts.OlderThan > 0 {
		if err := p.old(opts.Now.Add(-opts.OlderThan)); err != nil {
			return nil, err
		}
	}
	if what[PruneEmptySessions] {
		if err := p.emptySessions(); err != nil {
			return nil, err
		}
	}
	if err := p.leftovers(what); err != nil {
		return nil, err
	}
	p.liveList = running
	if what[PrunePIDFiles] {
		for _, s := range stale {
			why, _ := store.StalePIDFile(s, false)
			// No session on the op: the file's session is not on disk, and
			// a reused pid would make apply take it for live.
			if err := p.remove(s.Path, "", fmt.Sprintf("sessions/%d.json of session %s, which is not on disk: %s", s.PID, s.SessionID, why)); err != nil {
				return nil, err
			}
		}
	}
	if err := p.sidecars(what, opts.Now); err != nil {
		return nil, err
	}
	// Sessions behind a project folder linked out of the store stay whole.
	p.cs.LeaveOutside(true)
	if err := p.dropIndexEntries(); err != nil {
		return nil, err
	}
	// The project folders whose last session files go, go with them.
	projects := store.ProjectsDir(opts.Root)
	var dirs []string
	for _, op := range p.cs.Ops {
		if d := filepath.Dir(op.Path); filepath.Dir(d) == projects && (op.Action == changeset.Delete || op.Action == changeset.DeleteDir) {
			dirs = append(dirs, d)
		}
	}
	if err := carry.RemoveEmptied(p.cs, dirs...); err != nil {
		return nil, err
	}
	return p.cs, nil
}

// dropIndexEntries drops from each folder's sessions-index.json the
// entries of the main transcripts the plan removes.
func (p *pruner) dropIndexEntries() error {
	byPath := map[string]store.File{}
	for _, fs := range p.sessions {
		for _, f := range fs {
			byPath[f.Path] = f
		}
	}
	byFolder := map[string][]string{}
	for _, op := range p.cs.Ops {
		if f, ok := byPath[op.Path]; ok && op.Action == changeset.Delete {
			byFolder[f.Project] = append(byFolder[f.Project], f.Session)
		}
	}
	return carry.DropFromIndexes(p.cs, p.root, byFolder)
}

type pruner struct {
	root     string
	layout   *store.Layout
	cs       *changeset.ChangeSet
	live     map[string]bool
	sessions map[string][]store.File // main transcripts by session id
	gone     map[string]bool         // sessions this plan removes whole
	planned  map[string]bool         // paths already in the plan
	liveList []store.LiveSession
}

// exists reports whether a session keeps a transcript after this plan.
func (p *pruner) exists(id string) bool {
	if p.gone[id] {
		return false
	}
	for _, f := range p.sessions[id] {
		if !p.planned[f.Path] {
			return true
		}
	}
	return false
}

func (p *pruner) remove(path, session, reason string) error {
	if p.planned[path] {
		return nil
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return err
	}
	if !fp.Exists {
		return nil
	}
	op := changeset.Op{Action: changeset.Delete, Path: path, Expect: fp, Reason: reason, Session: session}
	if fp.Dir {
		op.Action = changeset.DeleteDir
		op.Expect.Size = changeset.TreeSize(path)
	}
	p.planned[path] = true
	p.cs.Add(op)
	return nil
}

// old plans whole sessions last written before cutoff.
func (p *pruner) old(cutoff time.Time) error {
	p.gone = map[string]bool{}
	ids := make([]string, 0, len(p.sessions))
	for id := range p.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if p.live[id] {
			continue
		}
		last := time.Time{}
		for _, f := range p.sessions[id] {
			if f.ModTime.After(last) {
				last = f.ModTime
			}
		}
		if !last.Before(cutoff) {
			continue
		}
		p.gone[id] = true
		reason := fmt.Sprintf("session %s, last written %s", id, last.Local().Format("2006-01-02"))
		fam := store.Family(p.layout, id)
		for _, f := range fam.Files {
			if f.Kind == store.KindAgent {
				continue // removed with the session folder
			}
			if err := p.remove(f.Path, id, reason); err != nil {
				return err
			}
		}
		for _, d := range fam.SessionDirs {
			if err := p.remove(d.Path, id, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// emptySessions plans 0-byte and metadata-only session files. One whose
// subagent transcripts survive (under its session folder, or flat beside
// it with its sessionId: the Warmup runs of 2.0.x) stays: they are
// history, and without the transcript they would be left agent-orphan
// (validate's transcript-lost, or session-empty saying what is left); cfix
// rm removes the whole session once export has read what is left.
func (p *pruner) emptySessions() error {
	agents := store.Subagents(p.layout)
	for _, f := range p.layout.Files {
		if f.Kind != store.KindSession || p.live[f.Session] || p.planned[f.Path] {
			continue
		}
		if agents[store.FolderSession(f.Project, f.Session)] > 0 {
			continue
		}
		if f.Size == 0 {
			if err := p.remove(f.Path, f.Session, "empty session file (0 bytes)"); err != nil {
				return err
			}
			continue
		}
		meta, err := metadataOnly(f.Path)
		if err != nil {
			return err
		}
		if meta {
			reason := "session file holding only metadata lines, no conversation (kept in the backup)"
			if title, _ := validate.MetaTitle(f.Path); title != "" {
				reason = fmt.Sprintf("session file holding only metadata lines (titled %q), no conversation (kept in the backup)", title)
			}
			if err := p.remove(f.Path, f.Session, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// metadataOnly reports whether a transcript has entries and none of them
// is a chain entry. It stops at the first chain entry.
func metadataOnly(path string) (bool, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	ps := session.NewParser()
	ps.Header = true
	var e session.Entry
	entries := 0
	for rd.Next() {
		r := ps.Parse(rd.Line().Raw)
		if r.Err != nil || !session.HeaderOf(r.Value, &e) {
			return false, nil // damaged: repair's business, not prune's
		}
		if e.IsChain() {
			return false, nil
		}
		entries++
	}
	return entries > 0, rd.Err()
}

// leftovers plans session-env, file-history, todos and debug files of
// sessions that no longer exist (or that this plan removes), and empty
// session-env folders.
func (p *pruner) leftovers(what map[string]bool) error {
	list := func(sub string) ([]fs.DirEntry, error) {
		ents, err := os.ReadDir(filepath.Join(p.root, sub))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return ents, err
	}
	if what[PruneSessionEnv] || p.gone != nil {
		ents, err := list("session-env")
		if err != nil {
			return err
		}
		for _, e := range ents {
			id := e.Name()
			path := filepath.Join(p.root, "session-env", id)
			if !e.IsDir() || p.live[id] {
				continue
			}
			switch {
			case p.gone[id]:
				err = p.remove(path, id, "session-env of a session this plan removes")
			case !what[PruneSessionEnv]:
			case !p.exists(id):
				err = p.remove(path, id, "session-env of a session that no longer exists")
			case isEmptyDir(path):
				err = p.remove(path, id, "empty session-env folder")
			}
			if err != nil {
				return err
			}
		}
	}
	if what[PruneFileHistory] || p.gone != nil {
		ents, err := list("file-history")
		if err != nil {
			return err
		}
		for _, e := range ents {
			id := e.Name()
			if !e.IsDir() || p.live[id] {
				continue
			}
			path := filepath.Join(p.root, "file-history", id)
			if p.gone[id] || (what[PruneFileHistory] && !p.exists(id)) {
				if err := p.remove(path, id, "file-history of a session that no longer exists"); err != nil {
					return err
				}
			}
		}
	}
	if what[PruneTodos] || p.gone != nil {
		ents, err := list("todos")
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			i := strings.Index(name, "-agent-")
			if e.IsDir() || i < 0 || !strings.HasSuffix(name, ".json") {
				continue
			}
			id := name[:i]
			if p.live[id] {
				continue
			}
			if p.gone[id] || (what[PruneTodos] && !p.exists(id)) {
				if err := p.remove(filepath.Join(p.root, "todos", name), id, "todos of a session that no longer exists"); err != nil {
					return err
				}
			}
		}
	}
	if what[PruneDebug] || p.gone != nil {
		ents, err := list("debug")
		if err != nil {
			return err
		}
		// Never the latest link, nor the log it points to.
		latest, _ := filepath.EvalSymlinks(filepath.Join(p.root, "debug", "latest"))
		for _, e := range ents {
			name := e.Name()
			path := filepath.Join(p.root, "debug", name)
			if name == "latest" || e.Type()&fs.ModeSymlink != 0 || !strings.HasSuffix(name, ".txt") {
				continue
			}
			if real, err := filepath.EvalSymlinks(path); err == nil && real == latest {
				continue
			}
			id := strings.TrimSuffix(name, ".txt")
			if !store.IsUUID(id) || p.live[id] {
				continue
			}
			if p.gone[id] || (what[PruneDebug] && !p.exists(id)) {
				if err := p.remove(path, id, "debug log of a session that no longer exists"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isEmptyDir(path string) bool {
	ents, err := os.ReadDir(path)
	return err == nil && len(ents) == 0
}
