// Package repair plans the safe fixes of what validate finds, and the
// pruning of what a store no longer needs. Planners never write: they
// return a change set.
package repair

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// Progress is the --only name of the aggressive repair that drops progress
// entries (it fixes no single finding code).
const Progress validate.Code = "progress"

// Options configure a repair plan.
type Options struct {
	Root    string
	Targets []string
	// Only limits the repairs to these finding codes (and the groups
	// "index" and "progress"); empty means every safe repair.
	Only []string
	// Aggressive adds the repairs that guess: re-parenting entries whose
	// parent was never written, and dropping progress entries.
	Aggressive bool
}

// lineCodes are fixed by rewriting a transcript: the list validate's
// hints give cfix repair FILE for, so that the two agree.
var lineCodes = validate.TranscriptFixes

var indexCodes = []validate.Code{validate.IndexMissingFile, validate.IndexUnindexed, validate.IndexPath, validate.IndexDrift}

// Fixable lists the codes repair fixes, for --only.
func Fixable() []validate.Code {
	out := append([]validate.Code{}, lineCodes...)
	out = append(out, validate.SessionStub, validate.TitleOutOfReach, validate.ParentMissing, Progress)
	return append(out, indexCodes...)
}

// OptionError reports a bad --only or --what value.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// allowFunc turns --only into a predicate.
func allowFunc(only []string) (func(validate.Code) bool, error) {
	if len(only) == 0 {
		return func(validate.Code) bool { return true }, nil
	}
	known := map[validate.Code]bool{}
	for _, c := range Fixable() {
		known[c] = true
	}
	set := map[validate.Code]bool{}
	for _, o := range only {
		for _, c := range strings.Split(o, ",") {
			c = strings.TrimSpace(c)
			switch {
			case c == "":
			case c == "index":
				for _, ic := range indexCodes {
					set[ic] = true
				}
			case known[validate.Code(c)]:
				set[validate.Code(c)] = true
			default:
				return nil, &OptionError{fmt.Sprintf("--only %s: not a code repair fixes (see cfix repair --help)", c)}
			}
		}
	}
	for _, c := range chainCodes {
		if set[c] {
			// A chain fix reads every entry: one on a line a line fix
			// would make readable again is there, and made before that
			// fix, the chain fix would be wrong (a child re-parented away
			// from a parent on a line of NUL bytes).
			for _, l := range readFixes {
				set[l] = true
			}
			break
		}
	}
	return func(c validate.Code) bool { return set[c] }, nil
}

// readFixes are the line fixes that make an entry readable again; every
// fix of chainCodes is planned with them (see allowFunc).
var readFixes = []validate.Code{validate.NULBytes, validate.JSONInvalid, validate.LineGlued, validate.LineTorn}

// chainCodes are the fixes that look at the entries of the chain.
var chainCodes = []validate.Code{
	validate.ParentMissing, validate.ParentSelf, validate.ChainCycle, validate.ToolResultMiss, validate.ToolUseMiss,
	validate.UUIDDuplicate, validate.UUIDReplayed, validate.ServerToolSplit, validate.TextBlank, validate.ThinkingUnsigned, validate.AttachMalformed, Progress,
}

