package repair

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// lineFix is the new content of one line: its records (glued records are
// split into several); a nil record is removed, and a line with no record
// left is removed.
type lineFix struct {
	line       int
	off        int64
	length     int64 // bytes of the line, terminator included
	terminated bool
	recs       [][]byte
	reasons    []string
	// long: the line is longer than session.MaxLine and recs[0] is not
	// its bytes: the fix may only remove it.
	long bool
	// count is how many lines the fix removes, when it removes a run of
	// lines for one reason, none of which holds a record it keeps (empty,
	// NUL bytes only, not JSON): a file of a million empty lines costs
	// one fix (0: one line).
	count int
}

// longLineError is a fix that would rewrite a line longer than
// session.MaxLine, which cfix never holds whole: the file is left as it
// is, and the plan says why.
type longLineError struct {
	path string
	line int
	size int64
}

func (e *longLineError) Error() string {
	return fmt.Sprintf("%s: not repaired: a fix would rewrite line %d, which is %s (%d bytes), over the %s cfix reads whole; cfix does not rewrite it",
		e.path, e.line, session.MB(e.size), e.size, session.MB(session.MaxLine))
}

// fixer plans the repairs of one transcript.
type fixer struct {
	f          store.File
	allow      func(validate.Code) bool
	aggressive bool
	noChain    bool // not a transcript: line repairs only
	file       *os.File
	fixes      map[int]*lineFix
	order      []int // lines with fixes, in first-fixed order
	nodes      []session.Node
	first      map[string]int  // chain uuid → its node, as the lines were read
	deleted    map[int]bool    // node index → removed
	attach     *session.Parser // reads attachment entries (AttachmentFaults)
	removed    int             // entries removed
	added      int             // entries added
	saved      int64           // bytes of progress entries dropped
	expect     changeset.Fingerprint
	lastLine   int
	metaOnly   bool                  // lines, and none of them a chain entry
	entries    int                   // entries read
	unfixed    map[validate.Code]int // faults seen and not fixed
	dropped    int                   // tool_results answering no tool_use that the client drops itself, kept
	g          *session.Graph        // the last graph built (see graph)
	gIdx       []int
	changed    bool     // a node changed since g was built
	version    string   // version of the last chain entry: the client that wrote it last
	notJSON    [][2]int // runs of lines removed because they were not JSON: [first, last]
	jsonLines  int      // lines that hold JSON
	badLines   int      // complete lines that are not JSON
	// useAnywhere and resultAnywhere hold the tool ids of every entry of
	// the file, on any branch, repeated or left alone: a real result is
	// never shadowed, a real one never removed.
	useAnywhere, resultAnywhere map[string]bool
	elsewhere                   func(uuid string) string   // the other transcript holding an entry, or ""
	lastPrompt                  string                     // leafUuid of the last last-prompt entry
	lastPromptLine              int                        // and its line
	leafRefs                    map[string][]*session.Node // leafUuid → the metadata records naming it
	leafMoved                   map[int]bool               // lines whose leafUuid the plan points elsewhere (see leafOver)
	lost                        []int                      // lines that lose a record because it is not JSON (torn, glued)
	titles                      []validate.TitleLine       // custom-title and ai-title records titleGap looks at (validate.KeepTitles)
	run                         *lineFix                   // the fix removing the run of lines read last (extendRun)
	size                        int64                      // the file's size when planning started
}

func (x *fixer) reason(line int, r string) {
	fx := x.fixes[line]
	for _, have := range fx.reasons {
		if have == r {
			return
		}
	}
	fx.reasons = append(fx.reasons, r)
}

// fix returns the lineFix of a line, making it from the line's current
// bytes (one record) when there is none yet.
func (x *fixer) fix(ln session.Line) *lineFix {
	return x.fixAt(ln.N, ln.Offset, ln.Len(), ln.Raw, ln.Terminated, ln.Long != nil && !ln.Long.Exact)
}

// fixAt is fix for the line of size bytes (its terminator left out) at
// off, whose bytes are raw (long: a skeleton, see lineFix).
func (x *fixer) fixAt(line int, off, size int64, raw []byte, terminated, long bool) *lineFix {
	if fx, ok := x.fixes[line]; ok {
		return fx
	}
	length := size
	if terminated {
		length++
	}
	fx := &lineFix{line: line, off: off, length: length, terminated: terminated, recs: [][]byte{append([]byte(nil), raw...)}, long: long}
	x.fixes[line] = fx
	x.order = append(x.order, line)
	return fx
}

// isNotJSON reports whether line was removed because it was not JSON.
func (x *fixer) isNotJSON(line int) bool {
	i := sort.Search(len(x.notJSON), func(i int) bool { return x.notJSON[i][1] >= line })
	return i < len(x.notJSON) && x.notJSON[i][0] <= line
}

// extendRun adds line ln, which goes for reason and holds no record, to
// the run of such lines the fix of the line before it removes, and
// reports whether it did.
func (x *fixer) extendRun(ln session.Line, reason string) bool {
	fx := x.run
	if fx == nil || fx.off+fx.length != ln.Offset || len(fx.reasons) != 1 || fx.reasons[0] != reason ||
		len(fx.recs) != 1 || fx.recs[0] != nil || !fx.terminated {
		return false
	}
	fx.length += ln.End() - ln.Offset
	fx.count = max(fx.count, 1) + 1
	fx.terminated = ln.Terminated
	return true
}

// rec returns the current bytes of a node's record.
func (x *fixer) rec(n *session.Node) ([]byte, error) {
	if fx, ok := x.fixes[n.Line]; ok && !fx.long {
		return fx.recs[n.Rec], nil
	}
	if n.Long {
		return nil, &longLineError{x.f.Path, n.Line, int64(n.Len)}
	}
	buf := make([]byte, n.Len)
	if _, err := x.file.ReadAt(buf, n.Off); err != nil {
		return nil, err
	}
	return buf, nil
}

// setRec replaces a node's record.
func (x *fixer) setRec(n *session.Node, b []byte, reason string) error {
	if n.Long {
		if b != nil || n.Rec != 0 {
			return &longLineError{x.f.Path, n.Line, int64(n.Len)}
		}
		// Removed whole: its bytes are not needed.
		x.changed = true
		x.fixAt(n.Line, n.Off, int64(n.Len), nil, n.Terminated, true).recs[0] = nil
		x.reason(n.Line, reason)
		return nil
	}
	x.changed = true
	if _, ok := x.fixes[n.Line]; !ok {
		raw, err := x.rec(n)
		if err != nil {
			return err
		}
		x.fixAt(n.Line, n.Off, int64(n.Len), raw, n.Terminated, false)
	}
	x.fixes[n.Line].recs[n.Rec] = b
	x.reason(n.Line, reason)
	return nil
}

