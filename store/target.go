package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// TargetKind tells what a name given on the command line named.
type TargetKind int

const (
	// TargetSession is a session with its subagents: named by its id, a
	// unique prefix of its id, or its session folder.
	TargetSession TargetKind = iota
	// TargetFile is one transcript, named by its path.
	TargetFile
	// TargetProject is a project folder: named by its name or path, or
	// through the working directory whose sessions it holds.
	TargetProject
	// TargetStore is the whole store: its directory or its projects folder.
	TargetStore
)

func (k TargetKind) String() string {
	switch k {
	case TargetSession:
		return "session"
	case TargetFile:
		return "file"
	case TargetProject:
		return "project folder"
	}
	return "store"
}

// Target is what one name resolved to.
type Target struct {
	Arg  string // the name as given
	Kind TargetKind
	// Session is the session id of a TargetSession, and of a TargetFile
	// that is a main transcript or a nested subagent.
	Session string
	// Project is the project folder of a TargetProject, a TargetFile, and
	// a TargetSession named through its session folder; "" for a session
	// named by id (its transcripts may lie in several folders).
	Project string
	// InStore reports that a TargetFile lies under projects/; its path is
	// then the one a scan of the store gives, whatever path named it.
	InStore bool
	// Layout holds the target's files.
	Layout *Layout
}

// TargetError reports a name that names nothing in the store.
type TargetError struct {
	Target string
	// Reason says what was looked for; "" gives the general message.
	Reason string
	// Whole, when set, is the whole message.
	Whole string
	// Folders are the project folders that each hold a main transcript
	// named Target (no session id): the name is in more than one.
	Folders []string
}

func (e *TargetError) Error() string {
	if e.Whole != "" {
		return e.Whole
	}
	if e.Reason != "" {
		return fmt.Sprintf("target %s: %s", e.Target, e.Reason)
	}
	return fmt.Sprintf("target %s: no such session id, .jsonl file or project folder", e.Target)
}

// Candidate is a session an ambiguous id prefix could name.
type Candidate struct {
	Session  string
	Projects []string // the project folders holding its transcripts
}

// AmbiguousError reports a session id prefix that more than one session
// id starts with.
type AmbiguousError struct {
	Target     string
	Candidates []Candidate // sorted by session id
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "target %s: ambiguous session id prefix; the candidates are:", e.Target)
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  %s", c.Session, strings.Join(c.Projects, ", "))
	}
	return b.String()
}

// MinPrefix is the shortest session id prefix that names a session, as
// for git's abbreviated object names.
const MinPrefix = 4

// Resolver resolves what a user names on the command line against one
// store: a session id or a unique prefix of one, the path of a .jsonl
// transcript, a project folder (its name or path), a session folder, a
// working directory (its project folder), or the store itself. It scans
// the whole store at most once.
type Resolver struct {
	root string
	all  *Layout
	// inStore resolves names in the store only (InStore).
	inStore bool
}

// NewResolver returns a resolver for the store at root. all, when not
// nil, is a scan of the whole store already made.
func NewResolver(root string, all *Layout) *Resolver { return &Resolver{root: root, all: all} }

// InStore returns a resolver of the same store that resolves a name given
// by someone other than the user at a shell (an MCP client's argument)
// against the store alone: a session id or a prefix of one, the name of a
// transcript or of a project folder, an absolute path below projects/,
// and a project's directory as an absolute path, which the store's folder
// names and recorded paths are matched with, never looked at on disk. A
// relative path, a path outside the store and latest (which names the
// working directory's newest session) name nothing: nothing is resolved
// against the working directory.
func (r *Resolver) InStore() *Resolver {
	return &Resolver{root: r.root, all: r.all, inStore: true}
}

// Layout returns the resolver's scan of the whole store, made once.
func (r *Resolver) Layout() (*Layout, error) { return r.scan() }

func (r *Resolver) scan() (*Layout, error) {
	if r.all == nil {
		l, err := Scan(r.root)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", r.root, err)
		}
		r.all = l
	}
	return r.all, nil
}

// ResolveTargets returns the files the targets name, merged and sorted
// by path; no target means the whole store.
func ResolveTargets(root string, targets []string) (*Layout, error) {
	return NewResolver(root, nil).Targets(targets)
}

// Targets is ResolveTargets with r: the scan r has made is not made
// again.
func (r *Resolver) Targets(targets []string) (*Layout, error) {
	if len(targets) == 0 {
		return r.scan()
	}
	m := newMerger(r.root)
	for _, a := range targets {
		t, err := r.Resolve(a)
		if err != nil {
			return nil, err
		}
		m.add(t.Layout)
	}
	return m.out, nil
}

