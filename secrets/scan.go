package secrets

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// Finding is one secret found in the store.
type Finding struct {
	Path    string
	Line    int // 1-based: the line the secret starts on
	Kind    Kind
	Session string // the session the file or the line belongs to, when known
	Where   Where
	Tool    string // the tool of a tool input
	Field   string // the member holding the text, for a field or a tool's input
	Rule    string
	// Preview is the secret's first characters (at most 4, and at most a
	// quarter of it), never the whole.
	Preview string
	Length  int // of the secret, in characters
	// Fingerprint names the secret for the ignore file: the rule and the
	// start of the SHA-256 of the secret, which holds nothing of it.
	Fingerprint string

	secret string
}

// Options says what to scan.
type Options struct {
	Root    string
	Targets []string // session ids or prefixes, transcripts, project folders; none: the whole store
	// Allow are rules whose findings are left out.
	Allow []string
	// Ignore holds fingerprints of findings to leave out; nil reads the
	// store's IgnoreFile.
	Ignore map[string]bool
	// Workers is how many files are read at once (default GOMAXPROCS).
	Workers int
}

// Stats sums up a scan.
type Stats struct {
	Files    int
	Bytes    int64
	Findings int
	Ignored  int // findings left out by the ignore file
}

// OptionError reports a bad option.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// Scan scans the store, calling emit for each finding in the order of the
// files (sorted by path) and of their lines. An error from emit stops the
// scan and is returned. A file that cannot be read is an error naming it.
func Scan(opts Options, emit func(*Finding) error) (Stats, error) {
	var st Stats
	eng, err := Default()
	if err != nil {
		return st, err
	}
	filter, err := newFilter(eng, opts)
	if err != nil {
		return st, err
	}
	jobs, err := scope(opts.Root, opts.Targets)
	if err != nil {
		return st, err
	}
	err = runJobs(jobs, opts.Workers, func() func(j *job) ([]*Finding, int64, error) {
		s := newScanner(eng, filter)
		return s.file
	}, func(fs []*Finding, size int64) error {
		st.Files++
		st.Bytes += size
		for _, f := range fs {
			if filter.ignore[f.Fingerprint] {
				st.Ignored++
				continue
			}
			st.Findings++
			if err := emit(f); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}

// filter is what leaves findings out.
type filter struct {
	allow  map[string]bool
	ignore map[string]bool
}

func newFilter(eng *Engine, opts Options) (*filter, error) {
	f := &filter{allow: map[string]bool{}, ignore: opts.Ignore}
	for _, a := range opts.Allow {
		for _, id := range strings.Split(a, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			if !eng.HasRule(id) {
				return nil, &OptionError{Msg: fmt.Sprintf("--allow %s: no such rule (cfix secrets --rules lists them)", id)}
			}
			f.allow[id] = true
		}
	}
	if f.ignore == nil {
		ig, err := ReadIgnore(opts.Root)
		if err != nil {
			return nil, err
		}
		f.ignore = ig
	}
	return f, nil
}

// ReadIgnore reads the store's IgnoreFile: one fingerprint a line; blank
// lines and lines starting with # are skipped. A store without one ignores
// nothing.
func ReadIgnore(root string) (map[string]bool, error) {
	out := map[string]bool{}
	p := filepath.Join(root, IgnoreFile)
	f, err := rfile.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, " \t#"); i >= 0 {
			line = line[:i]
		}
		if !strings.Contains(line, ":") {
			return nil, fmt.Errorf("%s:%d: %q is not a fingerprint (rule:hash, as cfix secrets prints it)", p, n, line)
		}
		out[line] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return out, nil
}

// SecretKey names the secret of f, whatever rule found it (the rules of
// a secret found twice differ: its fingerprints too): a hash of it, for
// counting secrets.
func (f *Finding) SecretKey() string {
	sum := sha256.Sum256([]byte(f.secret))
	return hex.EncodeToString(sum[:8])
}

// fingerprint names a secret found by rule.
func fingerprint(rule, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return rule + ":" + hex.EncodeToString(sum[:6])
}

// Preview is what a listing shows of a secret: its first characters, at
// most 4 and at most a quarter of it, and an ellipsis.
func Preview(secret string) string {
	n := utf8.RuneCountInString(secret)
	show := min(4, n/4)
	i := 0
	for k := 0; k < show; k++ {
		_, size := utf8.DecodeRuneInString(secret[i:])
		i += size
	}
	return visibleASCII(secret[:i]) + "…"
}

// visibleASCII writes what a terminal would not show as it is as "?".
func visibleASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = '?'
		}
	}
	return string(b)
}

// scanner scans files one after the other; each worker has one.
type scanner struct {
	eng    *Engine
	filter *filter
	seen   *seen // texts found clean
	sc     scratch
	li     lineInfo
	dec    []byte
	buf    []byte
	out    []*Finding
	j      *job
}

func newScanner(eng *Engine, f *filter) *scanner {
	s := &scanner{eng: eng, filter: f, seen: newSeen()}
	s.li.min = eng.shortest
	return s
}

