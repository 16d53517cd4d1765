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
	"sort"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/secrets"
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
	// history.jsonl) through its LineRules, any other file (tool-results,
	// todo lists, file-history) whole through its TextRules, and each
	// session's title and index entry (cfix pack --redact:
	// secrets.Filter). The manifest counts what went, by rule.
	Redact Redactor
	// AllowSecrets packs the secrets of the sessions as they are. Without
	// it and without Redact, Write first looks for secrets in all it
	// would pack, with Detect (default: secrets' rules but for the
	// fingerprints of the store's ignore file), and refuses with a
	// *SecretsError when it finds one: secrets never leave the store
	// unless asked, encrypted or not.
	AllowSecrets bool
	Detect       Redactor
	// Layout, when set, is the scan of Root the caller made (a push
	// writes one pack per session: the store is scanned once); else
	// Write scans it.
	Layout *store.Layout
}

// Redactor finds secrets and takes them out (secrets.Filter): each call
// returns its input with the secrets replaced and how many were, and adds
// to rules (when not nil) how many of each rule.
type Redactor interface {
	LineRules(raw []byte, rules map[string]int) ([]byte, int)
	TextRules(s string, rules map[string]int) (string, int)
}

// SecretsError is Write's refusal of sessions holding secrets (neither
// Options.Redact nor Options.AllowSecrets set): what it found, by
// session, never the secrets themselves.
type SecretsError struct {
	Sessions []SessionSecrets
}

// SessionSecrets are the secrets found in one session's packed files,
// its prompts of history.jsonl, its title and its index entry.
type SessionSecrets struct {
	ID    string         `json:"id"`
	Count int            `json:"count"`
	Rules map[string]int `json:"rules"` // rule id → how many
}

// Count is how many secrets were found in all.
func (e *SecretsError) Count() int {
	n := 0
	for _, s := range e.Sessions {
		n += s.Count
	}
	return n
}

func (e *SecretsError) Error() string {
	n := e.Count()
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s in %d %s: ", n, plural.Of(n, "secret"), len(e.Sessions), plural.Of(len(e.Sessions), "session"))
	for i, s := range e.Sessions {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "session %s holds %d (%s)", s.ID, s.Count, RuleList(s.Rules))
	}
	return b.String()
}

