package validate

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/schemas"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// checker holds one worker's reusable state.
type checker struct {
	parser *session.Parser
	schema *schemas.Cache
	buf    []byte
	slugs  bool            // read the plan slugs user entries name (see Run)
	vals   []valueResult   // work's values of the line before, reused
	attach *session.Parser // reads attachment entries (AttachmentFaults)
	client string          // the version of the resuming client ("": the writer's)
}

func newChecker() *checker {
	p := session.NewParser()
	p.TopKeys = topKeys
	return &checker{parser: p, schema: schemas.NewCache(), slugs: true}
}

// topKeys are the top-level fields the checks and schemas read; the parser
// drops the others (tool outputs, attachments, API request shapes).
var topKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range schemas.Keys() {
		m[k] = true
	}
	for _, k := range session.HeaderKeys {
		m[k] = true
	}
	return m
}()

// leafRef is a leafUuid found in a metadata entry.
type leafRef struct {
	uuid string
	line int
	typ  string
}

// fileResult is what checking one transcript yields for the store-level
// checks, beside its own findings.
type fileResult struct {
	file      store.File
	findings  []Finding
	uuids     []string  // chain entry uuids
	leafs     []leafRef // leafUuids of metadata entries not found in this file
	cwds      []string  // the distinct cwds of its entries (a file has a few)
	lines     int
	chain     int    // chain entries
	messages  int    // user and assistant entries
	metaOnly  bool   // has lines, all of them metadata entries
	sessionID string // first sessionId seen
	otherID   string // the one session id every entry carries, when not the file's own
	noOwnID   bool   // entries carry session ids, none the file's own
	relocated string // the relocatedCwd of the last relocated entry
	cwd       string // first cwd seen
	firstLine int    // line of the first chain entry
	version   string // version of the last chain entry: the client that wrote it last
	judge     string // the version whose resume the chain checks model
	// writerOnly holds the findings the writer's client gives and the
	// judge's does not.
	writerOnly []Finding
	loader     session.Loader
	dangling   []dangling     // entries whose parent is not in the file
	jsonLines  int            // lines that parsed as JSON
	resultAt   map[string]int // tool_use id → first line holding a tool_result for it
	titles     []TitleLine    // custom-title and ai-title lines titleGap looks at (KeepTitles), in file order
	slugs      []string       // plan slugs the entries name (see store.Plans)
	slugSeen   map[string]bool
	cap        findingCap
}

// add records a finding with the code's default severity: the first
// MaxPerCode of its code; the others are counted (see findingCap).
func (r *fileResult) add(code Code, line int, format string, args ...any) *Finding {
	if !r.cap.admit(r.file.Path, code) {
		return r.cap.hold(Finding{Code: code, Severity: SeverityOf(code), Path: r.file.Path, Line: line})
	}
	r.findings = append(r.findings, Finding{Code: code, Severity: SeverityOf(code),
		Path: r.file.Path, Line: line, Message: fmt.Sprintf(format, args...)})
	return &r.findings[len(r.findings)-1]
}

// done adds the findings that stand for those not kept.
func (r *fileResult) done() *fileResult {
	r.findings = append(r.findings, r.cap.finish()...)
	return r
}

// lineFinding is a finding of one line, before it is given its file.
type lineFinding struct {
	code Code
	msg  string
	warn bool // a warning, whatever the code's severity
}

// valueResult is what the per-line work made of one record of a line.
type valueResult struct {
	object    bool
	entry     session.Entry
	schemaErr error
	hasSchema bool
}

// lineResult is what the per-line work found on one line.
type lineResult struct {
	findings []lineFinding
	values   []valueResult
	// salvageable: the line is not JSON, but complete entries follow a
	// torn record on it.
	salvageable bool
}

