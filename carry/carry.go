// Package carry plans the copy of a session family from one place to
// another: its main transcript, its subagents of both layouts with their
// .meta.json, its session folder (tool-results), its sidecars (todos,
// file-history, the task list) and its sessions-index.json entry, with
// what a copy remaps: the session id (file names, sessionId fields, the
// session folder, the sidecars' names), the cwd fields and the project
// folder, the agent ids that collide, links kept as data. Every planner
// that writes a session somewhere calls it: clone and move (Copy, Move),
// trim and fork (Copy with line edits), move-project, restore and unpack
// (the index edits, the scan, the errors). Planners never write: they
// return a change set. Transcripts are rewritten by a streamed
// changeset.Transform, so sessions of any size are never held in memory.
package carry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/store"
)

// Options configure a clone or a move of one session.
type Options struct {
	// Root is the store directory, where the copy lands.
	Root string
	// From is the store the session is read from: "" is Root. Another is
	// a folder laid out as a store (an unpacked pack's staging folder),
	// which the change set owns (it reads from there).
	From string
	// Session is a session id or the path of its main .jsonl transcript.
	Session string
	// To is the working directory the session is to belong to.
	To string
	// ID is the clone's session id; "" picks a random one. Not for Move.
	ID string
	// RewritePaths also rewrites paths under the old directory inside
	// message content and tool inputs (clone only).
	RewritePaths bool

	// Lines, for cfix trim and fork, edits lines of the main transcript
	// as it is copied (Saved: the bytes they take out; Removed: the
	// entries they drop). To may then be "": the copy stays in the
	// session's project folder, cwd fields as they are.
	Lines   []changeset.LineTrim
	Saved   int64
	Removed int
	// Command names the change set (default "clone"); What says what the
	// copy is, in the reasons of its changes.
	Command, What string
	// Title, when set, is appended to the copy's main transcript as its
	// custom-title line: the title /resume and cfix ls show for it.
	Title string
	// Now is the time a copy's files get (time.Now when zero): a new
	// session's. A move keeps its files' times.
	Now time.Time

	// landing plans the copy of a session that may be in Root already
	// under the same id (Land): its id is not refused as used, and Land
	// sorts out the files that are there.
	landing bool
	// again plans a fork a landing made before, under its id (Land finds
	// it): its id is not refused as used, and its flat subagents are
	// named as that fork's first were.
	again bool
}

// Plan is a change set and what it makes.
type Plan struct {
	ChangeSet *changeset.ChangeSet
	// SessionID is the session's id after the change (new for a clone).
	SessionID string
	// Dir is the working directory it belongs to, Folder its project
	// folder (absolute path).
	Dir    string
	Folder string
}

// ResumeCommand is the shell command that resumes the session.
func (p *Plan) ResumeCommand() string {
	// A name starting with "-" is the option's value only after "="
	// (measured with every pinned client).
	sep := " "
	if strings.HasPrefix(p.SessionID, "-") {
		sep = "="
	}
	return "cd " + shell.Quote(p.Dir) + " && claude --resume" + sep + shell.Quote(p.SessionID)
}

// Copy plans a copy of a session (its whole family: main transcript,
// subagents of both layouts with their .meta.json, the session folder with
// tool-results, file-history and todos) under a new id, in the project
// folder of opts.To. The source is never modified.
func Copy(opts Options) (*Plan, error) { return confined(planSession(opts, false)) }

// Move plans a clone that keeps the session id, then removes the
// originals, all in one change set (so one undo puts everything back).
func Move(opts Options) (*Plan, error) {
	if opts.ID != "" {
		return nil, inputErr("a move keeps the session id: --id is for clone")
	}
	return confined(planSession(opts, true))
}

// confined refuses a plan that would write through a symbolic link
// leading out of the store (a project folder moved to another disk): a
// clone or a move is all or nothing, so none of it is made.
func confined(p *Plan, err error) (*Plan, error) {
	if err != nil {
		return nil, err
	}
	LeaveLinks(p.ChangeSet)
	if l, ok := p.ChangeSet.OutsideLink(); ok {
		return nil, conflict("%s; a %s is all or nothing: nothing is planned", l, p.ChangeSet.Command)
	}
	return p, nil
}