// Plan plans the repairs of the store (or the targets in it). Each
// transcript is read once by its fixer, which finds and fixes the line and
// chain faults itself; the store-level fixes (stubs, sessions-index.json)
// come from a validate run, made only when the targets can hold them.
func Plan(opts Options) (*changeset.ChangeSet, error) {
	allow, err := allowFunc(opts.Only)
	if err != nil {
		return nil, err
	}
	layout, err := store.ResolveTargets(opts.Root, opts.Targets)
	if err != nil {
		return nil, err
	}
	cs := changeset.New(opts.Root, "repair")
	files := append([]store.File(nil), layout.Files...)
	noChain := map[string]bool{}
	if len(opts.Targets) == 0 {
		h := filepath.Join(opts.Root, "history.jsonl")
		if fi, err := os.Stat(h); err == nil && fi.Mode().IsRegular() {
			files = append(files, store.File{Path: h, Size: fi.Size()})
			noChain[h] = true
		}
	}
	// Parents not in their own file are looked up in the others: one found
	// there is a link, never re-parented.
	elsewhere := validate.NewElsewhere(opts.Root)
	results := make([]*fixer, len(files))
	errs := make([]error, len(files))
	ops := make([]*changeset.Op, len(files))
	links := make([]bool, len(files))
	parallel(len(files), func(i int) {
		if fi, err := os.Lstat(files[i].Path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			links[i] = true // rewriting it would replace the link by a file
			return
		}
		x := &fixer{f: files[i], allow: allow, aggressive: opts.Aggressive, noChain: noChain[files[i].Path]}
		path := files[i].Path
		x.elsewhere = func(u string) string { return elsewhere.In(path, u) }
		ops[i], errs[i] = x.plan()
		x.file, x.fixes, x.nodes, x.first, x.leafRefs = nil, nil, nil, nil, nil
		results[i] = x
	})
	metaOnly := false
	unfixed := map[validate.Code]int{}     // findings no planner fixes
	skipped := map[validate.Code]int{}     // findings repair fixes, left out by --only
	leafMoved := map[string]map[int]bool{} // file → lines whose leafUuid a fixer points elsewhere
	dropped := 0
	for i := range files {
		if links[i] {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%s is a symbolic link: not rewritten (repair the file it points to)", files[i].Path))
			continue
		}
		if le := (*longLineError)(nil); errors.As(errs[i], &le) {
			// That file alone is left as it is.
			cs.Notes = append(cs.Notes, le.Error())
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		if ops[i] != nil {
			cs.Add(*ops[i])
		}
		if results[i].metaOnly {
			metaOnly = true
		}
		dropped += results[i].dropped
		if len(results[i].leafMoved) > 0 {
			leafMoved[files[i].Path] = results[i].leafMoved
		}
		for c, n := range results[i].unfixed {
			if n > 0 {
				unfixed[c] += n
			}
		}
	}
	if len(opts.Targets) == 0 || len(layout.Indexes) > 0 || metaOnly {
		if err := storeLevel(opts, layout, allow, cs, unfixed, skipped, leafMoved); err != nil {
			return nil, err
		}
	} else if allow(validate.TitleOutOfReach) {
		// Targets that can hold no store-level fix but a title out of
		// reach: the fixers kept the title lines, no validate run needed.
		for i, x := range results {
			if x == nil || x.f.Kind != store.KindSession || x.expect.Size <= validate.PickerReach || len(x.titles) == 0 {
				continue
			}
			g, err := validate.TitleGapOf(files[i].Path, x.expect.Size, x.titles)
			if err != nil {
				return nil, err
			}
			if g != nil {
				if err := planTitle(opts.Root, cs, files[i].Path); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := touchedIndexes(opts.Root, allow, cs); err != nil {
		return nil, err
	}
	// A project folder linked out of the store is checked, not written.
	cs.LeaveOutside(false)
	if dropped > 0 {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%d %s %s left as they are: the Claude Code that wrote them (2.1.x) drops a tool_result that answers no tool_use when it resumes, and the request is accepted; repair keeps the result in the file", dropped, validate.ToolUseMiss, plural.Of(dropped, "finding")))
	}
	for _, c := range sortedCodes(skipped) {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%d %s %s left: not selected by --only; cfix repair without --only fixes them", skipped[c], c, plural.Of(skipped[c], "finding")))
	}
	for _, c := range sortedCodes(unfixed) {
		hint := "no safe automatic fix; see cfix validate"
		switch c {
		case validate.ParentMissing:
			if allow(c) {
				hint = "cfix repair --aggressive re-parents to the previous entry (a guess)"
			}
		case validate.SessionEmpty, validate.SessionEnvEmpty, validate.OrphanSessionEnv,
			validate.OrphanFileHist, validate.OrphanTodos, validate.OrphanDebug,
			validate.SessionUnwritten, validate.SessionHusk, validate.OrphanTasks, validate.OrphanPlan,
			validate.OrphanUsageData, validate.OrphanPaste, validate.OrphanShellSnap:
			hint = "cfix prune removes them"
		}
		cs.Notes = append(cs.Notes, fmt.Sprintf("%d %s %s left: %s", unfixed[c], c, plural.Of(unfixed[c], "finding"), hint))
	}
	return cs, nil
}

// storeLevel validates the targets and plans the fixes of stubs and
// sessions-index.json; it counts what no planner fixes (a leaf-missing
// whose leafUuid a fixer points at an entry, leafMoved, is fixed), and
// what repair fixes but --only leaves out: the findings whose hint is
// cfix repair (validate gives it where repair fixes the finding; the
// fixers count the rest of their codes as unfixed).
func storeLevel(opts Options, layout *store.Layout, allow func(validate.Code) bool, cs *changeset.ChangeSet, unfixed, skipped map[validate.Code]int, leafMoved map[string]map[int]bool) error {
	rep, err := validate.Run(validate.Options{Root: opts.Root, Targets: opts.Targets})
	if err != nil {
		return err
	}
	all, err := store.Scan(opts.Root)
	if err != nil {
		return err
	}
	var stubs, indexes, titles []string
	for _, f := range rep.Findings {
		switch {
		case f.Code == validate.SessionStub && allow(validate.SessionStub):
			stubs = append(stubs, f.Path)
		case f.Code == validate.TitleOutOfReach && allow(validate.TitleOutOfReach):
			titles = append(titles, f.Path)
		case isIndexCode(f.Code) && allow(f.Code):
			idx := f.Path
			if filepath.Base(idx) != "sessions-index.json" {
				idx = filepath.Join(filepath.Dir(idx), "sessions-index.json")
			}
			indexes = append(indexes, idx)
		case f.Code == validate.LeafMissing && leafMoved[f.Path][f.Line]:
		case f.Code == validate.ProjectSymlink:
			// Said in the plan's note on the link, where it matters.
		case !allow(f.Code) && strings.HasPrefix(f.Hint, "cfix repair ") && !strings.Contains(f.Hint, "--aggressive"):
			if f.Severity > validate.Notice {
				skipped[f.Code]++
			}
		case f.Severity > validate.Notice && !fixedByFixer(f.Code, opts.Aggressive):
			unfixed[f.Code] += f.Count()
		}
	}
	carried := map[string][][]byte{} // transcript → metadata lines of its stubs
	var targets []string
	for _, p := range uniq(stubs) {
		op, where, lines, err := planStub(all, p)
		if err != nil {
			return err
		}
		if op == nil {
			continue
		}
		// The stub goes and its metadata moves in one step, or neither.
		if l, ok := outsideLink(opts.Root, p, where); ok {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%s: stub not removed (its metadata would move into %s); %s", p, where, l))
			continue
		}
		// The stub goes whole into the backup: a line fix the plan has
		// for it would change it under its removal.
		dropRewrite(cs, p)
		cs.Add(*op)
		if _, seen := carried[where]; !seen {
			targets = append(targets, where)
		}
		carried[where] = append(carried[where], lines...)
	}
	for _, t := range targets {
		if err := carryMetadata(cs, t, carried[t]); err != nil {
			return err
		}
	}
	for _, p := range uniq(titles) {
		if err := planTitle(opts.Root, cs, p); err != nil {
			return err
		}
	}
	for _, p := range uniq(indexes) {
		op, err := planIndex(all, p, allow, cs)
		if err != nil {
			return err
		}
		if op != nil {
			cs.Add(*op)
		}
	}
	return nil
}

// planTitle appends the title line of a transcript again at its end,
// where the /resume picker reads it, as Claude Code itself does: it
// re-appends a session's metadata, custom-title and ai-title among it
// (2.1.73 and later have the re-append; 2.1.330 makes it every 32 KB
// written and at exit).
func planTitle(root string, cs *changeset.ChangeSet, path string) error {
	if l, ok := changeset.OutsideLink(root, path); ok {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%s: title not appended again; %s", path, l))
		return nil
	}
	g, err := validate.FindTitleGap(path)
	if err != nil || g == nil || len(g.Raw) == 0 {
		return err
	}
	kind := "custom-title"
	if !g.Custom {
		kind = "ai-title"
	}
	add := append(bytes.TrimSpace(append([]byte(nil), g.Raw...)), '\n')
	return appendToEnd(cs, path, g.Lines, add, 1,
		fmt.Sprintf("append %s %q (line %d) again at the end, where the /resume picker reads it", kind, g.Title, g.Line),
		"append the session's title again at the end")
}

// outsideLink returns the symbolic link leading out of the store that a
// write of one of the paths would go through.
func outsideLink(root string, paths ...string) (changeset.Link, bool) {
	for _, p := range paths {
		if l, ok := changeset.OutsideLink(root, p); ok {
			return l, true
		}
	}
	return changeset.Link{}, false
}

// touchedIndexes brings up to date, in the same plan, the index of each
// project folder whose sessions the plan rewrites or removes and whose
// index it does not change yet, so one repair settles it.
func touchedIndexes(root string, allow func(validate.Code) bool, cs *changeset.ChangeSet) error {
	if !allow(validate.IndexDrift) && !allow(validate.IndexMissingFile) {
		return nil
	}
	planned := map[string]bool{}
	var touched []string
	for _, op := range cs.Ops {
		if filepath.Base(op.Path) == "sessions-index.json" {
			planned[op.Path] = true
			continue
		}
		if (op.Action == changeset.Rewrite || op.Action == changeset.Delete) && strings.HasSuffix(op.Path, ".jsonl") {
			touched = append(touched, filepath.Join(filepath.Dir(op.Path), "sessions-index.json"))
		}
	}
	for _, idx := range uniq(touched) {
		if planned[idx] {
			continue
		}
		fi, err := os.Stat(idx)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		l, err := store.ScanProject(root, filepath.Base(filepath.Dir(idx)))
		if err != nil {
			return err
		}
		op, err := planIndex(l, idx, allow, cs)
		if err != nil {
			return err
		}
		if op != nil {
			cs.Add(*op)
		}
	}
	return nil
}

// fixedByFixer reports whether the transcript fixers handle (or count) a
// code, so the validate run does not count it again.
func fixedByFixer(c validate.Code, aggressive bool) bool {
	for _, lc := range lineCodes {
		if c == lc {
			return true
		}
	}
	return c == validate.ParentMissing || c == validate.UUIDConflict || c == validate.FileNotJSONL || c == validate.LineLong
}

// parallel runs f(0..n-1) on GOMAXPROCS workers, biggest jobs first is the
// caller's business.
func parallel(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

func isIndexCode(c validate.Code) bool {
	for _, ic := range indexCodes {
		if c == ic {
			return true
		}
	}
	return false
}

// planStub removes a stub whose transcript lives in another file of the
// store; the stub stays in the backup. It returns that transcript and the
// stub's metadata lines (a summary is the title older /resume pickers
// show), which move into it.
func planStub(l *store.Layout, path string) (op *changeset.Op, where string, lines [][]byte, err error) {
	b, err := rfile.ReadFile(path)
	if err != nil {
		return nil, "", nil, err
	}
	if len(b) > 1<<20 {
		return nil, "", nil, nil // not a stub
	}
	var leafs []string
	p := session.NewParser()
	var e session.Entry
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		// Read as the stub's own fixer would leave it, so the transcript
		// gets no fault for a second repair to fix: NUL bytes dropped, a
		// line that is not JSON (torn, garbage) left in the stub's backup,
		// glued records apart, escapes and UTF-8 mended.
		line = bytes.ReplaceAll(line, []byte{0}, nil)
		r := p.Parse(line)
		if r.Err != nil {
			continue
		}
		recs := [][]byte{line}
		if len(r.Spans) > 1 {
			recs = recs[:0]
			for _, sp := range r.Spans {
				recs = append(recs, line[sp[0]:sp[1]])
			}
		}
		for k, v := range append([]any{r.Value}, r.More...) {
			if !session.HeaderOf(v, &e) || e.IsChain() {
				return nil, "", nil, nil
			}
			if e.LeafUUID != "" {
				leafs = append(leafs, e.LeafUUID)
			}
			rec, _ := session.FixSurrogates(recs[k])
			rec, _ = session.FixNULEscapes(rec)
			lines = append(lines, session.FixUTF8(rec))
		}
	}
	if len(lines) == 0 {
		return nil, "", nil, nil
	}
	where = findUUID(l, path, leafs)
	if where == "" {
		return nil, "", nil, nil // its transcript is nowhere: prune decides
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return nil, "", nil, err
	}
	return &changeset.Op{Action: changeset.Delete, Path: path, Expect: fp, EntriesRemoved: len(lines),
		Session: strings.TrimSuffix(filepath.Base(path), ".jsonl"),
		Reason:  "remove a stub holding only metadata; its metadata moves into " + where + " (the stub is kept in the backup)"}, where, lines, nil
}

// dropRewrite takes the rewrite of path out of cs.
func dropRewrite(cs *changeset.ChangeSet, path string) {
	cs.Ops = slices.DeleteFunc(cs.Ops, func(op changeset.Op) bool {
		return op.Action == changeset.Rewrite && op.Path == path
	})
}

// carryMetadata appends the lines a transcript does not hold yet to its
// end: in the op the plan already has for it, or in a new one.
func carryMetadata(cs *changeset.ChangeSet, path string, lines [][]byte) error {
	have := map[string]bool{}
	fh, err := rfile.Open(path)
	if err != nil {
		return err
	}
	rd := session.NewReader(fh, nil)
	n := 0
	for rd.Next() {
		n = rd.Line().N
		have[string(bytes.TrimSpace(rd.Line().Raw))] = true
	}
	fh.Close()
	if err := rd.Err(); err != nil {
		return err
	}
	var add []byte
	count := 0
	for _, l := range lines {
		key := string(bytes.TrimSpace(l))
		if have[key] {
			continue
		}
		have[key] = true
		add = append(add, bytes.TrimSpace(l)...)
		add = append(add, '\n')
		count++
	}
	if count == 0 {
		return nil
	}
	return appendToEnd(cs, path, n, add, count, "take over "+plural.Count(count, "metadata line")+" of removed stubs: the session's title", "take over the metadata of removed stubs")
}

// appendToEnd appends lines (add, ending with a newline) to a transcript
// of n lines: in the op the plan already has for it, or in a new one.
func appendToEnd(cs *changeset.ChangeSet, path string, n int, add []byte, count int, why, opWhy string) error {
	var op *changeset.Op
	for i := range cs.Ops {
		if cs.Ops[i].Path == path && cs.Ops[i].Action == changeset.Rewrite {
			op = &cs.Ops[i]
		}
	}
	if op == nil {
		fp, err := changeset.FingerprintOf(path)
		if err != nil {
			return err
		}
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Session: strings.TrimSuffix(filepath.Base(path), ".jsonl")})
		op = &cs.Ops[len(cs.Ops)-1]
	}
	size := op.Expect.Size
	// The first carried line must not glue onto the last one: the file's
	// new end is either an edit reaching the old end, or the old end.
	if end, ok := editsEnd(op.Edits, size); ok {
		if len(end) > 0 && end[len(end)-1] != '\n' {
			add = append([]byte{'\n'}, add...)
		}
	} else if size > 0 && !endsWithNewline(path, size) {
		add = append([]byte{'\n'}, add...)
	}
	op.Edits = append(op.Edits, changeset.Edit{Line: n + 1, Offset: size, New: add, Reason: why})
	changeset.SortEdits(op.Edits)
	op.EntriesAdded += count
	if op.Reason != "" {
		op.Reason += "; "
	}
	op.Reason += opWhy
	return nil
}

func endsWithNewline(path string, size int64) bool {
	f, err := rfile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, size-1)
	return err == nil && b[0] == '\n'
}

// editsEnd returns the new bytes of the edit that replaces the file's end,
// if one does (empty bytes: the last line goes, and the line before it ends
// with its newline).
func editsEnd(edits []changeset.Edit, size int64) ([]byte, bool) {
	for _, e := range edits {
		if e.Length > 0 && e.Offset+e.Length == size {
			return e.New, true
		}
	}
	return nil, false
}

// findUUID returns the transcript (other than skip) holding an entry with
// one of the uuids, looking in skip's project folder first.
func findUUID(l *store.Layout, skip string, uuids []string) string {
	if len(uuids) == 0 {
		return ""
	}
	dir := filepath.Dir(skip)
	var files []string
	for _, f := range l.Files {
		if f.Path != skip && f.Kind == store.KindSession && filepath.Dir(f.Path) == dir {
			files = append(files, f.Path)
		}
	}
	for _, f := range l.Files {
		if f.Path != skip && f.Kind == store.KindSession && filepath.Dir(f.Path) != dir {
			files = append(files, f.Path)
		}
	}
	needles := make([][]byte, len(uuids))
	for i, u := range uuids {
		needles[i] = []byte(`"uuid":"` + u + `"`)
	}
	var buf []byte
	for _, p := range files {
		fh, err := rfile.Open(p)
		if err != nil {
			continue
		}
		rd := session.NewReader(fh, buf)
		found := false
		for !found && rd.Next() {
			for _, n := range needles {
				if bytes.Contains(rd.Line().Raw, n) {
					found = true
					break
				}
			}
		}
		buf = rd.Buffer()
		fh.Close()
		if found {
			return p
		}
	}
	return ""
}

// planIndex rebuilds a sessions-index.json from the files beside it:
// entries of missing files go, unindexed sessions come in, fullPath,
// fileMtime and messageCount are brought up to date; every other field of
// an entry is kept as it was.
func planIndex(l *store.Layout, path string, allow func(validate.Code) bool, cs *changeset.ChangeSet) (*changeset.Op, error) {
	// A transcript the plan rewrites is counted as it will be.
	summarize := func(p string) (*store.SessionSummary, error) {
		for i := range cs.Ops {
			if op := &cs.Ops[i]; op.Path == p && op.Action == changeset.Rewrite {
				rc, err := op.Content()
				if err != nil {
					return nil, err
				}
				defer rc.Close()
				return store.SummarizeReader(rc)
			}
		}
		return store.Summarize(p)
	}
	b, err := rfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil // index-invalid: not ours to guess
	}
	dir := filepath.Dir(path)
	folder := filepath.Base(dir)
	deleted := map[string]bool{} // files the plan removes (stubs)
	for _, op := range cs.Ops {
		if op.Action == changeset.Delete {
			deleted[op.Path] = true
		}
	}
	sessions := map[string]store.File{}
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Project == folder && store.IsUUID(f.Session) && f.Size > 0 && !deleted[f.Path] {
			sessions[f.Session] = f
		}
	}
	entries, _ := doc["entries"].([]any)
	var out []any
	listed := map[string]bool{}
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["sessionId"].(string)
		f, exists := sessions[id]
		if !exists {
			if allow(validate.IndexMissingFile) {
				continue
			}
			out = append(out, m)
			continue
		}
		listed[id] = true
		if allow(validate.IndexPath) {
			m["fullPath"] = f.Path
		}
		if allow(validate.IndexDrift) {
			sum, err := summarize(f.Path)
			if err != nil {
				return nil, err
			}
			m["fileMtime"] = f.ModTime.UnixMilli()
			if _, has := m["messageCount"]; has {
				m["messageCount"] = sum.Messages
			}
			if sum.Last != "" {
				m["modified"] = sum.Last
			}
		}
		out = append(out, m)
	}
	if allow(validate.IndexUnindexed) {
		for _, id := range sortedFileKeys(sessions) {
			if listed[id] {
				continue
			}
			f := sessions[id]
			sum, err := summarize(f.Path)
			if err != nil {
				return nil, err
			}
			if sum.Messages == 0 {
				continue // metadata only: nothing to resume
			}
			m := map[string]any{"sessionId": id, "fullPath": f.Path, "fileMtime": f.ModTime.UnixMilli(),
				"firstPrompt": sum.FirstPrompt, "messageCount": sum.Messages, "created": sum.First,
				"modified": sum.Last, "gitBranch": sum.Branch, "projectPath": sum.CWD, "isSidechain": false}
			if sum.Summary != "" {
				m["summary"] = sum.Summary
			}
			out = append(out, m)
		}
	}
	if out == nil {
		out = []any{}
	}
	doc["entries"] = out
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	nb := buf.Bytes()
	if bytes.Equal(bytes.TrimSpace(nb), bytes.TrimSpace(b)) {
		return nil, nil
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return nil, err
	}
	return &changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: nb, HasData: true,
		Reason: "rebuild sessions-index.json from the session files (it is derived)"}, nil
}

func sortedFileKeys(m map[string]store.File) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedCodes(m map[validate.Code]int) []validate.Code {
	out := make([]validate.Code, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func uniq(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
