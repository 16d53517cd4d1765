package archive

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
	"github.com/klauspost/compress/zstd"
)

// Options configure an archive plan.
type Options struct {
	Root string
	// Dir is the archive folder (DefaultDir when empty).
	Dir string
	// Sessions are what the user named; OlderThan picks instead every
	// session whose last activity (the newest modification time of its
	// files) lies longer ago.
	Sessions  []string
	OlderThan time.Duration
	// Except are sessions (full ids) OlderThan leaves in the store: the
	// one a hook's session resumes.
	Except []string
	// ByTranscript ages a session for OlderThan as Claude Code's cleanup
	// does: by the modification time of its main transcript (any of
	// them, when it has several), whatever its other files' times; a
	// subagent written since does not keep a transcript from the sweep.
	ByTranscript bool
	Now          time.Time
	Force        bool
	// Build writes the archive files into a staging folder in Dir, so
	// the plan can be applied; a dry run leaves it false and writes
	// nothing.
	Build bool
}

// Plan is an archive plan.
type Plan struct {
	ChangeSet *changeset.ChangeSet
	// Staging is the folder holding the archive files Build wrote; the
	// caller removes it once the plan is applied (or not).
	Staging string
	// Archives are the archive files the plan creates, by session.
	Archives []Archived
}

// Archived is one archive of a plan.
type Archived struct {
	Session string
	Path    string // where the archive goes
	Files   int
	Bytes   int64 // of the session's files
	// Size is the archive file's size (Build only).
	Size     int64
	Manifest *Manifest
}