// Resolve resolves one name. In order:
//
//   - a session id (a whole UUID) the store holds names that session, even
//     where a folder of that name exists: standing in a project folder, the
//     session's own folder (its subagents) has the session's name;
//   - a path that exists: a file is a transcript (placed in the store's
//     layout when it lies under projects/, through symbolic links too); a
//     folder is the store (its directory or projects/), a project folder,
//     a session folder, or else a working directory, whose project folder
//     (as Claude Code encodes the path) it names;
//   - Latest ("latest"): the newest session of the current directory's
//     project folder (a path named latest is ./latest);
//   - a bare name: a project folder of that name, else a session id
//     prefix of at least MinPrefix characters, which must name one session
//     (an *AmbiguousError lists the candidates).
//
// A name that names nothing is a *TargetError.
func (r *Resolver) Resolve(arg string) (*Target, error) {
	if arg == "" {
		return nil, &TargetError{Target: `""`, Reason: "an empty name"}
	}
	if r.inStore {
		return r.resolveInStore(arg)
	}
	if arg == Latest {
		return r.latest()
	}
	bare := !strings.ContainsRune(arg, filepath.Separator) && arg != "." && arg != ".."
	if bare && IsUUID(arg) {
		t, err := r.sessionByID(arg)
		var te *TargetError
		if err == nil || !errors.As(err, &te) {
			return t, err
		}
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", arg, err)
	}
	fi, statErr := os.Stat(abs)
	if statErr == nil {
		return r.path(arg, abs, fi)
	}
	if bare {
		if fi, err := os.Stat(filepath.Join(ProjectsDir(r.root), arg)); err == nil && fi.IsDir() {
			return r.project(arg, arg)
		}
		if isIDPrefix(arg) {
			return r.sessionByID(arg)
		}
		// A shorter prefix names nothing, but say so when it would match.
		if len(arg) < MinPrefix && isIDPrefix(arg+strings.Repeat("0", MinPrefix-len(arg))) {
			_, err := r.sessionByID(arg)
			var ae *AmbiguousError
			if err == nil || errors.As(err, &ae) {
				return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("a session id prefix needs at least %d characters (cfix ls lists the sessions)", MinPrefix)}
			}
		}
	}
	if !errors.Is(statErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("target %s: %w", arg, statErr)
	}
	if !bare {
		if t, ok, err := r.goneDir(arg, abs); ok || err != nil {
			return t, err
		}
	}
	if bare {
		if t, ok, err := r.byName(arg); ok || err != nil {
			return t, err
		}
	}
	return nil, &TargetError{Target: arg}
}

// resolveInStore is Resolve of a resolver made by InStore.
func (r *Resolver) resolveInStore(arg string) (*Target, error) {
	if strings.ContainsRune(arg, 0) {
		return nil, &TargetError{Target: arg}
	}
	pdir := ProjectsDir(r.root)
	if filepath.IsAbs(arg) {
		abs := filepath.Clean(arg)
		if Within(pdir, abs) {
			// A file or folder of the store, by its path (cleaned, never
			// through a ".." past a link).
			fi, err := os.Stat(abs)
			if err != nil {
				return nil, &TargetError{Target: arg}
			}
			return r.path(arg, abs, fi)
		}
		// A project's directory, as the store names it.
		if t, ok, err := r.goneDir(arg, abs); ok || err != nil {
			return t, err
		}
		return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("no project folder of store %s holds sessions started there", r.root)}
	}
	if arg == Latest || strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		return nil, &TargetError{Target: arg, Reason: "not a name of the store: give a session id, a prefix of one, a transcript's name, or a project's directory as an absolute path"}
	}
	if IsUUID(arg) {
		t, err := r.sessionByID(arg)
		var te *TargetError
		if err == nil || !errors.As(err, &te) {
			return t, err
		}
	}
	if fi, err := os.Stat(filepath.Join(pdir, arg)); err == nil && fi.IsDir() {
		return r.project(arg, arg)
	}
	if isIDPrefix(arg) {
		t, err := r.sessionByID(arg)
		var te *TargetError
		if err == nil || !errors.As(err, &te) {
			return t, err
		}
	}
	if t, ok, err := r.byName(arg); ok || err != nil {
		return t, err
	}
	return nil, &TargetError{Target: arg}
}