// file scans one file.
func (s *scanner) file(j *job) ([]*Finding, int64, error) {
	s.j, s.out = j, nil
	f, err := rfile.Open(j.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil // gone since the listing
		}
		return nil, 0, err
	}
	defer f.Close()
	var size int64
	if j.lines {
		if fi, err := f.Stat(); err == nil && fi.Size() >= bigFile {
			size, err = s.linesParallel(f)
			if err != nil {
				return nil, size, fmt.Errorf("%s: %w", j.path, err)
			}
			return s.out, size, nil
		}
		size, err = s.lines(f)
	} else {
		size, err = s.text(f, func(text []byte, line int, m Match) {
			s.add(WhereFor(j.kind), "", "", line, string(text[m.Start:m.End]), m.Rule, "")
		})
	}
	if err != nil {
		return nil, size, fmt.Errorf("%s: %w", j.path, err)
	}
	return s.out, size, nil
}

// WhereFor is where a secret of a file that is not JSON lines is.
func WhereFor(k Kind) Where {
	switch k {
	case KindFileHistory:
		return WhereBackup
	case KindToolResult:
		return WhereToolOutput
	case KindPaste:
		return WherePaste
	}
	return WhereFile
}

func (s *scanner) add(where Where, tool, field string, line int, secret, rule, sessionID string) {
	if s.filter.allow[rule] {
		return
	}
	f := &Finding{Path: s.j.path, Line: line, Kind: s.j.kind, Session: s.j.session, Where: where, Tool: tool, Field: field,
		Rule: rule, Preview: Preview(secret), Length: utf8.RuneCountInString(secret), Fingerprint: fingerprint(rule, secret), secret: secret}
	if f.Session == "" {
		f.Session = sessionID
	}
	s.out = append(s.out, f)
}

// lines scans a file of JSON lines.
func (s *scanner) lines(f *os.File) (int64, error) {
	rd := session.NewReader(f, s.buf)
	var size int64
	for rd.Next() {
		l := rd.Line()
		size = l.Offset + l.Len()
		s.line(l.Raw, l.N)
	}
	s.buf = rd.Buffer()
	return size, rd.Err()
}

// bigFile is the size from which a file of JSON lines is read by the
// session pipeline, its lines scanned on every core: a store's biggest
// session would otherwise keep one core busy while the others are done.
const bigFile = 16 << 20

// linesParallel is lines, the lines scanned by the session pipeline's
// workers (each a scanner of its own), their findings kept in file order.
func (s *scanner) linesParallel(f *os.File) (int64, error) {
	var size int64
	err := session.Pipeline(f, 0, func() func(session.Line) []*Finding {
		w := newScanner(s.eng, s.filter)
		w.j = s.j
		return func(l session.Line) []*Finding {
			w.out = w.out[:0]
			w.line(l.Raw, l.N)
			if len(w.out) == 0 {
				return nil
			}
			return append([]*Finding(nil), w.out...)
		}
	}, func(l session.Line, fs []*Finding) error {
		size = l.Offset + l.Len()
		s.out = append(s.out, fs...)
		return nil
	})
	return size, err
}

// line scans one JSON line: the decoded text of each of its strings, or the
// line as text when it is not JSON.
func (s *scanner) line(raw []byte, n int) {
	err := walk(raw, &s.li)
	if err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return
		}
		s.eng.find(str(raw), &s.sc, func(m Match) {
			if !s.filter.allow[m.Rule] {
				s.add(WhereLine, "", "", n, string(raw[m.Start:m.End]), m.Rule, "")
			}
		})
		return
	}
	li := &s.li
	var sessionID string
	if s.j.history || s.j.session == "" {
		sessionID = s.str(raw, li.sessionID)
	}
	if s.j.keep != nil && !s.j.keep.keeps(sessionID, s.str(raw, li.project)) {
		return
	}
	for k := range li.spans {
		sp := &li.spans[k]
		h, known := s.seen.clean(raw[sp.start:sp.end])
		if known {
			continue
		}
		text := s.text1(raw, sp.rawSpan)
		found := false
		s.eng.find(str(text), &s.sc, func(m Match) {
			found = true
			if s.filter.allow[m.Rule] {
				return
			}
			where, tool, ok := li.where(raw, sp, s.j.history)
			if !ok {
				return
			}
			field := ""
			if sp.key.ok() && (where == WhereField || where == WhereToolInput || where == WhereToolOutput) {
				field = string(unescape(nil, raw[sp.key.start:sp.key.end]))
			}
			s.add(where, tool, field, n, string(text[m.Start:m.End]), m.Rule, sessionID)
		})
		if !found {
			s.seen.add(h, int(sp.end-sp.start))
		}
	}
}

// str returns a header span's decoded text ("" when it is none).
func (s *scanner) str(raw []byte, sp rawSpan) string {
	if !sp.ok() {
		return ""
	}
	return string(s.text1(raw, sp))
}

