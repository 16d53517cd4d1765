package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// GlanceReach is how much of each end of a transcript a glance reads: what
// Claude Code's /resume picker reads (validate.PickerReach, 65536 bytes).
const GlanceReach = 64 << 10

// Where a glance took a session's title from, in the order it looks.
const (
	TitleCustom      = "custom-title"
	TitleAI          = "ai-title"
	TitleSummary     = "summary"
	TitleFirstPrompt = "first-prompt"
)

// QuickFinding is what a glance's quick check found. Code and Severity are
// those of the validate finding a full check gives for the same thing.
type QuickFinding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Line     int    `json:"line"` // 0 when the glance cannot number it (a line of the tail)
	Message  string `json:"message"`
}

// QuickCodes lists the codes a glance's quick check can give, with their
// severities.
var QuickCodes = map[string]string{
	"session-empty":         "warning",
	"session-stub":          "warning",
	"session-unwritten":     "warning",
	"line-torn":             "error",
	"final-newline-missing": "warning",
	"json-invalid":          "error",
	"line-too-deep":         "warning",
	"line-glued":            "error",
	"nul-bytes":             "error",
	"utf8-invalid":          "error",
	"surrogate-lone":        "error",
	"entry-not-object":      "error",
	"session-id-mismatch":   "warning",
	"session-name-invalid":  "warning",
	"file-not-jsonl":        "warning",
}

// Glance is what the first and last GlanceReach bytes of a main transcript
// say of its session, read as the /resume picker reads it: never the whole
// file (a file of at most twice GlanceReach is read whole, once).
type Glance struct {
	File
	// Title is the session's name as the picker finds it: the last
	// custom-title of the tail, else the title sidecar
	// <id>/custom-title.json, else the last custom-title of the head, else
	// the last ai-title of the tail, then of the head; then the last
	// summary, else the first prompt. TitleFrom says which ("" when none).
	Title, TitleFrom string
	FirstPrompt      string
	// CWDs are the working directories the entries read name, in the
	// order met, each once.
	CWDs []string
	// Version is the Claude Code version of the last entry read that
	// names one.
	Version string
	// Started is the timestamp of the first main-chain entry of the head,
	// LastActive that of the last one of the tail (the file's mtime when
	// no entry read has one: Timed is false then).
	Started, LastActive time.Time
	Timed               bool
	// Messages counts user and assistant entries (as validate counts
	// them); it is known (MessagesKnown) only when the whole file was
	// read.
	Messages      int
	MessagesKnown bool
	// Whole reports that the whole file was read.
	Whole bool
	// Empty: 0 bytes. MetaOnly: the whole file was read and holds no
	// chain entry (a stub, or a transcript never written). Warmup: the
	// first prompt is "Warmup", the probe 2.0.x sends at every start.
	Empty, MetaOnly, Warmup bool
	// OtherID is the session id every entry of a metadata-only file
	// carries, when it is not the file's own (a fork Claude Desktop began
	// and never continued holds its parent's first lines).
	OtherID string
	// Quick holds what the quick check found in what was read.
	Quick []QuickFinding
	// Err is set when the file could not be read.
	Err error

	// titled: the glance read far enough to name the session; lines are
	// the titles it met, from which (and the title sidecar) Title is
	// picked.
	titled bool
	lines  titleLines
}

// titleLines are the titles a glance met where the picker weighs them:
// the last custom-title and ai-title of the tail and of the head, and the
// last summary ("" when none, or when the last one is empty).
type titleLines struct {
	customTail, customHead, aiTail, aiHead, summary string
}

// Errors and Warnings count the quick findings of each severity.
func (g *Glance) Errors() int   { return g.count("error") }
func (g *Glance) Warnings() int { return g.count("warning") }

func (g *Glance) count(sev string) int {
	n := 0
	for _, q := range g.Quick {
		if q.Severity == sev {
			n++
		}
	}
	if g.Err != nil && sev == "error" {
		n++
	}
	return n
}

func (g *Glance) add(code string, line int, msg string) {
	g.Quick = append(g.Quick, QuickFinding{Code: code, Severity: QuickCodes[code], Line: line, Message: msg})
}

