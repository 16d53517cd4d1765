package validate

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// all returns the layout of the whole store (the checked layout in a
// whole-store run).
func (s *storeCheck) all() *store.Layout {
	if s.whole {
		return s.layout
	}
	if s.allLayout == nil {
		l, err := store.Scan(s.root)
		if err != nil {
			l = s.layout
		}
		s.allLayout = l
	}
	return s.allLayout
}

// conversationOf returns another main transcript of r's session (its file
// name) that holds a conversation, or "".
func (s *storeCheck) conversationOf(r *fileResult) string {
	for _, o := range s.sessions[r.file.Session] {
		if o != r && o.chain > 0 {
			return o.file.Path
		}
	}
	if s.whole {
		return ""
	}
	for _, f := range s.all().Files {
		if f.Kind != store.KindSession || f.Session != r.file.Session || f.Path == r.file.Path || s.byPath[f.Path] != nil {
			continue
		}
		if HasConversation(f.Path) {
			return f.Path
		}
	}
	return ""
}

// HasConversation reports whether a transcript holds a chain entry. It
// stops at the first one.
func HasConversation(path string) bool {
	fh, err := rfile.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	p := session.NewParser()
	p.Header = true
	var e session.Entry
	for rd.Next() {
		r := p.Parse(rd.Line().Raw)
		if r.Err == nil && session.HeaderOf(r.Value, &e) && e.IsChain() {
			return true
		}
	}
	return false
}

// unwritten reports a metadata-only transcript whose session has no
// transcript anywhere: its conversation was never written (seen in the
// wild: queue-operation and file-history-snapshot lines alone; the issue
// reports of 2.1.169 to 2.1.227: a title alone). The /resume picker lists
// a file by its title, and opens it empty.
func (s *storeCheck) unwritten(r *fileResult) {
	title, types := MetaTitle(r.file.Path)
	what := fmt.Sprintf("%s (%s)", plural.Count(r.lines, "metadata line"), strings.Join(types, ", "))
	if len(r.leafs) > 0 {
		what += " whose leafUuid is found nowhere"
	}
	var f *Finding
	if title != "" {
		f = s.add(SessionUnwritten, r.file.Path, 0, "the conversation of session %s was never written: %s, titled %q, and no file of the store holds its transcript; /resume lists it by that title and opens it empty", r.file.Session, what, title)
	} else {
		f = s.add(SessionUnwritten, r.file.Path, 0, "the conversation of session %s was never written: %s and no file of the store holds its transcript", r.file.Session, what)
	}
	if pid, ok := s.running()[r.file.Session]; ok {
		// A session that has just started writes its metadata first.
		f.Severity = Notice
		f.Message += fmt.Sprintf(" (the session is live, pid %d: it may be about to write it)", pid)
	}
}

// running returns the sessions a running Claude Code process holds, with
// its pid.
func (s *storeCheck) running() map[string]int {
	if s.runningIDs == nil {
		s.runningIDs = map[string]int{}
		ls, _ := store.LiveSessions(s.root)
		for _, l := range ls {
			if l.Running && l.SessionID != "" {
				s.runningIDs[l.SessionID] = l.PID
			}
		}
	}
	return s.runningIDs
}

// hasMain reports whether a session has a main transcript anywhere in the
// store.
func (s *storeCheck) hasMain(id string) bool {
	if len(s.sessions[id]) > 0 {
		return true
	}
	if s.whole {
		return false
	}
	for _, f := range s.all().Files {
		if f.Kind == store.KindSession && f.Session == id {
			return true
		}
	}
	return false
}