// work runs the checks of one line that need nothing but the line, so big
// files are checked on several cores. p and cache belong to the caller;
// into, when not nil, is room for the values (the results of a line done
// with), reused with the blocks its first entry held.
func work(p *session.Parser, cache *schemas.Cache, ln session.Line, into []valueResult) lineResult {
	r := lineResult{values: into[:0]}
	add := func(code Code, format string, args ...any) {
		r.findings = append(r.findings, lineFinding{code: code, msg: fmt.Sprintf(format, args...)})
	}
	raw := ln.Raw
	lg := ln.Long
	if len(raw) == 0 && lg == nil {
		add(LineEmpty, "empty line")
		return r
	}
	if lg != nil {
		// Longer than session.MaxLine: raw is its skeleton, which holds
		// no NUL byte (see session.Long).
		if lg.NULs > 0 && !lg.Partial && len(bytes.TrimSpace(raw)) == 0 {
			add(NULBytes, "line holds only NUL bytes (%d)", lg.NULs)
			return r
		}
		if lg.NULs > 0 {
			add(NULBytes, "line holds %d NUL bytes (first at column %d)", lg.NULs, lg.FirstNUL+1)
		}
		switch {
		case lg.Partial:
			add(LineLong, "%s, over the %s cfix reads whole, whose structure alone (strings cut to %d KB) is over %s: not checked",
				lg.Describe(), session.MB(session.MaxLine), session.KeepString>>10, session.MB(session.MaxSkeleton))
			r.findings[len(r.findings)-1].warn = true
		case !lg.Exact:
			add(LineLong, "%s, over the %s cfix reads whole: checked as it streamed past, from its skeleton (strings cut to %d KB; the columns below are the skeleton's)",
				lg.Describe(), session.MB(session.MaxLine), session.KeepString>>10)
		}
		return workLong(p, cache, ln, raw, r)
	}
	// Most lines hold one sound object of a shape seen before: Scan reads
	// its header and shape without building its tree, and the cache knows
	// the schema's answer. Anything else takes the full parse below. A
	// NUL byte is no JSON anywhere in a line, so Scan takes no line that
	// holds one: the line is looked at for them only when Scan leaves it,
	// and scanned again without them.
	var blocks []session.Block
	if cap(into) > 0 {
		blocks = into[:1][0].entry.Blocks[:0]
	}
	for nul := false; ; nul = true {
		vr := valueResult{entry: session.Entry{Blocks: blocks}}
		if shape, ok := p.Scan(raw, cache.Shaper(), &vr.entry); ok {
			vr.object = true
			known := true
			if vr.entry.Type != "" {
				if vr.hasSchema = schemas.Has(vr.entry.Type); vr.hasSchema {
					known, vr.schemaErr = cache.Known(vr.entry.Type, shape)
				}
			}
			if known {
				if !ln.Terminated {
					add(NoFinalNewline, "last line has no final newline")
				}
				r.values = append(r.values, vr)
				return r
			}
		}
		if nul || bytes.IndexByte(raw, 0) < 0 {
			break
		}
		clean := bytes.ReplaceAll(raw, []byte{0}, nil)
		n := len(raw) - len(clean)
		if len(bytes.TrimSpace(clean)) == 0 {
			add(NULBytes, "line holds only NUL bytes (%d)", n)
			return r
		}
		add(NULBytes, "line holds %s (first at column %d)", plural.Count(n, "NUL byte"), bytes.IndexByte(raw, 0)+1)
		raw = clean
	}
	return parsed(p, cache, ln, raw, r)
}

// workLong is work's check of a line longer than session.MaxLine, from its
// skeleton raw: as a line that holds no NUL byte, but that one whose
// skeleton is partial has only its syntax checked, up to where the
// skeleton ends.
func workLong(p *session.Parser, cache *schemas.Cache, ln session.Line, raw []byte, r lineResult) lineResult {
	if !ln.Long.Partial {
		if len(raw) == 0 {
			r.findings = append(r.findings, lineFinding{code: LineEmpty, msg: "empty line"})
			return r
		}
		var e session.Entry
		if shape, ok := p.Scan(raw, cache.Shaper(), &e); ok {
			vr := valueResult{object: true, entry: e}
			known := true
			if e.Type != "" {
				if vr.hasSchema = schemas.Has(e.Type); vr.hasSchema {
					known, vr.schemaErr = cache.Known(e.Type, shape)
				}
			}
			if known {
				if !ln.Terminated {
					r.findings = append(r.findings, lineFinding{code: NoFinalNewline, msg: "last line has no final newline"})
				}
				r.values = append(r.values, vr)
				return r
			}
		}
		return parsed(p, cache, ln, raw, r)
	}
	pr := p.Parse(raw)
	if pr.Err == nil || pr.Err.Deep || pr.Err.Offset >= len(raw) {
		return r // the skeleton ends before the line's syntax does
	}
	if !ln.Terminated {
		r.findings = append(r.findings, lineFinding{code: LineTorn, msg: fmt.Sprintf("last line is cut off after %d bytes (%s)", ln.Len(), pr.Err.Msg)})
	} else {
		r.findings = append(r.findings, lineFinding{code: JSONInvalid, msg: fmt.Sprintf("invalid JSON at column %d: %s", pr.Err.Offset+1, pr.Err.Msg)})
	}
	return r
}

// parsed is the end of work: the checks of a line Scan did not take, or
// of one of its records Scan took that the schema cache does not know,
// from the light tree of raw (a line without NUL bytes).
func parsed(p *session.Parser, cache *schemas.Cache, ln session.Line, raw []byte, r lineResult) lineResult {
	add := func(code Code, format string, args ...any) {
		r.findings = append(r.findings, lineFinding{code: code, msg: fmt.Sprintf(format, args...)})
	}
	pr := p.Parse(raw)
	if pr.Err != nil && pr.Err.Deep {
		// Valid JSON, too deep to look into: data, kept as it is.
		add(LineTooDeep, "line nests deeper than %d levels (from column %d): its syntax is checked, nothing in it", session.MaxNesting, pr.Err.Offset+1)
		if !ln.Terminated {
			add(NoFinalNewline, "last line has no final newline")
		}
		return r
	}
	if pr.Err != nil {
		if !ln.Terminated {
			n := int64(len(raw))
			if ln.Long != nil {
				n = ln.Long.Size
			}
			add(LineTorn, "last line is cut off after %s (%s)", plural.Count(n, "byte"), pr.Err.Msg)
		} else {
			add(JSONInvalid, "invalid JSON at column %d: %s", pr.Err.Offset+1, pr.Err.Msg)
			// A torn record with complete ones glued after it: the line
			// still holds entries (repair keeps them).
			r.salvageable = session.Salvage(p, raw) != nil
		}
		return r
	}
	if !ln.Terminated {
		add(NoFinalNewline, "last line has no final newline")
	}
	if pr.GluedAt >= 0 {
		add(LineGlued, "%d records on one line (the second starts at column %d)", len(pr.More)+1, pr.GluedAt+1)
	}
	if pr.BadUTF8 >= 0 {
		add(UTF8Invalid, "invalid UTF-8 at column %d", pr.BadUTF8+1)
	}
	if pr.Surrogates > 0 {
		add(SurrogateLone, "%s, the first at column %d", plural.Count(pr.Surrogates, "lone surrogate escape"), pr.SurrogateOff+1)
	}
	if pr.NULEscapes > 0 {
		// Measured: every client, resuming such a line or writing it in a
		// live session (Bash output holding NUL bytes), sends the escape
		// as it is and the request is accepted; #94055's cut body was not
		// reproduced. Hence a warning.
		add(NULEscape, "%s, the first at column %d", plural.Count(pr.NULEscapes, "\\u0000 escape"), pr.NULEscapeOff+1)
	}
	values := append([]any{pr.Value}, pr.More...)
	for _, v := range values {
		var vr valueResult
		if vr.object = session.HeaderOf(v, &vr.entry); vr.object && vr.entry.Type != "" {
			if vr.hasSchema = schemas.Has(vr.entry.Type); vr.hasSchema {
				vr.schemaErr = cache.Validate(vr.entry.Type, v)
			}
		}
		vr.entry.Content = nil // not needed past here; let the tree go
		r.values = append(r.values, vr)
		if !vr.object {
			add(EntryNotObject, "line is a JSON %s, not an object", jsonKind(v))
		}
	}
	return r
}

