package archive

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
)

// RestoreOptions configure a restore plan.
type RestoreOptions struct {
	Root string
	Dir  string // the archive folder (DefaultDir when empty)
	// Archives are what the user named: session ids, unique prefixes of
	// them (the archives' names), or paths of archive files.
	Archives []string
	// To, when set, restores into the project folder of this working
	// directory instead of the one each session came from.
	To string
	// Keep leaves the archive files in place.
	Keep bool
	// Extract extracts the verified files into the staging folder, so the
	// plan can be applied; a dry run leaves it false: each archive is read
	// and checked as a stream, and nothing is written anywhere.
	Extract bool
	Now     time.Time
}

// RestorePlan is a restore plan.
type RestorePlan struct {
	ChangeSet *changeset.ChangeSet
	// Staging holds the verified, extracted files the plan copies into the
	// store (Extract only); the caller removes it once the plan is applied
	// (or not).
	Staging  string
	Restored []*Manifest
	// members are what each Create and CreateDir op makes, by its path
	// (for Show).
	members map[string]member
}

// Cleanup removes the staging folder.
func (p *RestorePlan) Cleanup() {
	if p.Staging != "" {
		os.RemoveAll(p.Staging)
	}
}

// Restore plans putting archived sessions back: each archive is read
// whole and checked first (zstd checksums, the tar stream, the sha256 of
// every file against its manifest; a damaged or truncated one is refused
// and nothing is planned; a manifest that names anything but its
// session's own files is refused whole), with Extract its files extracted
// into a staging folder (when the file systems have room for them), to be
// copied into the store with their modes and mtimes (folders as
// folders), the sessions-index.json entries put back, and the archive
// file removed (Keep leaves it). A file of the store that exists and
// differs is never overwritten: the plan is refused. An error's message
// goes through visible (it names members of an archive).
func Restore(opts RestoreOptions) (*RestorePlan, error) {
	p, err := restore(opts)
	if err != nil {
		return nil, visibleError{err}
	}
	return p, nil
}

// visibleError is an error whose message is written through visible: the
// names in it can come from an archive. (visible keeps backslashes, so a
// message escaped already stays as it is.)
type visibleError struct{ err error }

func (e visibleError) Error() string { return visible.String(e.err.Error()) }
func (e visibleError) Unwrap() error { return e.err }