// Archive plans moving whole sessions out of the store: for each, an
// archive file <Dir>/<id>.tar.zst holding everything it owns (see
// owner.sessions) with paths, modes and mtimes, and a manifest; then the
// removal of those files and of its sessions-index.json entries. Undo
// removes the archive file and puts every file back. Live sessions are
// refused (named) or skipped (--older-than).
func Archive(opts Options) (*Plan, error) {
	if len(opts.Sessions) == 0 && opts.OlderThan == 0 {
		return nil, &carry.InputError{Msg: "no session given: name sessions or use --older-than"}
	}
	if len(opts.Sessions) > 0 && opts.OlderThan > 0 {
		return nil, &carry.InputError{Msg: "name sessions or use --older-than, not both"}
	}
	if len(opts.Except) > 0 && opts.OlderThan == 0 {
		return nil, &carry.InputError{Msg: "--except goes with --older-than"}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	dir, err := folder(opts.Dir)
	if err != nil {
		return nil, err
	}
	if store.Within(opts.Root, dir) {
		return nil, &carry.InputError{Msg: fmt.Sprintf("archive folder %s is inside the store %s: Claude Code's cleanup would reach it", dir, opts.Root)}
	}
	l, err := store.Scan(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", opts.Root, err)
	}
	guard, err := newLiveGuard(opts.Root, opts.Now)
	if err != nil {
		return nil, err
	}
	o := newOwner(opts.Root, l)
	cs := changeset.New(opts.Root, "archive")
	cs.Batch = true // thousands of sessions: one sync per phase
	p := &Plan{ChangeSet: cs}

	var sessions []*Session
	if opts.OlderThan > 0 {
		seen := map[string]bool{}
		var ids []string
		for _, f := range l.Files {
			if f.Kind == store.KindSession && !seen[f.Session] {
				seen[f.Session] = true
				ids = append(ids, f.Session)
			}
		}
		sort.Strings(ids)
		all, err := o.sessions(ids)
		if err != nil {
			return nil, err
		}
		cutoff := opts.Now.Add(-opts.OlderThan)
		var empty, metaOnly int
		emptyIDs := map[string]bool{} // those holding metadata only
		buf := make([]byte, 64<<10)   // for the heads of the transcripts read
		for _, s := range all {
			if !aged(s, cutoff, opts.ByTranscript) || guard.why(s) != "" || slices.Contains(opts.Except, s.ID) {
				continue
			}
			// A session that holds no message is nothing to restore: it
			// stays, for prune (or Claude Code's cleanup) to remove.
			if e, err := emptyWith(s, buf); err != nil {
				return nil, err
			} else if e != notEmpty {
				empty++
				if e == onlyMetadata {
					metaOnly++
					emptyIDs[s.ID] = true
				}
				continue
			}
			if why := linkedMain(s); why != "" {
				cs.Notes = append(cs.Notes, why+": left in the store")
				continue
			}
			if exists(filepath.Join(dir, s.ID+Ext)) {
				cs.Notes = append(cs.Notes, fmt.Sprintf("session %s is already archived in %s: left in the store", s.ID, filepath.Join(dir, s.ID+Ext)))
				continue
			}
			sessions = append(sessions, s)
		}
		// The stubs of those archived go with them, however recent (a
		// stub holds no message, but is its session's title).
		chosen := map[string]bool{}
		var chosenIDs []string
		for _, s := range sessions {
			chosen[s.ID] = true
			chosenIDs = append(chosenIDs, s.ID)
		}
		except := map[string]bool{}
		for _, id := range opts.Except {
			except[id] = true
		}
		stubs, _, err := stubsOf(l, chosenIDs, except)
		if err != nil {
			return nil, err
		}
		for _, s := range all {
			if stubs[s.ID] == "" || chosen[s.ID] || guard.why(s) != "" || linkedMain(s) != "" || exists(filepath.Join(dir, s.ID+Ext)) {
				continue
			}
			if emptyIDs[s.ID] {
				empty--
				metaOnly--
			}
			cs.Notes = append(cs.Notes, stubNote(s.ID, stubs[s.ID], "archived"))
			s.StubOf = stubs[s.ID]
			sessions = append(sessions, s)
		}
		if empty > 0 {
			cs.Notes = append(cs.Notes, emptyNote(empty, metaOnly))
		}
	} else {
		ids, err := resolveSessions(opts.Root, l, opts.Sessions, "archive")
		if err != nil {
			return nil, err
		}
		stubs, order, err := stubsOf(l, ids, nil)
		if err != nil {
			return nil, err
		}
		for _, id := range order {
			cs.Notes = append(cs.Notes, stubNote(id, stubs[id], "archived"))
		}
		ids = append(ids, order...)
		if sessions, err = o.sessions(ids); err != nil {
			return nil, err
		}
		for _, s := range sessions {
			s.StubOf = stubs[s.ID]
			if why := linkedMain(s); why != "" {
				return nil, &carry.ConflictError{Msg: why + "; nothing is planned"}
			}
			if why := guard.why(s); why != "" && !opts.Force {
				return nil, &carry.ConflictError{Msg: why + "; nothing is planned (--force to archive it anyway)"}
			}
			if a := filepath.Join(dir, s.ID+Ext); exists(a) {
				return nil, &carry.ConflictError{Msg: fmt.Sprintf("session %s is already archived in %s: restore it or remove that file first", s.ID, a)}
			}
		}
	}
	if len(sessions) == 0 {
		return p, nil
	}

	// Each session's index entries, for its manifest (restore puts them back).
	indexes := map[string][]byte{}
	for _, s := range sessions {
		for _, folder := range s.Projects {
			if _, ok := indexes[folder]; !ok {
				raw, _ := carry.ReadIndex(filepath.Join(store.ProjectsDir(opts.Root), folder, "sessions-index.json"))
				indexes[folder] = raw
			}
		}
	}
	manifests := make([]*Manifest, len(sessions))
	errs := make([]error, len(sessions))
	staged := make([]changeset.Fingerprint, len(sessions))
	if opts.Build {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("archive folder %s: %w", dir, err)
		}
		var rnd [4]byte
		rand.Read(rnd[:])
		p.Staging = filepath.Join(dir, ".staging-"+hex.EncodeToString(rnd[:]))
		if err := os.Mkdir(p.Staging, 0o700); err != nil {
			return nil, fmt.Errorf("archive folder %s: %w", dir, err)
		}
		cs.Own(p.Staging) // the plan adopts the archive files built there
	}
	// Sessions on every core, biggest first; each archive's zstd encoder
	// works on every core too (a big session alone keeps them busy).
	order := make([]int, len(sessions))
	sizes := make([]int64, len(sessions))
	for i, s := range sessions {
		order[i] = i
		sizes[i] = s.Bytes
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Small sessions one per core, each on one encoder goroutine; a
			// big one on every core (see newEncoder).
			var small, big *zstd.Encoder
			var hold *holder
			if opts.Build {
				hold = &holder{buf: make([]byte, holdSize), scratch: make([]byte, 256<<10), out: bufio.NewWriterSize(nil, 64<<10)}
			}
			defer func() {
				for _, e := range []*zstd.Encoder{small, big} {
					if e != nil {
						e.Close()
					}
				}
			}()
			for i := range work {
				if hold != nil {
					hold.n = 0
				}
				manifests[i], errs[i] = describe(opts.Root, sessions[i], indexes, opts.Now, opts.Build, hold)
				if errs[i] != nil || !opts.Build {
					continue
				}
				enc := &small
				conc := 1
				if manifests[i].Bytes >= bigSession {
					enc, conc = &big, runtime.GOMAXPROCS(0)
				}
				if *enc == nil {
					if *enc, errs[i] = newEncoder(conc); errs[i] != nil {
						continue
					}
				}
				staged[i], errs[i] = build(opts.Root, filepath.Join(p.Staging, sessions[i].ID+Ext), manifests[i], *enc, hold)
			}
		}()
	}
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.Cleanup()
		return nil, err
	}

	for i, s := range sessions {
		m := manifests[i]
		a := Archived{Session: s.ID, Path: filepath.Join(dir, s.ID+Ext), Bytes: m.Bytes, Manifest: m}
		for _, f := range m.Files {
			if !f.Dir {
				a.Files++
			}
		}
		what := fmt.Sprintf("archive of session %s: %d %s, %s", s.ID, a.Files, plural.Of(a.Files, "file"), changeset.Size(m.Bytes))
		if m.Title != "" {
			what += fmt.Sprintf(" (%q)", m.Title)
		}
		op := changeset.Op{Action: changeset.Create, Path: a.Path, Mode: 0o600, Reason: what}
		if opts.Build {
			a.Size = staged[i].Size
			// The staged file itself goes into place (same folder).
			op.Adopt = true
			op.From = filepath.Join(p.Staging, s.ID+Ext)
			op.FromExpect = &changeset.Fingerprint{Exists: true, Size: staged[i].Size, ModTime: staged[i].ModTime, SHA256: staged[i].SHA256}
		} else {
			op.Reason += "; compressed when applied"
		}
		cs.Add(op)
		p.Archives = append(p.Archives, a)
		if err := removeDescribed(cs, opts.Root, s, m, opts.Build, "archive session "+s.ID); err != nil {
			p.Cleanup()
			return nil, err
		}
		cs.Notes = append(cs.Notes, s.Kept...)
	}
	if err := dropFromIndexes(cs, opts.Root, sessions); err != nil {
		p.Cleanup()
		return nil, err
	}
	carry.LeaveLinks(cs)
	if err := emptiedFolders(cs, opts.Root, sessions); err != nil {
		p.Cleanup()
		return nil, err
	}
	if l, ok := cs.OutsideLink(); ok {
		p.Cleanup()
		return nil, &carry.ConflictError{Msg: fmt.Sprintf("%s; archive is all or nothing: nothing is planned", l)}
	}
	return p, nil
}