// maxUnknownTypes is how many entry types with no schema a file gets
// named; entries of others are counted together.
const maxUnknownTypes = 64

// bigFile is the size from which a file's lines are checked on several
// cores (smaller files are checked in parallel with each other).
var bigFile int64 = 32 << 20

// check streams one transcript and runs the line, entry and chain checks.
func (c *checker) check(f store.File) *fileResult {
	res := &fileResult{file: f, resultAt: map[string]int{}}
	fh, err := rfile.Open(f.Path)
	if err != nil {
		res.add(ReadFailed, 0, "%v", err)
		return res
	}
	defer fh.Close()

	// Room for about the entries a file of this size holds (lines of at
	// least half a KB), so the graph seldom grows while it fills.
	g := session.NewGraphSize(int(min(f.Size/512, 1<<16)))
	unknown := map[string][2]int{} // type → {first line, count}
	var otherTypes [3]int          // past maxUnknownTypes: {types, first line, count}
	cwdSeen := map[string]bool{}
	metaLines, entries := 0, 0
	var cwdMatch, cwdOther int
	lastCWD, lastMatch := "", false
	firstOther := 0
	var ids idTally
	agentOther, agentSessOther := 0, 0

	commit := func(ln session.Line, r lineResult) error {
		res.lines = ln.N
		if len(r.values) > 0 || r.salvageable {
			res.jsonLines++
		}
		for _, fd := range r.findings {
			if f := res.add(fd.code, ln.N, "%s", fd.msg); fd.warn {
				f.Severity = Warning
			}
		}
		for i := range r.values {
			vr := &r.values[i]
			if !vr.object {
				continue
			}
			e := &vr.entry
			entries++
			if e.Type == "" {
				res.add(TypeMissing, ln.N, "entry has no \"type\" field")
				continue
			}
			if vr.hasSchema {
				if vr.schemaErr != nil {
					fd := res.add(SchemaInvalid, ln.N, "%s entry: %v", e.Type, vr.schemaErr)
					if e.Type != "user" && e.Type != "assistant" {
						// The loader skips what it cannot use of other
						// entries; only a malformed message breaks a resume.
						fd.Severity = Warning
					}
				}
			} else if u, ok := unknown[e.Type]; ok || len(unknown) < maxUnknownTypes {
				if u[1] == 0 {
					u[0] = ln.N
				}
				u[1]++
				unknown[e.Type] = u
			} else {
				// A type per line is no store Claude Code wrote: counted,
				// not kept.
				if otherTypes[2] == 0 {
					otherTypes[1] = ln.N
				}
				otherTypes[2]++
			}
			if res.sessionID == "" && e.SessionID != "" {
				res.sessionID = e.SessionID
			}
			if !e.IsChain() {
				g.Meta(e, ln.N)
				metaLines++
				if e.Type == "relocated" {
					if cwd := session.RelocatedCWD(ln.Raw); cwd != "" {
						res.relocated = cwd
					}
				}
				if e.Type == "custom-title" || e.Type == "ai-title" {
					res.titles = KeepTitles(res.titles, TitleLine{Line: ln.N, Offset: ln.Offset, Len: int(ln.Len()), Custom: e.Type == "custom-title"}, f.Size)
				}
				if e.LeafUUID != "" {
					res.leafs = append(res.leafs, leafRef{uuid: e.LeafUUID, line: ln.N, typ: e.Type})
				}
				c.entryIDs(res, e, ln.N, &ids, &agentOther, &agentSessOther)
				continue
			}
			res.chain++
			if e.Version != "" {
				res.version = e.Version
			}
			if res.firstLine == 0 {
				res.firstLine = ln.N
			}
			if e.Type == "user" || e.Type == "assistant" {
				res.messages++
			}
			if c.slugs && e.Type == "user" {
				res.addSlugs(ln.Raw)
			}
			for _, b := range e.Blocks {
				if b.Type == "tool_result" && b.ToolUseID != "" {
					if _, ok := res.resultAt[b.ToolUseID]; !ok {
						res.resultAt[b.ToolUseID] = ln.N
					}
				}
			}
			if !g.Add(e, ln.N) {
				fn := &g.Nodes[g.Lookup(e.UUID)]
				first := fn.Line
				if len(r.values) == 1 && sameLine(fh, fn, ln.Raw) {
					res.add(UUIDDuplicate, ln.N, "entry %s repeats line %d byte for byte", e.UUID, first)
				} else if fields, ok := replayed(fh, fn, ln, len(r.values)); ok {
					res.add(UUIDReplayed, ln.N, "entry %s repeats line %d, %s (written again by a resume or /branch); resume shows it twice", e.UUID, first, fieldsDiffer(fields))
				} else {
					res.add(UUIDConflict, ln.N, "uuid %s is also used by a different entry on line %d", e.UUID, first)
				}
				continue
			}
			if len(r.values) == 1 {
				nd := &g.Nodes[len(g.Nodes)-1]
				if ln.Long == nil {
					// Where the record is, to read it back should its
					// uuid come again (rarely); not a line over
					// session.MaxLine, which is never read whole.
					nd.Off, nd.Len = ln.Offset, len(ln.Raw)
				}
				if e.Type == "attachment" {
					if c.attach == nil {
						c.attach = session.NewParser()
					}
					nd.Attach = session.AttachmentFaults(c.attach, ln.Raw)
				}
			}
			res.uuids = append(res.uuids, e.UUID)
			if e.CWD != "" {
				if res.cwd == "" {
					res.cwd = e.CWD
				}
				if e.CWD != lastCWD {
					// A file's entries share a few cwds: encode each once.
					lastCWD, lastMatch = e.CWD, store.FolderMatches(f.Project, e.CWD)
					if !cwdSeen[e.CWD] {
						cwdSeen[e.CWD] = true
						res.cwds = append(res.cwds, e.CWD)
					}
				}
				if lastMatch {
					cwdMatch++
				} else {
					if cwdOther == 0 {
						firstOther = ln.N
					}
					cwdOther++
				}
			}
			c.entryIDs(res, e, ln.N, &ids, &agentOther, &agentSessOther)
		}
		return nil
	}
	var readErr error
	if f.Size >= bigFile {
		readErr = session.Pipeline(fh, 0, func() func(session.Line) lineResult {
			p := session.NewParser()
			p.TopKeys = topKeys
			cache := schemas.NewCache()
			return func(ln session.Line) lineResult { return work(p, cache, ln, nil) }
		}, commit)
	} else {
		rd := session.NewReader(fh, c.buf)
		for rd.Next() {
			ln := rd.Line()
			r := work(c.parser, c.schema, ln, c.vals)
			commit(ln, r)
			c.vals = r.values
		}
		c.buf = rd.Buffer()
		readErr = rd.Err()
	}
	if readErr != nil {
		res.add(ReadFailed, res.lines, "read stopped: %v", readErr)
	}
	res.metaOnly = entries > 0 && metaLines == entries
	idFindings(res, ids)
	if notJSONL(res) {
		return res
	}

	types := make([]string, 0, len(unknown))
	for t := range unknown {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		u := unknown[t]
		res.add(TypeUnknown, u[0], "entry type %q has no schema in this version of cfix (%s)", t, plural.Count(u[1], "entry"))
	}
	if otherTypes[2] > 0 {
		res.add(TypeUnknown, otherTypes[1], "%d more entries of other types with no schema in this version of cfix (the first %d types are named)", otherTypes[2], maxUnknownTypes)
	}
	if cwdOther > 0 {
		have := map[bool]string{true: "has", false: "have"}[cwdOther == 1]
		fd := res.add(CWDMismatch, firstOther, "%d of %s %s a cwd that does not encode to folder %s", cwdOther, plural.Count(cwdOther+cwdMatch, "entry"), have, f.Project)
		switch {
		case res.relocated != "" && store.FolderMatches(f.Project, res.relocated):
			// Claude Code moved the transcript here itself (a worktree
			// entered or left, /cd) and lists it under relocatedCwd.
			fd.Severity = Notice
			fd.Message += fmt.Sprintf(" (the session was relocated here: its relocated entry names %s, the directory Claude Code lists and resumes it from)", res.relocated)
		case cwdMatch > 0:
			fd.Severity = Notice
			fd.Message += " (the session continued from another directory)"
		}
	}
	// Unresolved leafUuids are resolved against the whole store later.
	kept := res.leafs[:0]
	for _, l := range res.leafs {
		if !g.Has(l.uuid) {
			kept = append(kept, l)
		}
	}
	res.leafs = kept
	judgeChain(res, g, c.client)
	judgeSurrogates(res)
	return res
}

