// Package carryremote pushes the sessions of a store to a remote
// (package remote) and pulls those of other machines from it.
//
// The remote holds, for each machine, one object per session version,
// MACHINE/sessions/ID/DIGEST.cfixpack (a pack of that one session, as
// cfix pack writes it: cfix unpack reads one fetched by hand), and an
// index, MACHINE/index.json, naming the object of each session with what
// a listing shows. A push writes the objects of the sessions whose files
// changed since the index was written, then the index, then removes the
// objects no index names: a push killed at any moment leaves an index
// whose objects are all there. A pull lands the sessions of other
// machines through carry.Land (new, appended, or a fork), as unpack does.
package carryremote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
)

// IndexName is the name of a machine's index in its folder of a remote.
const IndexName = "index.json"

// IndexFormat and IndexVersion identify an index.
const (
	IndexFormat  = "cfix-remote"
	IndexVersion = 1
)

// maxIndex bounds the index read from a remote (one of 100,000 sessions
// is about 60 MB).
const maxIndex = 128 << 20

// Index is a machine's index on a remote.
type Index struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Machine string    `json:"machine"`
	Updated time.Time `json:"updated"`
	Cfix    string    `json:"cfix,omitempty"`
	// Encrypted says its sessions' objects and Sealed are encrypted with
	// age ("recipients" or "passphrase").
	Encrypted string `json:"encrypted,omitempty"`
	// Sealed, in an encrypted index, holds the Meta of its sessions in
	// armored age files: the index holds no text of the sessions in the
	// clear. A push that can open them seals them all in one; one that
	// cannot (no identity given) keeps those that describe sessions it
	// does not have, as they are, and adds its own after them (a later
	// part's Meta of a session wins).
	Sealed   []SealedPart `json:"sealed,omitempty"`
	Sessions []Entry      `json:"sessions"`
}

// SealedPart is the Meta of the sessions it names (a JSON object by id),
// as an armored age file.
type SealedPart struct {
	Sessions []string `json:"sessions"`
	Data     string   `json:"data"`
}

// Entry is one session of an index.
type Entry struct {
	ID string `json:"id"`
	// Key is its object; Size the object's size.
	Key  string `json:"key"`
	Size int64  `json:"size"`
	// Digest is the sha256 of its files (each file's path, size and
	// sha256); Stat that of their paths, sizes and mtimes, which tells a
	// push without reading them that nothing changed.
	Digest string `json:"digest"`
	Stat   string `json:"stat"`
	// Files and Bytes count its files; Last is its last entry's time.
	Files    int       `json:"files"`
	Bytes    int64     `json:"bytes"`
	Last     string    `json:"last,omitempty"`
	Pushed   time.Time `json:"pushed"`
	Redacted bool      `json:"redacted,omitempty"`
	// Meta is what a listing shows of it: in the clear when the index is
	// not encrypted, else in Index.Sealed (nil when no key opens it).
	Meta *Meta `json:"meta,omitempty"`
}

// Meta is the text of a session an index shows.
type Meta struct {
	Title   string `json:"title,omitempty"`
	CWD     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Home    string `json:"home,omitempty"`
}

// machineName is what a machine's name may be: a folder of the remote.
var machineName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckMachine says a machine name can name a folder of a remote.
func CheckMachine(name string) error {
	if !machineName.MatchString(name) {
		return fmt.Errorf("--machine %q: a machine's name is letters, digits, '.', '_' and '-' (100 at most), starting with a letter or digit", name)
	}
	return nil
}

// DefaultMachine is this machine's name on a remote: its host name, with
// what a name may not hold made '-'.
func DefaultMachine() string {
	h, _ := os.Hostname()
	h = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, h)
	h = strings.TrimLeft(h, ".-_")
	if len(h) > 100 {
		h = h[:100]
	}
	if h == "" {
		h = "localhost"
	}
	return h
}

func indexKey(machine string) string { return machine + "/" + IndexName }

func objectKey(machine, id, digest string) string {
	return machine + "/sessions/" + id + "/" + digest[:32] + ".cfixpack"
}