var glanceBufs = sync.Pool{New: func() any { b := make([]byte, 2*GlanceReach+1); return &b }}

// GlanceAt glances at one transcript.
func GlanceAt(f File) Glance { return GlanceWith(f, nil) }

// GlanceWith glances at one transcript through memo (nil: none).
func GlanceWith(f File, memo Memo) Glance {
	g := Glance{File: f}
	gl := newGlancer()
	gl.memoGlance(&g, memo)
	return g
}

// memoGlance glances at g.File through memo (nil: none): what memo kept
// of the file as it is, else a read of it, which memo then keeps.
func (gl *glancer) memoGlance(g *Glance, memo Memo) {
	if memo == nil {
		gl.glance(g)
		return
	}
	f := g.File
	if b, ok := memo.Glance(f, gl.export); ok && g.UnmarshalBinary(b) == nil {
		gl.finish(g)
		return
	}
	*g = Glance{File: f}
	gl.read(g)
	if g.Err == nil && g.Size == f.Size {
		if b, err := g.AppendBinary(nil); err == nil {
			memo.KeepGlance(f, gl.export, b)
		}
	}
	gl.finish(g)
}

// TitleOf is the title GlanceAt gives f, found with less work: once the
// first prompt is read, only the lines that can hold a title are parsed
// (see maybeTitle), and no other check is made.
func TitleOf(f File) string {
	g := Glance{File: f}
	gl := titlers.Get().(*glancer)
	defer titlers.Put(gl)
	gl.glance(&g)
	return g.Title
}

var titlers = sync.Pool{New: func() any {
	gl := newGlancer()
	gl.titleOnly = true
	return gl
}}

// titleMarks are bytes a line that is a title (custom-title, ai-title or
// summary) holds as written: the end of its type's value, or a \u
// escape, the only other way JSON spells those letters.
var titleMarks = [][]byte{[]byte(`-title"`), []byte(`"summary"`), []byte(`\u`)}

// maybeTitle reports whether raw may be a title line.
func maybeTitle(raw []byte) bool {
	for _, m := range titleMarks {
		if bytes.Contains(raw, m) {
			return true
		}
	}
	return false
}

// GlanceExtra glances at a transcript Claude Code keeps outside projects/
// (see Extras): its first prompt, times and messages, and the quick check
// of its lines. It is no session: Session is "" and no session check
// applies.
func GlanceExtra(x Extra) Glance { return GlanceExtraWith(x, nil) }

// GlanceExtraWith is GlanceExtra through memo (nil: none).
func GlanceExtraWith(x Extra, memo Memo) Glance {
	g := Glance{File: x.File()}
	gl := newGlancer()
	gl.export = x.Kind == ExtraExport
	gl.memoGlance(&g, memo)
	var keep []QuickFinding
	for _, q := range g.Quick {
		if q.Code != "session-stub" && q.Code != "session-unwritten" && q.Code != "session-empty" {
			keep = append(keep, q)
		}
	}
	g.Quick, g.MetaOnly = keep, false
	return g
}

// GlanceAll glances at the files on every core; the result is in the order
// of files.
func GlanceAll(files []File) []Glance { return glanceAll(files, nil, nil) }

func glanceAll(files []File, dirs map[string]bool, memo Memo) []Glance {
	out := make([]Glance, len(files))
	parallel(len(files), func(gl *glancer, i int) {
		gl.dirs = dirs
		out[i].File = files[i]
		gl.memoGlance(&out[i], memo)
	})
	return out
}

// parallel calls fn for 0 <= i < n on every core, each worker with a
// glancer of its own.
func parallel(n int, fn func(gl *glancer, i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gl := newGlancer()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(gl, i)
			}
		}()
	}
	wg.Wait()
}

// flatSessions returns the session each flat subagent transcript names
// (FlatAgentSession's answer), read on every core with pooled buffers,
// through memo (nil: none).
func flatSessions(files []File, memo Memo) []string {
	out := make([]string, len(files))
	parallel(len(files), func(gl *glancer, i int) {
		if memo != nil {
			if id, ok := memo.FlatSession(files[i]); ok {
				out[i] = id
				return
			}
		}
		var ok bool
		out[i], ok = gl.flatSession(files[i].Path)
		if memo != nil && ok {
			memo.KeepFlatSession(files[i], out[i])
		}
	})
	return out
}

