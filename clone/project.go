package clone

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// ProjectOptions configure a move-project plan.
type ProjectOptions struct {
	// Root is the store directory.
	Root string
	// Old is the project's old directory (made absolute and clean, never
	// resolved through symlinks: it is the path the entries recorded). New
	// is its new directory (also resolved through symlinks when it exists).
	Old, New string
	// Merge allows moving sessions into a folder that already holds some.
	Merge bool
	// Config is the settings file with the projects map; "" is
	// ConfigPath(Root).
	Config string
}

// FolderMove is one project folder a move-project plan moves.
type FolderMove struct {
	From, To    string // project folders (absolute)
	Dir, NewDir string // the project directories they belong to
	Sessions    int    // main transcripts moved
}

// ProjectPlan is a move-project change set and what it moves.
type ProjectPlan struct {
	ChangeSet *changeset.ChangeSet
	Old, New  string
	Folders   []FolderMove
}

// MoveProject plans the move of a project's history from Old to New: every
// session of Old's project folder (and of the folders of projects under
// Old: Old/sub goes to New/sub) moves to the folder of the new path, with
// the old path rewritten to the new one (whole path components) in each
// entry's cwd, in the target sessions-index.json (fullPath, projectPath,
// originalPath), in history.jsonl project fields, and in the keys of the
// projects map of the settings file. Entries of other sessions whose cwd
// is under Old are rewritten in place. The folder's other contents
// (memory/, session folders with subagents and tool-results) move along.
func MoveProject(o ProjectOptions) (*ProjectPlan, error) {
	pp, err := moveProject(o)
	if err != nil {
		return nil, err
	}
	carry.LeaveLinks(pp.ChangeSet)
	if l, ok := pp.ChangeSet.OutsideLink(); ok {
		return nil, conflict("%s; a move-project is all or nothing: nothing is planned", l)
	}
	return pp, nil
}

