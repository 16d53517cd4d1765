package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/schemas"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// storeCheck runs the checks that look across files: stubs, duplicate
// session ids, leafUuids, subagent parents, sidecars, the index, history,
// orphans and live sessions.
type storeCheck struct {
	root     string
	layout   *store.Layout
	results  []*fileResult
	whole    bool
	findings []Finding

	sessions map[string][]*fileResult // session id → main transcripts
	uuidFile map[string]*fileResult   // chain uuid → file holding it
	byPath   map[string]*fileResult

	allLayout   *store.Layout  // the whole store, for a targeted run (see all)
	agentCounts map[string]int // subagent transcripts by folder and session (see subagents)
	runningIDs  map[string]int // session id → pid of the running process holding it
	leftRefs    []leftRef      // findings of sessions whose conversation is gone
	desktop     *desktop.Index // Claude Desktop's index, when there is one
	cap         findingCap
}

// add records a finding with the code's default severity: the first
// MaxPerCode of its code in path; the others are counted (see
// findingCap). The first of a code in a path is always kept (leftRefs
// point at such findings).
func (s *storeCheck) add(code Code, path string, line int, format string, args ...any) *Finding {
	if !s.cap.admit(path, code) {
		return s.cap.hold(Finding{Code: code, Severity: SeverityOf(code), Path: path, Line: line})
	}
	s.findings = append(s.findings, Finding{Code: code, Severity: SeverityOf(code),
		Path: path, Line: line, Message: fmt.Sprintf(format, args...)})
	return &s.findings[len(s.findings)-1]
}

func (s *storeCheck) run() {
	s.sessions = map[string][]*fileResult{}
	n := 0
	for _, r := range s.results {
		n += len(r.uuids)
	}
	s.uuidFile = make(map[string]*fileResult, n) // sized once: no rehash as it fills
	s.byPath = make(map[string]*fileResult, len(s.results))
	for _, r := range s.results {
		s.byPath[r.file.Path] = r
		if r.file.Kind == store.KindSession {
			s.sessions[r.file.Session] = append(s.sessions[r.file.Session], r)
		}
		for _, u := range r.uuids {
			if _, ok := s.uuidFile[u]; !ok {
				s.uuidFile[u] = r
			}
		}
		r.uuids = nil
	}
	s.sessionFiles()
	s.leafs()
	s.parents()
	s.subagents()
	s.metas()
	s.indexes()
	s.titleReach()
	s.agentCWDs()
	s.folders()
	s.husks()
	s.live()
	s.desktopIndex()
	s.describeLeft()
	if s.whole {
		s.history()
		s.orphans()
		s.sidecars()
	}
}

// sessionFiles checks names, empty files, stubs and ids in several folders.
func (s *storeCheck) sessionFiles() {
	for _, r := range s.results {
		f := r.file
		if f.Kind != store.KindSession {
			continue
		}
		if !store.IsUUID(f.Session) {
			// No command renames it in place (move keeps the name): a
			// clone is a copy /resume lists, the file stays, so the
			// finding names the clone and gives no hint.
			fd := s.add(SessionName, f.Path, 0, "file name %q is not a session UUID: /resume does not list it", f.Session+".jsonl")
			if !subagentFile(f.Path) {
				fd.Message += fmt.Sprintf("; cfix clone %s --to DIR copies it under a session id /resume lists (the file stays)", shell.Quote(f.Path))
			}
		}
		if f.Size == 0 {
			if s.agentsIn(f.Project, f.Session) > 0 {
				// Prune leaves it: its subagents would be left agent-orphan.
				s.add(SessionEmpty, f.Path, 0, "session file is empty (0 bytes) while its subagents ran")
				s.leftRefs = append(s.leftRefs, leftRef{len(s.findings) - 1, f.Session})
				continue
			}
			s.add(SessionEmpty, f.Path, 0, "session file is empty (0 bytes)")
		}
	}
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		rs := s.sessions[id]
		if len(rs) < 2 {
			continue
		}
		for _, r := range rs {
			var others []string
			for _, o := range rs {
				if o != r {
					others = append(others, o.file.Project)
				}
			}
			s.add(SessionIDDup, r.file.Path, 0, "session %s also has a transcript in %s", id, strings.Join(others, ", "))
		}
	}
}