// byName resolves a main transcript whose file name is no session id
// (ls lists it by that name) when one project folder holds a transcript
// of that exact name.
func (r *Resolver) byName(arg string) (*Target, bool, error) {
	all, err := r.scan()
	if err != nil {
		return nil, false, err
	}
	var found []File
	for _, f := range all.Files {
		if f.Kind == KindSession && f.Session == arg {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return nil, false, nil
	case 1:
		fi, err := os.Stat(found[0].Path)
		if err != nil {
			return nil, true, fmt.Errorf("target %s: %w", arg, err)
		}
		t, err := r.path(arg, found[0].Path, fi)
		return t, true, err
	}
	var folders []string
	for _, f := range found {
		folders = append(folders, f.Project)
	}
	return nil, true, &TargetError{Target: arg, Folders: folders,
		Reason: fmt.Sprintf("transcripts of that name are in %d project folders (%s): name one by its path", len(found), strings.Join(folders, ", "))}
}

// goneDir resolves a working directory that is no longer on disk (a
// project deleted or renamed: the main reason to look for its sessions)
// through what the store records of it: the project folder its path
// encodes to, else a folder whose sessions name it as their cwd (or
// whose sessions-index.json names it as originalPath), as ls shows them.
func (r *Resolver) goneDir(arg, abs string) (*Target, bool, error) {
	folder := FolderFor(r.root, abs)
	if fi, err := os.Stat(filepath.Join(ProjectsDir(r.root), folder)); err == nil && fi.IsDir() {
		t, err := r.project(arg, folder)
		return t, true, err
	}
	all, err := r.scan()
	if err != nil {
		return nil, false, err
	}
	for _, p := range ProjectsOf(all, SessionsOf(all, nil)) {
		if slices.Contains(p.Paths, abs) {
			t, err := r.project(arg, p.Folder)
			return t, true, err
		}
	}
	return nil, false, nil
}

// Latest names the newest session of the current directory's project:
// the main transcript modified last. `claude -c` of 2.1.330 picks the
// same (measured: a transcript touched later is continued); 1.0.128 picks
// the session with the newest entry.
const Latest = "latest"

// latest resolves Latest: the project folder of the working directory (as
// a directory names one), and in it the session whose main transcript was
// modified last. Side-run transcripts and empty files are not sessions.
func (r *Resolver) latest() (*Target, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", Latest, err)
	}
	t, err := r.workDir(Latest, wd)
	if err != nil {
		var te *TargetError
		if errors.As(err, &te) {
			return nil, &TargetError{Target: Latest, Reason: fmt.Sprintf("the current directory %s has no project folder in store %s (Claude Code saved no session there)", wd, r.root)}
		}
		return nil, err
	}
	var best *File
	for i := range t.Layout.Files {
		f := &t.Layout.Files[i]
		if f.Kind != KindSession || f.Side() || f.Size == 0 {
			continue
		}
		if best == nil || f.ModTime.After(best.ModTime) || f.ModTime.Equal(best.ModTime) && f.Path > best.Path {
			best = f
		}
	}
	if best == nil {
		return nil, &TargetError{Target: Latest, Reason: fmt.Sprintf("project folder %s holds no session", t.Project)}
	}
	return r.session(Latest, best.Session, t.Project)
}

