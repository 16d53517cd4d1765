package pack

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/klauspost/compress/zstd"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
)

// Keys open an encrypted pack.
type Keys struct {
	// Identities are age identities (X25519 keys, from --identity files).
	Identities []age.Identity
	// Passphrase, when set, gives the passphrase of a pack encrypted
	// with one; it is asked only for such a pack.
	Passphrase func() (string, error)
}

// KeyError is a pack that cannot be opened with the keys given: it is
// encrypted and no key was given, or none of those given opens it.
type KeyError struct{ Msg string }

func (e *KeyError) Error() string { return e.Msg }

// Reader reads a pack: its manifest (Open), then its members (Extract).
type Reader struct {
	name string
	zr   *zstd.Decoder
	tr   *tar.Reader
	// in is what the zstd stream is read from (the age payload, when
	// encrypted), read to its end after the last member.
	in io.Reader
	// Manifest is the pack's manifest, checked.
	Manifest *Manifest
	// Encrypted says how the pack is encrypted: "", "recipients" or
	// "passphrase" (from its age header, not its manifest).
	Encrypted string
}

// Close lets go of the reader's decoder.
func (r *Reader) Close() {
	if r.zr != nil {
		r.zr.Close()
	}
}

// ageMagic and armorMagic start an age file (binary, armored); zstdMagic
// a zstd frame.
var (
	ageMagic   = []byte("age-encryption.org/v1\n")
	armorMagic = []byte("-----BEGIN AGE ENCRYPTED FILE-----")
	zstdMagic  = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Open reads the head of the pack r (named name in messages): decrypts it
// when it is an age file (with keys), and reads and checks its manifest,
// never more than archive.MaxManifest bytes of it (see checkManifest).
func Open(r io.Reader, name string, keys Keys) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(len(armorMagic))
	rd := &Reader{name: name}
	var in io.Reader = br
	switch {
	case bytes.HasPrefix(head, zstdMagic):
	case bytes.HasPrefix(head, ageMagic), bytes.HasPrefix(head, armorMagic):
		var src io.Reader = br
		if bytes.HasPrefix(head, armorMagic) {
			src = bufio.NewReaderSize(armor.NewReader(br), 64<<10)
		}
		dec, kind, err := decrypt(src, name, keys)
		if err != nil {
			return nil, err
		}
		rd.Encrypted, in = kind, dec
	default:
		return nil, &DamagedError{Name: name, Reason: "it is neither a zstd stream nor an age file"}
	}
	zr, err := archive.NewDecoder(in, 1)
	if err != nil {
		return nil, &DamagedError{Name: name, Reason: err.Error()}
	}
	rd.zr, rd.in = zr, in
	rd.tr = tar.NewReader(zr)
	hdr, err := rd.tr.Next()
	if err != nil {
		rd.Close()
		return nil, rd.damaged("no manifest: %v", err)
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg {
		rd.Close()
		return nil, rd.damaged("the first member is %s, not %s", visible.String(hdr.Name), ManifestName)
	}
	if hdr.Size > archive.MaxManifest || archive.Sparse(hdr) {
		rd.Close()
		return nil, rd.damaged("its manifest is %s, over the %s a manifest may have: refused unread", archive.SizeWords(hdr.Size), archive.SizeWords(archive.MaxManifest))
	}
	b, err := io.ReadAll(io.LimitReader(rd.tr, archive.MaxManifest+1))
	if err != nil {
		rd.Close()
		return nil, rd.damaged("manifest: %v", err)
	}
	m, err := checkManifest(b)
	if err != nil {
		rd.Close()
		var ve *versionError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("pack %s: %w", name, err)
		}
		return nil, rd.damaged("manifest: %v", err)
	}
	rd.Manifest = m
	return rd, nil
}

func (r *Reader) damaged(format string, args ...any) error {
	return &DamagedError{Name: r.name, Reason: fmt.Sprintf(format, args...)}
}

