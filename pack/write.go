package pack

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// Options configure the writing of a pack.
type Options struct {
	// Root is the store; Sessions what the user names (ids, unique
	// prefixes, main transcripts' paths, latest).
	Root     string
	Sessions []string
	// Recipients, when set, encrypt the pack (age: X25519 recipients, or
	// one scrypt recipient of a passphrase, Passphrase then set).
	Recipients []age.Recipient
	Passphrase bool
	// Host and Home name the machine in the manifest (default: this
	// one's).
	Host, Home string
	Now        time.Time
	// Redact, when set, takes secrets out of what is packed: every line
	// of a JSON lines file (transcripts, subagents, the prompts of
	// history.jsonl) through its Line, any other file (tool-results,
	// todo lists, file-history) whole through its Text, and each
	// session's title and index entry (cfix pack --redact:
	// secrets.Filter).
	Redact Redactor
}

// Redactor is what Options.Redact does: secrets.Filter.
type Redactor interface {
	Line(raw []byte) ([]byte, int)
	Text(s string) (string, int)
}

// maxRedactText is the largest file that is not JSON lines Redact takes
// (it is read whole).
const maxRedactText = 64 << 20

// Written is what Write wrote.
type Written struct {
	Manifest *Manifest
	// Notes say what was left out (links) and what was live.
	Notes []string
	// Size is the pack file's size (WriteFile).
	Size int64
}

// source is a member as it is read: the file it comes from and, for
// HistoryName, the lines it keeps.
type source struct {
	path  string
	limit int64           // bytes of the file read (its size when described)
	keep  map[string]bool // HistoryName: the session ids whose lines it keeps
	// redact, when set, takes the secrets out of what is read: line by
	// line when lines is set, else the file whole.
	redact Redactor
	lines  bool
}

