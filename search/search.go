// Package search finds text in a Claude Code store: what people and the
// model wrote (prompts, answers, thinking, tool inputs and outputs, titles
// and summaries, history.jsonl prompts), matched on the decoded text of
// those fields only, never in member names, ids or other metadata.
//
// A search reads each file once, in large chunks, on every core. It looks
// for the pattern's raw form first (see prefilter) and decodes only the
// lines that hold it, so a rare word costs little more than reading the
// bytes; it holds one chunk (or one line longer than a chunk) per core,
// whatever the size of the store.
package search

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

	"github.com/cfix-dev/cfix/store"
)

// Source tells which kind of file a hit comes from.
type Source string

const (
	SourceSession    Source = "session"           // a main transcript
	SourceSubagent   Source = "subagent"          // a subagent transcript (either layout)
	SourceHistory    Source = "history"           // history.jsonl
	SourceExport     Source = "transcript-export" // transcripts/ses_*.jsonl
	SourcePreCompact Source = "pre-compact"       // pre-compact-session-histories/*.jsonl
)

// Roles a hit can have, for Options.Role.
var Roles = []string{"user", "assistant", "tool", "title", "summary", "harness"}

// Kinds of text a hit is in.
const (
	KindText       = "text"        // a prompt or an answer
	KindThinking   = "thinking"    // the model's thinking
	KindToolInput  = "tool-input"  // a tool call's input
	KindToolOutput = "tool-output" // a tool's result
	KindTitle      = "title"       // custom-title or ai-title
	KindSummary    = "summary"     // a summary line or a compaction summary
	KindPrompt     = "prompt"      // a history.jsonl prompt (display or pasted text)
)

// Hit is one text that matches: a field of one line.
type Hit struct {
	Source  Source
	Path    string
	Line    int    // 1-based
	Session string // the session id ("" when the line names none)
	Agent   string // the agent id of a subagent transcript
	Project string // the project folder, for files under projects/
	Time    time.Time
	Role    string
	Tool    string // the tool's name, for tool inputs and outputs
	Kind    string
	Field   string // the member holding the text inside a tool's input or output
	// The text around the first match: Before + Match + After, decoded.
	Before, Match, After string
	// CutBefore and CutAfter report that the text goes on past the snippet.
	CutBefore, CutAfter bool
	Count               int // matches in the whole text
}

// Options says what to search and where.
type Options struct {
	Root       string
	Pattern    string
	Regex      bool
	IgnoreCase bool
	Role       string // "" any
	Tool       string // "" any; case does not matter
	Project    string // a directory (as Claude Code names its project folder) or a project folder; "" any
	Sessions   []string
	Since      time.Time // zero: no bound
	Until      time.Time
	// Context is how many bytes of text a snippet shows on each side of
	// the match (default 60).
	Context int
	// Workers is how many files are read at once (default GOMAXPROCS).
	Workers int
	// Warn receives a message about a line that may hold a hit but is
	// not valid JSON (its hits before the damage are still reported).
	Warn func(msg string)
	// Stop, when set, is asked before the hits of each file are taken:
	// once it says yes, the search ends and Run returns ErrStopped.
	Stop func() bool
	// Skip, when set, is asked of each file before it is read: a file it
	// says yes to is not searched (the MCP server's files that lead
	// outside the store).
	Skip func(path string) bool
	// Redact, when set, rewrites each text before it is matched (cfix
	// mcp takes the secrets out of what it answers): hits and snippets
	// are of what it returns. It is called from several goroutines at
	// once, and may return its argument.
	Redact func(text []byte) []byte
}

// ErrStopped is what Run returns when Options.Stop ended the search.
var ErrStopped = errors.New("search stopped")

// Stats sums up a search.
type Stats struct {
	Files int // files searched
	Bytes int64
	Hits  int
}

// OptionError reports a bad option value.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// job is one file to search.
type job struct {
	path    string
	source  Source
	project string
	session string // the session the file belongs to, when its path says
	agent   string
	// project filter for files whose lines say their directory (history,
	// pre-compact): a line counts when its cwd or project is in folder.
	lineFolder string
	// sessions filter for history.jsonl lines.
	lineSessions map[string]bool
}

// Run searches the store, calling emit for each hit in the order of the
// files (sorted by path: projects, then the extras, then history.jsonl)
// and of their lines. An error from emit stops the search and is returned.
func Run(opts Options, emit func(*Hit) error) (Stats, error) {
	var st Stats
	pat, err := CompilePattern(opts.Pattern, opts.Regex, opts.IgnoreCase)
	if err != nil {
		return st, &OptionError{Msg: err.Error()}
	}
	if opts.Role != "" {
		ok := false
		for _, r := range Roles {
			ok = ok || r == opts.Role
		}
		if !ok {
			return st, &OptionError{Msg: fmt.Sprintf("role %q: want one of %s", opts.Role, strings.Join(Roles, ", "))}
		}
	}
	if opts.Tool != "" && opts.Role != "" && opts.Role != "tool" {
		return st, &OptionError{Msg: fmt.Sprintf("--tool finds tool inputs and outputs only; --role %s has none", opts.Role)}
	}
	src, err := plan(opts)
	if err != nil {
		return st, err
	}
	if skip := opts.Skip; skip != nil {
		all := src
		src = func(yield func(job) bool) error {
			return all(func(j job) bool { return skip(j.path) || yield(j) })
		}
	}
	if opts.Context <= 0 {
		opts.Context = 60
	}
	return runJobs(opts, pat, src, emit)
}