// husks reports session folders (<folder>/<id>/) of sessions that have no
// transcript anywhere in the store and that hold no subagent transcript
// (those are agent-orphan, and hold messages): tool-results/ and
// custom-title.json (2.1.330) of a transcript that is gone.
func (s *storeCheck) husks() {
	for _, d := range s.layout.SessionDirs {
		if _, live := s.running()[d.Session]; !store.IsUUID(d.Session) || live || s.hasMain(d.Session) {
			continue
		}
		files, size, transcripts := 0, int64(0), false
		var top []string
		if ents, err := os.ReadDir(d.Path); err == nil {
			for _, e := range ents {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				top = append(top, n)
			}
		}
		filepath.WalkDir(d.Path, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".jsonl") {
				transcripts = true
				return filepath.SkipAll
			}
			files++
			if fi, err := e.Info(); err == nil {
				size += fi.Size()
			}
			return nil
		})
		if transcripts {
			continue
		}
		s.add(SessionHusk, d.Path, 0, "session folder of %s, which has no transcript anywhere in the store: %s, %s (%s) used by nothing",
			d.Session, plural.Count(files, "file"), plural.Count(size, "byte"), strings.Join(top, ", "))
	}
}

// dirNameRE is what CLAUDE_CODE_PROJECT_DIR_NAME must match for 2.1.330
// to use it (a name, not a path); reservedRE the names it refuses.
var (
	dirNameRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	reservedRE = regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])$`)
	driveRE    = regexp.MustCompile(`^[A-Za-z]--`)
)

// namedFolder reports whether a project folder's name can be one
// CLAUDE_CODE_PROJECT_DIR_NAME gave rather than the encoding of a
// working directory: a name the variable accepts that an absolute path
// never encodes to (those start with "-", or "X--" on Windows).
func namedFolder(name string) bool {
	return dirNameRE.MatchString(name) && !reservedRE.MatchString(name) &&
		!strings.HasPrefix(name, "-") && !driveRE.MatchString(name)
}

// agentCWDs drops the cwd-mismatch of a subagent transcript whose every
// cwd is also a cwd of its session: a subagent runs where its session
// runs (the session's own finding, if any, says what is amiss).
func (s *storeCheck) agentCWDs() {
	for _, r := range s.results {
		if r.file.Kind == store.KindSession || len(r.cwds) == 0 {
			continue
		}
		id := r.file.Session
		if r.file.Kind == store.KindAgentFlat {
			id = r.sessionID
		}
		parent := map[string]bool{}
		for _, p := range s.sessions[id] {
			for _, c := range p.cwds {
				parent[c] = true
			}
		}
		if len(parent) == 0 || slices.ContainsFunc(r.cwds, func(c string) bool { return !parent[c] }) {
			continue
		}
		r.findings = slices.DeleteFunc(r.findings, func(f Finding) bool { return f.Code == CWDMismatch })
	}
}

// folders reports project folders named by CLAUDE_CODE_PROJECT_DIR_NAME
// (their sessions' cwds never encode to their name: no cwd-mismatch
// there) and folders two working directories share.
func (s *storeCheck) folders() {
	byFolder := map[string][]*fileResult{}
	pdir := store.ProjectsDir(s.root)
	for _, r := range s.results {
		if !store.Within(pdir, r.file.Path) {
			// A file outside the store has no project folder to match.
			r.findings = slices.DeleteFunc(r.findings, func(f Finding) bool { return f.Code == CWDMismatch })
			continue
		}
		byFolder[r.file.Project] = append(byFolder[r.file.Project], r)
	}
	folders := make([]string, 0, len(byFolder))
	for f := range byFolder {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	for _, folder := range folders {
		rs := byFolder[folder]
		dir := filepath.Join(store.ProjectsDir(s.root), folder)
		cwds := map[string]bool{}
		matched, sessions := false, 0
		for _, r := range rs {
			if r.cwd == "" {
				continue
			}
			if r.file.Kind == store.KindSession {
				sessions++
				cwds[r.cwd] = true
			}
			for _, f := range r.findings {
				if f.Code == CWDMismatch && f.Severity == Notice {
					matched = true // some entries' cwd encodes to the folder
				}
			}
			if store.FolderMatches(folder, r.cwd) {
				matched = true
			}
		}
		list := slices.Sorted(maps.Keys(cwds))
		if namedFolder(folder) && !matched && len(list) > 0 {
			for _, r := range rs {
				kept := r.findings[:0]
				for _, f := range r.findings {
					if f.Code != CWDMismatch {
						kept = append(kept, f)
					}
				}
				r.findings = kept
			}
			s.add(ProjectDirNamed, dir, 0, "project folder %s is named by CLAUDE_CODE_PROJECT_DIR_NAME, not by a working directory: its %s ran in %s",
				folder, plural.Count(sessions, "session"), strings.Join(quoted(list), ", "))
			continue
		}
		// Working directories that encode to this very folder.
		enc := map[string]string{} // normalized → as written
		for _, c := range list {
			if len(store.EncodeProject(c)) > store.MaxFolderLen || !store.FolderMatches(folder, c) {
				continue // a long name's hash tells long paths apart
			}
			enc[normCWD(c)] = c
		}
		if len(enc) < 2 {
			continue
		}
		var shared []string
		for _, c := range enc {
			shared = append(shared, c)
		}
		sort.Strings(shared)
		s.add(ProjectShared, dir, 0, "%d working directories encode to project folder %s and share it (and its /resume list): %s",
			len(shared), folder, strings.Join(quoted(shared), ", "))
	}
}

// normCWD makes the two spellings of one Windows drive one.
func normCWD(c string) string {
	if len(c) >= 3 && c[1] == ':' && (c[2] == '\\' || c[2] == '/') {
		return strings.ToLower(c[:1]) + c[1:]
	}
	return c
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// sidecars reports the sidecars of sessions that no longer exist: task
// lists, plans no transcript names, /insights data, pasted texts no
// prompt names, shell snapshots of processes that are gone.
func (s *storeCheck) sidecars() {
	now := time.Now()
	live, _ := store.LiveSessions(s.root)
	gone := func(id string) bool {
		_, running := s.running()[id]
		return !s.known(id) && !running
	}
	failed := func(dir string, err error) bool {
		if err != nil {
			s.add(ReadFailed, filepath.Join(s.root, dir), 0, "%v", err)
			return true
		}
		return false
	}
	tasks, err := store.TaskLists(s.root)
	if !failed("tasks", err) {
		for _, t := range tasks {
			if gone(t.Session) {
				s.add(OrphanTasks, t.Path, 0, "task list of session %s, which no longer exists", t.Session)
			}
		}
	}
	plans, err := store.Plans(s.root)
	if !failed("plans", err) && len(plans) > 0 {
		slugs := map[string]bool{}
		for _, r := range s.results {
			for _, sl := range r.slugs {
				slugs[sl] = true
			}
		}
		for _, p := range plans {
			if store.Settled(p, now) && !store.PlanNamedBy(filepath.Base(p.Path), slugs) {
				s.add(OrphanPlan, p.Path, 0, "plan %s: no transcript of the store names its slug", filepath.Base(p.Path))
			}
		}
	}
	for _, sub := range []struct {
		dir  string
		list func(string) ([]store.Sidecar, error)
		what string
	}{{"session-meta", store.SessionMetas, "/insights summary"}, {"facets", store.Facets, "/insights facets"}} {
		ms, err := sub.list(s.root)
		if failed(filepath.Join("usage-data", sub.dir), err) {
			continue
		}
		for _, m := range ms {
			if gone(m.Session) {
				s.add(OrphanUsageData, m.Path, 0, "%s of session %s, which no longer exists", sub.what, m.Session)
			}
		}
	}
	pastes, err := store.Pastes(s.root)
	if !failed("paste-cache", err) && len(pastes) > 0 {
		refs, err := store.PasteRefs(s.root)
		if !failed("history.jsonl", err) {
			for _, p := range pastes {
				if !refs[p.Hash] && store.Settled(p, now) {
					s.add(OrphanPaste, p.Path, 0, "pasted text %s: no prompt of history.jsonl names it", p.Hash)
				}
			}
		}
	}
	snaps, err := store.ShellSnapshots(s.root)
	if !failed("shell-snapshots", err) {
		for _, sn := range snaps {
			if !store.ShellSnapshotInUse(sn, live, now) {
				s.add(OrphanShellSnap, sn.Path, 0, "shell snapshot made %s, before every running Claude Code process started: the process that sources it is gone",
					sn.Created.Local().Format("2006-01-02 15:04"))
			}
		}
	}
}
