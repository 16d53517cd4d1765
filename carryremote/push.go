package carryremote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
	"github.com/cfix-dev/cfix/secrets"
	"github.com/cfix-dev/cfix/store"
)

// PushOptions configure a push.
type PushOptions struct {
	// Root is the store; Remote where it is pushed, as Machine.
	Root    string
	Remote  remote.Store
	Machine string
	// Sessions, when set, limit the push to these (ids, prefixes,
	// transcripts' paths); else every session of the store.
	Sessions []string
	// Recipients encrypt every object (and the index's text); Passphrase
	// says the one recipient is a passphrase's.
	Recipients []age.Recipient
	Passphrase bool
	// Keys open the index when it is encrypted (its sessions' titles).
	Keys pack.Keys
	// Redact takes secrets out of what is pushed (secrets.Filter);
	// AllowSecrets sends them as they are. Without either, a session
	// holding a secret is refused as pack.Write refuses it (a
	// *pack.SecretsError, nothing of it sent).
	Redact       pack.Redactor
	AllowSecrets bool
	// Host and Home name this machine in each object (default: its own).
	Host, Home string
	Now        time.Time
	// Staging is the folder objects are written in before they are sent
	// ("" for the cache's).
	Staging string
}

// PushItem is a session a push sends.
type PushItem struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	CWD   string `json:"cwd,omitempty"`
	// Main is its main transcript.
	Main  string `json:"main"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Why: "new" (not on the remote), "changed", "encryption" (the
	// object is encrypted otherwise than asked), "redaction".
	Why string `json:"why"`
	// Key is the object it is written as; Old the one it replaces.
	Key string `json:"key"`
	Old string `json:"old,omitempty"`

	main    store.File
	digest  string
	stat    string
	members []carry.Member
}

// PushPlan is what a push sends.
type PushPlan struct {
	Remote  string `json:"remote"`
	Machine string `json:"machine"`
	// Items are the sessions sent; Unchanged counts those the remote has
	// as they are.
	Items     []PushItem `json:"sessions"`
	Unchanged int        `json:"unchanged"`
	// Bytes is the size of the files of Items.
	Bytes int64 `json:"bytes"`
	// Stale are objects of this machine its index does not name (left by
	// a push that was stopped): the push removes them.
	Stale []string `json:"stale"`
	Notes []string `json:"notes"`

	old     *Index
	layout  *store.Layout     // the store's scan, each object's pack reads it
	detect  pack.Redactor     // finds secrets, when they are refused
	touched map[string]string // session id → its new Stat (files touched, bytes the same)
	local   map[string]*Meta
	o       PushOptions
}

// Empty says the push sends nothing and changes no index.
func (p *PushPlan) Empty() bool { return len(p.Items) == 0 && len(p.touched) == 0 && len(p.Stale) == 0 }

// PlanPush plans a push: which sessions of the store the remote's index
// of o.Machine lacks, or has with other bytes (each session's files
// hashed, but for those whose paths, sizes and mtimes are the index's).
// It reads the remote and the store, and writes nothing.
func PlanPush(ctx context.Context, o PushOptions) (*PushPlan, error) {
	if err := CheckMachine(o.Machine); err != nil {
		return nil, &carry.InputError{Msg: err.Error()}
	}
	old, err := ReadIndex(ctx, o.Remote, o.Machine, o.Keys)
	if err != nil {
		return nil, err
	}
	p := &PushPlan{Remote: o.Remote.String(), Machine: o.Machine, Items: []PushItem{}, Stale: []string{}, Notes: []string{}, old: old, touched: map[string]string{}, local: map[string]*Meta{}, o: o}
	have := map[string]*Entry{}
	named := map[string]bool{}
	if old != nil {
		for i := range old.Sessions {
			have[old.Sessions[i].ID] = &old.Sessions[i]
			named[old.Sessions[i].Key] = true
		}
	}
	objs, err := o.Remote.List(ctx, o.Machine+"/sessions/")
	if err != nil {
		return nil, err
	}
	for _, ob := range objs {
		if !named[ob.Key] && strings.HasSuffix(ob.Key, ".cfixpack") {
			p.Stale = append(p.Stale, ob.Key)
		}
	}
	l, err := store.Scan(o.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", o.Root, err)
	}
	p.layout = l
	var mains []store.File
	if len(o.Sessions) > 0 {
		seen := map[string]bool{}
		for _, arg := range o.Sessions {
			f, err := carry.FindSession(o.Root, l, arg, "push")
			if err != nil {
				return nil, err
			}
			if !seen[f.Path] {
				seen[f.Path] = true
				mains = append(mains, f)
			}
		}
	} else {
		byID := map[string]int{}
		for _, f := range l.Files {
			if f.Kind == store.KindSession {
				byID[strings.ToLower(f.Session)]++
			}
		}
		for _, f := range l.Files {
			if f.Kind != store.KindSession {
				continue
			}
			switch {
			case filepath.Base(f.Path) != f.Session+".jsonl":
				p.Notes = append(p.Notes, fmt.Sprintf("%s: a transcript whose name is not its session id: left out (rename it %s.jsonl)", f.Path, f.Session))
			case byID[strings.ToLower(f.Session)] > 1:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: session %s has transcripts in more than one folder: left out (cfix validate tells more)", f.Path, f.Session))
			default:
				mains = append(mains, f)
			}
		}
	}
	enc := encryption(o)
	for _, f := range mains {
		members, skipped, err := carry.Members(o.Root, l, f)
		if err != nil {
			return nil, err
		}
		p.Notes = append(p.Notes, skipped...)
		meta := &Meta{Title: store.TitleOf(f), CWD: carry.FirstCWD(f.Path, 200), Project: f.Project, Home: o.Home}
		p.local[f.Session] = meta
		stat, err := statDigest(members)
		if err != nil {
			return nil, err
		}
		e := have[f.Session]
		same := e != nil && (old.Encrypted == enc) && e.Redacted == (o.Redact != nil)
		if same && e.Stat == stat {
			p.Unchanged++
			continue
		}
		digest, files, bytes, err := contentDigest(members)
		if err != nil {
			return nil, err
		}
		if same && e.Digest == digest {
			p.Unchanged++
			p.touched[f.Session] = stat
			continue
		}
		it := PushItem{ID: f.Session, Title: meta.Title, CWD: meta.CWD, Main: f.Path, Files: files, Bytes: bytes,
			Key: objectKey(o.Machine, f.Session, digest), main: f, digest: digest, stat: stat, members: members}
		switch {
		case e == nil:
			it.Why = "new"
		case old.Encrypted != enc:
			it.Why, it.Old = "encryption", e.Key
		case e.Redacted != (o.Redact != nil):
			it.Why, it.Old = "redaction", e.Key
		default:
			it.Why, it.Old = "changed", e.Key
		}
		p.Items = append(p.Items, it)
		p.Bytes += bytes
	}
	return p, nil
}

func encryption(o PushOptions) string {
	switch {
	case o.Passphrase:
		return "passphrase"
	case len(o.Recipients) > 0:
		return "recipients"
	}
	return ""
}

// statDigest is the sha256 of the members' paths, kinds, sizes and
// mtimes.
func statDigest(members []carry.Member) (string, error) {
	h := sha256.New()
	for _, m := range members {
		fi, err := os.Lstat(m.Path)
		if err != nil {
			return "", err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		fmt.Fprintf(h, "%s\x00%t\x00%d\x00%d\n", m.Rel, m.Dir, size, fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// contentDigest is the sha256 of the members' paths, kinds, sizes and
// sha256s, with how many files they are and their bytes.
func contentDigest(members []carry.Member) (string, int, int64, error) {
	h := sha256.New()
	files, bytes := 0, int64(0)
	for _, m := range members {
		if m.Dir {
			fmt.Fprintf(h, "%s\x00dir\n", m.Rel)
			continue
		}
		fp, err := changeset.FingerprintOf(m.Path)
		if err != nil {
			return "", 0, 0, err
		}
		if !fp.Exists || fp.Dir || fp.Link != "" {
			return "", 0, 0, fmt.Errorf("%s changed while it was read; push again", m.Path)
		}
		files++
		bytes += fp.Size
		fmt.Fprintf(h, "%s\x00%d\x00%s\n", m.Rel, fp.Size, fp.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil)), files, bytes, nil
}

// Pushed is what a push did.
type Pushed struct {
	// Written are the objects written, the index last; Removed the
	// objects removed after it.
	Written []string `json:"written"`
	Removed []string `json:"removed"`
	// Bytes is what was sent (the objects and the index).
	Bytes int64    `json:"bytes"`
	Notes []string `json:"notes"`
}

// Progress is told of each object a push writes.
type Progress func(key string, size int64)

// Apply makes the push: each session's object (a pack of it, written to a
// staging file, then sent), then the index naming them, then the removal
// of the objects of this machine no index names (the versions replaced,
// and what a push killed before its index left). Killed at any moment,
// it leaves the remote's index naming objects that are all there.
func (p *PushPlan) Apply(ctx context.Context, progress Progress) (*Pushed, error) {
	o := p.o
	res := &Pushed{Written: []string{}, Removed: []string{}, Notes: []string{}}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ix := &Index{Format: IndexFormat, Version: IndexVersion, Machine: o.Machine, Cfix: archive.CfixVersion(), Encrypted: encryption(o)}
	entries := map[string]Entry{}
	if p.old != nil {
		for _, e := range p.old.Sessions {
			if m := p.local[e.ID]; m != nil {
				e.Meta = m
			}
			if st, ok := p.touched[e.ID]; ok {
				e.Stat = st
			}
			entries[e.ID] = e
		}
	}
	staging := o.Staging
	if staging == "" {
		staging = pack.StagingDir()
	}
	if o.Redact == nil && !o.AllowSecrets && len(p.Items) > 0 {
		// What finds secrets, made once for every pack.
		ig, err := secrets.ReadIgnore(o.Root)
		if err != nil {
			return nil, err
		}
		f, err := secrets.NewFilter(secrets.RedactorOptions{Ignore: ig})
		if err != nil {
			return nil, err
		}
		p.detect = f
	}
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, err
	}
	for _, it := range p.Items {
		e, size, err := p.pushOne(ctx, staging, it)
		if err != nil {
			return res, err
		}
		res.Written = append(res.Written, it.Key)
		res.Bytes += size
		if progress != nil {
			progress(it.Key, size)
		}
		entries[it.ID] = *e
	}
	if len(p.Items) == 0 && len(p.touched) == 0 && p.old != nil {
		// Only what a stopped push left goes.
		for _, key := range p.Stale {
			if err := o.Remote.Delete(ctx, key); err != nil {
				return res, err
			}
			res.Removed = append(res.Removed, key)
		}
		return res, nil
	}
	for _, e := range entries {
		ix.Sessions = append(ix.Sessions, e)
	}
	sort.Slice(ix.Sessions, func(i, j int) bool { return ix.Sessions[i].ID < ix.Sessions[j].ID })
	ix.Updated = o.Now.UTC()
	if err := writeIndex(ctx, o.Remote, ix, p.old, o.Recipients); err != nil {
		return res, err
	}
	res.Written = append(res.Written, indexKey(o.Machine))
	if progress != nil {
		progress(indexKey(o.Machine), -1)
	}
	// What no index names goes: the versions replaced, and the objects of
	// a push killed before its index.
	named := map[string]bool{}
	for _, e := range ix.Sessions {
		named[e.Key] = true
	}
	objs, err := o.Remote.List(ctx, o.Machine+"/sessions/")
	if err != nil {
		return res, err
	}
	for _, ob := range objs {
		if named[ob.Key] || !strings.HasSuffix(ob.Key, ".cfixpack") {
			continue
		}
		if err := o.Remote.Delete(ctx, ob.Key); err != nil {
			return res, err
		}
		res.Removed = append(res.Removed, ob.Key)
	}
	return res, nil
}

// pushOne packs one session into a staging file and sends it.
func (p *PushPlan) pushOne(ctx context.Context, staging string, it PushItem) (*Entry, int64, error) {
	o := p.o
	f, err := os.CreateTemp(staging, "push-*.cfixpack")
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w, err := pack.Write(f, pack.Options{Root: o.Root, Sessions: []string{it.main.Path}, Recipients: o.Recipients,
		Passphrase: o.Passphrase, Host: o.Host, Home: o.Home, Now: o.Now, Redact: o.Redact, AllowSecrets: o.AllowSecrets, Detect: p.detect, Layout: p.layout})
	if err != nil {
		return nil, 0, err
	}
	p.Notes = append(p.Notes, w.Notes...)
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	if err := o.Remote.Put(ctx, it.Key, f, size); err != nil {
		return nil, 0, err
	}
	s := w.Manifest.Sessions[0]
	meta := p.local[it.ID]
	if meta == nil {
		meta = &Meta{}
	}
	meta.Title, meta.CWD, meta.Project, meta.Home = s.Title, s.CWD, s.Project, w.Manifest.Home
	return &Entry{ID: it.ID, Key: it.Key, Size: size, Digest: it.digest, Stat: it.stat, Files: s.Files, Bytes: s.Bytes,
		Last: s.Last, Pushed: o.Now.UTC(), Redacted: o.Redact != nil, Meta: meta}, size, nil
}