// leafs resolves the leafUuids files could not resolve themselves, and
// finds where a stub's transcript lives.
func (s *storeCheck) leafs() {
	var want []string
	for _, r := range s.results {
		for _, l := range r.leafs {
			want = append(want, l.uuid)
		}
	}
	s.lookUp(want)
	for _, r := range s.results {
		for _, l := range r.leafs {
			if _, ok := s.uuidFile[l.uuid]; !ok {
				s.add(LeafMissing, r.file.Path, l.line, "%s leafUuid %s names no entry anywhere in the store", l.typ, l.uuid)
			}
		}
		if r.file.Kind != store.KindSession || !r.metaOnly {
			continue
		}
		if r.otherID != "" && s.copyOf(r) {
			continue
		}
		where := ""
		for _, l := range r.leafs {
			if o, ok := s.uuidFile[l.uuid]; ok && o != r {
				where = o.file.Path
				break
			}
		}
		if where != "" {
			s.add(SessionStub, r.file.Path, 0, "stub: %s and no conversation; the transcript lives in %s", plural.Count(r.lines, "metadata line"), where)
			continue
		}
		if o := s.conversationOf(r); o != "" {
			s.add(SessionStub, r.file.Path, 0, "stub: %s and no conversation; session %s has its transcript in %s", plural.Count(r.lines, "metadata line"), r.file.Session, o)
			continue
		}
		if s.agentsIn(r.file.Project, r.file.Session) > 0 {
			s.lost(r)
			continue
		}
		s.unwritten(r)
	}
}

// copyOf reports, as a notice, a metadata-only transcript all of whose
// entries carry the id of another session that has its transcript in the
// store: a fork Claude Desktop began and never continued, whose file holds
// a copy of the parent's first lines (queue operations, titles) under the
// parent's id, as its forks that went on start (seen in the wild,
// 2.1.161-2.1.170). Claude Code resumes nothing from it (claude -r ID:
// no conversation, measured with 2.1.177); the parent's transcript holds
// the lines, so prune's removal of it loses nothing. It reports false when
// the other session has no transcript in the store.
func (s *storeCheck) copyOf(r *fileResult) bool {
	var parent string
	for _, o := range s.sessions[r.otherID] {
		if o != r && o.chain > 0 {
			parent = o.file.Path
			break
		}
	}
	if parent == "" || !store.PrefixOf(r.file.Path, parent) {
		return false
	}
	_, types := MetaTitle(r.file.Path)
	s.add(SessionUnwritten, r.file.Path, 0, "session %s holds nothing of its own: its %s (%s) are the first lines of session %s's transcript %s, under that session's id (a fork Claude Desktop began and never continued); claude -r finds no conversation in it; prune removes it, and the transcript keeps the lines", r.file.Session, plural.Count(r.lines, "metadata line"), strings.Join(types, ", "), r.otherID, parent).Severity = Notice
	return true
}