// bigSession is the size from which a session's archive is compressed on
// every core.
const bigSession = 8 << 20

// Cleanup removes the staging folder.
func (p *Plan) Cleanup() {
	if p.Staging != "" {
		os.RemoveAll(p.Staging)
	}
}

// describe makes the manifest of a session: every folder and file under
// its parts with mode and mtime, and with hash the sha256 of each file
// (the bytes of those that fit kept in hold, for write).
func describe(root string, s *Session, indexes map[string][]byte, now time.Time, hash bool, hold *holder) (*Manifest, error) {
	m := &Manifest{Format: FormatName, Version: FormatVersion, Cfix: cfixVersion(), Session: s.ID, Projects: s.Projects,
		LastActivity: s.LastActivity.UTC(), Archived: now.UTC(), StubOf: s.StubOf}
	for _, folder := range s.Projects {
		if fi, err := os.Lstat(filepath.Join(store.ProjectsDir(root), folder)); err == nil && fi.IsDir() {
			if m.Folders == nil {
				m.Folders = map[string]FolderInfo{}
			}
			m.Folders[folder] = FolderInfo{Mode: fi.Mode().Perm(), ModTime: fi.ModTime().UTC()}
		}
		if raw := indexes[folder]; raw != nil {
			if e := carry.IndexEntry(raw, s.ID); e != nil {
				if m.Index == nil {
					m.Index = map[string]json.RawMessage{}
				}
				m.Index[folder] = json.RawMessage(e)
			}
		}
	}
	var buf []byte
	if hold != nil {
		buf = hold.scratch
	}
	for _, part := range s.Parts {
		m.Parts = append(m.Parts, PartInfo{Path: part.Rel, Dir: part.Dir, What: part.What})
		if part.Dir && hash {
			// The folder's fingerprint, for its removal (see removeDescribed).
			fp, err := changeset.FingerprintOf(part.Path)
			if err != nil {
				return nil, err
			}
			s.dirFPs = append(s.dirFPs, fp)
		}
		err := filepath.WalkDir(part.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if hash && d.Type().IsRegular() {
				// Stat'ed as it is opened for its hash.
				f := FileInfo{Path: filepath.ToSlash(rel)}
				if err := readMember(p, &f, hold, buf); err != nil {
					return err
				}
				m.Bytes += f.Size
				m.Files = append(m.Files, f)
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			f := FileInfo{Path: filepath.ToSlash(rel), Dir: d.IsDir(), Mode: fi.Mode().Perm(), ModTime: fi.ModTime().UTC()}
			switch {
			case d.IsDir():
			case fi.Mode().IsRegular() && !hash:
				f.Size = fi.Size()
				m.Bytes += f.Size
			default:
				return fmt.Errorf("%s is neither a file nor a folder: archive keeps files and folders only", p)
			}
			m.Files = append(m.Files, f)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(s.Mains) > 0 {
		// From the bytes read for the hash, when they are held.
		var held []byte
		if rel, err := filepath.Rel(root, s.Mains[0].Path); err == nil {
			for _, f := range m.Files {
				if f.Path == filepath.ToSlash(rel) {
					held = f.data
					break
				}
			}
		}
		if err := describeMain(m, s.Mains[0].Path, held); err != nil {
			return nil, err
		}
		// The title as cfix ls and the /resume picker give it (custom
		// title, the title sidecar, AI title, summary, else first prompt).
		m.Title = store.TitleOf(s.Mains[0])
	}
	return m, nil
}

// holdSize is how many bytes of a session's files a worker holds in
// memory between their hash and their compression.
const holdSize = 16 << 20

// holder is a worker's buffer for the bytes of the session it archives:
// a file that fits is read once, hashed, and archived from memory; one
// that does not is read twice, hashed first, then archived from disk
// (checked unchanged since).
type holder struct {
	buf []byte
	n   int
	// scratch is the worker's buffer for copies, out its buffer for the
	// archive file.
	scratch []byte
	out     *bufio.Writer
}

// take returns n bytes of the buffer, or nil when they do not fit.
func (h *holder) take(n int64) []byte {
	if h == nil || n > int64(len(h.buf)-h.n) {
		return nil
	}
	b := h.buf[h.n : h.n+int(n) : h.n+int(n)]
	h.n += int(n)
	return b
}

// readMember describes the regular file at p in f (mode, mtime, size, as
// the open file is stat'ed) with the sha256 of its bytes, keeping them in
// hold when they fit. The file is unchanged from the open to the end of
// the read (size, mtime, change time).
func readMember(p string, f *FileInfo, hold *holder, buf []byte) error {
	in, err := rfile.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	changed := func() error { return fmt.Errorf("%s changed while it was archived; plan again", p) }
	before, err := in.Stat()
	if err != nil {
		return err
	}
	if !before.Mode().IsRegular() {
		return fmt.Errorf("%s is neither a file nor a folder: archive keeps files and folders only", p)
	}
	f.Mode, f.ModTime, f.Size = before.Mode().Perm(), before.ModTime().UTC(), before.Size()
	f.changed = changeTime(before)
	h := sha256.New()
	if data := hold.take(f.Size); data != nil {
		if _, err := io.ReadFull(in, data); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return changed()
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		h.Write(data)
		f.data = data
	} else if n, err := io.CopyBuffer(h, io.LimitReader(in, f.Size), buf); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	} else if n != f.Size {
		return changed()
	}
	after, err := in.Stat()
	if err != nil {
		return err
	}
	if after.Size() != f.Size || !after.ModTime().Equal(before.ModTime()) || !sameChange(after, f.changed) {
		return changed()
	}
	f.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// build writes the archive of m to path (a new file) with zw, through the
// worker's buffers in hold, and returns its fingerprint.
func build(root, path string, m *Manifest, zw *zstd.Encoder, hold *holder) (changeset.Fingerprint, error) {
	f, err := rfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return changeset.Fingerprint{}, err
	}
	h := sha256.New()
	// Whole blocks to the file: the encoder writes each compressed block
	// on its own, a few KB.
	fw := hold.out
	fw.Reset(f)
	bw := &countWriter{w: io.MultiWriter(fw, h)}
	if err := write(bw, root, m, zw, hold.scratch); err != nil {
		f.Close()
		return changeset.Fingerprint{}, fmt.Errorf("archive of session %s: %w", m.Session, err)
	}
	if _, err := bw.Write(trailer(h.Sum(nil))); err != nil {
		f.Close()
		return changeset.Fingerprint{}, err
	}
	if err := fw.Flush(); err != nil {
		f.Close()
		return changeset.Fingerprint{}, err
	}
	// No fsync: apply links the staged file into place and syncs it (with
	// the batch's barrier).
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return changeset.Fingerprint{}, err
	}
	if err := f.Close(); err != nil {
		return changeset.Fingerprint{}, err
	}
	return changeset.Fingerprint{Exists: true, Size: fi.Size(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// removeDescribed adds the removal of a session's parts, fingerprinted
// from its manifest: size, mtime and sha256 of each file (a folder's
// listing is hashed when the plan is built to be applied).
func removeDescribed(cs *changeset.ChangeSet, root string, s *Session, m *Manifest, hash bool, reason string) error {
	files := map[string]FileInfo{}
	for _, f := range m.Files {
		files[f.Path] = f
	}
	for _, part := range s.Parts {
		op := changeset.Op{Action: changeset.Delete, Path: part.Path, Session: s.ID, Reason: reason + ": " + part.What}
		if part.Dir {
			op.Action = changeset.DeleteDir
			fp := changeset.Fingerprint{Exists: true, Dir: true}
			if hash {
				fp, s.dirFPs = s.dirFPs[0], s.dirFPs[1:]
			}
			for rel, f := range files {
				if strings.HasPrefix(rel, part.Rel+"/") {
					fp.Size += f.Size
				}
			}
			op.Expect = fp
		} else {
			f := files[part.Rel]
			fp, err := changeset.Stat(part.Path)
			if err != nil {
				return err
			}
			if !fp.Exists || fp.Size != f.Size || !fp.ModTime.Equal(f.ModTime) {
				return fmt.Errorf("%s changed while it was archived; plan again", part.Path)
			}
			fp.SHA256 = f.SHA256
			op.Expect = fp
		}
		cs.Add(op)
	}
	return nil
}

// List reads the manifests of the archives in dir (the first member of
// each, at most maxManifest bytes), sorted by last activity, newest
// first. A file that cannot be read is reported in bad, by path, its
// message through visible.
func List(dir string) (list []Listed, bad map[string]error, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	bad = map[string]error{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		m, err := readManifest(path)
		if err != nil {
			bad[path] = visibleError{err}
			continue
		}
		fi, err := e.Info()
		if err != nil {
			bad[path] = err
			continue
		}
		list = append(list, Listed{Path: path, Size: fi.Size(), Manifest: m})
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].Manifest.LastActivity, list[j].Manifest.LastActivity
		if !a.Equal(b) {
			return a.After(b)
		}
		return list[i].Path < list[j].Path
	})
	return list, bad, nil
}

// Listed is an archive file and its manifest.
type Listed struct {
	Path     string
	Size     int64
	Manifest *Manifest
}

// aged reports whether session s is older than cutoff: by its last
// activity, or byTranscript by the oldest of its main transcripts.
func aged(s *Session, cutoff time.Time, byTranscript bool) bool {
	if !byTranscript {
		return s.LastActivity.Before(cutoff)
	}
	for _, f := range s.Mains {
		if f.ModTime.Before(cutoff) {
			return true
		}
	}
	return false
}