// flatSession is FlatAgentSession: the sessionId of the first of the
// first 8 lines of the file's head that names one; ok is false when the
// file could not be read.
func (gl *glancer) flatSession(path string) (id string, ok bool) {
	fh, err := rfile.Open(path)
	if err != nil {
		return "", false
	}
	defer fh.Close()
	bp := glanceBufs.Get().(*[]byte)
	defer glanceBufs.Put(bp)
	// Most first lines fit in a few KB: read more only when needed.
	b := (*bp)[:8<<10]
	n, err := fh.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false
	}
	if n == len(b) {
		if id := gl.flatSessionIn(b[:bytes.LastIndexByte(b, '\n')+1]); id != "" {
			return id, true
		}
		b = (*bp)[:GlanceReach]
		if n, err = fh.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			return "", false
		}
	}
	return gl.flatSessionIn(b[:n]), true
}

// flatSessionIn looks for the sessionId in the first 8 lines of b.
func (gl *glancer) flatSessionIn(b []byte) string {
	for i := 0; i < 8 && len(b) > 0; i++ {
		j := bytes.IndexByte(b, '\n')
		line := b
		if j >= 0 {
			line, b = b[:j], b[j+1:]
		} else {
			b = nil
		}
		if _, ok := gl.p.Scan(line, gl.sh, &gl.e); ok && gl.e.SessionID != "" {
			return gl.e.SessionID
		}
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &v) == nil && v.SessionID != "" {
			return v.SessionID
		}
	}
	return ""
}

type glancer struct {
	export bool // the file is a transcript export (ExtraExport)
	// titleOnly reads only what the title needs (TitleOf).
	titleOnly bool
	// dirs, when set, holds the session folders that exist: a transcript
	// with none has no title sidecar to read.
	dirs map[string]bool
	p    *session.Parser
	sh   *session.Shaper
	e    session.Entry
	buf  []byte // a line reader's buffer (CountMessages)
}

func newGlancer() *glancer {
	return &glancer{p: session.NewParser(), sh: session.NewShaper(nil, nil)}
}

// titleAt is a title line met: where it lies and what it says.
type titleAt struct {
	kind       string
	head, tail bool // within the head's or the tail's reach
	text       string
}

// glance glances at g.File: read, then the title picked.
func (gl *glancer) glance(g *Glance) {
	gl.read(g)
	gl.finish(g)
}

// finish picks the title of a glance read (see Glance.Title), with the
// title sidecar of its session when its session folder exists.
func (gl *glancer) finish(g *Glance) {
	if !g.titled {
		return
	}
	sidecar := ""
	if dir := strings.TrimSuffix(g.Path, ".jsonl"); gl.dirs == nil || gl.dirs[dir] {
		sidecar = clip(SidecarTitle(g.Path))
	}
	g.pickTitle(sidecar)
}