// judgeSurrogates gives the surrogate-lone findings of a file the verdict
// of the client that will resume it: an error when it sends the escape
// (the API answers 400 on every resume), a warning when it sends U+FFFD in
// its place (2.1.132 and later). The writing version's verdict, where it
// differs, is kept on the finding.
func judgeSurrogates(res *fileResult) {
	judge, writer := SendsOf(res.judge), SendsOf(res.version)
	res.cap.settle()
	for i := range res.cap.order {
		// Those past the first MaxPerCode, counted.
		if f := &res.cap.order[i]; f.Code == SurrogateLone && !judge.LoneSurrogates {
			f.Severity = Warning
		}
	}
	for i := range res.findings {
		f := &res.findings[i]
		if f.Code != SurrogateLone {
			continue
		}
		if judge.LoneSurrogates {
			f.Message += fmt.Sprintf("; Claude Code %s sends it and the API answers 400 (no low surrogate in string) on every resume", judge.Name)
		} else {
			f.Severity = Warning
			f.Message += fmt.Sprintf("; Claude Code %s sends U+FFFD in its place (2.1.131 and older send it and the API answers 400)", judge.Name)
		}
		if res.version != "" && writer.LoneSurrogates != judge.LoneSurrogates {
			w := Warning
			if writer.LoneSurrogates {
				w = Error
			}
			f.Writer = &WriterVerdict{Version: res.version, Severity: w.String()}
		}
	}
}