func restore(opts RestoreOptions) (*RestorePlan, error) {
	if len(opts.Archives) == 0 {
		return nil, &carry.InputError{Msg: "no archived session given (cfix archive --list lists them)"}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	dir, err := folder(opts.Dir)
	if err != nil {
		return nil, err
	}
	paths, err := findArchives(dir, opts.Archives)
	if err != nil {
		return nil, err
	}
	newFolder := ""
	if opts.To != "" {
		to, err := carry.NormDir(opts.To)
		if err != nil {
			return nil, err
		}
		newFolder = store.FolderFor(opts.Root, to)
	}
	l, err := store.Scan(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", opts.Root, err)
	}
	paths, stubNotes, err := withStubs(dir, paths, l)
	if err != nil {
		return nil, err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	// The ops copy from the staging folder, which only an apply makes.
	staging := filepath.Join(filepath.Dir(paths[0]), ".restore-"+hex.EncodeToString(rnd[:]))
	p := &RestorePlan{ChangeSet: changeset.New(opts.Root, "restore"), members: map[string]member{}}
	p.ChangeSet.Notes = append(p.ChangeSet.Notes, stubNotes...)
	p.ChangeSet.Own(staging) // the plan copies the extracted files from there
	ok := false
	defer func() {
		if !ok {
			p.Cleanup()
		}
	}()
	// Each manifest first (a few KB each): every archive names only its
	// session's files, no session twice, and there is room to extract
	// them all, before anything is written.
	totals := map[string]int64{}
	bySession := map[string]string{}
	var total int64
	for _, path := range paths {
		m, err := readManifest(path)
		if err != nil {
			return nil, err
		}
		if other, dup := bySession[m.Session]; dup {
			return nil, &carry.InputError{Msg: fmt.Sprintf("archives %s and %s both hold session %s: restore one", visible.String(other), visible.String(path), visible.String(m.Session))}
		}
		bySession[m.Session] = path
		totals[path] = fileBytes(m)
		total = min(total+totals[path], 1<<62)
	}
	var before func(path string) func(*Manifest) error
	if opts.Extract {
		if err := roomFor(opts.Root, filepath.Dir(staging), total); err != nil {
			return nil, err
		}
		p.Staging = staging
		before = func(path string) func(*Manifest) error {
			return func(m *Manifest) error {
				if fileBytes(m) != totals[path] || bySession[m.Session] != path {
					return fmt.Errorf("archive %s changed while cfix read it; plan again", visible.String(path))
				}
				return nil
			}
		}
	}
	cs := p.ChangeSet
	type indexAdd struct {
		entries [][]byte
		ids     []string
	}
	indexAdds := map[string]*indexAdd{}
	var archiveOps, folderOps []changeset.Op
	madeFolder := map[string]bool{}
	for _, path := range paths {
		stage := filepath.Join(staging, strings.TrimSuffix(filepath.Base(path), Ext))
		var v *verified
		if opts.Extract {
			v, err = verify(path, stage, before(path))
		} else {
			v, err = verify(path, "", nil)
		}
		if err != nil {
			return nil, err
		}
		m := v.Manifest
		p.Restored = append(p.Restored, m)
		if n := clamped(m); n != "" {
			cs.Notes = append(cs.Notes, fmt.Sprintf("archive %s: %s", path, n))
		}
		// The session must not be in the store already.
		for _, f := range l.Files {
			if f.Kind == store.KindSession && f.Session == m.Session {
				return nil, &carry.ConflictError{Msg: fmt.Sprintf("session %s is in the store already (%s): nothing is restored", visible.String(m.Session), visible.String(f.Path))}
			}
		}
		mapRel := func(rel string) string {
			if newFolder == "" || !strings.HasPrefix(rel, "projects/") {
				return rel
			}
			parts := strings.SplitN(rel, "/", 3)
			if len(parts) < 3 {
				return rel
			}
			return "projects/" + newFolder + "/" + parts[2]
		}
		files := map[string]FileInfo{}
		for _, f := range m.Files {
			files[f.Path] = f
		}
		reason := fmt.Sprintf("restore session %s from %s", m.Session, path)
		for _, part := range m.Parts {
			src := filepath.Join(stage, filepath.FromSlash(part.Path))
			dst := filepath.Join(opts.Root, filepath.FromSlash(mapRel(part.Path)))
			if !part.Dir {
				f := files[part.Path]
				same, err := sameAs(dst, f)
				if err != nil {
					return nil, err
				}
				if same {
					cs.Notes = append(cs.Notes, fmt.Sprintf("%s is in the store already, the same bytes: kept", dst))
					continue
				}
				p.members[dst] = member{m: m, part: part.Path}
				cs.Add(changeset.Op{Action: changeset.Create, Path: dst, From: src, Session: m.Session,
					FromExpect: &changeset.Fingerprint{Exists: true, Size: f.Size, ModTime: f.ModTime, SHA256: f.SHA256},
					Mode:       safeMode(f), ModTime: f.ModTime, Reason: reason + ": " + part.What})
				continue
			}
			// A folder: every file of it that exists must be the same;
			// the missing ones are added.
			missing, present := 0, 0
			for _, f := range m.Files {
				if f.Dir || !strings.HasPrefix(f.Path, part.Path+"/") {
					continue
				}
				same, err := sameAs(filepath.Join(opts.Root, filepath.FromSlash(mapRel(f.Path))), f)
				if err != nil {
					return nil, err
				}
				if same {
					present++
				} else {
					missing++
				}
			}
			dfp, err := changeset.Stat(dst)
			if err != nil {
				return nil, err
			}
			if dfp.Exists && missing == 0 {
				cs.Notes = append(cs.Notes, fmt.Sprintf("%s is in the store already, the same files: kept", dst))
				continue
			}
			// The extracted folder's fingerprint; a dry run's has its size.
			sfp := changeset.Fingerprint{Exists: true, Dir: true, Size: dirBytes(m, part.Path)}
			if opts.Extract {
				if sfp, err = changeset.FingerprintOf(src); err != nil {
					return nil, err
				}
			}
			p.members[dst] = member{m: m, part: part.Path}
			cs.Add(changeset.Op{Action: changeset.CreateDir, Path: dst, From: src, FromExpect: &sfp, Merge: dfp.Exists, Expect: dfp,
				Session: m.Session, Reason: reason + ": " + part.What})
		}
		// A project folder the archive removed is made again as it was,
		// after the files that go into it.
		for _, folder := range slices.Sorted(maps.Keys(m.Folders)) {
			dir := filepath.Join(store.ProjectsDir(opts.Root), folder)
			if newFolder != "" || madeFolder[dir] {
				continue
			}
			if fp, err := changeset.Stat(dir); err != nil {
				return nil, err
			} else if fp.Exists {
				continue
			}
			madeFolder[dir] = true
			fi := m.Folders[folder]
			folderOps = append(folderOps, changeset.Op{Action: changeset.RestoreDir, Path: dir, Mode: safeMode(FileInfo{Dir: true, Mode: fi.Mode}), ModTime: fi.ModTime,
				Reason: "make the project folder again, as it was when archived"})
		}
		for folder, entry := range m.Index {
			if newFolder != "" {
				cs.Notes = append(cs.Notes, fmt.Sprintf("the sessions-index.json entry of session %s names its old folder: not carried to %s (cfix repair --only index lists the session)", m.Session, newFolder))
				continue
			}
			a := indexAdds[folder]
			if a == nil {
				a = &indexAdd{}
				indexAdds[folder] = a
			}
			a.entries = append(a.entries, entry)
			a.ids = append(a.ids, m.Session)
		}
		if opts.Keep {
			continue
		}
		archiveOps = append(archiveOps, changeset.Op{Action: changeset.Delete, Path: path,
			Expect: changeset.Fingerprint{Exists: true, Size: v.Size, ModTime: v.ModTime, SHA256: v.SHA256},
			Reason: fmt.Sprintf("the archive of session %s, restored (kept in the backup)", m.Session)})
		if age := opts.Now.Sub(m.LastActivity); age > 30*24*time.Hour {
			cs.Notes = append(cs.Notes, fmt.Sprintf("session %s was last written %s: Claude Code removes sessions older than cleanupPeriodDays (30 by default) when it starts, so resume it before, or raise cleanupPeriodDays in settings.json", m.Session, m.LastActivity.Local().Format("2006-01-02")))
		}
	}
	folders := make([]string, 0, len(indexAdds))
	for f := range indexAdds {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	for _, folder := range folders {
		path := filepath.Join(store.ProjectsDir(opts.Root), folder, "sessions-index.json")
		raw, err := carry.ReadIndex(path)
		if err != nil {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%v: not updated (cfix repair rebuilds it)", err))
			continue
		}
		if raw == nil {
			continue // the folder has no index now: Claude Code lists without one
		}
		var add [][]byte
		var ids []string
		for i, e := range indexAdds[folder].entries {
			if carry.IndexEntry(raw, indexAdds[folder].ids[i]) == nil {
				add = append(add, e)
				ids = append(ids, indexAdds[folder].ids[i])
			}
		}
		if len(add) == 0 {
			continue
		}
		nb, err := carry.IndexAppend(raw, add)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fp, err := changeset.FingerprintOf(path)
		if err != nil {
			return nil, err
		}
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: nb, HasData: true, EntriesAdded: len(add),
			Reason: fmt.Sprintf("list %s in the folder's sessions-index.json again", sessionWords(ids))})
	}
	for _, op := range append(folderOps, archiveOps...) {
		cs.Add(op)
	}
	carry.LeaveLinks(cs)
	if l, found := cs.OutsideLink(); found {
		return nil, &carry.ConflictError{Msg: fmt.Sprintf("%s; restore is all or nothing: nothing is planned", l)}
	}
	ok = true
	return p, nil
}

// dirBytes is the size of the files under the folder dir a manifest lists.
func dirBytes(m *Manifest, dir string) int64 {
	var n int64
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, dir+"/") {
			n += f.Size
		}
	}
	return n
}

