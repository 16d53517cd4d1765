package store

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// SessionInfo is a session of a store as a listing shows it: the glance at
// its main transcript and what its subagents add.
type SessionInfo struct {
	Glance
	Subagents     int   // subagent transcripts, both layouts
	SubagentBytes int64 // their bytes
	Live          bool  // a running process has it open (LiveSessions)
	// Swept: Claude Code's next retention sweep deletes its transcript
	// (see Sweep; set by MarkSwept).
	Swept bool
	// Guarded: cfix's SessionStart hook archives it at the next start,
	// before the sweep (set by guard.Mark).
	Guarded bool
}

// MarkSwept marks the sessions whose transcript the sweep sw deletes (a
// live one is written to, so not old), and returns how many and their
// bytes (transcripts and subagents).
func MarkSwept(ss []SessionInfo, sw Sweep) (n int, bytes int64) {
	for i := range ss {
		s := &ss[i]
		s.Swept = !s.Live && sw.Deletes(s.ModTime)
		if s.Swept {
			n++
			bytes += s.Size + s.SubagentBytes
		}
	}
	return n, bytes
}

// NoMessage reports whether the session's transcript holds no message
// (an empty file, or one read whole with no user or assistant entry) and
// it has no subagent: nothing cfix archive --older-than keeps.
func (s *SessionInfo) NoMessage() bool {
	return s.Subagents == 0 && (s.Empty || s.MessagesKnown && s.Messages == 0)
}

// Hidden reports whether a listing leaves the session out unless asked
// for all: an empty file, or a Warmup probe.
func (s *SessionInfo) Hidden() bool { return s.Empty || s.Warmup }

// SessionsOf glances at the main transcripts of l (never reading more than
// the head and tail of each) and counts their subagents; live names the
// live sessions. Side-run transcripts are subagents, never sessions. The
// result is in the order of l.Files.
func SessionsOf(l *Layout, live map[string]bool) []SessionInfo { return SessionsWith(l, live, nil) }

// SessionsWith is SessionsOf through memo (nil: none): a transcript memo
// kept is not read again.
func SessionsWith(l *Layout, live map[string]bool, memo Memo) []SessionInfo {
	var mains []File
	type key struct{ project, id string }
	at := map[key]int{}
	ids := map[string]int{} // main transcripts of each id with a conversation
	for _, f := range l.Files {
		if f.Kind == KindSession {
			at[key{f.Project, f.Session}] = len(mains)
			mains = append(mains, f)
		}
	}
	dirs := map[string]bool{}
	for _, d := range l.SessionDirs {
		dirs[d.Path] = true
	}
	gs := glanceAll(mains, dirs, memo)
	out := make([]SessionInfo, len(gs))
	for i, g := range gs {
		out[i] = SessionInfo{Glance: g, Live: live[g.Session]}
		if out[i].Live {
			// As validate: a live session's last line may be half
			// written, and one that has just started has written its
			// metadata only (notices, which health does not count).
			for j := range out[i].Quick {
				switch q := &out[i].Quick[j]; q.Code {
				case "line-torn", "final-newline-missing", "session-unwritten":
					q.Severity = "notice"
					q.Message += " (the session is live: it may be in progress)"
				}
			}
		}
		if !g.MetaOnly && !g.Empty {
			ids[g.Session]++
		}
	}
	var flat []File
	for _, f := range l.Files {
		if f.Kind == KindAgentFlat {
			flat = append(flat, f)
		}
	}
	flatIDs := flatSessions(flat, memo)
	nflat := 0
	for _, f := range l.Files {
		id := f.Session
		switch f.Kind {
		case KindSession:
			continue
		case KindAgentFlat:
			id = flatIDs[nflat]
			nflat++
		}
		if i, ok := at[key{f.Project, id}]; ok {
			out[i].Subagents++
			out[i].SubagentBytes += f.Size
		}
	}
	// A file too big to count whole takes the messageCount of its
	// sessions-index.json entry when the entry is of the file as it is.
	for _, ix := range l.Indexes {
		for _, e := range indexCounts(ix) {
			i, ok := at[key{filepath.Base(filepath.Dir(ix)), e.SessionID}]
			if ok && !out[i].MessagesKnown && e.FileMtime == out[i].ModTime.UnixMilli() && e.MessageCount > 0 {
				out[i].Messages, out[i].MessagesKnown = e.MessageCount, true
			}
		}
	}
	RestubWith(out, l, ids, memo)
	return out
}