// decrypt opens the age file src with keys: a passphrase when its header
// has a scrypt stanza, else the identities. A wrong key is a KeyError,
// never garbage (age authenticates every chunk).
func decrypt(src io.Reader, name string, keys Keys) (io.Reader, string, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(64 << 10)
	kind := "recipients"
	if end := bytes.Index(head, []byte("\n---")); end >= 0 && bytes.Contains(head[:end], []byte("\n-> scrypt ")) {
		kind = "passphrase"
	}
	var ids []age.Identity
	switch {
	case kind == "passphrase" && keys.Passphrase == nil:
		return nil, kind, &KeyError{Msg: fmt.Sprintf("pack %s is encrypted with a passphrase: give it (--passphrase asks on the terminal; CFIX_PASSPHRASE in scripts)", name)}
	case kind == "passphrase":
		pass, err := keys.Passphrase()
		if err != nil {
			return nil, kind, err
		}
		id, err := age.NewScryptIdentity(pass)
		if err != nil {
			return nil, kind, &KeyError{Msg: fmt.Sprintf("pack %s: %v", name, err)}
		}
		ids = []age.Identity{id}
	case len(keys.Identities) == 0:
		return nil, kind, &KeyError{Msg: fmt.Sprintf("pack %s is encrypted to age recipients: give --identity FILE, the age identity (key) file it was encrypted to", name)}
	default:
		ids = keys.Identities
	}
	dec, err := age.Decrypt(br, ids...)
	var nm *age.NoIdentityMatchError
	switch {
	case errors.As(err, &nm) && kind == "passphrase":
		return nil, kind, &KeyError{Msg: fmt.Sprintf("the passphrase does not open pack %s: nothing was unpacked", name)}
	case errors.As(err, &nm):
		return nil, kind, &KeyError{Msg: fmt.Sprintf("pack %s is encrypted to other recipients: no identity given opens it (give --identity with the key it was encrypted to); nothing was unpacked", name)}
	case err != nil && strings.Contains(err.Error(), "incorrect passphrase"):
		return nil, kind, &KeyError{Msg: fmt.Sprintf("the passphrase does not open pack %s: nothing was unpacked", name)}
	case err != nil:
		return nil, kind, &DamagedError{Name: name, Reason: "its age header: " + err.Error()}
	}
	return dec, kind, nil
}

// versionError is a pack of a format version this cfix does not read.
type versionError struct{ got int }

func (e *versionError) Error() string {
	return fmt.Sprintf("format version %d, this cfix reads %d", e.got, FormatVersion)
}

// maxSessions bounds the sessions of a manifest (a real one holds a few).
const maxSessions = 100000