// read glances at g.File, all but the title sidecar: what a memo keeps.
func (gl *glancer) read(g *Glance) {
	if g.Size == 0 {
		g.Empty, g.Whole, g.MessagesKnown = true, true, true
		g.LastActive = g.ModTime
		g.add("session-empty", 0, "session file is empty (0 bytes)")
		return
	}
	bp := glanceBufs.Get().(*[]byte)
	defer glanceBufs.Put(bp)
	buf := *bp
	fh, err := rfile.Open(g.Path)
	if err != nil {
		g.Err = err
		return
	}
	defer fh.Close()
	// shrunk glances again at a file shorter than when it was listed
	// (written again since), as it is now.
	shrunk := func() bool {
		fi, err := fh.Stat()
		if err != nil || fi.Size() >= g.Size {
			return false
		}
		g.Size = fi.Size()
		gl.read(g)
		return true
	}
	size := g.Size
	var head, tail []byte
	if size <= 2*GlanceReach {
		n, err := fh.ReadAt(buf[:size], 0)
		if err != nil && !errors.Is(err, io.EOF) {
			g.Err = err
			return
		}
		head, g.Whole = buf[:n], true
		size = int64(n)
	} else {
		if _, err := fh.ReadAt(buf[:GlanceReach], 0); err != nil {
			if !errors.Is(err, io.EOF) || !shrunk() {
				g.Err = err
			}
			return
		}
		head = buf[:GlanceReach]
		// One byte more before the tail tells whether it starts a line.
		n, err := fh.ReadAt(buf[GlanceReach:2*GlanceReach+1], size-GlanceReach-1)
		if err != nil && !errors.Is(err, io.EOF) {
			g.Err = err
			return
		}
		if n < GlanceReach+1 {
			if !shrunk() {
				g.Err = fmt.Errorf("%s: read %d bytes of its last %d", g.Path, n, GlanceReach+1)
			}
			return
		}
		tail = buf[GlanceReach : 2*GlanceReach+1]
	}
	var titles []titleAt
	var leaf, chain bool
	var ids struct { // the sessionIds met, as validate tallies them
		other           string
		line            int
		own, after, mix bool
	}
	// The first prompt and first slash command of the head and the tail.
	var prompt struct{ head, headCmd, tail, tailCmd string }
	// As validate counts them: lines that are JSON, and JSON objects.
	jsonLines, objects := 0, 0
	var lastNoNL []byte // the last line when the file does not end with a newline
	// line handles one complete line (or the unterminated last one: last).
	line := func(raw []byte, n int, off int64, inHead, last bool) {
		if len(raw) == 0 {
			return
		}
		// As validate: a line's NUL bytes are a finding, and the line is
		// read without them (the entry a crash glued them to counts).
		if bytes.IndexByte(raw, 0) >= 0 {
			g.add("nul-bytes", n, "a line holds NUL bytes (a crash or power loss left them)")
			raw = bytes.ReplaceAll(raw, []byte{0}, nil)
			if len(bytes.TrimSpace(raw)) == 0 {
				return
			}
		}
		if gl.titleOnly && prompt.head != "" && !maybeTitle(raw) {
			return
		}
		if last {
			lastNoNL = raw
		}
		e := &gl.e
		if _, ok := gl.p.Scan(raw, gl.sh, e); !ok {
			r := gl.p.Parse(raw)
			switch {
			case last:
				if r.Err != nil {
					return // torn: told below
				}
			case r.Err != nil && r.Err.Deep:
				g.add("line-too-deep", n, fmt.Sprintf("line nests deeper than %d levels (from column %d): its syntax is checked, nothing in it", session.MaxNesting, r.Err.Offset+1))
				return
			case r.Err != nil:
				g.add("json-invalid", n, "a line is not valid JSON: "+r.Err.Error())
				return
			}
			jsonLines++
			switch {
			case last:
			case r.GluedAt >= 0:
				g.add("line-glued", n, "two or more records were written on one line")
				return
			case r.BadUTF8 >= 0:
				g.add("utf8-invalid", n, "a line holds bytes that are not valid UTF-8")
			case r.Surrogates > 0:
				g.add("surrogate-lone", n, "a line holds a \\uD800-\\uDFFF escape without its pair")
			}
			if !session.HeaderOf(r.Value, e) {
				g.add("entry-not-object", n, "a line is valid JSON but not an object")
				return
			}
		} else {
			jsonLines++
		}
		objects++
		inTail := off >= size-GlanceReach
		headOK := off+int64(len(raw)) <= GlanceReach
		switch e.Type {
		case "relocated":
			// Claude Code moved the transcript into this folder (a worktree,
			// /cd): the directory it lists and resumes the session from.
			if c := session.RelocatedCWD(raw); c != "" {
				g.addCWD(c)
			}
		case "custom-title", "ai-title", "summary":
			var v struct {
				CustomTitle string `json:"customTitle"`
				AITitle     string `json:"aiTitle"`
				Summary     string `json:"summary"`
				LeafUUID    string `json:"leafUuid"`
			}
			if json.Unmarshal(raw, &v) == nil {
				t := v.CustomTitle
				switch e.Type {
				case "ai-title":
					t = v.AITitle
				case "summary":
					t = v.Summary
					leaf = leaf || v.LeafUUID != ""
				}
				// An empty custom-title or ai-title is kept: the picker
				// takes the last one in reach, and goes on to the next
				// place only when that one is empty (validate.PickerReach).
				if t = clip(strings.TrimSpace(t)); t != "" || e.Type != "summary" {
					titles = append(titles, titleAt{kind: e.Type, head: headOK && (inHead || g.Whole), tail: inTail, text: t})
				}
			}
		}
		// As validate: a main transcript named by a session id.
		if e.SessionID != "" && g.Kind == KindSession && IsUUID(g.Session) {
			switch {
			case e.SessionID == g.Session:
				ids.own = true
			case ids.other == "":
				ids.other, ids.line, ids.after = e.SessionID, n, ids.own
			default:
				ids.after = ids.after || ids.own
				ids.mix = ids.mix || e.SessionID != ids.other
			}
		}
		// An export's lines carry no uuid: its user and assistant lines
		// are its messages.
		if !e.IsChain() && !(gl.export && (e.Type == "user" || e.Type == "assistant")) {
			return
		}
		chain = true
		if e.Type == "user" || e.Type == "assistant" {
			g.Messages++
		}
		if e.CWD != "" {
			g.addCWD(e.CWD)
		}
		if e.Version != "" {
			g.Version = e.Version
		}
		// The first prompt as the picker finds it (see promptText): in the
		// head's reach (also in a file read whole), else in the tail's.
		if e.Type == "user" && !e.IsMeta && (headOK && prompt.head == "" || inTail && prompt.tail == "") {
			if t, cmd := promptText(gl.p, raw, gl.export); t != "" || cmd != "" {
				if headOK {
					prompt.head = firstOf(prompt.head, t)
					prompt.headCmd = firstOf(prompt.headCmd, cmd)
				}
				if inTail {
					prompt.tail = firstOf(prompt.tail, t)
					prompt.tailCmd = firstOf(prompt.tailCmd, cmd)
				}
			}
		}
		if e.IsSidechain {
			return
		}
		if t, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
			if g.Started.IsZero() && inHead {
				g.Started = t
			}
			g.LastActive = t
		}
	}
	// each handles the lines of b, numbered from first (0: lines of the
	// tail, which cannot be numbered, all stay 0).
	each := func(b []byte, base int64, inHead bool, first int) int {
		n := first
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				if base+int64(len(b)) == size {
					line(b, n, base, inHead, true)
				}
				return n
			}
			line(b[:i], n, base, inHead, false)
			base += int64(i + 1)
			b = b[i+1:]
			if n > 0 {
				n++
			}
		}
		return n
	}
	if g.Whole {
		each(head, 0, true, 1)
	} else {
		// The head's last line may run past it: only complete ones.
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			each(head[:i+1], 0, true, 1)
		}
		// The tail starts after the first newline it holds (tail[0] is
		// the byte before it: a newline there makes tail[1:] a line).
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			each(tail[i+1:], size-int64(len(tail)-i-1), false, 0)
		}
		g.Messages = 0
	}
	g.MessagesKnown = g.Whole
	g.FirstPrompt = firstOf(prompt.head, prompt.headCmd, prompt.tail, prompt.tailCmd)
	g.Warmup = g.FirstPrompt == "Warmup"
	if lastNoNL != nil {
		if r := gl.p.Parse(lastNoNL); r.Err != nil {
			g.add("line-torn", 0, "the last line was cut off mid-write (no final newline, not valid JSON)")
		} else {
			g.add("final-newline-missing", 0, "the last line is complete but has no final newline")
		}
	}
	if jsonLines == 0 && g.hasCode("json-invalid") {
		g.notJSONL()
	}
	// As validate: metadata-only is a file of JSON objects, none of the
	// chain (not a file of no object at all).
	if g.Whole && !chain && objects > 0 {
		g.MetaOnly = true
		if leaf {
			g.add("session-stub", 0, "stub: metadata lines and no conversation")
		} else {
			g.add("session-unwritten", 0, "metadata lines and no conversation: the conversation was never written, or lives in another file")
		}
	}
	switch {
	case ids.other == "":
	case g.MetaOnly && !ids.own && !ids.mix:
		// As validate: every line another session's; a copy of its
		// transcript's first lines, or never written (see Restub).
		g.OtherID = ids.other
	case ids.own && !ids.after && !ids.mix:
		g.Quick = append(g.Quick, QuickFinding{Code: "session-id-mismatch", Severity: "notice", Line: ids.line,
			Message: "the first entries carry session " + ids.other + "'s id, the rest this file's: a fork that starts with its parent's history under the parent's id, as Claude Desktop writes forks"})
	default:
		g.add("session-id-mismatch", ids.line, "entry's sessionId "+ids.other+" differs from the file's session id "+g.Session)
	}
	// As validate judges it for a client of the file's version: 2.1.132
	// and later send U+FFFD in place of a lone surrogate (a warning).
	if g.Version == "" || !session.VersionLess(g.Version, SurrogateSentTo) {
		for i := range g.Quick {
			if q := &g.Quick[i]; q.Code == "surrogate-lone" {
				q.Severity, q.Message = "warning", q.Message+": Claude Code 2.1.132 and later send U+FFFD in its place"
			}
		}
	}
	if g.Kind == KindSession && g.Session != "" && !IsUUID(g.Session) {
		g.add("session-name-invalid", 0, "file name "+g.Session+".jsonl is not a session UUID: /resume does not list it")
	}
	g.Timed = !g.LastActive.IsZero()
	if !g.Timed {
		g.LastActive = g.ModTime
	}
	g.titled, g.lines = true, linesOf(titles)
}

