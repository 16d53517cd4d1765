package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// RmOptions configure an rm plan.
type RmOptions struct {
	Root     string
	Sessions []string // what the user named
	// History also removes the session's prompts from history.jsonl (the
	// lines whose sessionId names it).
	History bool
	// Force plans sessions that look live too (apply needs --force too).
	Force bool
	Now   time.Time
}

// Rm plans the removal of whole sessions: everything each owns (see
// owner.sessions), its entry in the sessions-index.json of its project
// folders, and with History its lines of history.jsonl. A live session is
// refused. Every removed byte stays in the journal: cfix undo puts it back.
func Rm(opts RmOptions) (*changeset.ChangeSet, error) {
	if len(opts.Sessions) == 0 {
		return nil, &carry.InputError{Msg: "no session given"}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	l, err := store.Scan(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", opts.Root, err)
	}
	ids, err := resolveSessions(opts.Root, l, opts.Sessions, "rm")
	if err != nil {
		return nil, err
	}
	stubs, order, err := stubsOf(l, ids, nil)
	if err != nil {
		return nil, err
	}
	ids = append(ids, order...)
	sessions, err := newOwner(opts.Root, l).sessions(ids)
	if err != nil {
		return nil, err
	}
	guard, err := newLiveGuard(opts.Root, opts.Now)
	if err != nil {
		return nil, err
	}
	cs := changeset.New(opts.Root, "rm")
	cs.Batch = true
	for _, id := range order {
		cs.Notes = append(cs.Notes, stubNote(id, stubs[id], "removed"))
	}
	for _, s := range sessions {
		if why := guard.why(s); why != "" && !opts.Force {
			return nil, &carry.ConflictError{Msg: why + "; nothing is planned (--force to remove it anyway)"}
		}
		if err := remove(cs, s, "remove session "+s.ID); err != nil {
			return nil, err
		}
		cs.Notes = append(cs.Notes, s.Kept...)
	}
	if err := dropFromIndexes(cs, opts.Root, sessions); err != nil {
		return nil, err
	}
	if opts.History {
		if err := dropHistory(cs, opts.Root, sessions); err != nil {
			return nil, err
		}
	}
	carry.LeaveLinks(cs)
	if err := emptiedFolders(cs, opts.Root, sessions); err != nil {
		return nil, err
	}
	if l, ok := cs.OutsideLink(); ok {
		return nil, &carry.ConflictError{Msg: fmt.Sprintf("%s; rm is all or nothing: nothing is planned", l)}
	}
	return cs, nil
}

// dropHistory plans the removal of the history.jsonl lines whose
// sessionId names one of the sessions. A line without a sessionId (older
// clients wrote none) cannot be told apart from another session's prompt
// in the same project, and stays; the plan counts those of the sessions'
// projects in a note.
func dropHistory(cs *changeset.ChangeSet, root string, sessions []*Session) error {
	path := filepath.Join(root, "history.jsonl")
	fp, err := changeset.Stat(path)
	if err != nil || !fp.Exists {
		return err
	}
	ids := map[string]bool{}
	cwds := map[string]bool{}
	for _, s := range sessions {
		ids[s.ID] = true
		for _, m := range s.Mains {
			if c := firstCWD(m.Path); c != "" {
				cwds[c] = true
			}
		}
	}
	f, err := rfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := changeset.NewHashWriter()
	rd := session.NewReader(teeReader{f, h}, nil)
	var edits []changeset.Edit
	unattributed := 0
	for rd.Next() {
		ln := rd.Line()
		id, hasID := stringField(ln.Raw, "sessionId")
		if !hasID {
			if p, ok := stringField(ln.Raw, "project"); ok && cwds[p] {
				unattributed++
			}
			continue
		}
		if !ids[id] {
			continue
		}
		n := ln.End() - ln.Offset // a line over session.MaxLine too
		// Consecutive lines make one edit.
		if k := len(edits) - 1; k >= 0 && edits[k].Offset+edits[k].Length == ln.Offset {
			edits[k].Length += n
			edits[k].Count++
			continue
		}
		edits = append(edits, changeset.Edit{Line: ln.N, Offset: ln.Offset, Length: n, Count: 1, Reason: "a prompt of session " + id})
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fp.SHA256 = h.Sum()
	if unattributed > 0 {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%s: %d %s of these sessions' projects name no session (written by a client that did not record sessionId): kept", path, unattributed, plural.Of(unattributed, "line")))
	}
	if len(edits) == 0 {
		return nil
	}
	removed := 0
	for _, e := range edits {
		removed += e.Count
	}
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Edits: edits, EntriesRemoved: removed,
		Reason: fmt.Sprintf("drop the prompts of %s from history.jsonl", sessionWords(slices.Sorted(maps.Keys(ids))))})
	return nil
}

type teeReader struct {
	f *os.File
	h *changeset.HashWriter
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.f.Read(p)
	t.h.Write(p[:n])
	return n, err
}

// stringField returns the string value of a top-level field of a JSON line.
func stringField(raw []byte, key string) (string, bool) {
	if !bytes.Contains(raw, []byte(`"`+key+`"`)) {
		return "", false
	}
	a, b, ok := session.Find(raw, key)
	if !ok {
		return "", false
	}
	return changeset.DecodeJSONString(raw[a:b])
}

// firstCWD returns the first cwd in the first lines of a transcript.
func firstCWD(path string) string {
	f, err := rfile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	rd := session.NewReader(f, make([]byte, 64<<10))
	for n := 0; n < 50 && rd.Next(); n++ {
		if c, ok := stringField(rd.Line().Raw, "cwd"); ok && c != "" {
			return c
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