// RuleList names the rules of counts, most found first: "github-pat ×2,
// aws-access-token".
func RuleList(rules map[string]int) string {
	ids := make([]string, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if rules[ids[i]] != rules[ids[j]] {
			return rules[ids[i]] > rules[ids[j]]
		}
		return ids[i] < ids[j]
	})
	for i, id := range ids {
		if rules[id] > 1 {
			ids[i] = fmt.Sprintf("%s ×%d", id, rules[id])
		}
	}
	return strings.Join(ids, ", ")
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
	// line when lines is set, else the file whole. detect says it only
	// finds them: what is written is the file as it is.
	redact Redactor
	detect bool
	lines  bool
	// rules counts, by rule, the secrets redact finds (each session's
	// own map; for HistoryName, see copyHistory).
	rules map[string]int
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
	if o.Redact != nil {
		o.AllowSecrets = false // nothing is left to allow
	}
	detect := o.Detect
	if o.Redact == nil && !o.AllowSecrets && detect == nil {
		ig, err := secrets.ReadIgnore(o.Root)
		if err != nil {
			return nil, err
		}
		f, err := secrets.NewFilter(secrets.RedactorOptions{Ignore: ig})
		if err != nil {
			return nil, err
		}
		detect = f
	}
	finder := o.Redact // what finds the secrets, when they are looked for
	if o.Redact == nil && !o.AllowSecrets {
		finder = detect
	}
	l := o.Layout
	if l == nil {
		var err error
		if l, err = store.Scan(o.Root); err != nil {
			return nil, fmt.Errorf("store %s: %w", o.Root, err)
		}
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
		if finder != nil {
			s.Rules = map[string]int{}
		}
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
			src := source{path: mb.Path, limit: f.Size, redact: o.Redact, lines: strings.HasSuffix(mb.Path, ".jsonl"), rules: s.Rules}
			switch {
			case mb.Dir:
			case o.Redact != nil:
				// What the pack holds is the file with its secrets out.
				h := sha256.New()
				n, k, err := copyRedacted(h, src)
				if err != nil {
					return nil, err
				}
				f.Size, f.SHA256 = n, hex.EncodeToString(h.Sum(nil))
				s.Redacted += k
			case finder != nil:
				// Looked at only: the pack would hold it as it is.
				ds := src
				ds.redact, ds.detect = finder, true
				if _, k, err := copyRedacted(io.Discard, ds); err != nil {
					return nil, err
				} else {
					s.Redacted += k
				}
			}
			if !mb.Dir {
				s.Files++
				s.Bytes += f.Size
			}
			m.Files = append(m.Files, f)
			src.rules = nil // counted once, here
			sources = append(sources, src)
		}
		if finder != nil {
			// The manifest holds the title and the index entry too.
			title, k := finder.TextRules(s.Title, s.Rules)
			s.Redacted += k
			if s.Index != nil {
				e, k := finder.LineRules(s.Index, s.Rules)
				s.Redacted += k
				if o.Redact != nil {
					s.Index = json.RawMessage(e)
				}
			}
			if o.Redact != nil {
				m.Redacted, s.Title = true, title
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
		src := source{path: hist, limit: fi.Size(), keep: ids, redact: finder, detect: o.Redact == nil}
		h := sha256.New()
		counts, n, err := copyHistory(h, src)
		if err != nil {
			return nil, err
		}
		for i := range m.Sessions {
			s := &m.Sessions[i]
			for rule, k := range counts.rules[s.ID] {
				s.Rules[rule] += k
				s.Redacted += k
			}
		}
		src.redact, src.detect = o.Redact, false // what is written
		if n > 0 {
			f.Size, f.SHA256 = n, hex.EncodeToString(h.Sum(nil))
			m.Files = append(m.Files, f)
			sources = append(sources, src)
			for i := range m.Sessions {
				m.Sessions[i].Prompts = counts.lines[m.Sessions[i].ID]
			}
		}
	} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is a symbolic link: its prompts are left out", hist))
	}
	if o.Redact == nil && finder != nil {
		// Looked for, not taken out: refused when there is one.
		se := &SecretsError{}
		for i := range m.Sessions {
			s := &m.Sessions[i]
			if s.Redacted > 0 {
				se.Sessions = append(se.Sessions, SessionSecrets{ID: s.ID, Count: s.Redacted, Rules: s.Rules})
			}
			s.Redacted, s.Rules = 0, nil
		}
		if len(se.Sessions) > 0 {
			return nil, se
		}
	}
	for i := range m.Sessions {
		if len(m.Sessions[i].Rules) == 0 {
			m.Sessions[i].Rules = nil
		}
	}
	if err := write(w, m, sources, o.Recipients); err != nil {
		return nil, err
	}
	return res, nil
}

// historyCounts is what copyHistory counts: the lines of each session,
// and the secrets of its lines by rule.
type historyCounts struct {
	lines map[string]int
	rules map[string]map[string]int
}

// copyHistory writes to w the lines of the first src.limit bytes of the
// history.jsonl at src.path whose sessionId is one src keeps, each with
// its "\n" (with src.redact, their secrets out, or only counted with
// src.detect); it returns how many lines each session has and the secrets
// found in them, and the bytes written.
func copyHistory(w io.Writer, src source) (*historyCounts, int64, error) {
	f, err := rfile.Open(src.path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	counts := &historyCounts{lines: map[string]int{}, rules: map[string]map[string]int{}}
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
		counts.lines[id]++
		raw := l.Raw
		if src.redact != nil {
			rules := counts.rules[id]
			if rules == nil {
				rules = map[string]int{}
				counts.rules[id] = rules
			}
			out, _ := src.redact.LineRules(raw, rules)
			if !src.detect {
				raw = out
			}
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
	if err := archive.WriteManifest(tw, ManifestName, m, m.Created); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for i, f := range m.Files {
		if err := archive.WriteHeader(tw, f.member()); err != nil {
			return err
		}
		if f.Dir {
			continue
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
			if src.detect {
				return 0, 0, fmt.Errorf("%s: %s, over the %s read whole to look for secrets in a file that is not JSON lines; pack it with --allow-secrets (as it is), or leave the session out", src.path, changeset.Size(src.limit), changeset.Size(maxRedactText))
			}
			return 0, 0, fmt.Errorf("%s: %s, over the %s --redact reads of a file that is not JSON lines; pack without --redact, or leave the session out", src.path, changeset.Size(src.limit), changeset.Size(maxRedactText))
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return 0, 0, err
		}
		out, k := src.redact.TextRules(string(b), src.rules)
		_, err = io.WriteString(cw, out)
		return cw.n, k, err
	}
	rd := session.NewReader(r, nil)
	for rd.Next() {
		l := rd.Line()
		out, k := src.redact.LineRules(l.Raw, src.rules)
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