// parents looks up, in the other files of the store, the parents that are
// not in an entry's own file. One found elsewhere is a link Claude Code
// writes across files (a session continued from a sibling file, progress
// pointing into a compaction transcript): a notice. One found nowhere is
// parent-missing: an error where the chain a resume loads is cut there.
func (s *storeCheck) parents() {
	var want []string
	for _, r := range s.results {
		for _, d := range r.dangling {
			want = append(want, d.parent)
		}
	}
	s.lookUp(want)
	for _, r := range s.results {
		for _, d := range r.dangling {
			if o, ok := s.uuidFile[d.parent]; ok && o != r {
				rel, err := filepath.Rel(filepath.Dir(r.file.Path), o.file.Path)
				if err != nil {
					rel = o.file.Path
				}
				if d.cut && d.before > 0 {
					// Claude Code wrote the link, but a resume reads one
					// file: it stops here.
					fd := s.add(ParentElsewhere, r.file.Path, d.line, "parentUuid %s is an entry of %s, not of this file: a resume by Claude Code %s reads this file only, stops here and loads %s, leaving out the %d written before", d.parent, rel, r.loader.Name, plural.Count(d.loaded, "entry"), d.before)
					fd.Severity = Warning
					continue
				}
				s.add(ParentElsewhere, r.file.Path, d.line, "parentUuid %s is an entry of %s, not of this file (Claude Code links files of one session so)", d.parent, rel)
				continue
			}
			if d.cut && d.before > 0 {
				s.add(ParentMissing, r.file.Path, d.line, "parentUuid %s is written nowhere in the store: a resume loads %s and stops here, leaving out the %d written before", d.parent, plural.Count(d.loaded, "entry"), d.before)
				continue
			}
			if d.cut {
				// Nothing of this file is left out: the history it
				// continued is gone (a file cleaned up, say).
				fd := s.add(ParentMissing, r.file.Path, d.line, "parentUuid %s is written nowhere in the store: the history this file continues is gone; a resume loads all %s of the chain", d.parent, plural.Count(d.loaded, "entry"))
				fd.Severity = Warning
				continue
			}
			where := "on a branch a resume does not load"
			if d.relinked {
				where = fmt.Sprintf("Claude Code %s links the entry to the message written right before it, less than 5 s older, and loads the history", r.loader.Name)
			}
			if d.compacted {
				where = "in history a compaction summarized, which a resume does not send"
			}
			fd := s.add(ParentMissing, r.file.Path, d.line, "parentUuid %s is written nowhere in the store (%s)", d.parent, where)
			fd.Severity = Warning
		}
	}
}