// Write writes the pack of the sessions o names to w: every session's
// family (carry.Members: links left out, noted) and its prompt lines of
// history.jsonl, described first (each file read once for its sha256),
// then written; a file that changed in between makes Write fail (pack
// again). A session is packed as far as it was written when described.
func Write(w io.Writer, o Options) (*Written, error) {
	if len(o.Sessions) == 0 {
		return nil, &carry.InputError{Msg: "no session given"}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	l, err := store.Scan(o.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", o.Root, err)
	}
	m := &Manifest{Format: FormatName, Version: FormatVersion, Cfix: archive.CfixVersion(), Created: o.Now.UTC(),
		Host: o.Host, Home: o.Home, Root: o.Root}
	switch {
	case o.Passphrase:
		m.Encrypted = "passphrase"
	case len(o.Recipients) > 0:
		m.Encrypted = "recipients"
	}
	res := &Written{Manifest: m}
	var sources []source
	seen := map[string]bool{}
	ids := map[string]bool{}
	for _, arg := range o.Sessions {
		main, err := carry.FindSession(o.Root, l, arg, "pack")
		if err != nil {
			return nil, err
		}
		if seen[main.Path] {
			continue
		}
		seen[main.Path] = true
		ids[main.Session] = true
		members, skipped, err := carry.Members(o.Root, l, main)
		if err != nil {
			return nil, err
		}
		res.Notes = append(res.Notes, skipped...)
		sc, err := carry.ScanFile(main.Path, true, "")
		if err != nil {
			return nil, err
		}
		s := Session{ID: main.Session, Title: store.TitleOf(main), CWD: sc.CWD, Project: main.Project,
			First: sc.Sum.First, Last: sc.Sum.Last, Main: "projects/" + main.Project + "/" + main.Session + ".jsonl"}
		if filepath.Base(main.Path) != main.Session+".jsonl" {
			return nil, &carry.InputError{Msg: fmt.Sprintf("%s: a transcript whose name is not its session id cannot be packed; rename it %s.jsonl first", main.Path, main.Session)}
		}
		if raw, err := carry.ReadIndex(filepath.Join(filepath.Dir(main.Path), "sessions-index.json")); err == nil && raw != nil {
			if e := carry.IndexEntry(raw, main.Session); e != nil {
				s.Index = json.RawMessage(bytes.Clone(e))
			}
		}
		for _, mb := range members {
			f := File{Path: mb.Rel, Dir: mb.Dir, Session: main.Session}
			if mb.Dir {
				fi, err := os.Lstat(mb.Path)
				if err != nil {
					return nil, err
				}
				f.Mode, f.ModTime = fi.Mode().Perm(), fi.ModTime().UTC()
			} else {
				fp, err := changeset.FingerprintOf(mb.Path)
				if err != nil {
					return nil, err
				}
				if !fp.Exists || fp.Dir || fp.Link != "" {
					return nil, fmt.Errorf("%s changed while it was packed; pack again", mb.Path)
				}
				f.Mode, f.ModTime, f.Size, f.SHA256 = fp.Mode.Perm(), fp.ModTime.UTC(), fp.Size, fp.SHA256
			}
			src := source{path: mb.Path, limit: f.Size, redact: o.Redact, lines: strings.HasSuffix(mb.Path, ".jsonl")}
			if !mb.Dir && o.Redact != nil {
				// What the pack holds is the file with its secrets out.
				h := sha256.New()
				n, k, err := copyRedacted(h, src)
				if err != nil {
					return nil, err
				}
				f.Size, f.SHA256 = n, hex.EncodeToString(h.Sum(nil))
				s.Redacted += k
			}
			if !mb.Dir {
				s.Files++
				s.Bytes += f.Size
			}
			m.Files = append(m.Files, f)
			sources = append(sources, src)
		}
		if o.Redact != nil {
			m.Redacted = true
			s.Title, _ = o.Redact.Text(s.Title)
			if s.Index != nil {
				e, _ := o.Redact.Line(s.Index)
				s.Index = json.RawMessage(e)
			}
		}
		if age := o.Now.Sub(sc.FP.ModTime); age < changeset.DefaultLiveWindow {
			res.Notes = append(res.Notes, fmt.Sprintf("session %s was written %s ago: it may be live; packed as far as it was written", main.Session, age.Round(time.Second)))
		}
		m.Sessions = append(m.Sessions, s)
	}
	// The prompts of history.jsonl that name the sessions.
	hist := filepath.Join(o.Root, "history.jsonl")
	if fi, err := os.Lstat(hist); err == nil && fi.Mode().IsRegular() {
		f := File{Path: HistoryName, Mode: fi.Mode().Perm(), ModTime: fi.ModTime().UTC()}
		src := source{path: hist, limit: fi.Size(), keep: ids, redact: o.Redact}
		h := sha256.New()
		counts, n, err := copyHistory(h, src)
		if err != nil {
			return nil, err
		}
		for i := range m.Sessions {
			m.Sessions[i].Redacted += counts["\x00redacted "+m.Sessions[i].ID]
		}
		if n > 0 {
			f.Size, f.SHA256 = n, hex.EncodeToString(h.Sum(nil))
			m.Files = append(m.Files, f)
			sources = append(sources, src)
			for i := range m.Sessions {
				m.Sessions[i].Prompts = counts[m.Sessions[i].ID]
			}
		}
	} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is a symbolic link: its prompts are left out", hist))
	}
	if err := write(w, m, sources, o.Recipients); err != nil {
		return nil, err
	}
	return res, nil
}

// copyHistory writes to w the lines of the first src.limit bytes of the
// history.jsonl at src.path whose sessionId is one src keeps, each with
// its "\n"; it returns how many lines each session has, and the bytes
// written.
func copyHistory(w io.Writer, src source) (map[string]int, int64, error) {
	f, err := rfile.Open(src.path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	counts := map[string]int{}
	var n int64
	rd := session.NewReader(io.LimitReader(f, src.limit), nil)
	for rd.Next() {
		l := rd.Line()
		if !l.Terminated {
			continue // a prompt line being written
		}
		a, b, ok := session.Find(l.Raw, "sessionId")
		if !ok {
			continue
		}
		id, ok := changeset.DecodeJSONString(l.Raw[a:b])
		if !ok || !src.keep[id] {
			continue
		}
		counts[id]++
		raw := l.Raw
		if src.redact != nil {
			var k int
			raw, k = src.redact.Line(raw)
			counts["\x00redacted "+id] += k
		}
		k, err := w.Write(raw)
		n += int64(k)
		if err != nil {
			return nil, n, err
		}
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return nil, n, err
		}
		n++
	}
	if err := rd.Err(); err != nil {
		return nil, n, fmt.Errorf("%s: %w", src.path, err)
	}
	return counts, n, nil
}