// clamped says which members of m are restored without some of their
// archived mode's bits (see safeMode), or "".
func clamped(m *Manifest) string {
	var names []string
	for _, f := range m.Files {
		if f.Mode.Perm()&^safeMode(f) != 0 {
			names = append(names, fmt.Sprintf("%s (%04o)", f.Path, f.Mode.Perm()))
		}
	}
	switch {
	case len(names) == 0:
		return ""
	case len(names) > 3:
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return fmt.Sprintf("restored without their execute or others' write bits (files 0664 at most, folders 0775): %s", strings.Join(names, ", "))
}

// sameAs reports whether the file at path exists with f's bytes; a file
// there with other bytes is a conflict (an error).
func sameAs(path string, f FileInfo) (bool, error) {
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return false, err
	}
	if !fp.Exists {
		return false, nil
	}
	if fp.Dir || fp.SHA256 != f.SHA256 {
		return false, &carry.ConflictError{Msg: fmt.Sprintf("%s exists and differs from the archived file: restore never overwrites it; nothing is restored", visible.String(path))}
	}
	return true, nil
}

// findArchives resolves what the user names to archive files: a path to
// one, or a session id or unique prefix of one among dir's archives.
func findArchives(dir string, args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	names, err := readDir(dir)
	if err != nil {
		return nil, fmt.Errorf("archive folder %s: %w", dir, err)
	}
	for _, arg := range args {
		var path string
		if strings.HasSuffix(arg, Ext) || strings.ContainsRune(arg, filepath.Separator) {
			abs, err := filepath.Abs(arg)
			if err != nil {
				return nil, err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
				return nil, &carry.InputError{Msg: fmt.Sprintf("%s: no such archive file", arg)}
			}
			path = abs
		} else {
			var cands []string
			low := strings.ToLower(arg)
			for _, n := range names {
				if strings.HasSuffix(n, Ext) && strings.HasPrefix(strings.ToLower(n), low) {
					cands = append(cands, n)
				}
			}
			switch {
			case len(arg) < store.MinPrefix:
				return nil, &carry.InputError{Msg: fmt.Sprintf("%s: a session id prefix needs %d characters at least", arg, store.MinPrefix)}
			case len(cands) == 0:
				return nil, &carry.InputError{Msg: fmt.Sprintf("no archive of session %s in %s (cfix archive --list lists them)", arg, dir)}
			case len(cands) > 1:
				return nil, &carry.InputError{Msg: fmt.Sprintf("%s: ambiguous session id prefix; the archives are: %s", arg, strings.Join(cands, ", "))}
			}
			path = filepath.Join(dir, cands[0])
		}
		if !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}
	return out, nil
}