// Restub names session-stub what a glance took for a transcript never
// written (session-unwritten): a metadata-only file whose session has a
// conversation in another file. conversations counts, by session id, the
// main transcripts of sessions with one that a glance has read; ids of all
// missing from it are glanced at (a listing of one project folder passes
// a scan of the whole store as all, and nil).
func Restub(sessions []SessionInfo, all *Layout, conversations map[string]int) {
	RestubWith(sessions, all, conversations, nil)
}

// RestubWith is Restub through memo (nil: none). A metadata-only file all
// of whose lines carry the id of another session that has its transcript
// (a fork Claude Desktop began and never continued, holding the first lines
// of its parent's) is said to be so, as a notice.
func RestubWith(sessions []SessionInfo, all *Layout, conversations map[string]int, memo Memo) {
	want := map[string]bool{}
	paths := map[string]string{} // session → a main transcript of it with a conversation
	for i := range sessions {
		s := &sessions[i]
		if !s.MetaOnly && s.Size > 0 && s.Kind == KindSession {
			paths[s.Session] = s.Path
		}
		if !s.MetaOnly || !s.hasCode("session-unwritten") {
			continue
		}
		if conversations[s.Session] == 0 {
			want[s.Session] = true
		}
		if s.OtherID != "" {
			want[s.OtherID] = true
		}
	}
	if len(want) > 0 && all != nil {
		if conversations == nil {
			conversations = map[string]int{}
		}
		mine := map[string]bool{}
		for i := range sessions {
			mine[sessions[i].Path] = true
		}
		var others []File
		for _, f := range all.Files {
			if f.Kind == KindSession && want[f.Session] && !mine[f.Path] && f.Size > 0 {
				others = append(others, f)
			}
		}
		for _, g := range glanceAll(others, nil, memo) {
			if !g.MetaOnly {
				conversations[g.Session]++
				paths[g.Session] = g.Path
			}
		}
	}
	for i := range sessions {
		s := &sessions[i]
		if !s.MetaOnly {
			continue
		}
		// Whether its lines are the transcript's first, byte for byte,
		// validate reads; a listing opens no transcript a glance is kept
		// of.
		if s.OtherID != "" && paths[s.OtherID] != "" {
			for j := range s.Quick {
				if s.Quick[j].Code == "session-unwritten" {
					s.Quick[j] = QuickFinding{Code: "session-unwritten", Severity: "notice",
						Message: "holds nothing of its own: its lines carry the id of session " + s.OtherID + ", which has its transcript (a fork Claude Desktop began and never continued)"}
				}
			}
			continue
		}
		if conversations[s.Session] == 0 {
			continue
		}
		for j := range s.Quick {
			if s.Quick[j].Code == "session-unwritten" {
				s.Quick[j] = QuickFinding{Code: "session-stub", Severity: QuickCodes["session-stub"],
					Message: "stub: metadata lines and no conversation; session " + s.Session + " has its transcript in another file"}
			}
		}
	}
}

// PrefixOf reports whether the lines of the file at path are the first
// lines of the file at of, byte for byte (a file of at most 1000 lines).
func PrefixOf(path, of string) bool {
	a, err := rfile.Open(path)
	if err != nil {
		return false
	}
	defer a.Close()
	b, err := rfile.Open(of)
	if err != nil {
		return false
	}
	defer b.Close()
	ra, rb := session.NewReader(a, nil), session.NewReader(b, nil)
	for n := 0; ra.Next(); n++ {
		if n == 1000 || !rb.Next() || !bytes.Equal(ra.Line().Raw, rb.Line().Raw) {
			return false
		}
	}
	return ra.Err() == nil
}