// judgeChain runs the chain checks as the client that will resume the
// file (client, "" for the version that wrote it) loads and sends it, and
// keeps the writing version's verdict where it differs: on each finding
// (Finding.Writer), and in writerOnly for the findings only it gives.
func judgeChain(res *fileResult, g *session.Graph, client string) {
	res.judge = res.version
	if client != "" {
		res.judge = client
	}
	if res.judge == res.version || res.version == "" || sameModels(res.judge, res.version) {
		checkChain(res, g)
		return
	}
	w := &fileResult{file: res.file, version: res.version, judge: res.version, resultAt: maps.Clone(res.resultAt)}
	checkChain(w, g)
	start := len(res.findings)
	checkChain(res, g)
	type key struct {
		code Code
		line int
	}
	writer := make(map[key]*Finding, len(w.findings))
	for i := range w.findings {
		writer[key{w.findings[i].Code, w.findings[i].Line}] = &w.findings[i]
	}
	for i := range res.findings[start:] {
		f := &res.findings[start+i]
		k := key{f.Code, f.Line}
		wf, ok := writer[k]
		delete(writer, k)
		switch {
		case !ok:
			f.Writer = &WriterVerdict{Version: res.version, Severity: "none"}
		case wf.Severity != f.Severity:
			f.Writer = &WriterVerdict{Version: res.version, Severity: wf.Severity.String()}
		}
	}
	for i := range w.findings {
		f := w.findings[i]
		if _, left := writer[key{f.Code, f.Line}]; left {
			f.Writer = &WriterVerdict{Version: res.version, Severity: f.Severity.String()}
			res.writerOnly = append(res.writerOnly, f)
		}
	}
}

// sameModels reports whether versions a and b load and send a chain alike
// (session.LoaderFor and SendsOf give the same model).
func sameModels(a, b string) bool {
	la, lb := session.LoaderFor(a), session.LoaderFor(b)
	sa, sb := SendsOf(a), SendsOf(b)
	la.Name, lb.Name, sa.Name, sb.Name = "", "", "", ""
	return la == lb && sa == sb
}

// notJSONL replaces the line findings of a file of which no line is JSON
// (another program's output written over a transcript) by one finding.
func notJSONL(res *fileResult) bool {
	if res.jsonLines > 0 || res.lines == 0 {
		return false
	}
	bad := 0
	kept := res.findings[:0]
	for _, f := range res.findings {
		switch f.Code {
		case JSONInvalid, LineTorn, NULBytes, LineEmpty, UTF8Invalid:
			if f.Code == JSONInvalid {
				bad++ // a line of NUL bytes alone is a crash's, not another program's
			}
			continue
		}
		kept = append(kept, f)
	}
	if bad == 0 {
		return false // a lone torn line: the file was cut while its first line was written
	}
	res.findings = kept
	res.add(FileNotJSONL, 1, "none of the file's %s is JSON: this is not a Claude Code transcript (written over by another program?); cfix leaves it alone", plural.Count(res.lines, "line"))
	return true
}

// entryIDs checks sessionId and agentId against the file.
func (c *checker) entryIDs(res *fileResult, e *session.Entry, line int, ids *idTally, agentOther, agentSessOther *int) {
	f := &res.file
	switch f.Kind {
	case store.KindSession:
		if e.SessionID == "" || !store.IsUUID(f.Session) {
			return
		}
		if e.SessionID == f.Session {
			ids.own++
			return
		}
		if ids.other == 0 {
			ids.first, ids.line = e.SessionID, line
		}
		ids.other++
		ids.afterOwn = ids.afterOwn || ids.own > 0
		ids.mixed = ids.mixed || e.SessionID != ids.first
	case store.KindAgent, store.KindAgentFlat:
		if e.AgentID != "" && e.AgentID != f.Agent {
			*agentOther++
			if *agentOther == 1 {
				res.add(AgentIDMismatch, line, "agentId %s differs from the file name's agent id %s", e.AgentID, f.Agent)
			}
		}
		// A flat subagent names its parent only through sessionId, which
		// may change mid-file (warmup agents of a resumed session): only
		// the hierarchical layout has a parent to compare with.
		if f.Kind != store.KindAgent || e.SessionID == "" || e.SessionID == f.Session {
			return
		}
		*agentSessOther++
		if *agentSessOther != 1 {
			return
		}
		if to := forkedAgentLink(*f, e.SessionID); to != "" {
			fd := res.add(AgentSessionDiff, line, "sessionId %s: the file is a symbolic link to that session's transcript of this agent (%s), as Claude Code links the transcripts of running agents into a session forked from theirs (anthropics/claude-code#79764)", e.SessionID, to)
			fd.Severity, fd.unfixed = Notice, true
			return
		}
		res.add(AgentSessionDiff, line, "sessionId %s differs from the parent session %s", e.SessionID, f.Session)
	}
}