// LeaveLinks leaves out of cs the rewrites of files that are symbolic
// links (a sessions-index.json, history.jsonl or settings file kept
// elsewhere and linked in), with a note for each: a rewrite would replace
// the link by a file and leave what it leads to as it was, and apply
// refuses it (a transcript that is a link is refused before, by the
// planner that would move or rewrite it).
func LeaveLinks(cs *changeset.ChangeSet) {
	ops := cs.Ops[:0]
	for _, op := range cs.Ops {
		if op.Action == changeset.Rewrite && op.Expect.Link != "" {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%s is a symbolic link to %s: not rewritten (cfix writes nothing through a link); left out: %s", op.Path, op.Expect.Link, op.Reason))
			continue
		}
		ops = append(ops, op)
	}
	cs.Ops = ops
}

func planSession(o Options, move bool) (*Plan, error) {
	command := "clone"
	if move {
		command = "move"
	} else if o.Command != "" {
		command = o.Command
	}
	sameFolder := o.To == "" && o.Lines != nil
	root := o.Root
	from := o.From
	if from == "" {
		from = root
	}
	sl, err := store.Scan(from)
	if err != nil {
		return nil, err
	}
	src, err := findSession(from, sl, o.Session, command)
	if err != nil {
		return nil, err
	}
	// l is the layout of the store the copy lands in.
	l := sl
	if from != root {
		if l, err = store.Scan(root); err != nil {
			return nil, err
		}
	}
	var dir string
	if !sameFolder {
		if dir, err = NormDir(o.To); err != nil {
			return nil, err
		}
	}
	id := src.Session
	newID := id
	if !move {
		newID = o.ID
		if newID == "" {
			// Derived from the source and DIR, skipping ids in use: the
			// dry run shows the id the apply will use.
			for n := 0; ; n++ {
				newID = DerivedUUID(fmt.Sprintf("%s\x00%s\x00%s\x00%d", command, id, dir, n))
				if used(root, l, newID) == "" {
					break
				}
			}
		} else if !store.IsUUID(newID) {
			return nil, inputErr("--id %s: not a UUID", newID)
		}
		if where := used(root, l, newID); where != "" && !o.landing && !o.again {
			return nil, inputErr("--id %s: the session id is already used (%s)", newID, where)
		}
	}
	srcDir := filepath.Dir(src.Path)
	dst := srcDir
	if !sameFolder {
		dst = filepath.Join(store.ProjectsDir(root), TargetFolder(root, dir))
	}
	cs := changeset.New(root, command)
	if from != root {
		cs.Own(from) // the copy reads from there
	}
	p := &Plan{ChangeSet: cs, SessionID: newID, Dir: dir, Folder: dst}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.Truncate(time.Millisecond) // as sessions-index.json's fileMtime says it
	if move && dst == srcDir {
		cs.Notes = append(cs.Notes, fmt.Sprintf("session %s is already in %s, the project folder of %s", id, dst, dir))
		return p, nil
	}
	if move {
		if target, ok := Linked(src.Path); ok {
			return nil, LinkRefused(src.Path, target, "move", "clone the session (a clone copies what the link leads to)")
		}
		for _, name := range []string{id + ".jsonl", id} {
			if exists(filepath.Join(dst, name)) {
				return nil, conflict("%s already exists: the target folder has a copy of session %s; remove it or clone instead", filepath.Join(dst, name), id)
			}
		}
	}

	// The family, in the source folder.
	var flats []store.File
	for _, f := range sl.Files {
		if f.Kind == store.KindAgentFlat && f.Project == src.Project && store.FlatAgentSession(f.Path) == id {
			flats = append(flats, f)
		}
	}
	sessDir := filepath.Join(srcDir, id)
	if fi, err := os.Stat(sessDir); err != nil || !fi.IsDir() {
		sessDir = ""
	}

	// The target's index, and the source's entry for the session.
	idxPath := filepath.Join(dst, "sessions-index.json")
	idxRaw, idxErr := readIndex(idxPath)
	if idxErr != nil {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%v: not updated", idxErr))
	}
	srcIdxPath := filepath.Join(srcDir, "sessions-index.json")
	srcIdxRaw, srcIdxErr := readIndex(srcIdxPath)
	var srcEntry []byte
	if srcIdxRaw != nil {
		srcEntry = indexEntry(srcIdxRaw, id)
	}

	// A trimmed copy (trim, fork) holds fewer messages than its source:
	// its index entry counts those it keeps.
	var drop map[int]bool
	if o.Lines != nil {
		drop = map[int]bool{}
		for _, lt := range o.Lines {
			if lt.Drop {
				drop[lt.Line] = true
			}
		}
	}
	main, err := scanFileFor(src.Path, idxRaw != nil && (srcEntry == nil || o.Lines != nil), "", drop)
	if err != nil {
		return nil, err
	}
	oldDir := main.cwd
	if sameFolder {
		dir, p.Dir = oldDir, oldDir
	}
	t := &changeset.Transform{Kind: changeset.TransformRetarget}
	if newID != id {
		t.OldSession, t.NewSession = id, newID
		if main.sessionID != "" && main.sessionID != id {
			// A transcript renamed by hand: its entries name the id.
			t.OldSession = main.sessionID
		}
	}
	switch {
	case oldDir == "":
		cs.Notes = append(cs.Notes, fmt.Sprintf("no entry of session %s names a cwd: only the session id is rewritten", id))
	case !changeset.MappableDir(oldDir):
		// A root (/, C:\) or a path that is not absolute: nothing under
		// it can be told from the rest.
		cs.Notes = append(cs.Notes, fmt.Sprintf("session %s ran in %s: cwd fields are left as they are", id, oldDir))
	case oldDir != dir:
		t.OldDir, t.NewDir, t.RewritePaths = oldDir, dir, o.RewritePaths
		if changeset.WindowsDir(oldDir) && o.RewritePaths {
			// Its cwd fields are mapped; a Windows path inside text has no
			// end a reader can tell.
			t.RewritePaths = false
			cs.Notes = append(cs.Notes, fmt.Sprintf("session %s ran in a Windows folder (%s): its cwd fields are rewritten, paths inside messages are not (--rewrite-paths maps POSIX paths only)", id, oldDir))
		}
	}

	// Flat subagents are named by agent id, unique per folder: one whose
	// name is taken in the target folder (a clone into the same folder)
	// gets a new agent id.
	agents := map[string]string{}
	for _, f := range flats {
		if !exists(filepath.Join(dst, "agent-"+f.Agent+".jsonl")) || o.landing {
			// (A landing finds its own subagents there: see Land.)
			continue
		}
		na := newAgentID(f.Agent, newID, 0)
		for n := 1; !o.again && exists(filepath.Join(dst, "agent-"+na+".jsonl")); n++ {
			na = newAgentID(f.Agent, newID, n)
		}
		agents[f.Agent] = na
	}
	if len(agents) > 0 {
		t.Agents = agents
	}
	if t.OldSession == "" && t.OldDir == "" && t.Agents == nil {
		t = nil // nothing to rewrite: a plain copy
	}

	// A copy is a new session: its files have the time they are made (the
	// plan's), as a new session's have. With its source's, an old
	// session's copy would be swept by Claude Code's next interactive
	// start (tool-results files are swept each by its own mtime). A move
	// is the same session in another folder: its files keep their times,
	// and so do a landing's under its own id (Land: a session carried
	// from another store, as a restore keeps the archived times).
	mtime := main.fp.ModTime
	if !move && !o.landing {
		mtime = now
	}
	what := fmt.Sprintf("move of session %s to %s", id, dir)
	if !move {
		what = fmt.Sprintf("clone of session %s as %s in %s", id, newID, dir)
	}
	if o.What != "" {
		what = o.What + " as " + newID
	}

	mainDst := filepath.Join(dst, newID+".jsonl")
	mt := t
	if o.Lines != nil || o.Title != "" {
		// The main transcript's own transform: the subagents get t.
		mt = &changeset.Transform{Kind: changeset.TransformRetarget}
		if t != nil {
			*mt = *t
		}
		mt.Trim, mt.Saved = o.Lines, o.Saved
	}
	added := main.lines - o.Removed
	titled := ""
	if o.Title != "" {
		mt.Append = TitleLine(o.Title, newID)
		added++
		titled = fmt.Sprintf(", titled %q", o.Title)
	}
	cs.Add(changeset.Op{Action: changeset.Create, Path: mainDst, From: src.Path, FromExpect: fp(main.fp),
		Transform: mt, Mode: main.fp.Mode, ModTime: mtime, Session: newID, EntriesAdded: added,
		Reason: what + ": main transcript" + describe(t) + titled})

	var flatScans []*scan
	for _, f := range flats {
		if target, ok := Linked(f.Path); ok && move {
			return nil, LinkRefused(f.Path, target, "move", "clone the session (a clone copies what the link leads to)")
		}
		s, err := scanFile(f.Path, false)
		if err != nil {
			return nil, err
		}
		flatScans = append(flatScans, s)
		aid := f.Agent
		if na, ok := agents[aid]; ok {
			aid = na
		}
		cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(dst, "agent-"+aid+".jsonl"), From: f.Path,
			FromExpect: fp(s.fp), Transform: t, Mode: s.fp.Mode, ModTime: s.fp.ModTime, Session: newID, EntriesAdded: s.lines,
			Reason: what + ": flat subagent " + f.Agent + describe(t)})
	}

	var sessDirFP changeset.Fingerprint
	if sessDir != "" {
		ops, err := copySessionDir(sessDir, filepath.Join(dst, newID), t, newID, what, move)
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			cs.Add(op)
		}
		if sessDirFP, err = changeset.FingerprintOf(sessDir); err != nil {
			return nil, err
		}
	}

	if !move {
		if err := copySidecars(cs, from, root, id, newID, agents, what); err != nil {
			return nil, err
		}
		for i := range cs.Ops {
			if op := &cs.Ops[i]; !o.landing && (op.Action == changeset.Create || op.Action == changeset.CreateDir) {
				op.ModTime = now
			}
		}
	}

	// The target folder's index lists the session.
	mtimeMS := mtime.UnixMilli()
	if idxRaw != nil && indexEntry(idxRaw, newID) == nil {
		var entry []byte
		if srcEntry != nil {
			entry = retargetEntry(srcEntry, newID, mainDst, mtimeMS, oldDir, dir)
			if o.Lines != nil && main.sum != nil {
				entry = setIfPresent(entry, map[string][]byte{"messageCount": []byte(strconv.Itoa(main.sum.Messages))})
			}
		} else if main.sum != nil {
			entry = newEntry(newID, mainDst, mtimeMS, main.sum, dir)
		}
		if entry != nil {
			nb, err := indexAppend(idxRaw, [][]byte{entry})
			if err != nil {
				return nil, err
			}
			ifp, err := changeset.FingerprintOf(idxPath)
			if err != nil {
				return nil, err
			}
			cs.Add(changeset.Op{Action: changeset.Rewrite, Path: idxPath, Expect: ifp, Data: nb, HasData: true,
				Reason: fmt.Sprintf("list session %s in the folder's sessions-index.json", newID)})
		}
	}

	if move {
		if srcIdxErr != nil {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%v: not updated", srcIdxErr))
		}
		if srcEntry != nil {
			nb, _, err := indexRemove(srcIdxRaw, id)
			if err != nil {
				return nil, err
			}
			ifp, err := changeset.FingerprintOf(srcIdxPath)
			if err != nil {
				return nil, err
			}
			cs.Add(changeset.Op{Action: changeset.Rewrite, Path: srcIdxPath, Expect: ifp, Data: nb, HasData: true,
				Reason: fmt.Sprintf("drop session %s from the old folder's sessions-index.json", id)})
		}
		cs.Add(changeset.Op{Action: changeset.Delete, Path: src.Path, Expect: main.fp, Session: id,
			EntriesRemoved: main.lines, Reason: what + ": remove the original (it is kept in the backup)"})
		for i, f := range flats {
			cs.Add(changeset.Op{Action: changeset.Delete, Path: f.Path, Expect: flatScans[i].fp, Session: id,
				EntriesRemoved: flatScans[i].lines, Reason: what + ": remove the original flat subagent"})
		}
		if sessDir != "" {
			cs.Add(changeset.Op{Action: changeset.DeleteDir, Path: sessDir, Expect: sessDirFP, Session: id,
				Reason: what + ": remove the original session folder"})
		}
		if err := RemoveEmptied(cs, filepath.Dir(src.Path)); err != nil {
			return nil, err
		}
	}
	if o.What != "" {
		cs.Notes = append(cs.Notes, fmt.Sprintf("the new session's id is %s; resume it with: %s", newID, p.ResumeCommand()))
	} else if !move {
		cs.Notes = append(cs.Notes, fmt.Sprintf("the clone's session id is %s; resume it with: %s", newID, p.ResumeCommand()))
	} else {
		cs.Notes = append(cs.Notes, "resume it with: "+p.ResumeCommand())
	}
	return p, nil
}

