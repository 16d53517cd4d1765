package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// Kind tells which kind of file of the store a finding is in.
type Kind string

const (
	KindTranscript  Kind = "transcript"     // a main transcript
	KindSubagent    Kind = "subagent"       // a subagent transcript (either layout)
	KindHistory     Kind = "history"        // history.jsonl
	KindToolResult  Kind = "tool-result"    // <session>/tool-results/*: a tool's output kept apart
	KindSessionFile Kind = "session-file"   // another file of a session folder or a project folder (.meta.json, sessions-index.json, memory)
	KindFileHistory Kind = "file-history"   // file-history/<session>/*: backups of files Claude Code edited
	KindPaste       Kind = "paste"          // paste-cache/*
	KindTodo        Kind = "todo"           // todos/*
	KindPlan        Kind = "plan"           // plans/*
	KindTask        Kind = "task"           // tasks/*
	KindShell       Kind = "shell-snapshot" // shell-snapshots/*
	KindSessionEnv  Kind = "session-env"    // session-env/*
	KindExport      Kind = "export"         // transcripts/*, pre-compact-session-histories/*
	KindUsage       Kind = "usage-data"     // usage-data/*
	KindDebug       Kind = "debug"          // debug/*
)

// sideFolders are the folders of the store beside projects/ whose files
// hold what went through Claude Code, and the kind of each. Settings,
// credentials, plugins and caches are not history: nothing here reads
// them.
var sideFolders = []struct {
	dir  string
	kind Kind
}{
	{"file-history", KindFileHistory},
	{"paste-cache", KindPaste},
	{"todos", KindTodo},
	{"plans", KindPlan},
	{"tasks", KindTask},
	{"shell-snapshots", KindShell},
	{"session-env", KindSessionEnv},
	{"transcripts", KindExport},
	{"pre-compact-session-histories", KindExport},
	{"usage-data", KindUsage},
	{"debug", KindDebug},
}

// IgnoreFile is the name of the file in the store's directory that lists
// the fingerprints of findings to leave alone, one a line.
const IgnoreFile = ".cfix-secrets-ignore"

// job is one file to scan.
type job struct {
	path    string
	kind    Kind
	session string // the session it belongs to, when its path says
	lines   bool   // JSON lines (else text)
	// history: history.jsonl, whose lines say their session and project;
	// keep, when set, says which of its lines are in the scope.
	history bool
	keep    *lineFilter
}

// lineFilter keeps the history.jsonl lines of some sessions, or of some
// project folders.
type lineFilter struct {
	sessions map[string]bool
	folders  []string
}

func (f *lineFilter) keeps(sessionID, project string) bool {
	if f == nil {
		return true
	}
	if sessionID != "" {
		return f.sessions[sessionID]
	}
	for _, folder := range f.folders {
		if project != "" && store.FolderMatches(folder, project) {
			return true
		}
	}
	return false
}

// scope lists the files to scan: the whole store, or what the targets
// name (a session, a project folder, a transcript) and the files of the
// store that belong to their sessions.
func scope(root string, targets []string) ([]job, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return wholeStore(root)
	}
	l, err := store.ResolveTargets(root, targets)
	if err != nil {
		return nil, err
	}
	var jobs []job
	seen := map[string]bool{}
	add := func(j job) {
		if !seen[j.path] {
			seen[j.path] = true
			jobs = append(jobs, j)
		}
	}
	sessions := map[string]bool{}
	for _, f := range l.Files {
		add(transcriptJob(f))
		if f.Session != "" {
			sessions[f.Session] = true
		}
		if f.Kind == store.KindAgentFlat {
			if id := store.FlatAgentSession(f.Path); id != "" {
				sessions[id] = true
			}
		}
	}
	for _, m := range l.Metas {
		add(job{path: m, kind: KindSessionFile, lines: true})
	}
	for _, d := range l.SessionDirs {
		err := walkFiles(d.Path, func(p string) {
			add(projectJob(p, d.Session))
		})
		if err != nil {
			return nil, err
		}
	}
	folders := map[string]bool{}
	for _, f := range l.Files {
		folders[f.Project] = true
	}
	for _, p := range l.Projects {
		folders[p] = true
	}
	for folder := range folders {
		ix := filepath.Join(store.ProjectsDir(root), folder, "sessions-index.json")
		if fi, err := os.Lstat(ix); err == nil && fi.Mode().IsRegular() {
			add(job{path: ix, kind: KindSessionFile, lines: true})
		}
	}
	var ids []string
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var slugs = map[string]bool{}
	for _, f := range l.Files {
		ss, _ := store.FileSlugs(f.Path)
		for _, s := range ss {
			slugs[s] = true
		}
	}
	for _, id := range ids {
		for _, d := range []struct {
			dir  string
			kind Kind
		}{{"file-history", KindFileHistory}, {"session-env", KindSessionEnv}, {"tasks", KindTask}} {
			dir := filepath.Join(root, d.dir, id)
			if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
				walkFiles(dir, func(p string) { add(job{path: p, kind: d.kind, session: id, lines: isJSON(p)}) })
			}
		}
		if p := filepath.Join(root, "debug", id+".txt"); regular(p) {
			add(job{path: p, kind: KindDebug, session: id})
		}
		todos, _ := filepath.Glob(filepath.Join(root, "todos", id+"*.json"))
		for _, p := range todos {
			if regular(p) {
				add(job{path: p, kind: KindTodo, session: id, lines: true})
			}
		}
	}
	if plans, err := store.Plans(root); err == nil {
		for _, p := range plans {
			if store.PlanNamedBy(filepath.Base(p.Path), slugs) {
				add(job{path: p.Path, kind: KindPlan})
			}
		}
	}
	hist := filepath.Join(root, "history.jsonl")
	if regular(hist) {
		keep := &lineFilter{sessions: sessions}
		for folder := range folders {
			keep.folders = append(keep.folders, folder)
		}
		sort.Strings(keep.folders)
		add(job{path: hist, kind: KindHistory, lines: true, history: true, keep: keep})
		for _, h := range pastesOf(hist, keep) {
			if p := filepath.Join(root, "paste-cache", h+".txt"); regular(p) {
				add(job{path: p, kind: KindPaste})
			}
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].path < jobs[j].path })
	return jobs, nil
}