// forkedAgentLink returns where subagent transcript f leads when it is a
// symbolic link to the transcript of the same name in session sid's
// subagents folder beside it (a fork carries its running agents over so,
// 2.1.216: the entries keep the first session's id), else "".
func forkedAgentLink(f store.File, sid string) string {
	fi, err := os.Lstat(f.Path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	to, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return ""
	}
	project, err := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(filepath.Dir(f.Path))))
	if err != nil {
		return ""
	}
	if to != filepath.Join(project, sid, "subagents", filepath.Base(f.Path)) {
		return ""
	}
	return to
}

// idTally counts the sessionIds of a main transcript's entries against the
// session id of its name.
type idTally struct {
	own, other int
	first      string // the first other id
	line       int    // where it is
	afterOwn   bool   // an other id comes after an entry of the file's own
	mixed      bool   // more than one other id
}

// idFindings reports the entries of a main transcript that carry another
// session's id. A fork Claude Desktop makes starts its file with the
// parent's lines under the parent's id and goes on under its own; Claude
// Code loads the whole file whatever the ids (measured with 2.1.177 on
// the wild 2.1.161-2.1.170 fork), so that shape is a notice. A file all of
// whose entries carry one other session's id is left to the store checks
// (a copy of that session's first lines, see storeCheck.leafs).
func idFindings(res *fileResult, ids idTally) {
	if ids.other == 0 {
		return
	}
	res.noOwnID = ids.own == 0
	res.otherID = ""
	if ids.own == 0 && !ids.mixed {
		res.otherID = ids.first
		if res.metaOnly {
			return
		}
	}
	fd := res.add(SessionIDWrong, ids.line, "entry's sessionId %s differs from the file's session id %s", ids.first, res.file.Session)
	if ids.own > 0 && !ids.afterOwn && !ids.mixed {
		fd.Severity = Notice
		fd.Message = fmt.Sprintf("the first %s carry session %s's id, the rest this file's: a fork that starts with its parent's history under the parent's id, as Claude Desktop writes forks; Claude Code loads the whole file as this session's history", plural.Count(ids.other, "entry"), ids.first)
	}
}

// dangling is an entry whose parentUuid names no entry of its file, left
// for the store checks to look up in the other files.
type dangling struct {
	line      int
	uuid      string
	parent    string
	cut       bool // the chain a resume loads stops here
	compacted bool // in history a compaction summarized
	relinked  bool // on the loaded chain: the loader links it to the message before it
	loaded    int  // entries that resume loads
	before    int  // messages of the file the resume does not load
}