// withStubs adds to paths the archives in dir of the stubs archived with
// the sessions of paths (their manifests' StubOf), with a note for each:
// restored with it, or left when a session of its id is in the store.
func withStubs(dir string, paths []string, l *store.Layout) ([]string, []string, error) {
	sessions := map[string]bool{}
	given := map[string]bool{}
	for _, path := range paths {
		m, err := readManifest(path)
		if err != nil {
			return nil, nil, err
		}
		sessions[m.Session] = true
		given[path] = true
	}
	list, _, err := List(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("archive folder %s: %w", dir, err)
	}
	inStore := map[string]bool{}
	for _, f := range l.Files {
		if f.Kind == store.KindSession {
			inStore[f.Session] = true
		}
	}
	var notes []string
	for _, a := range list {
		m := a.Manifest
		if m.StubOf == "" || !sessions[m.StubOf] || given[a.Path] || sessions[m.Session] {
			continue
		}
		if inStore[m.Session] {
			notes = append(notes, visible.String(fmt.Sprintf("session %s, a stub of session %s archived with it, is in the store already: its archive %s is left", m.Session, m.StubOf, a.Path)))
			continue
		}
		notes = append(notes, visible.String(fmt.Sprintf("session %s holds only metadata naming entries of session %s (archived with it): restored with it", m.Session, m.StubOf)))
		paths = append(paths, a.Path)
		sessions[m.Session] = true
	}
	return paths, notes, nil
}