// plan streams the file, fixes its lines, builds the chain, then fixes the
// chain. It returns nil when the file needs no change.
func (x *fixer) plan() (*changeset.Op, error) {
	fh, err := rfile.Open(x.f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	x.file = fh
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	x.size = fi.Size()
	x.fixes = map[int]*lineFix{}
	x.deleted = map[int]bool{}
	x.useAnywhere, x.resultAnywhere = map[string]bool{}, map[string]bool{}
	x.unfixed = map[validate.Code]int{}
	// The fingerprint: stat first (a change during the read moves the
	// change time past the one kept), then the hash of the very bytes the
	// lines are read from (no second read), on a goroutine of its own
	// beside the parse.
	fp, err := changeset.Stat(x.f.Path)
	if err != nil {
		return nil, err
	}
	hw := changeset.NewHashWriter()
	// Room for about as many entries as such a file holds (a line of a
	// transcript is about 2 KB or more), so that the nodes are not copied
	// in many steps as they grow.
	est := int(min(fi.Size()/2048, 1<<16)) + 16 // a file of NUL bytes holds none
	x.nodes = make([]session.Node, 0, est)
	x.first = make(map[string]int, est)
	seen := x.first
	var size int64
	err = session.PipelineTee(fh, hw, 0, func() func(session.Line) lineResult {
		p := session.NewParser()
		p.Header = true
		return func(l session.Line) lineResult { return x.work(p, headerShaper, l) }
	}, func(l session.Line, r lineResult) error {
		x.lastLine = l.N
		size = l.End()
		return x.commit(l, r, seen)
	})
	if err != nil {
		return nil, err
	}
	fp.SHA256 = hw.Sum()
	if !fp.Exists || fp.Dir || fp.Size != size || fp.Size != fi.Size() || !fp.ModTime.Equal(fi.ModTime().UTC()) {
		return nil, fmt.Errorf("%s: changed while cfix read it (Claude Code or another cfix is writing to it?); try again", x.f.Path)
	}
	x.metaOnly = x.lastLine > 0 && len(x.nodes) == 0 && x.entries > 0
	x.expect = fp
	if x.jsonLines == 0 && x.badLines > 0 && !x.noChain {
		// No line is JSON: another program's output, not a transcript
		// with bad lines. Emptying it would destroy it.
		x.unfixed[validate.FileNotJSONL]++
		return nil, nil
	}
	if err := x.chain(); err != nil {
		return nil, fmt.Errorf("%s: %w", x.f.Path, err)
	}
	if len(x.fixes) == 0 {
		return nil, nil
	}
	op := &changeset.Op{Action: changeset.Rewrite, Path: x.f.Path, Expect: x.expect, Session: x.session(),
		EntriesRemoved: x.removed, EntriesAdded: x.added}
	var reasons []string
	seenReason := map[string]bool{}
	lines := make([]int, 0, len(x.fixes))
	for l := range x.fixes {
		lines = append(lines, l)
	}
	sort.Ints(lines)
	for _, l := range lines {
		fx := x.fixes[l]
		var nb []byte
		if fx.long && (len(fx.recs) != 1 || fx.recs[0] != nil) {
			return nil, &longLineError{x.f.Path, l, fx.length}
		}
		for _, r := range fx.recs {
			if r == nil {
				continue
			}
			nb = append(nb, r...)
			nb = append(nb, '\n')
		}
		if !fx.terminated && !x.allow(validate.NoFinalNewline) && len(nb) > 0 {
			nb = nb[:len(nb)-1]
		}
		why := strings.Join(fx.reasons, "; ")
		if fx.count > 1 {
			why += fmt.Sprintf(" (%d lines)", fx.count)
		}
		op.Edits = append(op.Edits, changeset.Edit{Line: l, Offset: fx.off, Length: fx.length, Count: max(fx.count, 1), New: nb, Reason: why})
		for _, r := range fx.reasons {
			key := reasonKind(r)
			if !seenReason[key] {
				seenReason[key] = true
				reasons = append(reasons, key)
			}
		}
	}
	op.Reason = strings.Join(reasons, "; ")
	if x.saved > 0 {
		op.Reason += fmt.Sprintf(" (%d bytes of progress entries saved)", x.saved)
	}
	return op, nil
}

// reasonKind drops the details after ':' so the op's reason lists kinds.
func reasonKind(r string) string {
	if i := strings.Index(r, ": "); i >= 0 {
		return r[:i]
	}
	return r
}

func (x *fixer) session() string {
	if x.noChain {
		return ""
	}
	if x.f.Kind == store.KindSession || x.f.Kind == store.KindAgent {
		return x.f.Session
	}
	return ""
}

// lineResult is what the per-line work found: the line's new records and
// why, or that it goes, and the header trees of its entries.
type lineResult struct {
	skip    bool     // a fault not allowed to be fixed: leave the line alone
	del     string   // the line goes, for this reason
	notJSON bool     // ... and it was not JSON
	json    bool     // the line holds JSON (skipped or not)
	uses    []string // tool_use ids of a skipped line's entries
	results []string // tool_result ids of a skipped line's entries
	removed bool     // ... and it held an entry
	changed bool     // recs hold new bytes
	recs    [][]byte // the line's records (copies, when changed)
	reasons []string
	values  []any  // header tree of each record (nil: not an entry)
	heads   []head // what commit needs of each record, worked out here in parallel
	// titles: for each custom-title or ai-title record of a line that
	// parses as JSON as it is (as validate counts them), whether it is a
	// custom-title.
	titles []bool
}

// head is the entry header of a record.
type head struct {
	ok bool // the record is an entry (a JSON object)
	e  session.Entry
}

// headerShaper counts only the fields HeaderOf reads: Scan skips the rest
// of a line (checking it) without hashing it.
var headerShaper = session.NewShaper(nil, map[string]bool{})

// work applies the line-level repairs to one line. It touches no fixer
// state but x.allow, so lines are worked on in parallel.
func (x *fixer) work(p *session.Parser, sh *session.Shaper, ln session.Line) lineResult {
	if ln.Long != nil && !ln.Long.Exact {
		return x.longLine(p, ln)
	}
	if r, ok := scanned(p, sh, ln); ok {
		return r
	}
	r := x.repairLine(p, ln)
	if r.skip {
		skipped(p, ln.Raw, &r)
	}
	return r
}

// scanned is work's fast path, for most lines: a complete line that Scan
// takes holds one JSON object, valid UTF-8 with no lone surrogate, no
// \u0000 escape and no NUL byte (one would be a syntax error), so no line
// repair applies and its header is all commit needs; Scan reads it without
// building the tree. Any other line gets repairLine.
func scanned(p *session.Parser, sh *session.Shaper, ln session.Line) (lineResult, bool) {
	if !ln.Terminated {
		return lineResult{}, false
	}
	r := lineResult{json: true, heads: make([]head, 1)}
	if _, ok := p.Scan(ln.Raw, sh, &r.heads[0].e); !ok {
		return lineResult{}, false
	}
	r.heads[0].ok = true
	r.titles = titleKinds(nil, &r.heads[0])
	return r, true
}

// repairLine is work's line repair.
func (x *fixer) repairLine(p *session.Parser, ln session.Line) lineResult {
	raw := ln.Raw
	if len(raw) == 0 && ln.Long == nil {
		if x.allow(validate.LineEmpty) {
			return lineResult{del: "remove an empty line"}
		}
		return lineResult{skip: true}
	}
	var r lineResult
	if bytes.IndexByte(raw, 0) >= 0 || ln.Long != nil && ln.Long.NULs > 0 {
		// (The skeleton of a long line, exact, is its bytes but for
		// its NUL bytes.)
		if !x.allow(validate.NULBytes) {
			return lineResult{skip: true}
		}
		raw = bytes.ReplaceAll(raw, []byte{0}, nil)
		if len(bytes.TrimSpace(raw)) == 0 {
			return lineResult{del: "drop NUL bytes: a line of NUL bytes only"}
		}
		r.changed = true
		r.reasons = append(r.reasons, "drop NUL bytes")
	}
	pr := p.Parse(raw)
	switch {
	case pr.Err != nil && pr.Err.Deep:
		// Valid JSON nested too deep to look into: data, kept as it is.
		return lineResult{skip: true}
	case pr.Err != nil && !ln.Terminated:
		if !x.allow(validate.LineTorn) {
			return lineResult{skip: true}
		}
		return lineResult{del: fmt.Sprintf("drop the torn last line: %s cut off mid-write, kept in the backup", plural.Count(ln.Len(), "byte")), removed: true, notJSON: true}
	case pr.Err != nil:
		if !x.allow(validate.JSONInvalid) {
			return lineResult{skip: true}
		}
		salvaged := session.Salvage(p, raw)
		if salvaged == nil {
			return lineResult{del: "move a line that is not JSON out of the file: it is kept in the backup", removed: true, notJSON: true}
		}
		r.recs, r.changed, r.removed = salvaged, true, true
		r.reasons = append(r.reasons, "drop a torn record glued to the next one: the complete record is kept")
	default:
		for _, sp := range pr.Spans {
			r.recs = append(r.recs, raw[sp[0]:sp[1]])
		}
		if len(pr.Spans) > 1 {
			if !x.allow(validate.LineGlued) {
				return lineResult{skip: true}
			}
			r.changed = true
			r.reasons = append(r.reasons, fmt.Sprintf("split %d records glued on one line", len(pr.Spans)))
		} else {
			r.recs[0] = raw // keep surrounding whitespace as it was
		}
		if !ln.Terminated && x.allow(validate.NoFinalNewline) {
			r.changed = true
			r.reasons = append(r.reasons, "add the final newline")
		}
	}
	for i, rec := range r.recs {
		if pr.Surrogates > 0 && x.allow(validate.SurrogateLone) {
			if nr, n := session.FixSurrogates(rec); n > 0 {
				r.recs[i], r.changed = nr, true
				r.reasons = append(r.reasons, "replace "+plural.Count(n, "lone surrogate escape")+" with \\ufffd")
			}
		}
		if pr.NULEscapes > 0 && x.allow(validate.NULEscape) {
			if nr, n := session.FixNULEscapes(r.recs[i]); n > 0 {
				r.recs[i], r.changed = nr, true
				r.reasons = append(r.reasons, "replace "+plural.Count(n, "\\u0000 escape")+" with \\ufffd")
			}
		}
		if pr.BadUTF8 >= 0 && x.allow(validate.UTF8Invalid) {
			if nr := session.FixUTF8(r.recs[i]); !bytes.Equal(nr, r.recs[i]) {
				r.recs[i], r.changed = nr, true
				r.reasons = append(r.reasons, "replace invalid UTF-8 with U+FFFD")
			}
		}
	}
	r.json = true
	// Header trees: the line's parse serves an unchanged single record.
	if len(r.recs) == 1 && !r.changed && pr.Err == nil {
		r.values = []any{pr.Value}
		r.recs = nil // the line's own bytes
		heads(&r)
		r.titles = titleKinds(r.titles, &r.heads[0])
		return r
	}
	if pr.Err == nil {
		var e head
		for _, v := range append([]any{pr.Value}, pr.More...) {
			e.ok = session.HeaderOf(v, &e.e)
			r.titles = titleKinds(r.titles, &e)
		}
	}
	for i, rec := range r.recs {
		r.recs[i] = append([]byte(nil), rec...)
		q := p.Parse(rec)
		var v any
		if q.Err == nil {
			v = q.Value
		}
		r.values = append(r.values, v)
	}
	heads(&r)
	return r
}

// longLine is work's line repair of a line longer than session.MaxLine
// whose skeleton is not its bytes (a string was cut): a fix can only take
// the whole line out (a torn last line, a line of no JSON); a line that
// holds entries is left as it is, and read from its skeleton; one that
// would need a fix of its bytes is left as it is, counted.
func (x *fixer) longLine(p *session.Parser, ln session.Line) lineResult {
	lg, raw := ln.Long, ln.Raw
	pr := p.Parse(raw)
	if lg.Partial {
		// Only a syntax error before the skeleton's end is sure.
		if pr.Err == nil || pr.Err.Deep || pr.Err.Offset >= len(raw) {
			return lineResult{skip: true, json: true}
		}
	}
	torn := pr.Err != nil && !pr.Err.Deep && !ln.Terminated
	switch {
	case pr.Err != nil && pr.Err.Deep:
		return lineResult{skip: true, json: true}
	case torn && x.allow(validate.LineTorn):
		return lineResult{del: fmt.Sprintf("drop the torn last line: %d bytes cut off mid-write, kept in the backup", lg.Size), removed: true, notJSON: true}
	case pr.Err != nil && ln.Terminated && x.allow(validate.JSONInvalid) && session.Salvage(p, raw) == nil:
		return lineResult{del: "move a line that is not JSON out of the file: it is kept in the backup", removed: true, notJSON: true}
	case pr.Err != nil:
		// Records glued to a torn one, which would be rewritten.
		x.unfixed[validate.LineLong]++
		return lineResult{skip: true, json: session.Salvage(p, raw) != nil}
	}
	needs := lg.NULs > 0 || len(pr.Spans) > 1 || pr.Surrogates > 0 || pr.NULEscapes > 0 || pr.BadUTF8 >= 0 ||
		!ln.Terminated && x.allow(validate.NoFinalNewline)
	r := lineResult{json: true}
	if needs {
		x.unfixed[validate.LineLong]++
		skipped(p, raw, &r)
		r.skip = true
		return r
	}
	r.values = []any{pr.Value}
	heads(&r)
	r.titles = titleKinds(r.titles, &r.heads[0])
	return r
}

// skipped fills in, for a line left as it is (a fault --only does not
// select), whether it holds JSON and the tool ids of its entries: a result
// or a call there is still in the file.
func skipped(p *session.Parser, raw []byte, r *lineResult) {
	raw = bytes.ReplaceAll(raw, []byte{0}, nil)
	var values []any
	pr := p.Parse(raw)
	if pr.Err == nil {
		values = append([]any{pr.Value}, pr.More...)
	} else {
		for _, rec := range session.Salvage(p, raw) {
			if q := p.Parse(rec); q.Err == nil {
				values = append(values, q.Value)
			}
		}
	}
	whole := len(values) > 0 && pr.Err == nil
	var hd head
	for _, v := range values {
		r.json = true
		if hd.ok = session.HeaderOf(v, &hd.e); hd.ok {
			r.uses, r.results = toolIDs(&hd.e, r.uses, r.results)
			if whole {
				r.titles = titleKinds(r.titles, &hd)
			}
		}
	}
}

// titleKinds appends whether the record of hd is a custom-title, when it
// is a custom-title or ai-title entry.
func titleKinds(kinds []bool, hd *head) []bool {
	if hd.ok && !hd.e.IsChain() && (hd.e.Type == "custom-title" || hd.e.Type == "ai-title") {
		kinds = append(kinds, hd.e.Type == "custom-title")
	}
	return kinds
}

// remember records tool_use and tool_result ids as present in the file.
func (x *fixer) remember(uses, results []string) {
	for _, id := range uses {
		x.useAnywhere[id] = true
	}
	for _, id := range results {
		x.resultAnywhere[id] = true
	}
}

// toolIDs appends the ids of an entry's tool_use and tool_result blocks.
func toolIDs(e *session.Entry, uses, results []string) ([]string, []string) {
	for _, b := range e.Blocks {
		switch b.Type {
		case "tool_use", "server_tool_use":
			uses = append(uses, b.ID)
		case "tool_result":
			results = append(results, b.ToolUseID)
		}
	}
	return uses, results
}

// heads fills r.heads from r.values.
func heads(r *lineResult) {
	r.heads = make([]head, len(r.values))
	for i, v := range r.values {
		hd := &r.heads[i]
		hd.ok = v != nil && session.HeaderOf(v, &hd.e)
	}
}

// commit records a line's result in file order: fixes, duplicates and the
// chain entries.
func (x *fixer) commit(ln session.Line, r lineResult, seen map[string]int) error {
	if r.json || len(r.values) > 0 {
		x.jsonLines++
	}
	x.remember(r.uses, r.results)
	// A line over session.MaxLine that is not read whole, and not
	// rewritten whole by a fix of its own (NUL bytes dropped).
	long := ln.Long != nil && !r.changed
	for _, custom := range r.titles {
		x.titles = validate.KeepTitles(x.titles, validate.TitleLine{Line: ln.N, Offset: ln.Offset, Len: int(ln.Len()), Custom: custom}, x.size)
	}
	if r.skip {
		return nil
	}
	if r.del != "" {
		if r.notJSON && ln.Terminated {
			x.badLines++
		}
		if r.removed {
			x.removed++
		}
		if x.extendRun(ln, r.del) {
			if r.notJSON {
				x.notJSON[len(x.notJSON)-1][1] = ln.N
			}
			return nil
		}
		if r.notJSON {
			x.notJSON = append(x.notJSON, [2]int{ln.N, ln.N})
			x.lost = append(x.lost, ln.N)
		}
		fx := x.fix(ln)
		fx.recs[0] = nil
		x.reason(ln.N, r.del)
		if len(fx.recs) == 1 {
			x.run = fx
		}
		return nil
	}
	recs := r.recs
	if r.changed {
		fx := x.fix(ln)
		fx.recs = recs
		for _, why := range r.reasons {
			x.reason(ln.N, why)
		}
		if r.removed {
			x.removed++
			x.lost = append(x.lost, ln.N)
		}
	}
	for i := range r.heads {
		hd := &r.heads[i]
		if !hd.ok {
			continue
		}
		x.entries++
		e := &hd.e
		x.remember(toolIDs(e, nil, nil))
		if !e.IsChain() {
			if e.Type == "last-prompt" && e.LeafUUID != "" {
				x.lastPrompt, x.lastPromptLine = e.LeafUUID, ln.N
			}
			if e.LeafUUID != "" {
				// Where the record is, to point it elsewhere should the
				// entry it names be removed: its line's bytes, or record
				// i of the line's fix.
				at := &session.Node{Line: ln.N, Rec: i, Off: ln.Offset, Len: int(ln.Len()), Terminated: ln.Terminated, Long: long}
				if x.leafRefs == nil {
					x.leafRefs = map[string][]*session.Node{}
				}
				x.leafRefs[e.LeafUUID] = append(x.leafRefs[e.LeafUUID], at)
			}
			continue
		}
		if e.Version != "" {
			x.version = e.Version // every chain entry, as validate reads it
		}
		if first, dup := seen[e.UUID]; dup && (long || x.nodes[first].Long) {
			// A line over session.MaxLine is never read whole: not
			// compared, never dropped.
			x.unfixed[validate.UUIDConflict]++
			continue
		} else if dup {
			// The first record is read back: uuids repeat rarely, so no
			// record is hashed in advance.
			prev, err := x.rec(&x.nodes[first])
			if err != nil {
				return err
			}
			rec := ln.Raw
			if r.recs != nil {
				rec = r.recs[i]
			}
			same := bytes.Equal(bytes.TrimSpace(prev), bytes.TrimSpace(rec))
			var fields []string
			replay := false
			if !same {
				// Written again by a resume or /branch, with only the
				// fields that say where it was written changed.
				fields, replay = validate.ReplayedFields(prev, rec)
				if !replay {
					x.unfixed[validate.UUIDConflict]++
				}
			}
			why := "drop an entry written twice, byte for byte"
			if replay {
				why = "drop an entry written again under its uuid, the first copy kept"
				if len(fields) > 0 {
					why += " (it differs only in " + strings.Join(fields, ", ") + ")"
				}
			}
			if same && x.allow(validate.UUIDDuplicate) || replay && x.allow(validate.UUIDReplayed) {
				fx := x.fix(ln)
				if !r.changed {
					fx.recs = [][]byte{append([]byte(nil), ln.Raw...)}
				}
				fx.recs[i] = nil
				x.removed++
				x.reason(ln.N, why)
			}
			continue
		}
		seen[e.UUID] = len(x.nodes)
		n := session.Node{UUID: e.UUID, Parent: e.Parent, Logical: e.LogicalParent, Line: ln.N, Rec: i,
			Time: e.Timestamp, Type: e.Type, Subtype: e.Subtype, Sidechain: e.IsSidechain, MsgID: e.MessageID, Model: e.Model,
			Off: ln.Offset, Len: int(ln.Len()), Terminated: ln.Terminated, Long: long, BlankOnly: session.BlankOnly(e.Blocks),
			BlankString: e.BlankString, EmptyString: e.EmptyString}
		for _, b := range e.Blocks {
			if session.KeepBlock(b) {
				n.Blocks = append(n.Blocks, b)
			}
		}
		if e.Type == "attachment" && len(r.heads) == 1 {
			rec := ln.Raw
			if r.recs != nil {
				rec = r.recs[i]
			}
			if x.attach == nil {
				x.attach = session.NewParser()
			}
			n.Attach = session.AttachmentFaults(x.attach, rec)
		}
		x.nodes = append(x.nodes, n)
	}
	return nil
}

// nowhere reports whether no other transcript of the store holds an entry
// with uuid u (the fixer's own file does not, or u would be no dangling
// parent).
func (x *fixer) nowhere(u string) bool {
	return x.elsewhere == nil || x.elsewhere(u) == ""
}

// graph returns the parentUuid graph of the nodes not removed, built
// again only after a node changed.
func (x *fixer) graph() (*session.Graph, []int) {
	if x.g != nil && !x.changed {
		return x.g, x.gIdx
	}
	g := session.NewGraphSize(len(x.nodes))
	idx := make([]int, 0, len(x.nodes)) // graph index → x.nodes index
	for i, n := range x.nodes {
		if x.deleted[i] {
			continue
		}
		if g.AddNode(n) {
			idx = append(idx, i)
		}
	}
	g.LastPrompt, g.LastPromptLine = x.lastPrompt, x.lastPromptLine
	x.g, x.gIdx, x.changed = g, idx, false
	return g, idx
}

// setParent points node i at parent ("" for null).
func (x *fixer) setParent(i int, parent, reason string) error {
	n := &x.nodes[i]
	raw, err := x.rec(n)
	if err != nil {
		return err
	}
	val := []byte("null")
	if parent != "" {
		val, _ = json.Marshal(parent)
	}
	nb, err := session.SetField(raw, "parentUuid", val)
	if err != nil {
		return err
	}
	n.Parent = parent
	return x.setRec(n, nb, reason)
}

// descends reports whether node j has node i among its ancestors, as the
// parents stand now: linking i to j would close a cycle.
func (x *fixer) descends(j, i int) bool {
	seen := map[int]bool{}
	for k := j; !seen[k]; {
		if k == i {
			return true
		}
		seen[k] = true
		p, ok := x.first[x.nodes[k].Parent]
		if !ok || x.nodes[k].Parent == "" {
			return false
		}
		k = p
	}
	return false
}

// before returns the entry written last before node i in file order, of
// i's chain (sidechain or not), that does not descend from node of; -1 when
// there is none.
func (x *fixer) before(i, of int) int {
	for j := i - 1; j >= 0; j-- {
		if x.deleted[j] || x.nodes[j].Sidechain != x.nodes[i].Sidechain || x.descends(j, of) {
			continue
		}
		return j
	}
	return -1
}

// relinkEvidence returns the line, removed because it was not JSON, that
// sits right before node i when the entries between them are of other
// chains (see otherChain), and how many entries it passed over; 0 when
// there is no such line.
func (x *fixer) relinkEvidence(i int) (line, passed int) {
	n := &x.nodes[i]
	firstRoot := -1 // the line of the first root an entry passed over goes back to
	j := i - 1
	for line, recs := n.Line, n.Rec; ; {
		// Every record of the line (before the child's, on its own line)
		// must be an entry of another chain.
		for ; j >= 0 && x.nodes[j].Line == line; j-- {
			if x.deleted[j] {
				return 0, 0
			}
			recs--
			root, ok := x.otherChain(j, i)
			if !ok {
				return 0, 0
			}
			if root > 0 && (firstRoot < 0 || root < firstRoot) {
				firstRoot = root
			}
			passed++
		}
		if recs != 0 {
			return 0, 0 // a record that is no chain entry
		}
		line--
		if line < 1 {
			return 0, 0
		}
		recs = x.records(line)
		if x.isNotJSON(line) {
			if firstRoot >= 0 && firstRoot <= line {
				return 0, 0 // a chain of this one's, begun before the line
			}
			return line, passed
		}
		if j < 0 || x.nodes[j].Line != line {
			return 0, 0 // a line with no chain entry: no evidence
		}
	}
}

// records returns how many records line n holds as the file is read: one,
// or those its line repair split it into.
func (x *fixer) records(n int) int {
	if fx, ok := x.fixes[n]; ok {
		return len(fx.recs)
	}
	return 1
}

// otherChain reports whether node j is of another chain than node i: a
// sidechain entry beside a main-chain one (or the reverse), or an entry
// that goes back to a root (parentUuid null); root is then that root's
// line (0 for a sidechain entry).
func (x *fixer) otherChain(j, i int) (root int, ok bool) {
	if x.nodes[j].Sidechain != x.nodes[i].Sidechain {
		return 0, true
	}
	seen := map[int]bool{}
	for k := j; !seen[k]; {
		seen[k] = true
		if x.nodes[k].Parent == "" {
			return x.nodes[k].Line, true
		}
		p, found := x.first[x.nodes[k].Parent]
		if !found {
			return 0, false
		}
		k = p
	}
	return 0, false
}

// remove drops node i and gives its children its parent, and the
// leafUuids naming it too (leafOver).
func (x *fixer) remove(i int, reason string) error {
	n := &x.nodes[i]
	if err := x.setRec(n, nil, reason); err != nil {
		return err
	}
	x.deleted[i] = true
	x.changed = true
	x.removed++
	for j := range x.nodes {
		if !x.deleted[j] && x.nodes[j].Parent == n.UUID {
			if err := x.setParent(j, n.Parent, "re-parent over a removed entry"); err != nil {
				return err
			}
		}
	}
	return x.leafOver(n.UUID, n.Parent)
}

// leafOver points the metadata records (last-prompt, summary) whose
// leafUuid names entry from, which the plan removes, at entry to: the
// nearest ancestor of from that stays, the entry from's children are
// linked to. Claude Code resumes (-r and -c alike) from the entry the
// last last-prompt names, and ignores one that names no entry: the resume
// then starts from the message written last, which after a rewind is on
// another branch (measured with 2.1.205 and 2.1.332). A removed root has
// no ancestor: its leafUuids are left, counted as leaf-missing.
func (x *fixer) leafOver(from, to string) error {
	refs := x.leafRefs[from]
	if len(refs) == 0 {
		return nil
	}
	if to == "" {
		x.unfixed[validate.LeafMissing] += len(refs)
		return nil
	}
	val, err := json.Marshal(to)
	if err != nil {
		return err
	}
	for _, at := range refs {
		raw, err := x.rec(at)
		if err != nil {
			return err
		}
		b, err := session.SetField(raw, "leafUuid", val)
		if err != nil {
			return err
		}
		if err := x.setRec(at, b, "point a leafUuid at the nearest ancestor of the entry it named, which goes"); err != nil {
			return err
		}
		if x.leafMoved == nil {
			x.leafMoved = map[int]bool{}
		}
		x.leafMoved[at.Line] = true
	}
	delete(x.leafRefs, from)
	x.leafRefs[to] = append(x.leafRefs[to], refs...)
	if x.lastPrompt == from {
		x.lastPrompt = to
	}
	return nil
}

// leafOverLost points the leafUuids naming an entry on a line that loses
// a record because it is not JSON (a torn line, a torn record glued to
// the next) at that entry's nearest ancestor: the entry its children are
// re-linked to (relinked, parent uuid → new parent), or else the
// parentUuid the line's bytes hold before the uuid (Claude Code writes
// parentUuid first), when the file holds that entry. Each such line is
// read once.
func (x *fixer) leafOverLost(relinked map[string]string) error {
	if len(x.leafRefs) == 0 || len(x.lost) == 0 {
		return nil
	}
	var names []string // leafUuids naming no entry of the file
	for u := range x.leafRefs {
		if _, ok := x.first[u]; !ok && u != "" {
			names = append(names, u)
		}
	}
	sort.Strings(names)
	want := map[string]bool{}
	for _, u := range names {
		if to, ok := relinked[u]; ok {
			if err := x.leafOver(u, to); err != nil {
				return err
			}
			continue
		}
		want[u] = true
	}
	key := []byte(`"uuid":"`)
	for _, line := range x.lost {
		if len(want) == 0 {
			break
		}
		fx := x.fixes[line]
		if fx.length > session.MaxLine {
			continue // never read whole: its leafUuids are left, counted
		}
		b := make([]byte, fx.length)
		if n, err := x.file.ReadAt(b, fx.off); n < len(b) {
			return err
		}
		for at := 0; ; {
			i := bytes.Index(b[at:], key)
			if i < 0 {
				break
			}
			i += at
			at = i + len(key)
			end := bytes.IndexByte(b[at:], '"')
			if end < 0 {
				break
			}
			u := string(b[at : at+end])
			if !want[u] {
				continue
			}
			delete(want, u)
			ls := bytes.LastIndexByte(b[:i], '\n') + 1 // a run of lines: this one's
			if j, ok := x.first[parentIn(b[ls:i])]; ok && !x.deleted[j] {
				if err := x.leafOver(u, x.nodes[j].UUID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// parentIn returns the value of the first "parentUuid" string field in
// the bytes of a record that is not JSON ("" for null or none).
func parentIn(b []byte) string {
	const key = `"parentUuid":`
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(b[i+len(key):], " ")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 || bytes.IndexByte(rest[1:1+end], '\\') >= 0 {
		return ""
	}
	return string(rest[1 : 1+end])
}

// chain runs the parentUuid repairs, then the tool and thinking repairs
// along the chain a resume loads.
func (x *fixer) chain() error {
	if len(x.nodes) == 0 || x.noChain || x.f.Side() {
		return nil // side runs' transcripts are never resumed
	}
	pos := x.first
	// Cycles: the entry whose parent comes later in the file is the wrong
	// link. It is linked the way Claude Code wrote the file: to the entry
	// written before it (of its chain: sidechain or not) that does not
	// descend from it; a root only when there is none. Made a root, the
	// entries before it would be cut off the chain a resume loads.
	if x.allow(validate.ParentSelf) || x.allow(validate.ChainCycle) {
		g, idx := x.graph()
		for _, cyc := range g.Cycles() {
			cut := -1
			for _, gi := range cyc {
				i := idx[gi]
				if p, ok := pos[x.nodes[i].Parent]; ok && p >= i {
					cut = i
					break
				}
			}
			if cut < 0 {
				cut = idx[cyc[0]]
			}
			code := validate.ChainCycle
			if len(cyc) == 1 {
				code = validate.ParentSelf
			}
			if !x.allow(code) {
				continue
			}
			prev := x.before(cut, cut)
			why := "break a parentUuid cycle: this entry becomes a root (no entry written before it that does not descend from it)"
			parent := ""
			if prev >= 0 {
				parent = x.nodes[prev].UUID
				why = fmt.Sprintf("break a parentUuid cycle: link to %s (line %d), the entry written before this one that does not descend from it, as the file order says Claude Code wrote them", parent, x.nodes[prev].Line)
			}
			if err := x.setParent(cut, parent, why); err != nil {
				return err
			}
		}
	}
	// A parent written nowhere whose child sits right after a line that
	// was not JSON (and goes) was on that line: the child is linked to the
	// entry before it, as the removed line was. Entries of other chains
	// between them (a Task's sidechain, which 1.0.x writes between the
	// tool_use and its result; another root) do not count. A parent in
	// another transcript is a link Claude Code wrote, never touched; other
	// parents written nowhere are re-parented only with --aggressive, a
	// guess.
	relinked := map[string]string{} // parent on a line that goes → the entry its children are linked to
	if x.allow(validate.ParentMissing) {
		g, idx := x.graph()
		for _, gi := range g.Dangling() {
			i := idx[gi]
			n := &x.nodes[i]
			removed, passed := x.relinkEvidence(i)
			evidence := removed > 0
			if !evidence && !x.aggressive {
				if x.nowhere(n.Parent) {
					x.unfixed[validate.ParentMissing]++
				}
				continue
			}
			if !x.nowhere(n.Parent) {
				continue
			}
			// The entry before, unless it descends from this one: the link
			// would close a cycle (lines out of order). The evidence names
			// the entry right before the removed line; a guess takes the
			// nearest other.
			from := i
			if evidence {
				for from > 0 && x.nodes[from-1].Line >= removed {
					from--
				}
			}
			prev, closes := "", false
			for j := from - 1; j >= 0; j-- {
				if x.deleted[j] || x.nodes[j].Sidechain != n.Sidechain {
					continue
				}
				if x.descends(j, i) {
					closes = true
					continue
				}
				prev = x.nodes[j].UUID
				break
			}
			if closes && (!x.aggressive || prev == "") {
				x.unfixed[validate.ParentMissing]++
				continue
			}
			why := "re-parent an entry whose parent was never written to the previous entry (a guess: --aggressive)"
			if evidence {
				why = fmt.Sprintf("re-link to the entry before: its parent was on line %d, which was not JSON and goes", removed)
				if passed > 0 {
					why += fmt.Sprintf(" (the %s between %s of other chains: a sidechain or another root)", plural.Count(passed, "entry"), map[bool]string{true: "is", false: "are"}[passed == 1])
				}
			}
			if evidence && prev != "" {
				relinked[n.Parent] = prev
			}
			if err := x.setParent(i, prev, why); err != nil {
				return err
			}
		}
	} else if g, _ := x.graph(); len(g.Dangling()) > 0 {
		for _, gi := range g.Dangling() {
			if x.nowhere(g.Nodes[gi].Parent) {
				x.unfixed[validate.ParentMissing]++
			}
		}
	}
	if err := x.leafOverLost(relinked); err != nil {
		return err
	}
	if x.aggressive && x.allow(Progress) && x.moreThanProgress() {
		for i := range x.nodes {
			if x.deleted[i] || x.nodes[i].Type != "progress" {
				continue
			}
			x.saved += int64(x.nodes[i].Len)
			if err := x.remove(i, "drop a progress entry, bridging parentUuid over it (--aggressive)"); err != nil {
				return err
			}
		}
	}
	return x.resumed()
}

// moreThanProgress reports whether a chain entry that is not progress
// stays: a transcript of progress entries alone (a SessionStart hook's,
// 2.1.7x) keeps them, or dropping them would leave it empty.
func (x *fixer) moreThanProgress() bool {
	for i := range x.nodes {
		if !x.deleted[i] && x.nodes[i].Type != "progress" {
			return true
		}
	}
	return false
}

// resumed fixes tool pairing and thinking blocks on the chain the writing
// version's client loads on resume (validate's model of it).
func (x *fixer) resumed() error {
	g, idx := x.graph()
	l := session.LoaderFor(x.version)
	ld := g.Load(l, x.f.Kind != store.KindSession)
	// A tool_use whose result is anywhere in the file is never given
	// another one: the real result would be shadowed.
	resultAnywhere, useAnywhere := x.resultAnywhere, x.useAnywhere
	used := map[string]bool{}
	type pending struct {
		node int
		ids  []string
	}
	var unanswered []pending
	answered := map[string]bool{}
	orphan := map[int][]string{} // node → tool_use_ids without a tool_use
	thinking := map[int]bool{}   // node → has a bad thinking block
	useNode := map[string]int{}  // tool_use id → node
	for _, gi := range ld.Chain {
		i := idx[gi]
		for _, b := range x.nodes[i].Blocks {
			switch b.Type {
			case "tool_use":
				if b.ID != "" && !used[b.ID] {
					used[b.ID] = true
					useNode[b.ID] = i
				}
			case "tool_result":
				switch {
				case used[b.ToolUseID]:
					answered[b.ToolUseID] = true
				case useAnywhere[b.ToolUseID]:
					// Its call is on another branch: a real result, kept.
					x.unfixed[validate.ToolUseMiss]++
				case l.DropsOrphanResults:
					// The client that wrote it drops it when it resumes (the
					// request is accepted): a real result, kept in the file.
					x.dropped++
				default:
					orphan[i] = append(orphan[i], b.ToolUseID)
				}
			case "thinking":
				// A signed block with empty text is how newer clients keep
				// omitted thinking, and a model that is not Anthropic's
				// never signs: only an empty signature of Claude's own is
				// broken.
				if b.EmptySig && !validate.ThirdPartyModel(x.nodes[i].Model) && x.allow(validate.ThinkingUnsigned) {
					thinking[i] = true
				}
			}
		}
	}
	for _, gi := range ld.Chain {
		i := idx[gi]
		var ids []string
		for _, b := range x.nodes[i].Blocks {
			if b.Type == "tool_use" && b.ID != "" && useNode[b.ID] == i && !answered[b.ID] && !resultAnywhere[b.ID] {
				ids = append(ids, b.ID)
			}
		}
		if len(ids) > 0 {
			unanswered = append(unanswered, pending{i, ids})
		}
	}
	for id := range used {
		if !answered[id] && resultAnywhere[id] {
			x.unfixed[validate.ToolResultMiss]++
		}
	}
	if x.allow(validate.ToolUseMiss) {
		for _, gi := range ld.Chain {
			i := idx[gi]
			if ids := orphan[i]; len(ids) > 0 {
				drop := map[string]bool{}
				for _, id := range ids {
					drop[id] = true
				}
				if err := x.dropBlocks(i, func(b map[string]any) bool {
					id, _ := b["tool_use_id"].(string)
					return b["type"] == "tool_result" && drop[id]
				}, "remove a tool_result that answers no tool_use: "+strings.Join(ids, ", ")); err != nil {
					return err
				}
			}
		}
	}
	if len(thinking) > 0 {
		for _, gi := range ld.Chain {
			i := idx[gi]
			if !thinking[i] || x.deleted[i] {
				continue
			}
			if err := x.dropBlocks(i, func(b map[string]any) bool {
				if b["type"] != "thinking" {
					return false
				}
				sig, _ := b["signature"].(string)
				return sig == ""
			}, "strip a thinking block with an empty signature"); err != nil {
				return err
			}
		}
	}
	if x.allow(validate.ToolResultMiss) {
		for _, p := range unanswered {
			if err := x.addResult(p.node, p.ids); err != nil {
				return err
			}
		}
	}
	if err := x.attachments(l); err != nil {
		return err
	}
	if err := x.blankText(l); err != nil {
		return err
	}
	return x.serverSplits(l)
}

// dropBlocks removes the content blocks of node i that drop selects; an
// entry left with no content is removed and its children re-parented.
func (x *fixer) dropBlocks(i int, drop func(map[string]any) bool, reason string) error {
	n := &x.nodes[i]
	raw, err := x.rec(n)
	if err != nil {
		return err
	}
	ms, _, ok := session.Find(raw, "message")
	if !ok {
		return nil
	}
	cs, ce, ok := session.Find(raw[ms:], "content")
	if !ok {
		return nil
	}
	cs, ce = cs+ms, ce+ms
	elems, _, err := session.Elements(raw, cs)
	if err != nil {
		return nil
	}
	var kept [][]byte
	for _, el := range elems {
		var b map[string]any
		if json.Unmarshal(raw[el[0]:el[1]], &b) == nil && drop(b) {
			continue
		}
		kept = append(kept, raw[el[0]:el[1]])
	}
	if len(kept) == len(elems) {
		return nil
	}
	if len(kept) == 0 {
		return x.remove(i, reason+"; the entry is left empty and removed")
	}
	arr := append([]byte{'['}, bytes.Join(kept, []byte(","))...)
	arr = append(arr, ']')
	return x.setRec(n, session.Replace(raw, cs, ce, arr), reason)
}

// ResultText is the text of the tool_result cfix adds for a tool_use that
// has none.
const ResultText = "The tool run was interrupted and no result was recorded (added by cfix repair)."

// addResult chains a user entry with error tool_results for ids right
// after node i, and gives it node i's children.
func (x *fixer) addResult(i int, ids []string) error {
	n := &x.nodes[i]
	raw, err := x.rec(n)
	if err != nil {
		return err
	}
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	str := func(k string) string { s, _ := a[k].(string); return s }
	uuid := derivedUUID(n.UUID, ids)
	ts := str("timestamp")
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.Add(time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	type result struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	}
	entry := struct {
		ParentUUID  string `json:"parentUuid"`
		IsSidechain bool   `json:"isSidechain"`
		UserType    string `json:"userType,omitempty"`
		CWD         string `json:"cwd,omitempty"`
		SessionID   string `json:"sessionId"`
		Version     string `json:"version,omitempty"`
		GitBranch   string `json:"gitBranch,omitempty"`
		AgentID     string `json:"agentId,omitempty"`
		Type        string `json:"type"`
		Message     struct {
			Role    string   `json:"role"`
			Content []result `json:"content"`
		} `json:"message"`
		UUID          string `json:"uuid"`
		Timestamp     string `json:"timestamp"`
		ToolUseResult string `json:"toolUseResult"`
		SourceTool    string `json:"sourceToolAssistantUUID"`
	}{ParentUUID: n.UUID, UserType: str("userType"), CWD: str("cwd"), SessionID: str("sessionId"),
		Version: str("version"), GitBranch: str("gitBranch"), AgentID: str("agentId"), Type: "user",
		UUID: uuid, Timestamp: ts, ToolUseResult: "Error: " + ResultText, SourceTool: n.UUID}
	entry.IsSidechain, _ = a["isSidechain"].(bool)
	entry.Message.Role = "user"
	for _, id := range ids {
		entry.Message.Content = append(entry.Message.Content, result{"tool_result", id, ResultText, true})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(entry); err != nil {
		return err
	}
	rec := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// Children of the tool_use entry now follow the new result.
	for j := range x.nodes {
		if j != i && !x.deleted[j] && x.nodes[j].Parent == n.UUID {
			if err := x.setParent(j, uuid, "follow the tool_result added for an interrupted tool call"); err != nil {
				return err
			}
		}
	}
	if _, ok := x.fixes[n.Line]; !ok {
		x.fixAt(n.Line, n.Off, int64(n.Len), raw, n.Terminated, false)
	}
	fx := x.fixes[n.Line]
	// Insert after the record (and after records inserted there before).
	at := n.Rec + 1
	fx.recs = append(fx.recs[:at], append([][]byte{rec}, fx.recs[at:]...)...)
	for j := range x.nodes {
		if x.nodes[j].Line == n.Line && x.nodes[j].Rec >= at {
			x.nodes[j].Rec++
		}
	}
	for _, refs := range x.leafRefs {
		for _, r := range refs {
			if r.Line == n.Line && r.Rec >= at {
				r.Rec++
			}
		}
	}
	x.reason(n.Line, "add an error tool_result for a tool_use that has none: "+strings.Join(ids, ", "))
	x.added++
	x.changed = true
	x.nodes = append(x.nodes, session.Node{UUID: uuid, Parent: n.UUID, Line: n.Line, Rec: at, Time: ts, Type: "user",
		Sidechain: entry.IsSidechain, Off: n.Off, Len: len(rec), Terminated: true})
	return nil
}

// derivedUUID makes the uuid of an added entry from what it answers, so the
// same plan made twice is the same.
func derivedUUID(parent string, ids []string) string {
	h := sha256.Sum256([]byte(parent + "\x00" + strings.Join(ids, "\x00")))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
