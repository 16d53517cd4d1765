package carry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// How a session lands in a store (Landed.How).
const (
	// LandNew: the store has no session of that id; the family is copied in.
	LandNew = "new"
	// LandSame: the store has the session with the same bytes (its cwd
	// fields mapped): nothing to do but the files it lacks.
	LandSame = "same"
	// LandAppend: the store's copy is a prefix of the incoming one: what
	// it lacks is appended (the transcript is written anew, journaled).
	LandAppend = "append"
	// LandAhead: the store's copy holds the incoming one and more: nothing
	// to do.
	LandAhead = "ahead"
	// LandFork: the store has a session of that id that diverged (or
	// another session's files use the id): the incoming one lands under a
	// new id, titled with where it came from. Nothing is overwritten.
	LandFork = "fork"
)

// LandOptions configure the landing of session families read from a
// folder laid out as a store (an unpacked pack) into a store.
type LandOptions struct {
	// Root is the store they land in; From the folder they are read from.
	Root, From string
	Sessions   []Arrival
	// History, when set, is a history.jsonl in From holding the prompt
	// lines of the sessions: those the store lacks are appended to its
	// own, their sessionId and project mapped as the session is.
	History string
	// Host names where the sessions come from, in a fork's title.
	Host string
	// Command names the change set ("unpack").
	Command string
}

// Arrival is one session to land.
type Arrival struct {
	// Session is its id in From.
	Session string
	// Dir is the working directory it belongs to in Root: its cwd fields
	// are mapped there. A session the store has already lands where it
	// is.
	Dir string
	// Title is its title, for a fork's ("TITLE (from HOST)").
	Title string
}

// Landed says where and how a session lands.
type Landed struct {
	Session string `json:"session"` // its id in From
	ID      string `json:"id"`      // its id in Root
	How     string `json:"how"`
	Dir     string `json:"dir"`
	Folder  string `json:"folder"`
	// Why says why a session lands as a fork, or is left as it is.
	Why string `json:"why,omitempty"`
}

// ResumeCommand is the shell command that resumes the session where it
// lands.
func (l *Landed) ResumeCommand() string {
	return (&Plan{SessionID: l.ID, Dir: l.Dir}).ResumeCommand()
}

// Landing is the plan of a landing and where each session lands.
type Landing struct {
	ChangeSet *changeset.ChangeSet
	Sessions  []Landed
}

// Land plans the copy of session families from o.From into o.Root, each
// as Copy copies a session (its id kept), and for a session the store has
// already, by what the two hold: the same bytes (its cwd fields mapped)
// or less than the incoming one (its transcripts a prefix of the incoming
// ones: appended), or more (ahead); else the incoming one lands as a fork
// under a new id. Files of the family the store lacks are added; a file
// the store has with other bytes is never overwritten (a transcript that
// grew is rewritten with what it had as its start, journaled).
func Land(o LandOptions) (*Landing, error) {
	if o.Command == "" {
		o.Command = "land"
	}
	cs := changeset.New(o.Root, o.Command)
	cs.Own(o.From)
	ld := &Landing{ChangeSet: cs}
	fl, err := store.Scan(o.From)
	if err != nil {
		return nil, err
	}
	rl, err := store.Scan(o.Root)
	if err != nil {
		return nil, err
	}
	for _, a := range o.Sessions {
		src, err := findSession(o.From, fl, a.Session, o.Command)
		if err != nil {
			return nil, err
		}
		s, err := scanFile(src.Path, false)
		if err != nil {
			return nil, err
		}
		l, err := landOne(o, cs, rl, src, s.cwd, a)
		if err != nil {
			return nil, err
		}
		ld.Sessions = append(ld.Sessions, *l)
	}
	if o.History != "" {
		if err := landHistory(o, cs, ld.Sessions, fl); err != nil {
			return nil, err
		}
	}
	LeaveLinks(cs)
	if l, ok := cs.OutsideLink(); ok {
		return nil, conflict("%s; %s is all or nothing: nothing is planned", l, o.Command)
	}
	return ld, nil
}