// isIDPrefix reports whether s can be the start of a session id: hex
// digits and dashes, a hex digit first, MinPrefix to 36 characters.
func isIDPrefix(s string) bool {
	if len(s) < MinPrefix || len(s) > 36 || !isHex(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// sessionByID resolves a session id or a prefix of one (case does not
// matter) over the whole store.
func (r *Resolver) sessionByID(arg string) (*Target, error) {
	all, err := r.scan()
	if err != nil {
		return nil, err
	}
	want := strings.ToLower(arg)
	folders := map[string]map[string]bool{} // session id → project folders
	for _, f := range all.Files {
		if f.Kind == KindAgentFlat || !strings.HasPrefix(strings.ToLower(f.Session), want) {
			continue
		}
		if folders[f.Session] == nil {
			folders[f.Session] = map[string]bool{}
		}
		folders[f.Session][f.Project] = true
	}
	// A whole id matches itself only, not the longer names it starts.
	for id := range folders {
		if strings.EqualFold(id, arg) {
			folders = map[string]map[string]bool{id: folders[id]}
			break
		}
	}
	switch len(folders) {
	case 0:
		if IsUUID(arg) {
			return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("no session %s in store %s", arg, r.root)}
		}
		return nil, &TargetError{Target: arg}
	case 1:
		for id := range folders {
			return r.session(arg, id, "")
		}
	}
	e := &AmbiguousError{Target: arg}
	for id, ps := range folders {
		c := Candidate{Session: id}
		for p := range ps {
			c.Projects = append(c.Projects, p)
		}
		sort.Strings(c.Projects)
		e.Candidates = append(e.Candidates, c)
	}
	sort.Slice(e.Candidates, func(i, j int) bool { return e.Candidates[i].Session < e.Candidates[j].Session })
	return nil, e
}

// session resolves the session id: its family over the whole store, or in
// one project folder.
func (r *Resolver) session(arg, id, folder string) (*Target, error) {
	all, err := r.scan()
	if err != nil {
		return nil, err
	}
	fam := Family(all, id)
	if folder != "" {
		fam = fam.In(folder)
	}
	if len(fam.Files) == 0 {
		where := "store " + r.root
		if folder != "" {
			where = "project folder " + folder
		}
		return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("session %s has no transcript in %s", id, where)}
	}
	sort.Slice(fam.Files, func(i, j int) bool { return fam.Files[i].Path < fam.Files[j].Path })
	return &Target{Arg: arg, Kind: TargetSession, Session: id, Project: folder, Layout: fam}, nil
}

// In keeps what of the layout lies in one project folder.
func (l *Layout) In(folder string) *Layout {
	dir := filepath.Join(ProjectsDir(l.Root), folder) + string(filepath.Separator)
	out := &Layout{Root: l.Root}
	for _, f := range l.Files {
		if f.Project == folder {
			out.Files = append(out.Files, f)
		}
	}
	for _, d := range l.SessionDirs {
		if d.Project == folder {
			out.SessionDirs = append(out.SessionDirs, d)
		}
	}
	for _, m := range l.Metas {
		if strings.HasPrefix(m, dir) {
			out.Metas = append(out.Metas, m)
		}
	}
	for _, ix := range l.Indexes {
		if strings.HasPrefix(ix, dir) {
			out.Indexes = append(out.Indexes, ix)
		}
	}
	for _, p := range l.Projects {
		if p == folder {
			out.Projects = append(out.Projects, p)
		}
	}
	for _, pl := range l.Links {
		if pl.Folder == folder {
			out.Links = append(out.Links, pl)
		}
	}
	return out
}

// project resolves a project folder of the store by name.
func (r *Resolver) project(arg, folder string) (*Target, error) {
	l, err := ScanProject(r.root, folder)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", arg, err)
	}
	return &Target{Arg: arg, Kind: TargetProject, Project: folder, Layout: l}, nil
}

// path resolves a path that exists.
func (r *Resolver) path(arg, abs string, fi fs.FileInfo) (*Target, error) {
	rel, in := r.inProjects(abs)
	if !fi.IsDir() {
		if !strings.HasSuffix(abs, ".jsonl") {
			return nil, &TargetError{Target: arg, Whole: arg + " is not a Claude Code transcript (.jsonl)"}
		}
		p := abs
		if in {
			p = filepath.Join(ProjectsDir(r.root), rel)
		}
		f, err := fileAt(r.root, p)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", arg, err)
		}
		l := &Layout{Root: r.root, Files: []File{f}}
		if in {
			l.Projects = []string{f.Project}
			if pl, ok := linkAt(r.root, f.Project); ok {
				l.Links = []ProjectLink{pl}
			}
		}
		return &Target{Arg: arg, Kind: TargetFile, Session: f.Session, Project: f.Project, InStore: in, Layout: l}, nil
	}
	if (in && rel == ".") || RealPath(abs) == RealPath(r.root) {
		all, err := r.scan()
		if err != nil {
			return nil, err
		}
		return &Target{Arg: arg, Kind: TargetStore, Layout: all}, nil
	}
	if in {
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) == 1 {
			return r.project(arg, parts[0])
		}
		if IsUUID(parts[1]) {
			return r.session(arg, parts[1], parts[0])
		}
		return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("not a project folder or a session folder of store %s", r.root)}
	}
	return r.workDir(arg, abs)
}