func fp(f changeset.Fingerprint) *changeset.Fingerprint { return &f }

// describe says what a transform rewrites, for an op's reason.
func describe(t *changeset.Transform) string {
	if t == nil {
		return " (copied as it is)"
	}
	var parts []string
	if t.OldSession != "" {
		parts = append(parts, "sessionId → "+t.NewSession)
	}
	if t.OldDir != "" {
		parts = append(parts, "cwd "+t.OldDir+" → "+t.NewDir)
	}
	if t.RewritePaths {
		parts = append(parts, "paths in messages")
	}
	for _, k := range slices.Sorted(maps.Keys(t.Agents)) {
		parts = append(parts, "agentId "+k+" → "+t.Agents[k])
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// copySessionDir plans the copy of a session folder (<id>/): subagent
// transcripts under subagents/ through the transform, every other file as
// it is, folders without transcripts (tool-results/) in one op. A file
// that is a symbolic link to a file is copied as what it leads to; for a
// move (which removes the folder), and for a link to anything else, the
// plan is refused.
func copySessionDir(src, dst string, t *changeset.Transform, session, what string, move bool) ([]changeset.Op, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	var ops []changeset.Op
	for _, e := range ents {
		from := filepath.Join(src, e.Name())
		to := filepath.Join(dst, e.Name())
		if target, ok := Linked(from); ok && (move || !isFile(from)) {
			if move {
				return nil, LinkRefused(from, target, "move", "clone the session (a clone copies the files links lead to)")
			}
			return nil, linkedFolder(from, target)
		}
		if e.IsDir() && e.Name() != "subagents" {
			dfp, err := changeset.FingerprintOf(from)
			if err != nil {
				return nil, err
			}
			ops = append(ops, changeset.Op{Action: changeset.CreateDir, Path: to, From: from, FromExpect: fp(dfp),
				Reason: what + ": " + e.Name() + "/"})
			continue
		}
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if target, ok := Linked(p); ok && (move || !isFile(p)) {
				if move {
					return LinkRefused(p, target, "move", "clone the session (a clone copies the files links lead to)")
				}
				return conflict("%s is a symbolic link to %s, which is not a file: cfix copies the file a link leads to, nothing else", p, target)
			} else if !ok && !d.Type().IsRegular() {
				return fmt.Errorf("%s: not a regular file; cfix copies only files and folders", p)
			}
			rel, _ := filepath.Rel(src, p)
			target := filepath.Join(dst, rel)
			if isTranscript(rel) {
				s, err := scanFile(p, false)
				if err != nil {
					return err
				}
				ops = append(ops, changeset.Op{Action: changeset.Create, Path: target, From: p, FromExpect: fp(s.fp),
					Transform: t, Mode: s.fp.Mode, ModTime: s.fp.ModTime, Session: session, EntriesAdded: s.lines,
					Reason: what + ": subagent " + strings.TrimSuffix(filepath.Base(p), ".jsonl") + describe(t)})
				return nil
			}
			ffp, err := changeset.FingerprintThrough(p)
			if err != nil {
				return err
			}
			ops = append(ops, changeset.Op{Action: changeset.Create, Path: target, From: p, FromExpect: fp(ffp),
				Mode: ffp.Mode, ModTime: ffp.ModTime, Reason: what + ": " + rel})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// linkedFolder is the refusal of a copy of a folder that is a symbolic
// link: a copy of the link would share the folder with the original, and
// cfix copies the files links lead to, not folders.
func linkedFolder(path, target string) error {
	return conflict("%s is a symbolic link to %s: cfix copies the file a link leads to, not a folder; put the folder itself in place of the link", path, target)
}

// isFile reports whether path leads to a regular file (through links).
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// copySidecars plans the copies of a clone's todos, file-history and task
// list, named by the new id: from the store from into the store root.
func copySidecars(cs *changeset.ChangeSet, from, root, id, newID string, agents map[string]string, what string) error {
	todos := filepath.Join(from, "todos")
	ents, err := os.ReadDir(todos)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	prefix := id + "-agent-"
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".json") {
			continue
		}
		agent := strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".json")
		switch {
		case agent == id:
			agent = newID
		case agents[agent] != "":
			agent = agents[agent]
		}
		src := filepath.Join(todos, name)
		if target, ok := Linked(src); ok && !isFile(src) {
			return conflict("%s is a symbolic link to %s, which is not a file: cfix copies the file a link leads to, nothing else", src, target)
		}
		ffp, err := changeset.FingerprintThrough(src)
		if err != nil {
			return err
		}
		cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(root, "todos", newID+"-agent-"+agent+".json"), From: src,
			FromExpect: fp(ffp), Mode: ffp.Mode, ModTime: ffp.ModTime, Reason: what + ": todo list"})
	}
	fh := filepath.Join(from, "file-history", id)
	if target, ok := Linked(fh); ok {
		return linkedFolder(fh, target)
	}
	if fi, err := os.Stat(fh); err == nil && fi.IsDir() {
		dfp, err := changeset.FingerprintOf(fh)
		if err != nil {
			return err
		}
		cs.Add(changeset.Op{Action: changeset.CreateDir, Path: filepath.Join(root, "file-history", newID), From: fh,
			FromExpect: fp(dfp), Reason: what + ": file-history (the /rewind backups)"})
	}
	// The task list of the Task tools (2.1.x: tasks/<session-id>/<n>.json
	// and .lock), named by the session id.
	tl := filepath.Join(from, "tasks", id)
	if target, ok := Linked(tl); ok {
		return linkedFolder(tl, target)
	}
	if fi, err := os.Stat(tl); err == nil && fi.IsDir() {
		dfp, err := changeset.FingerprintOf(tl)
		if err != nil {
			return err
		}
		cs.Add(changeset.Op{Action: changeset.CreateDir, Path: filepath.Join(root, "tasks", newID), From: tl,
			FromExpect: fp(dfp), Reason: what + ": task list (tasks/)"})
	}
	return nil
}