// ProjectInfo is a project folder as a listing of the store shows it.
type ProjectInfo struct {
	Folder string
	// Paths are the real paths of the folder's working directories: the
	// cwds its sessions' entries name that encode to the folder (all of
	// them when none does), else the originalPath of its
	// sessions-index.json. PathsFrom says which: "cwd", "index" or "".
	Paths     []string
	PathsFrom string
	// Sessions counts the sessions a listing shows; Hidden the empty and
	// Warmup ones it leaves out unless asked for all.
	Sessions, Hidden int
	Subagents        int
	Size             int64 // every file under the folder
	LastActive       time.Time
	Errors, Warnings int // of the quick checks of its sessions
	Live             int
	// MemoryOnly: the folder holds Claude Code's memory/ of the project and
	// nothing else (its last session removed or archived). Its real path
	// cannot be known: no entry names it.
	MemoryOnly bool
	// Empty: the folder holds nothing, or only a sessions-index.json that
	// lists no session (its sessions removed or archived by another tool,
	// or by a cfix that left such folders).
	Empty bool
}

// ProjectsOf sums up the project folders of l from its sessions (from
// SessionsOf). The result is sorted by folder name.
func ProjectsOf(l *Layout, sessions []SessionInfo) []ProjectInfo {
	out := ProjectPathsOf(l, sessions)
	// The sizes: a walk of each folder, on every core, with the sizes of
	// the transcripts the scan has already taken.
	known := make(map[string]int64, len(l.Files))
	for _, f := range l.Files {
		known[f.Path] = f.Size
	}
	parallel(len(out), func(_ *glancer, i int) {
		dir := filepath.Join(ProjectsDir(l.Root), out[i].Folder)
		out[i].Size = treeSize(dir, known, l.listed)
		if p := &out[i]; p.Sessions == 0 && p.Hidden == 0 && p.Subagents == 0 {
			if len(p.Paths) == 0 {
				p.MemoryOnly = memoryOnly(dir)
			}
			p.Empty = emptyFolder(dir)
		}
	})
	return out
}

// ProjectPathsOf is ProjectsOf without what needs a walk of the folders:
// their Size and MemoryOnly are left zero.
func ProjectPathsOf(l *Layout, sessions []SessionInfo) []ProjectInfo {
	by := map[string]*ProjectInfo{}
	cwds := map[string]map[string]int{}   // every cwd named
	firsts := map[string]map[string]int{} // the first cwd of each session
	untimed := map[string]time.Time{}     // last mtime of files with no timestamp
	for _, p := range l.Projects {
		by[p] = &ProjectInfo{Folder: p}
		cwds[p], firsts[p] = map[string]int{}, map[string]int{}
	}
	for i := range sessions {
		s := &sessions[i]
		p := by[s.Project]
		if p == nil {
			p = &ProjectInfo{Folder: s.Project}
			by[s.Project] = p
			cwds[s.Project], firsts[s.Project] = map[string]int{}, map[string]int{}
		}
		if s.Hidden() {
			p.Hidden++
		} else {
			p.Sessions++
		}
		p.Subagents += s.Subagents
		if !s.Timed {
			if s.LastActive.After(untimed[s.Project]) {
				untimed[s.Project] = s.LastActive
			}
		} else if s.LastActive.After(p.LastActive) {
			p.LastActive = s.LastActive
		}
		p.Errors += s.Errors()
		p.Warnings += s.Warnings()
		if s.Live {
			p.Live++
		}
		for _, c := range s.CWDs {
			cwds[s.Project][c]++
		}
		if len(s.CWDs) > 0 {
			firsts[s.Project][s.CWDs[0]]++
		}
	}
	out := make([]ProjectInfo, 0, len(by))
	for folder, p := range by {
		if p.LastActive.IsZero() {
			p.LastActive = untimed[folder]
		}
		p.Paths = realPaths(folder, cwds[folder], firsts[folder])
		if len(p.Paths) > 0 {
			p.PathsFrom = "cwd"
		} else if op := indexPath(filepath.Join(ProjectsDir(l.Root), folder, "sessions-index.json")); op != "" {
			p.Paths, p.PathsFrom = []string{op}, "index"
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Folder < out[j].Folder })
	return out
}