// checkChain runs the parentUuid checks and, along the chain the writing
// version's client loads on resume, the tool and thinking checks.
// Transcripts of Claude Code's side runs (compaction, prompt suggestions)
// are never resumed: they get the line and entry checks only.
func checkChain(res *fileResult, g *session.Graph) {
	if len(g.Nodes) == 0 || res.file.Side() {
		return
	}
	for _, cyc := range g.Cycles() {
		first := cyc[0]
		for _, i := range cyc {
			if g.Nodes[i].Line < g.Nodes[first].Line {
				first = i
			}
		}
		n := g.Nodes[first]
		if len(cyc) == 1 {
			res.add(ParentSelf, n.Line, "entry %s is its own parent", n.UUID)
			continue
		}
		lines := make([]string, 0, len(cyc))
		for _, i := range cyc {
			lines = append(lines, fmt.Sprint(g.Nodes[i].Line))
		}
		res.add(ChainCycle, n.Line, "parentUuid cycle of %d entries (lines %s)", len(cyc), strings.Join(lines, ", "))
	}

	agentFile := res.file.Kind != store.KindSession
	l := session.LoaderFor(res.judge)
	res.loader = l
	ld := g.Load(l, agentFile)
	on := make(map[int]bool, len(ld.Chain))
	for _, i := range ld.Chain {
		on[i] = true
	}
	reach := g.Reachable(ld.Leaf)
	for _, i := range g.Dangling() {
		n := g.Nodes[i]
		d := dangling{line: n.Line, uuid: n.UUID, parent: n.Parent, compacted: reach[i] && !on[i], relinked: on[i] && ld.Cut != i}
		if ld.Cut >= 0 && (ld.Cut == i || g.Nodes[ld.Cut].Parent == n.UUID || bridged(g, l, ld.Cut, i)) {
			d.cut, d.loaded = true, len(ld.Chain)
			// The messages written before the cut that the resume leaves out.
			for j := range g.Nodes {
				m := &g.Nodes[j]
				if m.Line < g.Nodes[ld.Cut].Line && !on[j] && l.IsMessage(m.Type) && (agentFile || !m.Sidechain) {
					d.before++
				}
			}
		}
		res.dangling = append(res.dangling, d)
	}

	// The history a compaction summarized holds the results of its
	// parallel tool calls beside its chain, as the client wrote them; the
	// resumes before the compaction loaded them (RecoverParallel): they
	// sit on no other branch.
	var summarized []int
	for i := range g.Nodes {
		if reach[i] && !on[i] {
			summarized = append(summarized, i)
		}
	}
	var beside map[int]bool
	if l.RecoverParallel && len(summarized) > 0 {
		beside, _ = g.SiblingResults(summarized)
	}
	off := 0
	isOff := func(i int) bool {
		n := &g.Nodes[i]
		return !on[i] && !reach[i] && !beside[i] && (n.Type == "user" || n.Type == "assistant") && (agentFile || !n.Sidechain)
	}
	for i := range g.Nodes {
		if isOff(i) {
			off++
		}
	}
	if off > 0 && ld.Leaf >= 0 {
		onList := make([]bool, len(g.Nodes))
		for i := range on {
			onList[i] = true
		}
		sit := map[bool]string{true: "sits", false: "sit"}[off == 1]
		res.add(ChainForks, g.Nodes[ld.Leaf].Line, "a resume by Claude Code %s starts from line %d and loads %s; %s %s on other branches: %s", l.Name, g.Nodes[ld.Leaf].Line, plural.Count(len(ld.Chain), "entry"), plural.Count(off, "message"), sit,
			describeBranches(g, onList, reach, isOff))
	}

	// Where every tool_result of the file is, loaded or not: a loaded one
	// first.
	resultAt := res.resultAt
	for _, i := range ld.Chain {
		for _, b := range g.Nodes[i].Blocks {
			if b.Type == "tool_result" && b.ToolUseID != "" {
				resultAt[b.ToolUseID] = g.Nodes[i].Line
			}
		}
	}
	// Tool pairing and thinking blocks along the loaded chain, as the
	// client sends them to the API the session talks to.
	s := SendsOf(res.judge)
	prov := ProviderOf(g)
	used := make(map[string]int)      // tool_use id → line
	answered := make(map[string]bool) // tool_use ids with a result
	var order []string
	last := -1 // index in ld.Chain of the last user or assistant entry
	for k, i := range ld.Chain {
		if t := g.Nodes[i].Type; t == "user" || t == "assistant" {
			last = k
		}
	}
	tail := map[string]bool{} // tool_uses of the chain's last message
	for k, i := range ld.Chain {
		n := &g.Nodes[i]
		for _, b := range n.Blocks {
			switch b.Type {
			case "tool_use": // server_tool_use results sit in the same message
				if b.ID == "" {
					continue
				}
				if first, dup := used[b.ID]; dup {
					fd := res.add(ToolUseDuplicate, n.Line, "tool_use id %s was already used on line %d", b.ID, first)
					if prov.Foreign {
						fd.Severity = Notice
						fd.Message += fmt.Sprintf("; the session's replies came from another provider than Anthropic (%s), whose ids restart in each message and whose API took them; the Anthropic API rejects a request holding both (tool_use ids must be unique)", prov.Why)
					}
					continue
				}
				used[b.ID] = n.Line
				order = append(order, b.ID)
				tail[b.ID] = k >= last
			case "tool_result":
				if _, ok := used[b.ToolUseID]; !ok {
					fd := res.add(ToolUseMiss, n.Line, "tool_result for %s answers no earlier tool_use on the chain a resume loads", b.ToolUseID)
					if l.DropsOrphanResults {
						fd.Severity = Warning
						fd.Message += fmt.Sprintf("; Claude Code %s drops it when it resumes (the request is accepted)", l.Name)
					} else {
						fd.Message += fmt.Sprintf("; Claude Code %s sends it and the API answers 400 on every resume", l.Name)
					}
					continue
				}
				answered[b.ToolUseID] = true
			case "thinking":
				if n.Model == SyntheticModel && !s.Synthetic {
					continue // Claude Code's own entry: never sent
				}
				switch {
				case b.EmptySig && ThirdPartyModel(n.Model):
					res.add(ThinkingForeign, n.Line, "thinking block of model %s has no signature (that provider does not sign thinking); resuming this session against the Anthropic API would be rejected", n.Model)
				case b.EmptySig && prov.Foreign:
					res.add(ThinkingForeign, n.Line, "thinking block with no signature, in a session whose replies came from another provider than Anthropic (%s); Claude Code %s sends it to that API, which does not check signatures; resuming this session against the Anthropic API would be rejected", prov.Why, s.Name)
				case b.EmptySig:
					res.add(ThinkingUnsigned, n.Line, "thinking block with an empty signature")
				case b.EmptyText:
					res.add(ThinkingEmpty, n.Line, "signed thinking block with empty text (thinking display omitted)")
				}
			}
		}
	}
	for _, id := range order {
		if answered[id] {
			continue
		}
		fd := res.add(ToolResultMiss, used[id], "tool_use %s", id)
		if at, ok := resultAt[id]; ok {
			// Repair keeps a call whose result the file holds: it adds a
			// result only where there is none.
			fd.unfixed = true
			fd.Message += fmt.Sprintf(": its tool_result on line %d is on a branch Claude Code %s does not load", at, l.Name)
			if !l.RecoverParallel {
				fd.Message += " (versions from 2.1.80 on re-attach a parallel call's result by message.id)"
			}
		} else {
			fd.Message += " has no tool_result anywhere in the file"
			if tail[id] {
				fd.Message += ", at the end of the chain (the session stopped mid-tool)"
			} else {
				fd.Message += ", in the middle of the chain"
			}
		}
		if l.DropsUnanswered {
			fd.Severity = Warning
			fd.Message += fmt.Sprintf("; Claude Code %s drops the unanswered call when it resumes (the request is accepted; the model no longer sees the call)", l.Name)
		} else {
			fd.Message += fmt.Sprintf("; Claude Code %s sends it and the API answers 400 on every resume", l.Name)
		}
	}
	sendChecks(res, g, ld)
}