// linesOf keeps of the titles met what the picker weighs (titleLines).
func linesOf(titles []titleAt) titleLines {
	last := func(kind string, in func(t titleAt) bool) string {
		for i := len(titles) - 1; i >= 0; i-- {
			if titles[i].kind == kind && in(titles[i]) {
				return titles[i].text
			}
		}
		return ""
	}
	tail := func(t titleAt) bool { return t.tail }
	head := func(t titleAt) bool { return t.head }
	any := func(titleAt) bool { return true }
	return titleLines{customTail: last(TitleCustom, tail), customHead: last(TitleCustom, head),
		aiTail: last(TitleAI, tail), aiHead: last(TitleAI, head), summary: last(TitleSummary, any)}
}

// notJSONL replaces the findings of the lines of a file of which no line
// read is JSON (another program's output written over a transcript) by
// one finding, as validate does.
func (g *Glance) notJSONL() {
	keep := g.Quick[:0]
	for _, q := range g.Quick {
		switch q.Code {
		case "json-invalid", "line-torn", "nul-bytes", "utf8-invalid":
			continue
		}
		keep = append(keep, q)
	}
	g.Quick = keep
	g.add("file-not-jsonl", 1, "no line read is JSON: this is not a Claude Code transcript (written over by another program?)")
}