// write writes the pack of m to w: encrypted to recipients when there
// are some, zstd, tar, the manifest first.
func write(w io.Writer, m *Manifest, sources []source, recipients []age.Recipient) error {
	out := w
	var aw io.WriteCloser
	if len(recipients) > 0 {
		var err error
		if aw, err = age.Encrypt(w, recipients...); err != nil {
			return fmt.Errorf("encrypting the pack: %w", err)
		}
		out = aw
	}
	zw, err := archive.NewEncoder(2)
	if err != nil {
		return err
	}
	defer zw.Close()
	zw.Reset(out)
	tw := tar.NewWriter(zw)
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	mb = append(mb, '\n')
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: 0o600, Size: int64(len(mb)),
		ModTime: m.Created, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := tw.Write(mb); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for i, f := range m.Files {
		if f.Dir {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.Path + "/", Mode: int64(f.Mode), ModTime: f.ModTime, Format: tar.FormatPAX}); err != nil {
				return err
			}
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: int64(f.Mode), Size: f.Size, ModTime: f.ModTime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		h := sha256.New()
		var n int64
		src := sources[i]
		switch {
		case src.keep != nil:
			_, n, err = copyHistory(io.MultiWriter(tw, h), src)
		case src.redact != nil:
			n, _, err = copyRedacted(io.MultiWriter(tw, h), src)
		default:
			n, err = copyFile(io.MultiWriter(tw, h), src, buf)
		}
		if err != nil && !errors.Is(err, tar.ErrWriteTooLong) {
			return err
		}
		if err != nil || n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
			return fmt.Errorf("%s changed while it was packed; pack again", src.path)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if aw != nil {
		return aw.Close()
	}
	return nil
}

// copyFile copies the first src.limit bytes of a file to w.
func copyFile(w io.Writer, src source, buf []byte) (int64, error) {
	f, err := rfile.Open(src.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.CopyBuffer(w, io.LimitReader(f, src.limit), buf)
}

// copyRedacted copies the first src.limit bytes of a file to w with
// src.redact taking its secrets out, and returns the bytes written and
// the secrets taken out.
func copyRedacted(w io.Writer, src source) (int64, int, error) {
	f, err := rfile.Open(src.path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := io.LimitReader(f, src.limit)
	cw := &countWriter{w: w}
	secrets := 0
	if !src.lines {
		if src.limit > maxRedactText {
			return 0, 0, fmt.Errorf("%s: %s, over the %s --redact reads of a file that is not JSON lines; pack without --redact, or leave the session out", src.path, changeset.Size(src.limit), changeset.Size(maxRedactText))
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return 0, 0, err
		}
		out, k := src.redact.Text(string(b))
		_, err = io.WriteString(cw, out)
		return cw.n, k, err
	}
	rd := session.NewReader(r, nil)
	for rd.Next() {
		l := rd.Line()
		out, k := src.redact.Line(l.Raw)
		secrets += k
		if _, err := cw.Write(out); err != nil {
			return cw.n, secrets, err
		}
		if l.Terminated {
			if _, err := cw.Write([]byte{'\n'}); err != nil {
				return cw.n, secrets, err
			}
		}
	}
	return cw.n, secrets, rd.Err()
}

// countWriter counts what it writes to w.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteFile writes the pack to the file path, which must not exist: into
// path.partial first (0600), synced, renamed to path once whole; on an
// error nothing is left. It returns the size written in Written.Size.
func WriteFile(path string, o Options) (*Written, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists: cfix pack never overwrites a file; remove it or name another", path)
	}
	tmp, err := os.OpenFile(path+".partial", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	res, err := Write(tmp, o)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if _, serr := os.Lstat(path); serr == nil {
			err = fmt.Errorf("%s appeared while the pack was written: left as it is", path)
		}
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		res.Size = fi.Size()
	}
	return res, nil
}