// sendChecks runs, along the chain ld, the checks of what the writing
// version's client sends that the API rejects: blank text blocks, server
// tool results sent apart from their call.
func sendChecks(res *fileResult, g *session.Graph, ld session.Load) {
	s := SendsOf(res.judge)
	for _, i := range ld.Chain {
		n := &g.Nodes[i]
		empty, space := s.BlankSent(n)
		if empty+space == 0 {
			continue
		}
		var what []string
		if empty > 0 {
			what = append(what, fmt.Sprintf("%d empty", empty))
		}
		if space > 0 {
			what = append(what, fmt.Sprintf("%d whitespace-only", space))
		}
		res.add(TextBlank, n.Line, "%s %s in this %s entry; Claude Code %s sends them and the API answers 400 (text content blocks must be non-empty, or must contain non-whitespace text) on every resume", strings.Join(what, " and "), plural.Of(empty+space, "text block"), n.Type, s.Name)
	}
	for _, i := range ld.Chain {
		if n := &g.Nodes[i]; n.Type == "attachment" && n.Attach != 0 {
			attachFinding(res, n, s)
		}
	}
	for _, sp := range ServerSplits(g, ld, s) {
		n := &g.Nodes[sp.Result]
		if sp.Call < 0 && sp.CallLine == 0 {
			// No entry holds the call: repair has none to bring back.
			fd := res.add(ServerToolSplit, n.Line, "%s for %s: no entry of the file holds its server_tool_use", sp.Block, sp.ID)
			fd.unfixed = true
			if s.OrphanServerResults {
				fd.Message += fmt.Sprintf("; Claude Code %s sends the result alone and the API answers 400 (unexpected tool_use_id found in %s blocks) on every resume", s.Name, sp.Block)
			} else {
				fd.Severity = Warning
				fd.Message += fmt.Sprintf("; Claude Code %s leaves the block out of the request (the model no longer sees it); 2.1.87 and older send it and the API answers 400", s.Name)
			}
			continue
		}
		if sp.Call < 0 {
			res.add(ServerToolSplit, n.Line, "%s for %s: the resume does not load its server_tool_use (it is on line %d, before a compaction or on another branch); Claude Code %s sends the result alone and the API answers 400 (unexpected tool_use_id found in %s blocks) on every resume", sp.Block, sp.ID, sp.CallLine, s.Name, sp.Block)
			continue
		}
		fd := res.add(ServerToolSplit, n.Line, "%s for %s is split from its server_tool_use on line %d by %s", sp.Block, sp.ID, sp.CallLine, describe(g, sp.Seps))
		if sp.Sure {
			fd.Message += fmt.Sprintf(": Claude Code %s sends them as messages of their own between the two, and the API answers 400 (unexpected tool_use_id found in %s blocks) on every resume", s.Name, sp.Block)
		} else {
			fd.Severity = Warning
			fd.Message += fmt.Sprintf(": Claude Code %s sends some attachments (%s) as a message of their own, which splits the pair (the API answers 400)", s.Name, attachmentTypeNote)
		}
	}
}

// attachFinding reports the attachment entry n, which breaks some
// session.AttachRules, as the client of model s reads it.
func attachFinding(res *fileResult, n *session.Node, s Sends) {
	var what []string
	crash := -1
	for i, r := range session.AttachRules {
		if !n.Attach.Has(i) {
			continue
		}
		if r.Type == "" {
			what = append(what, "its attachment is null, missing or not an object")
		} else {
			what = append(what, fmt.Sprintf("the %s of its %s attachment %s", r.Field, r.Type, r.What()))
		}
		if crash < 0 && s.AttachCrash.Has(i) {
			crash = i
		}
	}
	fd := res.add(AttachMalformed, n.Line, "attachment entry %s: %s", n.UUID, strings.Join(what, ", "))
	if crash >= 0 {
		how := "throws turning it into a message"
		if session.AttachRules[crash].Type == "" || session.AttachRules[crash].Type == "edited_text_file" {
			how = "fails to load it (Failed to resume session)"
		}
		fd.Message += fmt.Sprintf("; Claude Code %s %s and exits 1 before any request, on every resume (measured: %s)", s.Name, how, AttachCrashRange(crash))
		return
	}
	fd.Severity = Warning
	first := 0
	for i := range session.AttachRules {
		if n.Attach.Has(i) {
			first = i
			break
		}
	}
	fd.Message += fmt.Sprintf("; Claude Code %s leaves it out; other clients throw on it and exit 1 on every resume (measured: %s)", s.Name, AttachCrashRange(first))
}

// bridged reports whether node cut reaches dangling node d through
// progress entries the loader bridges.
func bridged(g *session.Graph, l session.Loader, cut, d int) bool {
	for p, n := g.Nodes[cut].Parent, 0; p != "" && n <= len(g.Nodes); n++ {
		j := g.Lookup(p)
		if j < 0 {
			return false
		}
		if j == d {
			return true
		}
		if l.IsMessage(g.Nodes[j].Type) {
			return false
		}
		p = g.Nodes[j].Parent
	}
	return false
}

// ThirdPartyModel reports whether message.model names a model that is not
// Anthropic's (qwen, minimax, glm... through a compatible endpoint).
// Claude Code's own placeholders (<synthetic>) and entries without a model
// count as Anthropic's.
func ThirdPartyModel(model string) bool {
	if model == "" || strings.HasPrefix(model, "<") {
		return false
	}
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // provider/model names
	}
	for _, p := range []string{"claude", "anthropic", "sonnet", "opus", "haiku"} {
		if strings.Contains(m, p) {
			return false
		}
	}
	return true
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}