func moveProject(o ProjectOptions) (*ProjectPlan, error) {
	root := o.Root
	if o.Old == "" || o.New == "" {
		return nil, inputErr("move-project needs OLD_DIR and NEW_DIR")
	}
	old, err := filepath.Abs(o.Old)
	if err != nil {
		return nil, inputErr("%s: %v", o.Old, err)
	}
	old = filepath.Clean(old)
	if old == "/" {
		return nil, inputErr("OLD_DIR cannot be /")
	}
	nw, err := carry.NormDir(o.New)
	if err != nil {
		return nil, err
	}
	switch {
	case nw == old:
		return nil, inputErr("OLD_DIR and NEW_DIR are the same directory (%s)", old)
	case carry.Under(old, nw):
		return nil, inputErr("NEW_DIR %s is inside OLD_DIR %s", nw, old)
	case carry.Under(nw, old):
		return nil, inputErr("OLD_DIR %s is inside NEW_DIR %s", old, nw)
	}
	l, err := store.Scan(root)
	if err != nil {
		return nil, err
	}
	cs := changeset.New(root, "move-project")
	pp := &ProjectPlan{ChangeSet: cs, Old: old, New: nw}
	t := &changeset.Transform{Kind: changeset.TransformRetarget, OldDir: old, NewDir: nw}

	moves, err := foldersToMove(root, l, old, nw)
	if err != nil {
		return nil, err
	}
	// Targets, and folders that would collide.
	pdir := store.ProjectsDir(root)
	moving := map[string]bool{}
	for _, m := range moves {
		moving[m.From] = true
	}
	seen := map[string]string{}
	for i := range moves {
		m := &moves[i]
		m.To = filepath.Join(pdir, carry.TargetFolder(root, m.NewDir))
		if m.To != m.From && moving[m.To] {
			return nil, conflict("%s would move into %s, which is itself moved (the folder names collide); move the sessions one by one with cfix move", m.From, m.To)
		}
		if prev, ok := seen[m.To]; ok {
			return nil, conflict("%s and %s would both move into %s (the folder names collide)", prev, m.From, m.To)
		}
		seen[m.To] = m.From
		// Checked before planning: the plan would read the link as a file.
		for _, f := range []string{m.From, m.To} {
			if l, ok := changeset.OutsideLink(root, filepath.Join(f, "x")); ok {
				return nil, conflict("%s; a move-project is all or nothing: nothing is planned", l)
			}
		}
	}

	var creates, indexOps, deletes, rewrites []changeset.Op
	for i := range moves {
		m := &moves[i]
		if m.From == m.To {
			ops, n, err := rewriteFolderInPlace(l, m, t)
			if err != nil {
				return nil, err
			}
			m.Sessions = n
			rewrites = append(rewrites, ops...)
			continue
		}
		fo, err := moveFolder(l, m, t, o.Merge)
		if err != nil {
			return nil, err
		}
		creates = append(creates, fo.creates...)
		indexOps = append(indexOps, fo.index...)
		deletes = append(deletes, fo.deletes...)
		cs.Notes = append(cs.Notes, fo.notes...)
	}

	// Other sessions with entries whose cwd is under old (a session
	// continued from the old directory in another folder).
	var buf []byte
	for _, f := range l.Files {
		if moving[filepath.Join(pdir, f.Project)] {
			continue
		}
		if !cwdUnderFile(f.Path, old, &buf) {
			continue
		}
		ffp, err := changeset.FingerprintOf(f.Path)
		if err != nil {
			return nil, err
		}
		rewrites = append(rewrites, changeset.Op{Action: changeset.Rewrite, Path: f.Path, Expect: ffp, Transform: t,
			Session: sessionOf(f), Reason: fmt.Sprintf("entries of this session ran in %s: cwd %s → %s", old, old, nw)})
	}

	for _, group := range [][]changeset.Op{creates, indexOps, deletes, rewrites} {
		for _, op := range group {
			cs.Add(op)
		}
	}
	hop, err := planHistory(filepath.Join(root, "history.jsonl"), old, nw)
	if err != nil {
		return nil, err
	}
	if hop != nil {
		cs.Add(*hop)
	}
	mops, err := planSessionMeta(root, old, nw)
	if err != nil {
		return nil, err
	}
	for _, op := range mops {
		cs.Add(op)
	}
	cfg := o.Config
	if cfg == "" {
		cfg = ConfigPath(root)
	}
	cop, notes, err := planConfig(cfg, old, nw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	cs.Notes = append(cs.Notes, notes...)
	if cop != nil {
		cs.Add(*cop)
	}
	if len(moves) == 0 {
		cs.Notes = append(cs.Notes, fmt.Sprintf("no project folder in %s holds sessions of %s", pdir, old))
	}
	aops, notes, err := planAliases(root, moves)
	if err != nil {
		return nil, err
	}
	cs.Notes = append(cs.Notes, notes...)
	for _, op := range aops {
		cs.Add(op)
	}
	pp.Folders = moves
	return pp, nil
}

// planAliases carries the alias files of the store's other project folders
// (projects/<folder>/.session-aliases, one project folder's absolute path a
// line: the client lists that folder's sessions in the picker and for -c
// there) from a moved folder's old path to its new one: only the line's
// folder name changes, the store's path stays as the client wrote it. An
// alias file inside a moved folder moves with it as it is; its lines that
// name another moved folder are named in a note.
func planAliases(root string, moves []FolderMove) ([]changeset.Op, []string, error) {
	pdir := store.ProjectsDir(root)
	to := map[string]string{} // moved folder's name → its new name
	for _, m := range moves {
		if m.From != m.To {
			to[filepath.Base(m.From)] = filepath.Base(m.To)
		}
	}
	if len(to) == 0 {
		return nil, nil, nil
	}
	aliases, err := store.Aliases(root)
	if err != nil {
		return nil, nil, err
	}
	inStore := func(dir string) bool {
		if filepath.Clean(dir) == pdir {
			return true
		}
		a, err1 := os.Stat(dir)
		b, err2 := os.Stat(pdir)
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	var notes []string
	byFile := map[string]bool{}
	var files []string
	for _, a := range aliases {
		nw, ok := to[filepath.Base(a.Names)]
		if !ok || !inStore(filepath.Dir(a.Names)) {
			continue
		}
		if _, moving := to[filepath.Base(a.Folder)]; moving {
			notes = append(notes, fmt.Sprintf("%s moves as it is; its line %s names a folder that moves to %s", a.File, a.Names, nw))
			continue
		}
		if !byFile[a.File] {
			byFile[a.File] = true
			files = append(files, a.File)
		}
	}
	var ops []changeset.Op
	for _, file := range files {
		raw, err := rfile.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		fp, err := changeset.FingerprintOf(file)
		if err != nil {
			return nil, nil, err
		}
		lines := strings.Split(string(raw), "\n")
		var changed []string
		for i, l := range lines {
			nw, ok := to[filepath.Base(l)]
			if l == "" || !ok || !inStore(filepath.Dir(l)) {
				continue
			}
			lines[i] = filepath.Join(filepath.Dir(l), nw)
			changed = append(changed, filepath.Base(l)+" → "+nw)
		}
		ops = append(ops, aliasOp(file, fp, []byte(strings.Join(lines, "\n")), changed))
	}
	return ops, notes, nil
}

func aliasOp(file string, fp changeset.Fingerprint, data []byte, changed []string) changeset.Op {
	return changeset.Op{Action: changeset.Rewrite, Path: file, Expect: fp, Data: data, HasData: true,
		Reason: fmt.Sprintf("%s names the moved project folder: %s (the resume picker and claude -c there list its sessions)",
			store.AliasesFile, strings.Join(changed, ", "))}
}

// foldersToMove finds the project folders of old and of the projects under
// it. The folder name is lossy (/a-b and /a.b share one), so a folder is
// claimed by the cwd of its sessions: a folder whose sessions ran in old
// (or under it) moves; one whose sessions ran elsewhere is left alone; one
// that holds both is refused.
func foldersToMove(root string, l *store.Layout, old, nw string) ([]FolderMove, error) {
	enc := store.EncodeProject(old)
	prefix := enc
	if len(prefix) > store.MaxFolderLen {
		prefix = prefix[:store.MaxFolderLen]
	}
	// The cwds of a folder's main transcripts tell the directory it stands
	// for; a folder left with subagents only (their main transcript gone)
	// is told by theirs, or it would stay behind while the entries under
	// Old are rewritten: a cwd its name no longer encodes.
	byFolder := map[string][]store.File{}
	agents := map[string][]store.File{}
	for _, f := range l.Files {
		switch f.Kind {
		case store.KindSession:
			byFolder[f.Project] = append(byFolder[f.Project], f)
		case store.KindAgent, store.KindAgentFlat:
			agents[f.Project] = append(agents[f.Project], f)
		}
	}
	for folder, fs := range agents {
		if len(byFolder[folder]) == 0 {
			byFolder[folder] = fs
		}
	}
	pdir := store.ProjectsDir(root)
	var out []FolderMove
	for _, folder := range l.Projects {
		if !strings.HasPrefix(folder, prefix) {
			continue
		}
		var ours, foreign []string // cwds
		var foreignFile string
		for _, f := range byFolder[folder] {
			c := carry.FirstCWD(f.Path, 200)
			switch {
			case c == "":
			case carry.Under(old, c):
				ours = append(ours, c)
			default:
				foreign = append(foreign, c)
				if foreignFile == "" {
					foreignFile = f.Path
				}
			}
		}
		var p string
		if raw, err := carry.ReadIndex(filepath.Join(pdir, folder, "sessions-index.json")); err == nil && raw != nil {
			if s, ok := indexOriginalPath(raw); ok && carry.Under(old, s) {
				p = s
			}
		}
		if p == "" {
			for _, c := range ours {
				if store.FolderMatches(folder, c) {
					p = c
					break
				}
			}
		}
		if p == "" && len(foreign) == 0 && store.FolderMatches(folder, old) {
			p = old
		}
		if p == "" && len(ours) > 0 {
			p = ours[0]
		}
		switch {
		case p == "":
			continue
		case len(foreign) > 0:
			return nil, conflict("project folder %s holds sessions of %s and of %s (for instance %s): the folder name is lossy; move the sessions of %s one by one with cfix move",
				filepath.Join(pdir, folder), old, foreign[0], foreignFile, old)
		}
		np, _ := changeset.MapPath(old, nw, p)
		out = append(out, FolderMove{From: filepath.Join(pdir, folder), Dir: p, NewDir: np})
	}
	return out, nil
}

func indexOriginalPath(raw []byte) (string, bool) {
	var v struct {
		OriginalPath string `json:"originalPath"`
	}
	if jsonUnmarshal(raw, &v) != nil || v.OriginalPath == "" {
		return "", false
	}
	return v.OriginalPath, true
}

type folderOps struct {
	creates, index, deletes []changeset.Op
	notes                   []string
}

// moveFolder plans the move of one project folder into another.
func moveFolder(l *store.Layout, m *FolderMove, t *changeset.Transform, merge bool) (*folderOps, error) {
	fo := &folderOps{}
	if n := countSessions(m.To); n > 0 && !merge {
		return nil, conflict("%s already holds %s of %s; use --merge to move the sessions of %s beside them",
			m.To, plural.Count(n, "session"), m.NewDir, m.Dir)
	}
	what := fmt.Sprintf("move-project %s → %s", m.Dir, m.NewDir)
	ents, err := os.ReadDir(m.From)
	if err != nil {
		return nil, err
	}
	flatSession := map[string]string{}
	for _, f := range l.Files {
		if f.Kind == store.KindAgentFlat && filepath.Dir(f.Path) == m.From {
			flatSession[f.Path] = store.FlatAgentSession(f.Path)
		}
	}
	var mains []string
	for _, e := range ents {
		name := e.Name()
		from := filepath.Join(m.From, name)
		to := filepath.Join(m.To, name)
		switch {
		case name == "sessions-index.json" && e.Type().IsRegular():
			continue // below
		case strings.HasSuffix(name, ".jsonl") && e.Type().IsRegular():
			if exists(to) {
				return nil, conflict("both %s and %s exist; cfix cannot merge two files of one name", from, to)
			}
			s, err := carry.ScanFile(from, false, "")
			if err != nil {
				return nil, err
			}
			sess := strings.TrimSuffix(name, ".jsonl")
			kind := "session"
			if strings.HasPrefix(name, "agent-") {
				sess, kind = flatSession[from], "flat subagent"
			} else {
				mains = append(mains, from)
				m.Sessions++
			}
			fo.creates = append(fo.creates, changeset.Op{Action: changeset.Create, Path: to, From: from, FromExpect: fp(s.FP),
				Transform: t, Mode: s.FP.Mode, ModTime: s.FP.ModTime, Session: sess, EntriesAdded: s.Lines,
				Reason: fmt.Sprintf("%s: %s%s", what, kind, carry.Describe(t))})
			fo.deletes = append(fo.deletes, changeset.Op{Action: changeset.Delete, Path: from, Expect: s.FP, Session: sess,
				EntriesRemoved: s.Lines, Reason: what + ": remove the original (it is kept in the backup)"})
		case e.IsDir():
			sess := ""
			if store.IsUUID(name) {
				sess = name
			}
			ops, err := copyTree(from, to, t, sess, what)
			if err != nil {
				return nil, err
			}
			fo.creates = append(fo.creates, ops...)
		case e.Type().IsRegular():
			ops, err := copyTree(from, to, nil, "", what)
			if err != nil {
				return nil, err
			}
			fo.creates = append(fo.creates, ops...)
		default:
			if target, ok := carry.Linked(from); ok {
				return nil, carry.LinkRefused(from, target, "move", "move it by hand first")
			}
			return nil, conflict("%s is neither a file nor a folder; move it by hand first", from)
		}
	}

	// The index: the old folder's, retargeted, becomes (or joins) the new
	// folder's; a new folder's own index gets the moved sessions added.
	srcIdx := filepath.Join(m.From, "sessions-index.json")
	dstIdx := filepath.Join(m.To, "sessions-index.json")
	srcRaw, srcErr := carry.ReadIndex(srcIdx)
	dstRaw, dstErr := carry.ReadIndex(dstIdx)
	switch {
	case srcErr != nil && exists(srcIdx):
		fo.notes = append(fo.notes, fmt.Sprintf("%v: moved as it is", srcErr))
		ops, err := copyTree(srcIdx, dstIdx, nil, "", what)
		if err != nil {
			return nil, err
		}
		fo.creates = append(fo.creates, ops...)
	case dstErr != nil:
		fo.notes = append(fo.notes, fmt.Sprintf("%v: not updated", dstErr))
	case srcRaw != nil && dstRaw == nil:
		nb, err := carry.RetargetIndex(srcRaw, m.From, m.To, m.Dir, m.NewDir)
		if err != nil {
			return nil, err
		}
		ifp, err := changeset.FingerprintOf(srcIdx)
		if err != nil {
			return nil, err
		}
		fo.index = append(fo.index, changeset.Op{Action: changeset.Create, Path: dstIdx, Data: nb, HasData: true,
			Mode: ifp.Mode, ModTime: ifp.ModTime, Reason: what + ": sessions-index.json with fullPath, projectPath and originalPath rewritten"})
	case dstRaw != nil:
		listed := map[string]bool{}
		if ids, err := carry.IndexIDs(dstRaw); err == nil {
			for _, id := range ids {
				listed[id] = true
			}
		}
		var add [][]byte
		if srcRaw != nil {
			re, err := carry.RetargetIndex(srcRaw, m.From, m.To, m.Dir, m.NewDir)
			if err != nil {
				return nil, err
			}
			ids, err := carry.IndexIDs(re)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !listed[id] {
					add = append(add, carry.IndexEntry(re, id))
					listed[id] = true
				}
			}
		}
		for _, p := range mains {
			id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
			if listed[id] || !store.IsUUID(id) {
				continue
			}
			s, err := carry.ScanFile(p, true, "")
			if err != nil {
				return nil, err
			}
			if s.Sum.Messages == 0 {
				continue
			}
			cwd, _ := changeset.MapPath(m.Dir, m.NewDir, s.Sum.CWD)
			if cwd == "" {
				cwd = m.NewDir
			}
			add = append(add, carry.NewEntry(id, filepath.Join(m.To, filepath.Base(p)), s.FP.ModTime.UnixMilli(), s.Sum, cwd))
		}
		if len(add) > 0 {
			nb, err := carry.IndexAppend(dstRaw, add)
			if err != nil {
				return nil, err
			}
			ifp, err := changeset.FingerprintOf(dstIdx)
			if err != nil {
				return nil, err
			}
			fo.index = append(fo.index, changeset.Op{Action: changeset.Rewrite, Path: dstIdx, Expect: ifp, Data: nb, HasData: true,
				Reason: fmt.Sprintf("%s: list the %s in sessions-index.json", what, plural.Count(len(add), "moved session"))})
		}
	}

	// Last, the old folder and what is left in it.
	dfp, err := changeset.FingerprintOf(m.From)
	if err != nil {
		return nil, err
	}
	fo.deletes = append(fo.deletes, changeset.Op{Action: changeset.DeleteDir, Path: m.From, Expect: dfp,
		Reason: what + ": remove the old project folder (it is kept in the backup)"})
	return fo, nil
}

// copyTree plans the copy of a file or folder from → to: subagent
// transcripts through the transform, other files as they are, a folder
// without transcripts whose target does not exist in one op. A target file
// that exists already is skipped when it holds the same bytes, and refused
// otherwise.
func copyTree(from, to string, t *changeset.Transform, session, what string) ([]changeset.Op, error) {
	fi, err := os.Lstat(from)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() && !exists(to) && !hasTranscripts(from) {
		dfp, err := changeset.FingerprintOf(from)
		if err != nil {
			return nil, err
		}
		return []changeset.Op{{Action: changeset.CreateDir, Path: to, From: from, FromExpect: fp(dfp),
			Reason: fmt.Sprintf("%s: %s/", what, filepath.Base(from))}}, nil
	}
	base := filepath.Dir(from)
	var ops []changeset.Op
	err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if target, ok := carry.Linked(p); ok {
			return carry.LinkRefused(p, target, "move", "move it by hand first")
		}
		if !d.Type().IsRegular() {
			return conflict("%s is not a regular file; move it by hand first", p)
		}
		rel, _ := filepath.Rel(from, p)
		target := filepath.Join(to, rel)
		relBase, _ := filepath.Rel(base, p)
		ffp, err := changeset.FingerprintOf(p)
		if err != nil {
			return err
		}
		if tfp, err := changeset.FingerprintOf(target); err != nil {
			return err
		} else if tfp.Exists {
			if !tfp.Dir && tfp.SHA256 == ffp.SHA256 {
				return nil // the same bytes are there already
			}
			return conflict("both %s and %s exist and differ; merge them by hand first", p, target)
		}
		op := changeset.Op{Action: changeset.Create, Path: target, From: p, FromExpect: fp(ffp), Mode: ffp.Mode,
			ModTime: ffp.ModTime, Reason: fmt.Sprintf("%s: %s", what, relBase)}
		if t != nil && carry.IsTranscript(strings.TrimPrefix(filepath.ToSlash(rel), "./")) {
			s, err := carry.ScanFile(p, false, "")
			if err != nil {
				return err
			}
			op.FromExpect, op.Transform, op.Session, op.EntriesAdded = fp(s.FP), t, session, s.Lines
			op.Reason += carry.Describe(t)
		}
		ops = append(ops, op)
		return nil
	})
	return ops, err
}