func (g *Glance) hasCode(c string) bool {
	for _, q := range g.Quick {
		if q.Code == c {
			return true
		}
	}
	return false
}

func (g *Glance) addCWD(c string) {
	for _, o := range g.CWDs {
		if o == c {
			return
		}
	}
	if len(g.CWDs) < 16 {
		g.CWDs = append(g.CWDs, c)
	}
}

// pickTitle takes the title as the picker does (see Glance.Title).
func (g *Glance) pickTitle(sidecar string) {
	l := &g.lines
	set := func(t, from string) bool {
		if t == "" {
			return false
		}
		g.Title, g.TitleFrom = t, from
		return true
	}
	g.Title, g.TitleFrom = "", ""
	_ = set(l.customTail, TitleCustom) ||
		set(sidecar, TitleCustom) ||
		set(l.customHead, TitleCustom) ||
		set(l.aiTail, TitleAI) ||
		set(l.aiHead, TitleAI) ||
		set(l.summary, TitleSummary) ||
		set(g.FirstPrompt, TitleFirstPrompt)
}

// SidecarTitle reads <folder>/<session-id>/custom-title.json, the title
// sidecar 2.1.330 writes beside a transcript (at path) when a session is
// renamed, and the picker reads when the tail holds no custom-title: its
// customTitle, "" when there is none.
func SidecarTitle(path string) string {
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	b, err := rfile.ReadFile(filepath.Join(filepath.Dir(path), id, "custom-title.json"))
	if err != nil {
		return ""
	}
	var v struct {
		CustomTitle string `json:"customTitle"`
	}
	json.Unmarshal(b, &v)
	return strings.TrimSpace(v.CustomTitle)
}