// findSession resolves SESSION as every command resolves what the user
// names (store.Resolver): a session id or a unique prefix of one, or the
// path of a main transcript of the store. It must name one main transcript.
func findSession(root string, l *store.Layout, arg, command string) (store.File, error) {
	if arg == "" {
		return store.File{}, inputErr("no session given")
	}
	t, err := store.NewResolver(root, l).Resolve(arg)
	var te *store.TargetError
	switch {
	case errors.As(err, &te) && te.Reason != "":
		return store.File{}, inputErr("%v", err)
	case errors.As(err, &te) && (strings.HasSuffix(arg, ".jsonl") || strings.ContainsRune(arg, filepath.Separator)):
		return store.File{}, inputErr("%s: no such file", arg)
	case errors.As(err, &te):
		return store.File{}, inputErr("no session %s in the store %s", arg, root)
	case err != nil:
		return store.File{}, err
	}
	switch t.Kind {
	case store.TargetFile:
		for _, f := range l.Files {
			if !t.InStore || f.Path != t.Layout.Files[0].Path {
				continue
			}
			if f.Kind != store.KindSession {
				return store.File{}, inputErr("%s is a subagent transcript: %s its session instead", arg, command)
			}
			return f, nil
		}
		return store.File{}, inputErr("%s is not a session transcript of the store %s", arg, root)
	case store.TargetSession:
	default:
		return store.File{}, inputErr("%s names a %s, not a session: name a session id or its .jsonl transcript", arg, t.Kind)
	}
	var found []store.File
	for _, f := range t.Layout.Files {
		if f.Kind == store.KindSession {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return store.File{}, inputErr("session %s has no main transcript, only subagents", t.Session)
	case 1:
		return found[0], nil
	}
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	return store.File{}, inputErr("session %s has transcripts in %d folders; name the one to %s by its path: %s",
		t.Session, len(found), command, strings.Join(paths, ", "))
}

// FindSession resolves what the user names as the one main transcript of
// a session, as clone does; command names the command in messages.
func FindSession(root string, l *store.Layout, arg, command string) (store.File, error) {
	return findSession(root, l, arg, command)
}

// used returns where the session id is already used, or "".
func used(root string, l *store.Layout, id string) string {
	for _, f := range l.Files {
		if (f.Kind == store.KindSession || f.Kind == store.KindAgent) && strings.EqualFold(f.Session, id) {
			return f.Path
		}
	}
	for _, d := range l.SessionDirs {
		if strings.EqualFold(d.Session, id) {
			return d.Path
		}
	}
	if p := filepath.Join(root, "file-history", id); exists(p) {
		return p
	}
	if m, _ := filepath.Glob(filepath.Join(root, "todos", id+"-agent-*.json")); len(m) > 0 {
		return m[0]
	}
	if p := filepath.Join(root, "tasks", id); exists(p) {
		return p
	}
	return ""
}

// readIndex reads a sessions-index.json: nil, nil when there is none; an
// error when it cannot be edited safely.
func readIndex(path string) ([]byte, error) {
	raw, err := rfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkIndex(path, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// TitleLine is the custom-title line Claude Code's /rename writes: the
// title /resume and cfix ls show for session id.
func TitleLine(title, id string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	enc.Encode(struct {
		Type        string `json:"type"`
		CustomTitle string `json:"customTitle"`
		SessionID   string `json:"sessionId"`
	}{"custom-title", title, id})
	return b.Bytes()
}
