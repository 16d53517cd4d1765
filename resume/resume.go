// Package resume finds the session cfix resume opens, the working
// directory Claude Code must run in to find it, and what a resume of it
// would send: the check cfix resume makes before it starts the client.
package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// Target is the session to resume.
type Target struct {
	Session string // its id
	Path    string // its main transcript
	Project string // its project folder's name
	Title   string // as /resume shows it
	Version string // of the Claude Code that wrote it last
	// Dir is the working directory Claude Code looks for the session
	// from: the cwd its entries name that encodes to its project folder
	// (the first one named, when none does). DirExists says whether it is
	// on disk.
	Dir       string
	DirExists bool

	// resolver found it: Check resolves its path with it, and so scans
	// the store no more than once.
	resolver *store.Resolver
}

// InputError is about what the user named: no session, several.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Find resolves what the user named, as every command does (an id, a
// unique prefix, a .jsonl path, latest) or, with title, the sessions whose
// title (as /resume shows it) holds every word of title, case aside.
func Find(root, arg, title string) (*Target, error) {
	f, r, g, err := locate(root, arg, title)
	if err != nil {
		return nil, err
	}
	if g == nil {
		// One glance at one transcript (its head and tail) reads less
		// than the catalog's cache of the whole store: no catalog here.
		gl := store.GlanceAt(f)
		g = &gl
	}
	t := target(root, *g)
	t.resolver = r
	return t, nil
}

// FindChecked is Find, then Check, at once: the check starts as soon as
// the transcript is known, while the glance reads its title and directory
// (so it takes no longer than validate of the session).
func FindChecked(root, arg, title string) (*Target, []validate.Finding, error) {
	f, r, g, err := locate(root, arg, title)
	if err != nil {
		return nil, nil, err
	}
	var found []validate.Finding
	var cerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		found, cerr = Check(root, &Target{Path: f.Path, resolver: r})
	}()
	if g == nil {
		gl := store.GlanceAt(f)
		g = &gl
	}
	t := target(root, *g)
	t.resolver = r
	<-done
	if cerr != nil {
		return nil, nil, cerr
	}
	return t, found, nil
}

// locate finds the main transcript of what the user named (see Find),
// with the resolver that found it, and its glance when the catalog gave
// it (by title). A session whose name starts with "-" is refused: the
// client would take it for an option.
func locate(root, arg, title string) (store.File, *store.Resolver, *store.Glance, error) {
	f, r, g, err := find(root, arg, title)
	if err == nil && strings.HasPrefix(f.Session, "-") {
		return store.File{}, nil, nil, &InputError{Msg: fmt.Sprintf("transcript %s is named %s, which starts with \"-\": Claude Code would take it for an option; cfix resumes no such name",
			visible.String(f.Path), visible.String(f.Session))}
	}
	return f, r, g, err
}

// find is locate but for the refusal of a name.
func find(root, arg, title string) (store.File, *store.Resolver, *store.Glance, error) {
	if title != "" {
		cat := catalog.Open(root)
		// A cache that cannot be written costs only the next lookup's time.
		defer cat.Close()
		g, err := byTitle(cat, title)
		if err != nil {
			return store.File{}, nil, nil, err
		}
		var r *store.Resolver
		if l, err := cat.Layout(); err == nil {
			r = store.NewResolver(cat.Root, l)
		}
		return g.File, r, g, nil
	}
	r := store.NewResolver(root, nil)
	t, err := r.Resolve(arg)
	if err != nil {
		return store.File{}, nil, nil, err
	}
	var mains []store.File
	for _, f := range t.Layout.Files {
		if f.Kind == store.KindSession && (t.Session == "" || strings.EqualFold(f.Session, t.Session)) {
			mains = append(mains, f)
		}
	}
	switch {
	case len(mains) == 0:
		return store.File{}, nil, nil, &InputError{Msg: fmt.Sprintf("%s names no session with a main transcript (cfix ls lists them)", arg)}
	case len(mains) > 1 && t.Session == "":
		return store.File{}, nil, nil, &InputError{Msg: fmt.Sprintf("%s names %d sessions (a project folder?): name one by its id (cfix ls %s lists them)", arg, len(mains), arg)}
	case len(mains) > 1:
		var where []string
		for _, f := range mains {
			where = append(where, f.Path)
		}
		return store.File{}, nil, nil, &InputError{Msg: fmt.Sprintf("session %s has transcripts in %d folders (cfix validate says which is the stub): name one by its path: %s", t.Session, len(mains), strings.Join(where, ", "))}
	}
	return mains[0], r, nil, nil
}

// byTitle finds the one session whose title holds every word of title,
// among those the catalog lists: its glance.
func byTitle(cat *catalog.Catalog, title string) (*store.Glance, error) {
	list, err := cat.List(false)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(title))
	var found []catalog.Session
	for _, s := range list {
		t := strings.ToLower(s.Title)
		ok := len(words) > 0
		for _, w := range words {
			ok = ok && strings.Contains(t, w)
		}
		if ok {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, &InputError{Msg: fmt.Sprintf("--title %q: no session's title holds it (cfix ls lists the titles)", title)}
	case 1:
		return &found[0].Glance, nil
	}
	// found is newest first, as the catalog lists.
	w := 0
	for _, s := range found {
		w = max(w, len(s.Short))
	}
	var lines []string
	for _, s := range found {
		lines = append(lines, fmt.Sprintf("  %-*s  %s  %s", w, visible.String(s.Short), s.LastActive.Local().Format("2006-01-02 15:04"), visible.String(s.Title)))
	}
	return nil, &InputError{Msg: fmt.Sprintf("--title %q: %d sessions' titles hold it; name one by its id:\n%s", title, len(found), strings.Join(lines, "\n"))}
}

// target is the session whose main transcript's glance is g: its title,
// version and working directory.
func target(root string, g store.Glance) *Target {
	f := g.File
	t := &Target{Session: f.Session, Path: f.Path, Project: f.Project, Title: g.Title, Version: g.Version}
	for _, c := range g.CWDs {
		if store.FolderMatches(f.Project, c) {
			t.Dir = c
			break
		}
	}
	if t.Dir == "" && len(g.CWDs) > 0 {
		t.Dir = g.CWDs[0]
	}
	if t.Dir != "" {
		if fi, err := os.Stat(t.Dir); err == nil && fi.IsDir() {
			t.DirExists = true
		}
	}
	return t
}

// Check is what validate finds in the session's family that a resume by
// the writing version's client fails on or loses history to: the findings
// of severity error.
func Check(root string, t *Target) ([]validate.Finding, error) {
	r := t.resolver
	if r == nil {
		r = store.NewResolver(root, nil)
	}
	rep, err := validate.Run(validate.Options{Root: root, Targets: []string{t.Path}, Resolver: r})
	if err != nil {
		return nil, err
	}
	var out []validate.Finding
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			out = append(out, f)
		}
	}
	return out, nil
}

// Here reports whether dir, the directory cfix resume runs in, is where
// Claude Code finds the session from: its project folder is the session's.
func Here(root string, t *Target, dir string) bool {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return store.FolderFor(root, dir) == t.Project
}