// realPaths picks the working directories of a folder from the cwds its
// entries name (with how many sessions name each): those that encode to
// the folder, else the first cwd of each session (a session can change
// directory); most named first.
func realPaths(folder string, cwds, firsts map[string]int) []string {
	var all []string
	for c := range cwds {
		if FolderMatches(folder, c) {
			all = append(all, c)
		}
	}
	if len(all) == 0 {
		cwds = firsts
		for c := range firsts {
			all = append(all, c)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if cwds[all[i]] != cwds[all[j]] {
			return cwds[all[i]] > cwds[all[j]]
		}
		return all[i] < all[j]
	})
	return all
}

type indexCount struct {
	SessionID    string `json:"sessionId"`
	FileMtime    int64  `json:"fileMtime"`
	MessageCount int    `json:"messageCount"`
}

// indexCounts reads the entries of a sessions-index.json ("" on error).
func indexCounts(path string) []indexCount {
	b, err := rfile.ReadFile(path)
	if err != nil {
		return nil
	}
	var v struct {
		Entries []indexCount `json:"entries"`
	}
	json.Unmarshal(b, &v)
	return v.Entries
}

// indexPath returns the originalPath of a sessions-index.json, or "".
func indexPath(path string) string {
	b, err := rfile.ReadFile(path)
	if err != nil {
		return ""
	}
	var v struct {
		OriginalPath string `json:"originalPath"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.OriginalPath
}

// treeSize sums the sizes of the regular files under dir (through dir
// itself when it is a symbolic link); known holds sizes already taken, by
// path, and listed the entries of folders already read.
func treeSize(dir string, known map[string]int64, listed map[string][]fs.DirEntry) int64 {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			dir, known, listed = r, nil, nil
		}
	}
	return sumTree(dir, known, listed)
}

// sumTree sums the sizes of the regular files under the folder dir (not
// through symbolic links).
func sumTree(dir string, known map[string]int64, listed map[string][]fs.DirEntry) int64 {
	ents, ok := listed[dir]
	var d *os.File
	if !ok {
		var err error
		if d, ents, err = readDir(dir); err != nil {
			return 0
		}
		defer d.Close()
	}
	var n int64
	for _, e := range ents {
		path := join(dir, e.Name())
		switch {
		case e.IsDir():
			n += sumTree(path, known, listed)
		case !e.Type().IsRegular():
		case known != nil && hasKey(known, path):
			n += known[path]
		case d != nil:
			if size, ok := sizeIn(d, e.Name()); ok {
				n += size
			}
		default:
			if fi, err := os.Lstat(path); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

func hasKey(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

// memoryOnly reports whether the folder dir holds a memory/ folder and
// nothing else.
// emptyFolder reports whether the project folder dir holds nothing, or
// only a sessions-index.json that lists no session.
func emptyFolder(dir string) bool {
	ents, err := os.ReadDir(dir)
	switch {
	case err != nil || len(ents) > 1:
		return false
	case len(ents) == 0:
		return true
	case ents[0].Name() != "sessions-index.json" || !ents[0].Type().IsRegular():
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	if err != nil {
		return false
	}
	var v struct {
		Entries []json.RawMessage `json:"entries"`
	}
	return json.Unmarshal(b, &v) == nil && len(v.Entries) == 0
}

func memoryOnly(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		return false
	}
	return ents[0].Name() == "memory" && ents[0].IsDir()
}