// wholeStore lists every file of the store that holds history.
func wholeStore(root string) ([]job, error) {
	var jobs []job
	l, err := store.Scan(root)
	if err != nil {
		return nil, err
	}
	kinds := map[string]store.File{}
	for _, f := range l.Files {
		kinds[f.Path] = f
	}
	pdir := store.ProjectsDir(root)
	for _, folder := range l.Projects {
		dir := filepath.Join(pdir, folder)
		err := walkFiles(dir, func(p string) {
			if f, ok := kinds[p]; ok {
				jobs = append(jobs, transcriptJob(f))
				return
			}
			jobs = append(jobs, projectJob(p, ""))
		})
		if err != nil {
			return nil, err
		}
	}
	if p := filepath.Join(root, "history.jsonl"); regular(p) {
		jobs = append(jobs, job{path: p, kind: KindHistory, lines: true, history: true})
	}
	for _, d := range sideFolders {
		dir := filepath.Join(root, d.dir)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		err := walkFiles(dir, func(p string) {
			jobs = append(jobs, job{path: p, kind: d.kind, lines: isJSON(p)})
		})
		if err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

func transcriptJob(f store.File) job {
	k := KindTranscript
	if f.Kind != store.KindSession {
		k = KindSubagent
	}
	return job{path: f.Path, kind: k, session: f.Session, lines: true}
}

// projectJob is a file under a project folder that is no transcript.
func projectJob(p, session string) job {
	k := KindSessionFile
	if strings.Contains(filepath.ToSlash(p), "/tool-results/") {
		k = KindToolResult
	}
	return job{path: p, kind: k, session: session, lines: isJSON(p)}
}

// isJSON reports whether a file's name says it holds JSON (read as JSON
// lines: a one-line JSON file is one).
func isJSON(p string) bool {
	return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")
}

func regular(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// walkFiles calls fn for each regular file under dir (through dir itself
// when it is a symbolic link to a folder, as a project folder may be;
// never through one below it), in lexical order, with its path under dir.
func walkFiles(dir string, fn func(path string)) error {
	real := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil // a link to nowhere holds nothing
		}
		real = r
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) && p != real {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return nil
		}
		fn(filepath.Join(dir, rel))
		return nil
	})
}

// pastesOf returns the content hashes of the pastes the kept lines of
// history.jsonl name.
func pastesOf(hist string, keep *lineFilter) []string {
	f, err := rfile.Open(hist)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	rd := session.NewReader(f, nil)
	for rd.Next() {
		raw := rd.Line().Raw
		if !bytes.Contains(raw, []byte(`"contentHash"`)) {
			continue
		}
		var v struct {
			SessionID string `json:"sessionId"`
			Project   string `json:"project"`
			Pasted    map[string]struct {
				ContentHash string `json:"contentHash"`
			} `json:"pastedContents"`
		}
		if json.Unmarshal(raw, &v) != nil || !keep.keeps(v.SessionID, v.Project) {
			continue
		}
		for _, p := range v.Pasted {
			if p.ContentHash != "" {
				out = append(out, p.ContentHash)
			}
		}
	}
	return out
}