// promptText returns what a user entry's line (raw) gives the /resume
// picker's first prompt: the prompt, else the name of the slash command it
// holds (cmd). The rules, measured with the real picker (2.1.100, 2.1.111,
// 2.1.332; e2e TestPickerPrompt) and read in its code:
//   - a line that holds "tool_result" anywhere, or is isMeta or
//     isCompactSummary, gives nothing (the caller skips isMeta);
//   - the texts are the string content, else every text block (a
//     tool_result block: nothing), each with its newlines made spaces and
//     trimmed; the first text that is a prompt wins;
//   - a text holding <command-name>X</command-name> is no prompt: X is the
//     command, shown when the session has no prompt at all (/clear);
//   - a text holding <bash-input>X</bash-input> is the prompt "! X";
//   - a text that opens with a markup tag (<ide_opened_file>,
//     <system-reminder>, <local-command-stdout>, ...: `<` then a lower-case
//     letter) or with [Request interrupted by user...] is no prompt.
//
// A rowSource "harness" row is not left out: 2.1.332's picker shows a
// non-meta harness row's text (the harness writes its rows isMeta, which
// are). 2.0.x's picker took the first text block whole, markup included;
// the newest picker reads every store, and cfix follows it.
func promptText(p *session.Parser, raw []byte, export bool) (prompt, cmd string) {
	if bytes.Contains(raw, []byte(`"tool_result"`)) {
		return "", ""
	}
	r := p.Parse(raw)
	m, _ := r.Value.(map[string]any)
	if m["isCompactSummary"] == true {
		return "", ""
	}
	var c any
	if export {
		c = m["content"] // a transcript export's line
	}
	if msg, ok := m["message"].(map[string]any); ok {
		c = msg["content"]
	}
	var texts []string
	switch c := c.(type) {
	case string:
		texts = append(texts, c)
	case []any:
		for _, b := range c {
			bm, _ := b.(map[string]any)
			if s, ok := bm["text"].(string); ok && bm["type"] == "text" {
				texts = append(texts, s)
			}
		}
	}
	for _, t := range texts {
		t = strings.TrimSpace(strings.ReplaceAll(t, "\n", " "))
		if t == "" {
			continue
		}
		if name, ok := between(t, "<command-name>", "</command-name>"); ok {
			cmd = firstOf(cmd, clip(name))
			continue
		}
		if in, ok := between(t, "<bash-input>", "</bash-input>"); ok {
			return clip("! " + strings.TrimSpace(in)), cmd
		}
		if markup(t) {
			continue
		}
		return clip(t), cmd
	}
	return "", cmd
}

// markup reports whether a prompt's text opens with a markup tag (a `<`,
// a lower-case letter, name characters, then a space or `>`) or with
// "[Request interrupted by user...]": the picker's test (see promptText).
func markup(t string) bool {
	if rest, ok := strings.CutPrefix(t, "[Request interrupted by user"); ok {
		return strings.Contains(rest, "]")
	}
	if len(t) < 3 || t[0] != '<' || t[1] < 'a' || t[1] > 'z' {
		return false
	}
	for i := 2; i < len(t); i++ {
		switch c := t[i]; {
		case c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			return true
		case c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return false
}

// between returns the text of s between the first open and the close
// after it.
func between(s, open, close string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	in, _, ok := strings.Cut(rest, close)
	return in, ok
}

// firstOf returns the first of ss that is not "".
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// TitleMax is the most bytes of a title or first prompt a glance keeps (a
// pasted prompt can be megabytes): a listing of many sessions stays small.
const TitleMax = 1024

// clip cuts s to TitleMax bytes, at a character boundary.
func clip(s string) string {
	if len(s) <= TitleMax {
		return s
	}
	i := TitleMax
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