// hasTranscripts reports whether a folder holds subagent transcripts.
func hasTranscripts(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// countSessions counts the transcripts in a project folder.
func countSessions(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") && !strings.HasPrefix(e.Name(), "agent-") && e.Type().IsRegular() {
			n++
		}
	}
	return n
}

// rewriteFolderInPlace handles a project whose new path encodes to the
// same folder (/a-b → /a.b): its transcripts are rewritten in place, and
// its index.
func rewriteFolderInPlace(l *store.Layout, m *FolderMove, t *changeset.Transform) ([]changeset.Op, int, error) {
	var ops []changeset.Op
	n := 0
	for _, f := range l.Files {
		if filepath.Join(store.ProjectsDir(l.Root), f.Project) != m.From {
			continue
		}
		if f.Kind == store.KindSession {
			n++
		}
		s, err := carry.ScanFile(f.Path, false, t.OldDir)
		if err != nil {
			return nil, 0, err
		}
		if !s.CWDUnder {
			continue
		}
		ops = append(ops, changeset.Op{Action: changeset.Rewrite, Path: f.Path, Expect: s.FP, Transform: t, Session: sessionOf(f),
			Reason: fmt.Sprintf("move-project %s → %s: the folder stays (same name), cwd rewritten", m.Dir, m.NewDir)})
	}
	idx := filepath.Join(m.From, "sessions-index.json")
	raw, err := carry.ReadIndex(idx)
	if err == nil && raw != nil {
		nb, err := carry.RetargetIndex(raw, m.From, m.To, m.Dir, m.NewDir)
		if err != nil {
			return nil, 0, err
		}
		if !bytes.Equal(nb, raw) {
			ifp, err := changeset.FingerprintOf(idx)
			if err != nil {
				return nil, 0, err
			}
			ops = append(ops, changeset.Op{Action: changeset.Rewrite, Path: idx, Expect: ifp, Data: nb, HasData: true,
				Reason: "sessions-index.json: projectPath and originalPath rewritten"})
		}
	}
	return ops, n, nil
}

// sessionOf returns the session a transcript belongs to.
func sessionOf(f store.File) string {
	if f.Kind == store.KindAgentFlat {
		return store.FlatAgentSession(f.Path)
	}
	return f.Session
}

// cwdUnderFile reports whether an entry of the transcript has a cwd that
// is dir or under it. Only lines holding the bytes of dir are parsed.
func cwdUnderFile(path, dir string, buf *[]byte) bool {
	f, err := rfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	q := changeset.QuoteJSON(dir)
	needle := q[1 : len(q)-1]
	rd := session.NewReader(f, *buf)
	defer func() { *buf = rd.Buffer() }()
	for rd.Next() {
		raw := rd.Line().Raw
		if !bytes.Contains(raw, needle) {
			continue
		}
		if a, b, ok := session.Find(raw, "cwd"); ok {
			if c, ok := changeset.DecodeJSONString(raw[a:b]); ok && carry.Under(dir, c) {
				return true
			}
		}
	}
	return false
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