// text1 returns a span's decoded text, valid until the next call.
func (s *scanner) text1(raw []byte, sp rawSpan) []byte {
	b := raw[sp.start:sp.end]
	if !sp.esc {
		return b
	}
	s.dec = unescape(s.dec[:0], b)
	return s.dec
}

// seen holds the hashes of the texts a worker found no secret in (the raw
// bytes of JSON strings): a store holds the same texts again and again
// (the client's reminders and instructions in every turn, a file read many
// times, a session copied by a resume or a fork), each scanned once. Texts
// shorter than the shortest match are never scanned; it stops growing at
// seenMax entries.
type seen struct {
	seed maphash.Seed
	m    map[uint64]int
}

const seenMax = 1 << 18

var seenSeed = maphash.MakeSeed()

func newSeen() *seen { return &seen{seed: seenSeed, m: map[uint64]int{}} }

// clean returns raw's hash, and whether a text of that hash and length
// was found clean before.
func (s *seen) clean(raw []byte) (uint64, bool) {
	h := maphash.Bytes(s.seed, raw)
	n, ok := s.m[h]
	return h, ok && n == len(raw)
}

// add keeps the hash of a text found clean.
func (s *seen) add(h uint64, n int) {
	if len(s.m) < seenMax {
		s.m[h] = n
	}
}

// str is b as a string, without a copy: b must not change while the
// string is used (the engine keeps nothing of a text it was given).
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Text files are read in chunks of textChunk bytes (up to a line's end);
// the last textCarry bytes of a chunk (from a line's start) are read again
// with the next, so that a secret over several lines (a PEM key) is found
// whole.
const (
	textChunk = 1 << 20
	textCarry = 64 << 10
)

// text scans a file that is not JSON lines, calling found for each secret
// with the chunk it was found in and the line it starts on. A file whose
// start holds a NUL byte is binary: it is skipped.
func (s *scanner) text(f *os.File, found func(text []byte, line int, m Match)) (int64, error) {
	size, err := s.chunks(f, func(chunk []byte, _ int64, line, doneTo int) {
		s.eng.find(str(chunk), &s.sc, func(m Match) {
			if m.End > doneTo {
				found(chunk, line+bytes.Count(chunk[:m.Start], nl), m)
			}
		})
	})
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		size = fi.Size()
	}
	return size, err
}

// chunks reads r in chunks of textChunk bytes (each ending at a line's end
// but the last), calling fn with each: its offset in r, the line it starts
// on, and how many of its bytes the chunk before held too (what is found
// there was found before). A stream whose start holds a NUL byte is
// binary: fn is not called, and the size returned is -1.
func (s *scanner) chunks(r io.Reader, fn func(chunk []byte, base int64, line, doneTo int)) (int64, error) {
	if cap(s.buf) < textChunk+textCarry {
		s.buf = make([]byte, textChunk+textCarry)
	}
	buf := s.buf[:cap(s.buf)]
	var off int64 // offset of buf[0]
	n := 0        // bytes in buf
	line := 1     // the line buf[0] is on
	doneTo := 0
	first := true
	for {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return off + int64(n), err
		}
		if first {
			first = false
			if bytes.IndexByte(buf[:min(n, 8192)], 0) >= 0 {
				return -1, nil
			}
		}
		end := n
		if !eof {
			if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
				end = i + 1
			}
		}
		chunk := buf[:end]
		fn(chunk, off, line, doneTo)
		if eof {
			return off + int64(n), nil
		}
		// Keep the last textCarry bytes, from a line's start.
		keep := 0
		if end > textCarry {
			keep = end - textCarry
			if i := bytes.IndexByte(chunk[keep:], '\n'); i >= 0 {
				keep += i + 1
			}
		}
		line += bytes.Count(chunk[:keep], nl)
		doneTo = end - keep
		copy(buf, buf[keep:n])
		n -= keep
		off += int64(keep)
	}
}

var nl = []byte{'\n'}

// runJobs runs work over the jobs on workers goroutines, and hands each
// job's result to commit in the order of the jobs.
func runJobs(jobs []job, workers int, newWork func() func(j *job) ([]*Finding, int64, error), commit func([]*Finding, int64) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type result struct {
		fs   []*Finding
		size int64
		err  error
		done chan struct{}
	}
	results := make([]result, len(jobs))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	next := make(chan int)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWork()
			for i := range next {
				r := &results[i]
				r.fs, r.size, r.err = work(&jobs[i])
				close(r.done)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range jobs {
			select {
			case next <- i:
			case <-stop:
				return
			}
		}
	}()
	var err error
	for i := range results {
		<-results[i].done
		r := &results[i]
		if r.err != nil {
			err = r.err
			break
		}
		if err = commit(r.fs, r.size); err != nil {
			break
		}
		r.fs = nil
	}
	close(stop)
	// Let the workers finish the job at hand.
	go func() {
		for range next {
		}
	}()
	wg.Wait()
	return err
}

// SortFindings sorts findings by path, then line.
func SortFindings(fs []*Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Path != fs[j].Path {
			return fs[i].Path < fs[j].Path
		}
		return fs[i].Line < fs[j].Line
	})
}