// checkManifest decodes a manifest (its shape bounded first) and checks
// it names only the packed sessions' own files: each session id a UUID,
// each path clean and relative, in a folder of the store that holds
// sessions, and a file or folder its session owns (the parts restore
// accepts, or under a folder part of it), each once, never under a file;
// HistoryName last; sizes sane.
func checkManifest(b []byte) (*Manifest, error) {
	if err := archive.CheckShape(b); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("not a cfix pack (format %q)", visible.String(m.Format))
	}
	if m.Version != FormatVersion {
		return nil, &versionError{got: m.Version}
	}
	if len(m.Sessions) == 0 || len(m.Sessions) > maxSessions {
		return nil, fmt.Errorf("%d sessions", len(m.Sessions))
	}
	projects := map[string]map[string]bool{} // session → its project folder
	for _, s := range m.Sessions {
		if !store.IsUUID(s.ID) {
			return nil, fmt.Errorf("session id %q is not a UUID", visible.String(s.ID))
		}
		if projects[s.ID] != nil {
			return nil, fmt.Errorf("names session %s twice", s.ID)
		}
		if !archive.ValidName(s.Project) {
			return nil, fmt.Errorf("session %s: project folder %q is not a folder name", s.ID, visible.String(s.Project))
		}
		projects[s.ID] = map[string]bool{s.Project: true}
		if s.Main != "projects/"+s.Project+"/"+s.ID+".jsonl" {
			return nil, fmt.Errorf("session %s: main transcript %q is not projects/%s/%s.jsonl", s.ID, visible.String(s.Main), s.Project, s.ID)
		}
	}
	seen := make(map[string]bool, len(m.Files))
	dirs := map[string]bool{}
	files := map[string]bool{}
	mains := map[string]bool{}
	for i, f := range m.Files {
		if seen[f.Path] {
			return nil, fmt.Errorf("names %s twice", visible.String(f.Path))
		}
		seen[f.Path] = true
		if f.Size < 0 || f.Size > 1<<50 || f.Dir && f.Size != 0 {
			return nil, fmt.Errorf("gives %s a size of %d bytes", visible.String(f.Path), f.Size)
		}
		if !f.Dir && !sha256Hex(f.SHA256) {
			return nil, fmt.Errorf("gives %s no sha256", visible.String(f.Path))
		}
		if f.Path == HistoryName {
			if f.Dir || f.Session != "" || i != len(m.Files)-1 {
				return nil, fmt.Errorf("%s: not the last member, a file of no session", HistoryName)
			}
			continue
		}
		if err := archive.CheckMemberPath(f.Path); err != nil {
			return nil, err
		}
		ps := projects[f.Session]
		if ps == nil {
			return nil, fmt.Errorf("member %s: of session %q, which the pack does not hold", visible.String(f.Path), visible.String(f.Session))
		}
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if files[d] {
				return nil, fmt.Errorf("member %s: under the file %s", visible.String(f.Path), visible.String(d))
			}
		}
		dir, ok := archive.OwnedPart(f.Session, ps, f.Path)
		switch {
		case ok && dir == f.Dir:
		case archive.UnderDir(dirs, f.Path):
		default:
			return nil, fmt.Errorf("member %s is not session %s's", visible.String(f.Path), f.Session)
		}
		if f.Dir {
			dirs[f.Path] = true
		} else {
			files[f.Path] = true
		}
		if strings.HasSuffix(f.Path, ".jsonl") {
			mains[f.Path] = true
		}
	}
	for _, s := range m.Sessions {
		if !files[s.Main] {
			return nil, fmt.Errorf("session %s: its main transcript %s is not in the pack", s.ID, s.Main)
		}
	}
	return &m, nil
}

// member is what the manifest says of f, for archive.ReadMembers.
func (f File) member() archive.Member {
	return archive.Member{Path: f.Path, Dir: f.Dir, Mode: f.Mode, ModTime: f.ModTime, Size: f.Size, SHA256: f.SHA256}
}

func sha256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Extract reads the members after the manifest into the folder dst (new
// or empty; the caller's), each checked against the manifest as it is
// read: its name and order, its kind (a file or a folder, nothing else),
// mode and mtime, its size (never a byte more is read or written), its
// sha256; nothing may follow the last. Files get modes a store's files
// may have (archive.SafeMode) and their mtimes. The declared bytes must
// fit on dst's file system first. A damaged pack leaves in dst what was
// extracted before (the caller removes dst).
func (r *Reader) Extract(dst string) error {
	m := r.Manifest
	if _, free, err := archive.FreeSpace(dst); err == nil && free >= 0 {
		if need := m.Bytes() + m.Bytes()/10 + 256<<10; need > free {
			return fmt.Errorf("unpacking %s needs %s free in %s (its files, %s, and a margin); there are %s: nothing was unpacked",
				r.name, changeset.Size(need), dst, changeset.Size(m.Bytes()), changeset.Size(free))
		}
	}
	want := make([]archive.Member, len(m.Files))
	for i, f := range m.Files {
		want[i] = f.member()
	}
	dirs, err := archive.ReadMembers(r.tr, want, dst, archive.MemberErrors{Damaged: r.damaged, Show: visible.String,
		Kind: " (cfix packs files and folders, never links)"})
	if err != nil {
		return err
	}
	// The rest of the stream: tar padding, the zstd checksum, age's last
	// chunk (a cut pack fails here).
	if _, err := io.Copy(io.Discard, r.zr); err != nil {
		return r.damaged("%v", err)
	}
	if _, err := io.Copy(io.Discard, r.in); err != nil {
		return r.damaged("%v", err)
	}
	return archive.SetFolders(dst, dirs)
}
