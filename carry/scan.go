package carry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// InputError is an error in what the user asked (a session that does not
// exist, a bad --id, a directory that is a file): the CLI exits 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// ConflictError is a plan refused because of what is in the store (the
// target folder already holds sessions and --merge was not given, two files
// would land on one name): the CLI exits 1.
type ConflictError struct{ Msg string }

func (e *ConflictError) Error() string { return e.Msg }

func conflict(format string, args ...any) error {
	return &ConflictError{Msg: fmt.Sprintf(format, args...)}
}

// NormDir makes a working directory absolute and clean, and resolves
// symlinks when it exists (Claude Code records the physical cwd). It
// refuses a path that exists and is not a directory.
func NormDir(dir string) (string, error) {
	if dir == "" {
		return "", inputErr("no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", inputErr("%s: %v", dir, err)
	}
	abs = filepath.Clean(abs)
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return abs, nil
	case err != nil:
		return "", inputErr("%s: %v", abs, err)
	case !fi.IsDir():
		return "", inputErr("%s is not a directory", abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", inputErr("%s: %v", abs, err)
	}
	return real, nil
}

// TargetFolder returns the project folder name Claude Code uses for dir
// (see store.FolderFor).
func TargetFolder(root, dir string) string { return store.FolderFor(root, dir) }

// DerivedUUID returns a UUID (version 4 in form) made from seed: the same
// seed gives the same id, so a plan made twice is the same plan.
func DerivedUUID(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	var b [16]byte
	copy(b[:], sum[:16])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newAgentID returns an agent id shaped like old ("a" and hex), derived
// from old, the new session id and try.
func newAgentID(old, session string, try int) string {
	n := len(old)
	if n < 7 {
		n = 7
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("agent\x00%s\x00%s\x00%d", old, session, try)))
	return "a" + hex.EncodeToString(sum[:])[:n-1]
}

// scan is what one read of a transcript gives: its fingerprint (with the
// hash of the bytes read), its line count, the first cwd of its entries,
// and with sum set, an index summary.
type scan struct {
	fp    changeset.Fingerprint
	lines int
	cwd   string
	// sessionID is the first sessionId of the entries: the file's name
	// may not be it (a file renamed by hand).
	sessionID string
	sum       *store.SessionSummary
	// cwdUnder: some entry's cwd is the directory scanFile was asked
	// about, or under it.
	cwdUnder bool
}

// scanFile reads a transcript once. The fingerprint's size and mtime are
// taken before the read, so an append during it makes apply refuse the
// plan rather than copy a file that changed.
func scanFile(path string, withSummary bool) (*scan, error) {
	return scanFileFor(path, withSummary, "", nil)
}

// scanFileFor is scanFile that also tells whether an entry's cwd is dir or
// under it (dir "": not asked), and whose summary leaves out the lines
// drop names (a trimmed copy's index entry counts what the copy holds).
//
// A transcript that is a symbolic link is read through: the fingerprint
// is of the file it leads to (its size, mode and bytes), never of the
// link, so a copy made from it holds every byte of that file.
func scanFileFor(path string, withSummary bool, dir string, drop map[int]bool) (*scan, error) {
	f, err := rfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if target, ok := Linked(path); ok {
			return nil, conflict("%s is a symbolic link to %s, which leads nowhere", path, target)
		}
		return nil, fmt.Errorf("%s: no such file", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fp, err := changeset.StatFile(f)
	if err != nil {
		if target, ok := Linked(path); ok {
			return nil, conflict("%s is a symbolic link to %s, which is not a file: cfix copies the file a link leads to, nothing else", path, target)
		}
		return nil, err
	}
	h := changeset.NewHashWriter()
	rd := session.NewReader(io.TeeReader(f, h), nil)
	s := &scan{}
	if withSummary {
		s.sum = &store.SessionSummary{}
	}
	p := session.NewParser()
	var e session.Entry
	var needle []byte
	if dir != "" {
		q := changeset.QuoteJSON(dir)
		needle = q[1 : len(q)-1]
	}
	for rd.Next() {
		raw := rd.Line().Raw
		s.lines++
		if s.sessionID == "" {
			if a, b, ok := session.Find(raw, "sessionId"); ok {
				s.sessionID, _ = changeset.DecodeJSONString(raw[a:b])
			}
		}
		if s.cwd == "" {
			if a, b, ok := session.Find(raw, "cwd"); ok {
				s.cwd, _ = changeset.DecodeJSONString(raw[a:b])
			}
		}
		if needle != nil && !s.cwdUnder && bytes.Contains(raw, needle) {
			if a, b, ok := session.Find(raw, "cwd"); ok {
				if c, ok := changeset.DecodeJSONString(raw[a:b]); ok && under(dir, c) {
					s.cwdUnder = true
				}
			}
		}
		if s.sum != nil && !drop[s.lines] {
			r := p.Parse(raw)
			if r.Err == nil && session.HeaderOf(r.Value, &e) {
				s.sum.Add(r.Value, &e)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	fp.SHA256 = h.Sum()
	s.fp = fp
	return s, nil
}

// firstCWD returns the first cwd in the first lines of a transcript.
func firstCWD(path string, maxLines int) string {
	f, err := rfile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	rd := session.NewReader(f, make([]byte, 64<<10))
	for n := 0; n < maxLines && rd.Next(); n++ {
		raw := rd.Line().Raw
		if a, b, ok := session.Find(raw, "cwd"); ok {
			if s, ok := changeset.DecodeJSONString(raw[a:b]); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// under reports whether p is dir or a path under it (whole components).
func under(dir, p string) bool {
	_, ok := changeset.MapPath(dir, dir, p)
	return ok
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// isTranscript reports whether rel (a path inside a session folder) is a
// subagent transcript.
func isTranscript(rel string) bool {
	base := filepath.Base(rel)
	return strings.HasSuffix(base, ".jsonl") && strings.HasPrefix(base, "agent-") &&
		strings.HasPrefix(filepath.ToSlash(rel), "subagents/")
}

// Linked returns what the symbolic link at path says, when path is one.
func Linked(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	target, err := os.Readlink(path)
	return target, err == nil
}

// LinkRefused is the refusal of a planner that would move or rewrite the
// file at path, a symbolic link to target: the new bytes would replace
// the link in the store and leave its target as it was (cfix writes
// nothing outside the store), or remove the link and leave its target
// behind. doing says what the planner does ("move", "rewrite").
func LinkRefused(path, target, doing, instead string) error {
	return conflict("%s is a symbolic link to %s: cfix does not %s a link (it writes nothing where a link leads, and would leave its target behind); put the file itself in place of the link, or %s", path, target, doing, instead)
}

// Scanned is what one read of a transcript gives (ScanFile): its
// fingerprint with the hash of the bytes read, its line count, the first
// cwd and sessionId of its entries, with a summary its index summary, and
// whether an entry's cwd is the directory asked about or under it.
type Scanned struct {
	FP        changeset.Fingerprint
	Lines     int
	CWD       string
	SessionID string
	Sum       *store.SessionSummary
	CWDUnder  bool
}

// ScanFile reads a transcript once (see scanFileFor): withSummary also
// makes its index summary, dir ("" for none) is the directory CWDUnder
// tells about. A transcript that is a symbolic link is read through.
func ScanFile(path string, withSummary bool, dir string) (*Scanned, error) {
	s, err := scanFileFor(path, withSummary, dir, nil)
	if err != nil {
		return nil, err
	}
	return &Scanned{FP: s.fp, Lines: s.lines, CWD: s.cwd, SessionID: s.sessionID, Sum: s.sum, CWDUnder: s.cwdUnder}, nil
}

// FirstCWD returns the first cwd in the first maxLines lines of a
// transcript, or "".
func FirstCWD(path string, maxLines int) string { return firstCWD(path, maxLines) }

// Under reports whether p is dir or a path under it (whole components).
func Under(dir, p string) bool { return under(dir, p) }

// IsTranscript reports whether rel, a path inside a session folder, is a
// subagent transcript (subagents/**/agent-*.jsonl).
func IsTranscript(rel string) bool { return isTranscript(rel) }

// Describe says what a transform rewrites, for an op's reason: "" when it
// rewrites nothing, " (copied as it is)" for none.
func Describe(t *changeset.Transform) string { return describe(t) }