// workDir resolves a working directory to the project folder Claude Code
// keeps its sessions in: that of its physical path (the cwd Claude Code
// records), else that of the path as given.
func (r *Resolver) workDir(arg, abs string) (*Target, error) {
	dirs := []string{RealPath(abs)}
	if abs != dirs[0] {
		dirs = append(dirs, abs)
	}
	pdir := ProjectsDir(r.root)
	for _, d := range dirs {
		folder := FolderFor(r.root, d)
		if fi, err := os.Stat(filepath.Join(pdir, folder)); err == nil && fi.IsDir() {
			t, err := r.project(arg, folder)
			return t, err
		}
	}
	if filepath.Base(filepath.Dir(abs)) == "projects" {
		return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("not a project folder of store %s", r.root)}
	}
	return nil, &TargetError{Target: arg, Reason: fmt.Sprintf("a directory with no project folder in store %s (%s: Claude Code saved no session there)",
		r.root, FolderFor(r.root, dirs[0]))}
}

// inProjects returns the path of abs (which exists) relative to the
// store's projects folder, if it lies there: by its path, or by its real
// path through a store or a project folder that is a symbolic link.
func (r *Resolver) inProjects(abs string) (string, bool) {
	pdir := ProjectsDir(r.root)
	rel := func(dir, p string) string { s, _ := filepath.Rel(dir, p); return s }
	if Within(pdir, abs) {
		return rel(pdir, abs), true
	}
	real := RealPath(abs)
	if rp := RealPath(pdir); Within(rp, real) {
		return rel(rp, real), true
	}
	ents, err := os.ReadDir(pdir)
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if lr, err := filepath.EvalSymlinks(filepath.Join(pdir, e.Name())); err == nil && Within(lr, real) {
			return filepath.Join(e.Name(), rel(lr, real)), true
		}
	}
	return "", false
}

// linkAt describes projects/<folder> when it is a symbolic link.
func linkAt(root, folder string) (ProjectLink, bool) {
	fi, err := os.Lstat(filepath.Join(ProjectsDir(root), folder))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ProjectLink{}, false
	}
	return linkOf(root, folder), true
}

// fileAt describes the transcript at path, placing it in the store's
// layout when it lies under projects/.
func fileAt(root, path string) (File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return File{}, err
	}
	f := File{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), Kind: KindSession}
	name := filepath.Base(path)
	stem := strings.TrimSuffix(name, ".jsonl")
	parts := []string{filepath.Base(filepath.Dir(path)), name}
	if pdir := ProjectsDir(root); Within(pdir, path) {
		rel, _ := filepath.Rel(pdir, path)
		parts = strings.Split(rel, string(filepath.Separator))
	}
	f.Project = parts[0]
	switch {
	case len(parts) >= 4 && parts[2] == "subagents" && strings.HasPrefix(name, "agent-"):
		f.Kind, f.Session, f.Agent = KindAgent, parts[1], strings.TrimPrefix(stem, "agent-")
	case strings.HasPrefix(name, "agent-"):
		f.Kind, f.Agent = KindAgentFlat, strings.TrimPrefix(stem, "agent-")
	default:
		f.Session = stem
	}
	return f, nil
}

// merger merges the layouts of several targets, each file, folder and
// sidecar once.
type merger struct {
	out  *Layout
	seen map[string]bool
}

func newMerger(root string) *merger {
	return &merger{out: &Layout{Root: root}, seen: map[string]bool{}}
}

func (m *merger) once(kind, key string) bool {
	k := kind + "\x00" + key
	if m.seen[k] {
		return false
	}
	m.seen[k] = true
	return true
}

func (m *merger) add(l *Layout) {
	for _, f := range l.Files {
		if m.once("f", f.Path) {
			m.out.Files = append(m.out.Files, f)
		}
	}
	for _, p := range l.Projects {
		if m.once("p", p) {
			m.out.Projects = append(m.out.Projects, p)
		}
	}
	for _, x := range l.Metas {
		if m.once("m", x) {
			m.out.Metas = append(m.out.Metas, x)
		}
	}
	for _, x := range l.Indexes {
		if m.once("i", x) {
			m.out.Indexes = append(m.out.Indexes, x)
		}
	}
	for _, d := range l.SessionDirs {
		if m.once("d", d.Path) {
			m.out.SessionDirs = append(m.out.SessionDirs, d)
		}
	}
	for _, pl := range l.Links {
		if m.once("l", pl.Path) {
			m.out.Links = append(m.out.Links, pl)
		}
	}
	for _, sp := range l.Specials {
		if m.once("s", sp.Path) {
			m.out.Specials = append(m.out.Specials, sp)
		}
	}
	sort.Slice(m.out.Files, func(i, j int) bool { return m.out.Files[i].Path < m.out.Files[j].Path })
}