// landOne plans one session into cs.
func landOne(o LandOptions, cs *changeset.ChangeSet, rl *store.Layout, src store.File, srcCWD string, a Arrival) (*Landed, error) {
	id := src.Session
	var local []store.File
	for _, f := range rl.Files {
		if f.Kind == store.KindSession && strings.EqualFold(f.Session, id) {
			local = append(local, f)
		}
	}
	what := func(how string) string { return fmt.Sprintf("%s (%s)", o.Command, how) }
	// resume replaces the note of a copy by the command that resumes it.
	resume := func(p *Plan) {
		for i, n := range p.ChangeSet.Notes {
			if strings.HasPrefix(n, "the new session's id is") {
				p.ChangeSet.Notes[i] = fmt.Sprintf("resume session %s with: %s", p.SessionID, p.ResumeCommand())
			}
		}
	}
	fork := func(why string) (*Landed, error) {
		title := a.Title
		if title == "" {
			title = "session " + id
		}
		if o.Host != "" {
			title += " (from " + o.Host + ")"
		}
		var newID string
		for n := 0; ; n++ {
			newID = DerivedUUID(fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", o.Command, id, o.Host, a.Dir, n))
			if used(o.Root, rl, newID) == "" {
				break
			}
			// The ids of forks are derived: one landed before from the
			// same incoming session is found under its id, and landing
			// it again is nothing to do.
			l, err := landedFork(o, cs, rl, src, a, newID, title)
			if err != nil || l != nil {
				return l, err
			}
		}
		p, err := planSession(Options{Root: o.Root, From: o.From, Session: src.Path, To: a.Dir, ID: newID, Title: title,
			Command: o.Command, What: what("a fork: " + why)}, false)
		if err != nil {
			return nil, err
		}
		if err := merge(cs, p.ChangeSet); err != nil {
			return nil, err
		}
		return &Landed{Session: id, ID: newID, How: LandFork, Dir: p.Dir, Folder: p.Folder, Why: why}, nil
	}
	switch {
	case len(local) == 0:
		// A fork the other machine made of this store's line, pushed
		// back, is that line: nothing to land.
		if l, err := ownFork(o, rl, src, srcCWD, a); err != nil || l != nil {
			return l, err
		}
		if where := used(o.Root, rl, id); where != "" {
			return fork(fmt.Sprintf("its id is used here by %s", where))
		}
		p, err := planSession(Options{Root: o.Root, From: o.From, Session: src.Path, To: a.Dir, ID: id, Command: o.Command,
			What: what("new here"), landing: true}, false)
		if err != nil {
			return nil, err
		}
		resume(p)
		if err := merge(cs, p.ChangeSet); err != nil {
			return nil, err
		}
		return &Landed{Session: id, ID: id, How: LandNew, Dir: p.Dir, Folder: p.Folder}, nil
	case len(local) > 1:
		return fork(fmt.Sprintf("the session is here in %d folders", len(local)))
	}
	lf := local[0]
	dir := firstCWD(lf.Path, 200)
	if dir == "" || filepath.Join(store.ProjectsDir(o.Root), TargetFolder(o.Root, dir)) != filepath.Dir(lf.Path) {
		return fork(fmt.Sprintf("the session is here (%s) in a folder that is not its cwd's", lf.Path))
	}
	t := retarget(srcCWD, dir)
	rel, err := compareFile(lf.Path, src.Path, t)
	if err != nil {
		return nil, err
	}
	how := LandSame
	switch rel {
	case relDiverged:
		return fork(fmt.Sprintf("the session here (%s) diverged from it", lf.Path))
	case relLocalPrefix:
		how = LandAppend
	case relAhead:
		how = LandAhead
	}
	p, err := planSession(Options{Root: o.Root, From: o.From, Session: src.Path, To: dir, ID: id, Command: o.Command,
		What: what("here already"), landing: true}, false)
	if err != nil {
		return nil, err
	}
	l := &Landed{Session: id, ID: id, How: how, Dir: dir, Folder: filepath.Dir(lf.Path)}
	if err := mergeSorted(cs, changeset.New(o.Root, o.Command), p.ChangeSet.Ops, id, ""); err != nil {
		return nil, err
	}
	for _, n := range p.ChangeSet.Notes {
		if !strings.HasPrefix(n, "the new session's id is") {
			cs.Notes = append(cs.Notes, n)
		}
	}
	if how == LandAhead {
		cs.Notes = append(cs.Notes, fmt.Sprintf("session %s here (%s) holds what the incoming one holds and more: left as it is", id, lf.Path))
	}
	if how == LandAppend {
		if err := indexGrown(cs, lf, src); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// landedFork returns how the incoming session src lands when the store's
// session newID is its fork landed before (the same bytes as the fork it
// would make now, or those and more: it went on here): as that session,
// with the files of the family it lacks. It returns nil when newID is
// something else.
func landedFork(o LandOptions, cs *changeset.ChangeSet, rl *store.Layout, src store.File, a Arrival, newID, title string) (*Landed, error) {
	var local []store.File
	for _, f := range rl.Files {
		if f.Kind == store.KindSession && strings.EqualFold(f.Session, newID) {
			local = append(local, f)
		}
	}
	if len(local) != 1 {
		return nil, nil
	}
	lf := local[0]
	p, err := planSession(Options{Root: o.Root, From: o.From, Session: src.Path, To: a.Dir, ID: newID, Title: title,
		Command: o.Command, What: fmt.Sprintf("%s (landed here before as %s)", o.Command, newID), again: true}, false)
	if err != nil {
		return nil, nil // not a place this session can land: not its fork
	}
	var main *changeset.Op
	for i, op := range p.ChangeSet.Ops {
		if op.Action == changeset.Create && op.Path == lf.Path {
			main = &p.ChangeSet.Ops[i]
		}
	}
	if main == nil {
		return nil, nil
	}
	rel, err := compareFile(lf.Path, main.From, main.Transform)
	if err != nil {
		return nil, err
	}
	how := LandSame
	var grown *changeset.Op
	switch rel {
	case relAhead:
		how = LandAhead
	case relSame:
	default:
		// The incoming session went on since its fork landed: the fork
		// here, but for the title line the landing gave it last, is a
		// prefix of it. It is written anew with what it lacks, its title
		// line last again.
		var same bool
		if grown, same, err = forkGrown(lf, main, newID); err != nil || grown == nil && !same {
			return nil, err
		}
		if grown != nil {
			how = LandAppend
		}
	}
	kept := changeset.New(o.Root, o.Command)
	if grown != nil {
		kept.Add(*grown)
	}
	if err := mergeSorted(cs, kept, p.ChangeSet.Ops, newID, lf.Path); err != nil {
		return nil, err
	}
	if grown != nil {
		if err := indexGrown(cs, lf, store.File{Path: main.From}); err != nil {
			return nil, err
		}
	}
	return &Landed{Session: src.Session, ID: newID, How: how, Dir: a.Dir, Folder: filepath.Dir(lf.Path),
		Why: fmt.Sprintf("landed here before as the fork %s", newID)}, nil
}

// ownFork returns how the incoming session src lands when it is a fork a
// landing made elsewhere of a session of this store, and holds nothing
// that session does not: its last line the title line the landing gave
// it (a custom-title line of its own id, "TITLE (from HOST)"), the lines
// before it, the session id and cwd fields mapped, the start of a
// session of the folder it would land in, or all of it. That session
// holds its line: it lands as it (LandAhead), nothing is copied. It
// returns nil when src is no such fork; a fork that went on where it was
// made holds lines of its own, and lands.
func ownFork(o LandOptions, rl *store.Layout, src store.File, srcCWD string, a Arrival) (*Landed, error) {
	last, size, err := lastLine(src.Path, 64<<10)
	if err != nil || last == nil {
		return nil, err
	}
	var title struct {
		Type        string `json:"type"`
		CustomTitle string `json:"customTitle"`
		SessionID   string `json:"sessionId"`
	}
	if json.Unmarshal(last, &title) != nil || title.Type != "custom-title" || !strings.EqualFold(title.SessionID, src.Session) ||
		!strings.Contains(title.CustomTitle, " (from ") || !strings.HasSuffix(title.CustomTitle, ")") {
		return nil, nil
	}
	dir := a.Dir
	if dir == "" {
		dir = srcCWD
	}
	if dir == "" {
		return nil, nil
	}
	folder := filepath.Join(store.ProjectsDir(o.Root), TargetFolder(o.Root, dir))
	for _, f := range rl.Files {
		if f.Kind != store.KindSession || filepath.Dir(f.Path) != folder || strings.EqualFold(f.Session, src.Session) {
			continue
		}
		t := retarget(srcCWD, dir)
		if t == nil {
			t = &changeset.Transform{Kind: changeset.TransformRetarget}
		}
		t.OldSession, t.NewSession = src.Session, f.Session
		rel, err := compareIncoming(f.Path, src.Path, size-int64(len(last)), t)
		if err != nil {
			return nil, err
		}
		if rel == relSame || rel == relAhead {
			return &Landed{Session: src.Session, ID: f.Session, How: LandAhead, Dir: dir, Folder: folder,
				Why: "a fork made elsewhere of this session, which holds all it holds"}, nil
		}
	}
	return nil, nil
}

// compareIncoming is compareFile of the first limit bytes of incoming.
func compareIncoming(local, incoming string, limit int64, t *changeset.Transform) (relation, error) {
	lf, err := rfile.Open(local)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	in, err := rfile.Open(incoming)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	c := &cmpWriter{r: bufio.NewReaderSize(lf, 256<<10), buf: make([]byte, 64<<10)}
	err = t.Stream(c, io.LimitReader(in, limit), in)
	return c.relation(err)
}

// forkGrown returns the rewrite of the fork lf (the op main would make)
// when the fork, but for its last line, a custom-title line of its own,
// is a prefix of what main writes (the incoming session went on): the
// incoming lines, that title line last. same says the fork holds them
// already (its title line is not the one main would write: the incoming
// session's title changed since).
func forkGrown(lf store.File, main *changeset.Op, newID string) (op *changeset.Op, same bool, err error) {
	last, size, err := lastLine(lf.Path, 64<<10)
	if err != nil || last == nil {
		return nil, false, err
	}
	var title struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(last, &title) != nil || title.Type != "custom-title" || title.SessionID != newID {
		return nil, false, nil
	}
	t := &changeset.Transform{Kind: changeset.TransformRetarget}
	if main.Transform != nil {
		*t = *main.Transform
	}
	t.Append = nil
	rel, err := comparePrefix(lf.Path, size-int64(len(last)), main.From, t)
	if err != nil || rel != relLocalPrefix {
		return nil, rel == relSame, err
	}
	fp, err := changeset.FingerprintOf(lf.Path)
	if err != nil {
		return nil, false, err
	}
	t.Append = last
	w := *main
	op = &w
	op.Action, op.Transform, op.Expect = changeset.Rewrite, t, fp
	op.Mode, op.ModTime = 0, op.FromExpect.ModTime
	if s, err := scanFile(lf.Path, false); err == nil {
		op.EntriesAdded -= s.lines
	}
	op.Reason = fmt.Sprintf("%s: the fork %s here is written anew with what it lacks, its title line last", op.Reason, newID)
	return op, false, nil
}

// lastLine returns the last line of the file at path (with its "\n") and
// the file's size; nil when the file does not end in a line of at most
// max bytes.
func lastLine(path string, max int64) ([]byte, int64, error) {
	f, err := rfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	n := min(size, max+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return nil, 0, err
	}
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		return nil, size, nil
	}
	i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
	if i < 0 && n < size {
		return nil, size, nil // longer than max
	}
	return buf[i+1:], size, nil
}

// mergeSorted merges into cs the ops of kept, then those of ops (but for
// the op of the path skip) that sortOut keeps.
func mergeSorted(cs, kept *changeset.ChangeSet, ops []changeset.Op, id, skip string) error {
	for _, op := range ops {
		if skip != "" && op.Path == skip {
			continue
		}
		keep, err := sortOut(cs, &op, id)
		if err != nil {
			return err
		}
		if keep {
			kept.Add(op)
		}
	}
	return merge(cs, kept)
}

// sortOut decides what becomes of an op of the copy of a session the
// store has already: a file it lacks is made; one with the same bytes is
// left; a transcript the store holds a prefix of is rewritten whole (the
// append); any other file with other bytes is left as it is, with a note.
// A folder that exists gets the files it lacks.
func sortOut(cs *changeset.ChangeSet, op *changeset.Op, id string) (bool, error) {
	switch op.Action {
	case changeset.CreateDir:
		dfp, err := changeset.Stat(op.Path)
		if err != nil || !dfp.Exists {
			return true, err
		}
		missing, differ, err := dirCompare(op.From, op.Path)
		if err != nil {
			return false, err
		}
		for _, d := range differ {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%s differs from the incoming copy of session %s: left as it is", d, id))
		}
		if missing == 0 {
			return false, nil
		}
		op.Merge, op.Expect = true, dfp
		return true, nil
	case changeset.Create:
	default:
		return true, nil // the index entry (added only when missing)
	}
	fp, err := changeset.FingerprintOf(op.Path)
	if err != nil || !fp.Exists {
		return true, err
	}
	if fp.Dir {
		return false, conflict("%s is a folder where %s would put a file: nothing is planned", op.Path, cs.Command)
	}
	rel, err := compareFile(op.Path, op.From, op.Transform)
	if err != nil {
		return false, err
	}
	switch {
	case rel == relSame:
		return false, nil
	case rel == relLocalPrefix && strings.HasSuffix(op.Path, ".jsonl"):
		op.Action, op.Expect = changeset.Rewrite, fp
		op.Mode, op.ModTime = 0, op.FromExpect.ModTime
		if s, err := scanFile(op.Path, false); err == nil {
			op.EntriesAdded -= s.lines
		}
		op.Reason = strings.Replace(op.Reason, "here already", "append what this copy lacks", 1)
		return true, nil
	}
	cs.Notes = append(cs.Notes, fmt.Sprintf("%s differs from the incoming copy of session %s: left as it is", op.Path, id))
	return false, nil
}

// merge adds the ops and notes of p to cs. Two rewrites of one
// sessions-index.json (sessions landing in one folder) become one, holding
// what each changes.
func merge(cs, p *changeset.ChangeSet) error {
	for _, op := range p.Ops {
		if i := indexRewrite(cs, op); i >= 0 {
			nb, err := combineIndex(op.Path, cs.Ops[i].Data, op.Data)
			if err != nil {
				return err
			}
			cs.Ops[i].Data = nb
			cs.Ops[i].EntriesAdded += op.EntriesAdded
			cs.Ops[i].Reason += "; " + op.Reason
			continue
		}
		cs.Ops = append(cs.Ops, op)
	}
	cs.Notes = append(cs.Notes, p.Notes...)
	return nil
}

// indexRewrite returns the index in cs of a rewrite of the
// sessions-index.json op rewrites too, or -1.
func indexRewrite(cs *changeset.ChangeSet, op changeset.Op) int {
	if op.Action != changeset.Rewrite || !op.HasData || filepath.Base(op.Path) != "sessions-index.json" {
		return -1
	}
	for i := range cs.Ops {
		if o := &cs.Ops[i]; o.Action == changeset.Rewrite && o.HasData && o.Path == op.Path {
			return i
		}
	}
	return -1
}

// combineIndex returns the index a, with what b changes of the index at
// path as it is on disk: the entries b adds and those it rewrites.
func combineIndex(path string, a, b []byte) ([]byte, error) {
	orig, err := readIndex(path)
	if err != nil || orig == nil {
		return nil, fmt.Errorf("%s: changed while the plan was made", path)
	}
	ids, err := IndexIDs(b)
	if err != nil {
		return nil, err
	}
	var add [][]byte
	for _, id := range ids {
		be := indexEntry(b, id)
		if oe := indexEntry(orig, id); oe != nil && bytes.Equal(oe, be) {
			continue // b leaves it as it was
		}
		if ae := indexEntry(a, id); ae != nil {
			at := bytes.Index(a, ae)
			a = append(append(bytes.Clone(a[:at]), be...), a[at+len(ae):]...)
			continue
		}
		add = append(add, be)
	}
	return indexAppend(a, add)
}

// retarget is the transform of cwd fields from old to new, nil when there
// is nothing to map.
func retarget(old, new string) *changeset.Transform {
	if old == "" || old == new || !changeset.MappableDir(old) {
		return nil
	}
	return &changeset.Transform{Kind: changeset.TransformRetarget, OldDir: old, NewDir: new}
}

// relation is what a file here is to the incoming one.
type relation int

const (
	relSame        relation = iota
	relLocalPrefix          // the incoming one holds it and more
	relAhead                // it holds the incoming one and more
	relDiverged
)

// errStop ends a comparison early.
var errStop = errors.New("stop")

// compareFile tells what the file local is to the file incoming with t
// applied (nil: as it is), streaming both.
func compareFile(local, incoming string, t *changeset.Transform) (relation, error) {
	return comparePrefix(local, -1, incoming, t)
}

// comparePrefix is compareFile of the first limit bytes of local (all of
// them when limit is negative).
func comparePrefix(local string, limit int64, incoming string, t *changeset.Transform) (relation, error) {
	lf, err := rfile.Open(local)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	in, err := rfile.Open(incoming)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	var lr io.Reader = lf
	if limit >= 0 {
		lr = io.LimitReader(lf, limit)
	}
	c := &cmpWriter{r: bufio.NewReaderSize(lr, 256<<10), buf: make([]byte, 64<<10)}
	if t != nil {
		err = t.Stream(c, in, in)
	} else {
		_, err = io.Copy(c, in)
	}
	return c.relation(err)
}

// cmpWriter compares what is written to it with what r reads.
type cmpWriter struct {
	r        *bufio.Reader
	buf      []byte
	diverged bool // a byte differs
	longer   bool // r ended before what was written
}

// relation is how the local file stands to what was written to c, once
// the writing ended with err.
func (c *cmpWriter) relation(err error) (relation, error) {
	switch {
	case c.diverged:
		return relDiverged, nil
	case c.longer:
		return relLocalPrefix, nil
	case err != nil:
		return 0, err
	}
	if _, err := c.r.ReadByte(); err == io.EOF {
		return relSame, nil
	} else if err != nil {
		return 0, err
	}
	return relAhead, nil
}

func (c *cmpWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), len(c.buf))
		got, err := io.ReadFull(c.r, c.buf[:k])
		if !bytes.Equal(c.buf[:got], p[:got]) {
			c.diverged = true
			return 0, errStop
		}
		if got < k {
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return 0, err
			}
			c.longer = true
			return 0, errStop
		}
		p = p[k:]
	}
	return n, nil
}