// lookUp finds, in a targeted run, the files of the uuids that the
// checked files do not hold (a whole-store run has them all).
func (s *storeCheck) lookUp(uuids []string) {
	var missing []string
	for _, u := range uuids {
		if _, ok := s.uuidFile[u]; !ok {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 && !s.whole {
		s.searchStore(missing)
	}
}

// searchStore looks for the uuids in transcripts outside the checked files
// (a targeted run), by scanning raw bytes, and records the files found.
func (s *storeCheck) searchStore(uuids []string) {
	checked := map[string]bool{}
	for _, r := range s.results {
		checked[r.file.Path] = true
	}
	for u, path := range FindEntries(s.root, checked, uuids) {
		s.uuidFile[u] = &fileResult{file: store.File{Path: path}}
	}
}

// subagents checks that subagent transcripts have a parent session.
func (s *storeCheck) subagents() {
	inFolder := map[string]bool{} // project/session
	for _, r := range s.results {
		if r.file.Kind == store.KindSession {
			inFolder[r.file.Project+"/"+r.file.Session] = true
		}
	}
	exists := func(project, id string) bool {
		if inFolder[project+"/"+id] {
			return true
		}
		_, err := os.Stat(filepath.Join(store.ProjectsDir(s.root), project, id+".jsonl"))
		return err == nil
	}
	reported := map[string]bool{}
	for _, r := range s.results {
		f := r.file
		switch f.Kind {
		case store.KindAgent:
			if exists(f.Project, f.Session) {
				continue
			}
			dir := filepath.Join(store.ProjectsDir(s.root), f.Project, f.Session)
			if !reported[dir] {
				reported[dir] = true
				s.add(AgentOrphan, dir, 0, "subagent folder of session %s, whose transcript %s.jsonl is missing", f.Session, f.Session)
				if store.IsUUID(f.Session) && !s.hasMain(f.Session) {
					s.leftRefs = append(s.leftRefs, leftRef{len(s.findings) - 1, f.Session})
				}
			}
		case store.KindAgentFlat:
			if r.sessionID != "" && !exists(f.Project, r.sessionID) {
				s.add(AgentOrphan, f.Path, 0, "flat subagent of session %s, whose transcript is not in this folder", r.sessionID)
			}
		}
	}
}

// metas checks that subagent .meta.json sidecars parse (0 bytes is fine).
func (s *storeCheck) metas() {
	for _, m := range s.layout.Metas {
		b, err := rfile.ReadFile(m)
		if err != nil {
			s.add(ReadFailed, m, 0, "%v", err)
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			s.add(MetaInvalid, m, 0, "not a JSON object: %v", err)
		}
	}
}

// sessionIndex is sessions-index.json.
type sessionIndex struct {
	Version      int          `json:"version"`
	Entries      []indexEntry `json:"entries"`
	OriginalPath string       `json:"originalPath"`
}

type indexEntry struct {
	SessionID    string `json:"sessionId"`
	FullPath     string `json:"fullPath"`
	FileMtime    int64  `json:"fileMtime"`
	MessageCount int    `json:"messageCount"`
	IsSidechain  bool   `json:"isSidechain"`
}

// indexes compares each sessions-index.json with the files beside it.
func (s *storeCheck) indexes() {
	for _, path := range s.layout.Indexes {
		var idx sessionIndex
		if err := parseJSONFile(path, &idx); err != nil {
			s.add(IndexInvalid, path, 0, "cannot parse: %v", err)
			continue
		}
		dir := filepath.Dir(path)
		folder := filepath.Base(dir)
		listed := map[string]bool{}
		for i, e := range idx.Entries {
			listed[e.SessionID] = true
			want := filepath.Join(dir, e.SessionID+".jsonl")
			fi, err := os.Stat(want)
			if err != nil {
				s.add(IndexMissingFile, path, 0, "entry %d: session %s has no file %s", i+1, e.SessionID, want)
				continue
			}
			if e.FullPath != "" && filepath.Clean(e.FullPath) != want {
				s.add(IndexPath, path, 0, "entry %d: fullPath %s should be %s", i+1, e.FullPath, want)
			}
			if e.FileMtime != 0 && e.FileMtime != fi.ModTime().UnixMilli() {
				s.add(IndexDrift, path, 0, "entry %d: session %s: fileMtime %d, file modified %d", i+1, e.SessionID, e.FileMtime, fi.ModTime().UnixMilli())
			} else if r := s.resultFor(want); r != nil && e.MessageCount != 0 && e.MessageCount != r.messages {
				s.add(IndexDrift, path, 0, "entry %d: session %s: messageCount %d, file has %s", i+1, e.SessionID, e.MessageCount, plural.Count(r.messages, "message"))
			}
		}
		for _, r := range s.results {
			f := r.file
			// A session with no message /resume does not list, indexed or
			// not (repair's rebuild leaves it out of the index).
			if f.Kind != store.KindSession || f.Project != folder || listed[f.Session] || !store.IsUUID(f.Session) || r.metaOnly || r.messages == 0 || f.Size == 0 {
				continue
			}
			s.add(IndexUnindexed, f.Path, 0, "session %s is not in %s: /resume may not list it", f.Session, path)
		}
	}
}

func (s *storeCheck) resultFor(path string) *fileResult { return s.byPath[path] }

// live reports sessions that a running Claude Code process holds open.
func (s *storeCheck) live() {
	ls, err := store.LiveSessions(s.root)
	if err != nil {
		s.add(ReadFailed, filepath.Join(s.root, "sessions"), 0, "%v", err)
		return
	}
	for _, l := range ls {
		if s.whole {
			if why, stale := store.StalePIDFile(l, store.LayoutHolds(s.all(), l.SessionID)); stale {
				s.add(SessionPIDStale, l.Path, 0, "names session %s, which is not on disk, and %s: the file of a process that is gone; prune removes it", l.SessionID, why)
				continue
			}
		}
		if !l.Running || l.SessionID == "" {
			continue
		}
		rs := s.sessions[l.SessionID]
		if len(rs) == 0 && !s.whole {
			continue
		}
		path := l.Path
		if len(rs) > 0 {
			path = rs[0].file.Path
		}
		s.add(SessionLive, path, 0, "session %s is live (pid %d, %s): planners will not rewrite it", l.SessionID, l.PID, l.Path)
		// A live session is being written: a tool still running has no
		// result yet, and the last line may be half-written.
		for _, r := range s.results {
			if r.file.Session != l.SessionID {
				continue
			}
			for i := range r.findings {
				f := &r.findings[i]
				switch f.Code {
				case ToolResultMiss, LineTorn, NoFinalNewline:
					f.Severity = Notice
					f.Message += fmt.Sprintf(" (the session is live, pid %d: it may be in progress)", l.PID)
				}
			}
		}
	}
}

// history checks the lines of history.jsonl.
func (s *storeCheck) history() {
	path := filepath.Join(s.root, "history.jsonl")
	fh, err := rfile.Open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.add(ReadFailed, path, 0, "%v", err)
		}
		return
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	p := session.NewParser()
	cache := schemas.NewCache()
	for rd.Next() {
		ln := rd.Line()
		if len(bytes.TrimSpace(ln.Raw)) == 0 {
			s.add(LineEmpty, path, ln.N, "empty line")
			continue
		}
		// The line checks of a transcript, then the fields of history.
		r := work(p, cache, ln, nil)
		for _, fd := range r.findings {
			s.add(fd.code, path, ln.N, "%s", fd.msg)
		}
		if len(r.values) == 0 || !r.values[0].object {
			continue
		}
		m, _ := p.Parse(bytes.ReplaceAll(ln.Raw, []byte{0}, nil)).Value.(map[string]any)
		var bad []string
		if _, ok := m["display"].(string); !ok {
			bad = append(bad, "display (string)")
		}
		if _, ok := m["timestamp"].(json.Number); !ok {
			bad = append(bad, "timestamp (number)")
		}
		if _, ok := m["project"].(string); !ok {
			bad = append(bad, "project (string)")
		}
		if v, ok := m["sessionId"]; ok {
			if _, ok := v.(string); !ok {
				bad = append(bad, "sessionId (string)")
			}
		}
		if len(bad) > 0 {
			s.add(HistoryInvalid, path, ln.N, "history entry lacks or mistypes %s", strings.Join(bad, ", "))
		}
	}
	if err := rd.Err(); err != nil {
		s.add(ReadFailed, path, 0, "%v", err)
	}
}

// known reports whether a session id has a transcript anywhere in the store.
func (s *storeCheck) known(id string) bool { return len(s.sessions[id]) > 0 }

// orphans finds per-session leftovers of sessions that no longer exist.
func (s *storeCheck) orphans() {
	list := func(sub string) []fs.DirEntry {
		ents, err := os.ReadDir(filepath.Join(s.root, sub))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.add(ReadFailed, filepath.Join(s.root, sub), 0, "%v", err)
		}
		return ents
	}
	for _, e := range list("session-env") {
		path := filepath.Join(s.root, "session-env", e.Name())
		if !e.IsDir() {
			continue
		}
		if !s.known(e.Name()) {
			s.add(OrphanSessionEnv, path, 0, "session-env of session %s, which no longer exists", e.Name())
			continue
		}
		if sub, err := os.ReadDir(path); err == nil && len(sub) == 0 {
			s.add(SessionEnvEmpty, path, 0, "empty session-env folder")
		}
	}
	for _, e := range list("file-history") {
		if e.IsDir() && !s.known(e.Name()) {
			s.add(OrphanFileHist, filepath.Join(s.root, "file-history", e.Name()), 0, "file-history of session %s, which no longer exists", e.Name())
		}
	}
	for _, e := range list("todos") {
		name := e.Name()
		i := strings.Index(name, "-agent-")
		if e.IsDir() || i < 0 || !strings.HasSuffix(name, ".json") {
			continue
		}
		if id := name[:i]; !s.known(id) {
			s.add(OrphanTodos, filepath.Join(s.root, "todos", name), 0, "todos of session %s, which no longer exists", id)
		}
	}
	for _, e := range list("debug") {
		name := e.Name()
		if e.Type()&fs.ModeSymlink != 0 || name == "latest" || !strings.HasSuffix(name, ".txt") {
			continue
		}
		if id := strings.TrimSuffix(name, ".txt"); store.IsUUID(id) && !s.known(id) {
			s.add(OrphanDebug, filepath.Join(s.root, "debug", name), 0, "debug log of session %s, which no longer exists", id)
		}
	}
}