// ReadIndex reads the index of machine on st: nil, nil when it has none.
// Sealed entries are opened with keys when they open them (Meta set).
func ReadIndex(ctx context.Context, st remote.Store, machine string, keys pack.Keys) (*Index, error) {
	rc, err := st.Get(ctx, indexKey(machine))
	if remote.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxIndex+1))
	if err != nil {
		return nil, err
	}
	name := st.String() + "/" + indexKey(machine)
	if len(b) > maxIndex {
		return nil, fmt.Errorf("%s: over the %d MB an index may have", name, maxIndex>>20)
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("%s: not a cfix remote index: %v", name, err)
	}
	if ix.Format != IndexFormat {
		return nil, fmt.Errorf("%s: not a cfix remote index (format %q)", name, ix.Format)
	}
	if ix.Version != IndexVersion {
		return nil, fmt.Errorf("%s: index version %d, this cfix reads %d", name, ix.Version, IndexVersion)
	}
	seen := map[string]bool{}
	for _, e := range ix.Sessions {
		if seen[e.ID] || !remote.ValidKey(e.Key) || !strings.HasPrefix(e.Key, machine+"/sessions/"+e.ID+"/") {
			return nil, fmt.Errorf("%s: session %q: its object %q is not its own", name, e.ID, e.Key)
		}
		seen[e.ID] = true
	}
	if len(ix.Sealed) > 0 {
		// A passphrase is asked once for every part.
		if ask := keys.Passphrase; ask != nil {
			var pass string
			var perr error
			asked := false
			keys.Passphrase = func() (string, error) {
				if !asked {
					pass, perr = ask()
					asked = true
				}
				return pass, perr
			}
		}
		byID := map[string]int{}
		for i := range ix.Sessions {
			byID[ix.Sessions[i].ID] = i
		}
		for _, part := range ix.Sealed {
			metas := unseal(part.Data, keys)
			if metas == nil {
				continue
			}
			for _, id := range part.Sessions {
				if i, ok := byID[id]; ok {
					if m, ok := metas[id]; ok {
						ix.Sessions[i].Meta = &m
					}
				}
			}
		}
	}
	return &ix, nil
}

// unseal opens an index's Sealed with keys; nil when they do not.
func unseal(s string, keys pack.Keys) map[string]Meta {
	ids := keys.Identities
	if passphraseSealed(s) {
		if keys.Passphrase == nil {
			return nil
		}
		pass, err := keys.Passphrase()
		if err != nil {
			return nil
		}
		id, err := age.NewScryptIdentity(pass)
		if err != nil {
			return nil
		}
		ids = []age.Identity{id}
	}
	if len(ids) == 0 {
		return nil
	}
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(s)), ids...)
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxIndex))
	if err != nil {
		return nil
	}
	var m map[string]Meta
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// passphraseSealed says an armored age file is encrypted with a
// passphrase (its header has a scrypt stanza).
func passphraseSealed(s string) bool {
	b, err := io.ReadAll(io.LimitReader(armor.NewReader(strings.NewReader(s)), 4096))
	if err != nil && len(b) == 0 {
		return false
	}
	end := bytes.Index(b, []byte("\n---"))
	return end >= 0 && bytes.Contains(b[:end], []byte("\n-> scrypt "))
}

// seal encrypts m to recipients, armored.
func seal(m any, recipients []age.Recipient) (string, error) {
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, recipients...)
	if err != nil {
		return "", err
	}
	if err := json.NewEncoder(w).Encode(m); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if err := aw.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// writeIndex writes ix as machine's index on st: with its Meta sealed to
// recipients when there are some. The parts of old (the index it
// replaces) that describe sessions of ix without a Meta (their parts not
// opened) are kept as they are, before the new one.
func writeIndex(ctx context.Context, st remote.Store, ix *Index, old *Index, recipients []age.Recipient) error {
	out := *ix
	if len(recipients) > 0 {
		metas := map[string]Meta{}
		unknown := map[string]bool{}
		out.Sessions = make([]Entry, len(ix.Sessions))
		part := SealedPart{Sessions: []string{}}
		for i, e := range ix.Sessions {
			if e.Meta != nil {
				metas[e.ID] = *e.Meta
				part.Sessions = append(part.Sessions, e.ID)
			} else {
				unknown[e.ID] = true
			}
			e.Meta = nil
			out.Sessions[i] = e
		}
		out.Sealed = nil
		if old != nil {
			for _, p := range old.Sealed {
				if slices.ContainsFunc(p.Sessions, func(id string) bool { return unknown[id] }) {
					out.Sealed = append(out.Sealed, p)
				}
			}
		}
		var err error
		if part.Data, err = seal(metas, recipients); err != nil {
			return err
		}
		out.Sealed = append(out.Sealed, part)
	} else {
		out.Sealed = nil
	}
	b, err := json.MarshalIndent(&out, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return st.Put(ctx, indexKey(ix.Machine), bytes.NewReader(b), int64(len(b)))
}

// Machines lists the machines that have an index on st.
func Machines(ctx context.Context, st remote.Store) ([]string, error) {
	objs, err := st.List(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		m, rest, ok := strings.Cut(o.Key, "/")
		if ok && rest == IndexName && machineName.MatchString(m) {
			out = append(out, m)
		}
	}
	return out, nil
}