// landHistory appends to the store's history.jsonl the prompt lines of
// o.History that name a landed session (sessionId), its id and project
// mapped as the session is, leaving out those the store has already.
func landHistory(o LandOptions, cs *changeset.ChangeSet, landed []Landed, fl *store.Layout) error {
	type mapping struct{ id, oldDir, newDir string }
	by := map[string]mapping{}
	for _, l := range landed {
		if l.How == LandAhead || l.How == LandSame {
			continue
		}
		m := mapping{id: l.ID, newDir: l.Dir}
		for _, f := range fl.Files {
			if f.Kind == store.KindSession && f.Session == l.Session {
				m.oldDir = firstCWD(f.Path, 200)
			}
		}
		by[l.Session] = m
	}
	if len(by) == 0 {
		return nil
	}
	f, err := rfile.Open(o.History)
	if err != nil {
		return err
	}
	defer f.Close()
	var add bytes.Buffer
	n, at := 0, 1
	rd := session.NewReader(f, nil)
	for rd.Next() {
		raw := rd.Line().Raw
		a, b, ok := session.Find(raw, "sessionId")
		if !ok {
			continue
		}
		sid, ok := changeset.DecodeJSONString(raw[a:b])
		m, found := by[sid]
		if !ok || !found {
			continue
		}
		line := raw
		if m.id != sid {
			line = session.Replace(line, a, b, changeset.QuoteJSON(m.id))
		}
		if pa, pb, ok := session.Find(line, "project"); ok && m.oldDir != "" {
			if p, ok := changeset.DecodeJSONString(line[pa:pb]); ok {
				if np, ok := changeset.MapPath(m.oldDir, m.newDir, p); ok {
					line = session.Replace(line, pa, pb, changeset.QuoteJSON(np))
				}
			}
		}
		add.Write(line)
		add.WriteByte('\n')
		n++
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%s: %w", o.History, err)
	}
	path := filepath.Join(o.Root, "history.jsonl")
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return err
	}
	if fp.Exists {
		// Leave out the lines the store has already.
		have := map[string]bool{}
		hf, err := rfile.Open(path)
		lines := 0
		if err != nil {
			return err
		}
		hr := session.NewReader(hf, nil)
		for hr.Next() {
			raw := hr.Line().Raw
			lines = hr.Line().N
			for _, m := range by {
				if bytes.Contains(raw, []byte(m.id)) {
					have[string(raw)] = true
					break
				}
			}
		}
		hf.Close()
		if err := hr.Err(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var kept bytes.Buffer
		n = 0
		for _, l := range bytes.SplitAfter(add.Bytes(), []byte("\n")) {
			if len(l) > 0 && !have[string(l[:len(l)-1])] {
				kept.Write(l)
				n++
			}
		}
		add = kept
		at = lines + 1
	}
	if n == 0 {
		return nil
	}
	reason := fmt.Sprintf("history.jsonl: %d %s of the %s sessions (the prompts ↑ recalls)", n, plural(n, "prompt"), o.Command)
	if !fp.Exists {
		cs.Add(changeset.Op{Action: changeset.Create, Path: path, Data: add.Bytes(), HasData: true, Mode: 0o600, Reason: reason})
		return nil
	}
	lead := []byte(nil)
	if fp.Size > 0 {
		// A last line without its "\n" gets one first.
		last := make([]byte, 1)
		hf, err := rfile.Open(path)
		if err != nil {
			return err
		}
		_, err = hf.ReadAt(last, fp.Size-1)
		hf.Close()
		if err != nil {
			return err
		}
		if last[0] != '\n' {
			lead = []byte("\n")
		}
	}
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp,
		Edits:  []changeset.Edit{{Line: at, Offset: fp.Size, New: append(lead, add.Bytes()...), Reason: reason}},
		Reason: reason})
	return nil
}

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// indexGrown rewrites the entry of the session of lf in its folder's
// sessions-index.json, when it has one, for the transcript appended to:
// its messageCount and fileMtime are the incoming one's (src).
func indexGrown(cs *changeset.ChangeSet, lf, src store.File) error {
	path := filepath.Join(filepath.Dir(lf.Path), "sessions-index.json")
	raw, err := readIndex(path)
	if err != nil || raw == nil {
		return nil // none, or one cfix cannot edit (repair rebuilds it)
	}
	e := indexEntry(raw, lf.Session)
	if e == nil {
		return nil
	}
	s, err := scanFile(src.Path, true)
	if err != nil {
		return err
	}
	vals := map[string][]byte{
		"messageCount": []byte(strconv.Itoa(s.sum.Messages)),
		"fileMtime":    []byte(strconv.FormatInt(s.fp.ModTime.UnixMilli(), 10)),
	}
	if s.sum.Last != "" {
		vals["modified"] = changeset.QuoteJSON(s.sum.Last)
	}
	ne := setIfPresent(bytes.Clone(e), vals)
	at := bytes.Index(raw, e)
	nb := append(append(bytes.Clone(raw[:at]), ne...), raw[at+len(e):]...)
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return err
	}
	grown := changeset.New(cs.Root, cs.Command)
	grown.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: nb, HasData: true,
		Reason: fmt.Sprintf("sessions-index.json: the entry of session %s counts what was appended", lf.Session)})
	return merge(cs, grown)
}

// dirCompare tells, for the files under the folder src, how many the
// folder dst lacks, and which of those it has differ.
func dirCompare(src, dst string) (missing int, differ []string, err error) {
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		there := filepath.Join(dst, rel)
		tfp, err := changeset.FingerprintOf(there)
		if err != nil {
			return err
		}
		if !tfp.Exists {
			missing++
			return nil
		}
		sfp, err := changeset.FingerprintOf(p)
		if err != nil {
			return err
		}
		if tfp.Dir || tfp.SHA256 != sfp.SHA256 {
			differ = append(differ, there)
		}
		return nil
	})
	return missing, differ, err
}