// producer hands the files to search to yield, in order, until yield
// returns false. An error it returns is reported with the files' errors.
type producer func(yield func(job) bool) error

// plan says which files to search. Named sessions are resolved first (a
// bad name is an error before anything is read); the whole store, or a
// project, is listed a folder at a time while the files found so far are
// searched.
func plan(opts Options) (producer, error) {
	root := opts.Root
	folder := ""
	if opts.Project != "" {
		f, err := projectFolder(root, opts.Project)
		if err != nil {
			return nil, err
		}
		folder = f
	}
	if _, err := os.Stat(store.ProjectsDir(root)); err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	extras, err := store.Extras(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	hist := filepath.Join(root, "history.jsonl")
	haveHist := false
	if fi, err := os.Stat(hist); err == nil && fi.Mode().IsRegular() {
		haveHist = true
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	tail := func(yield func(job) bool, extras []store.Extra, sessions map[string]bool) bool {
		for _, e := range extras {
			j := job{path: e.Path, source: SourceExport, session: e.Name}
			if e.Kind == store.ExtraPreCompact {
				j.source = SourcePreCompact
				j.lineFolder = folder
			} else if folder != "" {
				continue // an export says nothing of its directory
			}
			if !yield(j) {
				return false
			}
		}
		if haveHist && (sessions == nil || len(sessions) > 0) {
			return yield(job{path: hist, source: SourceHistory, lineFolder: folder, lineSessions: sessions})
		}
		return true
	}
	if len(opts.Sessions) == 0 {
		return func(yield func(job) bool) error {
			err := scanProjects(root, folder, func(f store.File) bool { return yield(fileJob(f)) })
			if err != nil {
				return err
			}
			tail(yield, extras, nil)
			return nil
		}, nil
	}
	sessions := map[string]bool{}
	r := store.NewResolver(root, nil)
	seenFile := map[string]bool{}
	seenExtra := map[string]bool{}
	var files []store.File
	var named []store.Extra
	for _, arg := range opts.Sessions {
		if e, ok := extraNamed(root, extras, arg); ok {
			if !seenExtra[e.Path] {
				seenExtra[e.Path] = true
				named = append(named, e)
			}
			continue
		}
		t, err := r.Resolve(arg)
		if err != nil {
			return nil, err
		}
		if t.Kind != store.TargetSession && !(t.Kind == store.TargetFile && t.InStore) {
			return nil, &store.TargetError{Target: arg, Reason: fmt.Sprintf("a %s, not a session (--project names a project)", t.Kind)}
		}
		for _, f := range t.Layout.Files {
			if !seenFile[f.Path] && (folder == "" || f.Project == folder) {
				seenFile[f.Path] = true
				files = append(files, f)
			}
		}
		if t.Kind == store.TargetSession {
			sessions[t.Session] = true
			// The session's pre-compact histories are its own.
			for _, e := range extras {
				if e.Kind == store.ExtraPreCompact && e.Name == t.Session && !seenExtra[e.Path] {
					seenExtra[e.Path] = true
					named = append(named, e)
				}
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Slice(named, func(i, j int) bool { return named[i].Path < named[j].Path })
	return func(yield func(job) bool) error {
		for _, f := range files {
			if !yield(fileJob(f)) {
				return nil
			}
		}
		tail(yield, named, sessions)
		return nil
	}, nil
}

func fileJob(f store.File) job {
	j := job{path: f.Path, source: SourceSession, project: f.Project, session: f.Session, agent: f.Agent}
	if f.Kind != store.KindSession {
		j.source = SourceSubagent
	}
	return j
}

// scanProjects lists the transcripts of the store's project folders (or of
// one), a folder at a time, in the order of their paths, as store.Scan
// does: folders and links to folders, read through.
func scanProjects(root, only string, yield func(store.File) bool) error {
	pdir := store.ProjectsDir(root)
	var folders []string
	if only != "" {
		folders = []string{only}
	} else {
		ents, err := os.ReadDir(pdir)
		if err != nil {
			return fmt.Errorf("store %s: %w", root, err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				if e.Type()&fs.ModeSymlink == 0 {
					continue
				}
				if fi, err := os.Stat(filepath.Join(pdir, e.Name())); err != nil || !fi.IsDir() {
					continue // a link to a file, or to nothing: no project folder
				}
			}
			folders = append(folders, e.Name())
		}
		// In the order of the files' paths: projects/a-b/ before projects/a/.
		sort.Slice(folders, func(i, j int) bool { return folders[i]+"/" < folders[j]+"/" })
	}
	for _, name := range folders {
		l, err := store.ScanProject(root, name)
		if err != nil {
			return fmt.Errorf("store %s: %w", root, err)
		}
		sort.Slice(l.Files, func(i, j int) bool { return l.Files[i].Path < l.Files[j].Path })
		for _, f := range l.Files {
			if !yield(f) {
				return nil
			}
		}
	}
	return nil
}

// projectFolder names the project folder of --project: a directory as
// Claude Code names its folder (the resolver's working directory rule,
// also for a directory that is gone), or a project folder by name or path.
func projectFolder(root, dir string) (string, error) {
	t, err := store.NewResolver(root, nil).Resolve(dir)
	if err == nil {
		if t.Kind == store.TargetProject {
			return t.Project, nil
		}
		return "", &store.TargetError{Target: dir, Reason: fmt.Sprintf("a %s, not a directory or a project folder", t.Kind)}
	}
	var te *store.TargetError
	if !errors.As(err, &te) {
		return "", err
	}
	if _, serr := os.Stat(dir); serr == nil || !filepath.IsAbs(dir) {
		return "", err
	}
	// A directory that is gone: its sessions stay in the folder its path
	// encodes to.
	folder := store.FolderFor(root, filepath.Clean(dir))
	if fi, serr := os.Stat(filepath.Join(store.ProjectsDir(root), folder)); serr == nil && fi.IsDir() {
		return folder, nil
	}
	return "", &store.TargetError{Target: dir, Reason: fmt.Sprintf("a directory with no project folder in store %s (%s: Claude Code saved no session there)", root, folder)}
}

// extraNamed finds the extra a --session argument names: its path, its
// name, or a unique prefix of its name.
func extraNamed(root string, all []store.Extra, arg string) (store.Extra, bool) {
	if strings.ContainsRune(arg, filepath.Separator) {
		return store.ExtraAt(root, arg)
	}
	if !strings.HasPrefix(arg, "ses_") {
		return store.Extra{}, false
	}
	var found []store.Extra
	for _, e := range all {
		if e.Name == arg {
			return e, true
		}
		if e.Kind == store.ExtraExport && strings.HasPrefix(e.Name, arg) {
			found = append(found, e)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return store.Extra{}, false
}

// result is a batch of hits of one file, or the file's end.
type result struct {
	hits []*Hit
	err  error
	done bool
	size int64
	// noFile: the end of the listing, not of a file (its error).
	noFile bool
}

// runJobs searches the files on every core and emits the hits in order.
func runJobs(opts Options, pat *Pattern, src producer, emit func(*Hit) error) (Stats, error) {
	var st Stats
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type work struct {
		j   *job
		out chan result
	}
	queue := make(chan work)
	// The feeder may run up to 1024 files ahead of the file whose hits are
	// being emitted: with a few files ahead only, a big transcript held
	// the other cores idle while its worker read it (the bench store's
	// 200 MB session: the rare word's search 0.18 s, now 0.14 s). A file
	// ahead holds at most three batches of hits (two sent, one being
	// filled) before its worker waits.
	order := make(chan chan result, 1024)
	stop := make(chan struct{})
	// Every send below gives up when stop is closed; Run returns when
	// the feeder and the workers have.
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1 + workers)
	go func() {
		defer wg.Done()
		defer close(queue)
		defer close(order)
		err := src(func(j job) bool {
			w := work{j: &j, out: make(chan result, 2)}
			select {
			case order <- w.out:
			case <-stop:
				return false
			}
			select {
			case queue <- w:
			case <-stop:
				return false
			}
			return true
		})
		if err != nil {
			out := make(chan result, 1)
			out <- result{done: true, err: err, noFile: true}
			select {
			case order <- out:
			case <-stop:
			}
		}
	}()
	for i := 0; i < workers; i++ {
		go func() {
			defer wg.Done()
			fs := newFileSearcher(opts, pat)
			for w := range queue {
				fs.run(w.j, w.out, stop)
			}
		}()
	}
	var firstErr error // from emit: stops the search
	var fileErrs []error
files:
	for out := range order {
		if opts.Stop != nil && opts.Stop() {
			firstErr = ErrStopped
			close(stop)
			break
		}
		for r := range out {
			if r.done {
				if !r.noFile {
					st.Files++
				}
				st.Bytes += r.size
				if r.err != nil {
					fileErrs = append(fileErrs, r.err)
				}
				break
			}
			for _, h := range r.hits {
				st.Hits++
				if err := emit(h); err != nil {
					// The file's worker may never send its end now.
					firstErr = err
					close(stop)
					break files
				}
			}
		}
	}
	if firstErr != nil {
		return st, firstErr
	}
	return st, errors.Join(fileErrs...)
}
