package secrets

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// Plan is a redaction planned: the change set, and what it takes out.
type Plan struct {
	CS       *changeset.ChangeSet
	Findings []*Finding // what the scan found (the ignore file's left out)
	Secrets  int        // distinct secrets
	Replaced int        // replacements in all (a secret may be in several places)
	Stats    Stats
	red      *Redactor
	lines    map[string]map[int]bool // the lines of each file the scan found a secret on
}

// PlanRedact scans what opts names and plans the replacement of each
// secret found, wherever it is in that scope (also where no rule finds it:
// the model repeating a key), by [REDACTED:<rule>]: in the string values of
// JSON lines (every entry keeps its members, uuid, parentUuid and
// structure; a thinking block keeps its signature) and in the bytes of the
// other files. Files of live sessions are planned as the others; apply
// refuses them.
func PlanRedact(opts Options) (*Plan, error) {
	p := &Plan{CS: changeset.New(opts.Root, "redact"), lines: map[string]map[int]bool{}}
	p.CS.Masked = true
	knownRule := map[string]string{}
	st, err := Scan(opts, func(f *Finding) error {
		p.Findings = append(p.Findings, f)
		if p.lines[f.Path] == nil {
			p.lines[f.Path] = map[int]bool{}
		}
		p.lines[f.Path][f.Line] = true
		if _, ok := knownRule[f.secret]; !ok {
			knownRule[f.secret] = f.Rule
		}
		return nil
	})
	p.Stats = st
	if err != nil {
		return nil, err
	}
	p.Secrets = len(knownRule)
	if len(knownRule) == 0 {
		return p, nil
	}
	ig := opts.Ignore
	if ig == nil {
		if ig, err = ReadIgnore(opts.Root); err != nil {
			return nil, err
		}
	}
	red, err := NewRedactor(RedactorOptions{Allow: opts.Allow, Ignore: ig, Known: knownRule})
	if err != nil {
		return nil, err
	}
	p.red = red
	jobs, err := scope(opts.Root, opts.Targets)
	if err != nil {
		return nil, err
	}
	// A file with a finding is rewritten; any other may hold a known
	// secret where no rule finds it: its lines are looked through for
	// the secrets' bytes first.
	for i := range jobs {
		j := &jobs[i]
		if fi, err := os.Lstat(j.path); err != nil || !fi.Mode().IsRegular() {
			continue // gone, or a link (rewriting would replace it by a file)
		}
		op, n, err := p.planFile(j)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", j.path, err)
		}
		if op != nil {
			p.CS.Add(*op)
			p.Replaced += n
		}
	}
	p.CS.LeaveOutside(false)
	if !p.CS.Empty() {
		p.CS.Notes = append(p.CS.Notes, fmt.Sprintf("%d %s found in %d %s; %d %s", p.Secrets, plural(p.Secrets, "secret"),
			len(p.CS.Ops), plural(len(p.CS.Ops), "file"), p.Replaced, plural(p.Replaced, "replacement")), JournalNote)
	}
	return p, nil
}

// planFile plans the rewrite of one file (nil when nothing in it goes).
func (p *Plan) planFile(j *job) (*changeset.Op, int, error) {
	f, err := rfile.Open(j.path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	hw := changeset.NewHashWriter()
	var edits []changeset.Edit
	var n int
	rules := map[string]int{}
	if j.lines {
		edits, n, err = p.planLines(j, io.TeeReader(f, hw), rules)
	} else {
		edits, n, err = p.planText(j, f, hw, rules)
	}
	if err != nil {
		return nil, 0, err
	}
	if len(edits) == 0 {
		return nil, 0, nil
	}
	fp, err := changeset.StatFile(f)
	if err != nil {
		return nil, 0, err
	}
	if fp.Size != before.Size() || !fp.ModTime.Equal(before.ModTime().UTC()) {
		return nil, 0, fmt.Errorf("changed while cfix read it (Claude Code or another cfix is writing to it?); try again")
	}
	fp.SHA256 = hw.Sum()
	op := &changeset.Op{Action: changeset.Rewrite, Path: j.path, Expect: fp, Edits: edits,
		Reason: fmt.Sprintf("replace %d %s by [REDACTED:rule] (%s)", n, plural(n, "secret"), ruleList(rules))}
	if j.kind == KindTranscript || j.kind == KindSubagent {
		op.Session = j.session
	}
	return op, n, nil
}

func ruleList(rules map[string]int) string {
	var ids []string
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// planLines plans the line edits of a JSON lines file read from r.
func (p *Plan) planLines(j *job, r io.Reader, rules map[string]int) ([]changeset.Edit, int, error) {
	var edits []changeset.Edit
	total := 0
	rd := session.NewReader(r, nil)
	red := p.red
	var sc scanner // for the history.jsonl filter
	for rd.Next() {
		l := rd.Line()
		if !red.HoldsKnown(l.Raw) && !p.hasFinding(j.path, l.N) {
			continue
		}
		if j.keep != nil {
			if walk(l.Raw, &sc.li) == nil && !j.keep.keeps(sc.str(l.Raw, sc.li.sessionID), sc.str(l.Raw, sc.li.project)) {
				continue
			}
		}
		rr := red.lineRepls(l.Raw, j.history)
		if len(rr) == 0 {
			continue
		}
		if l.Long != nil {
			return nil, 0, longLine(j.path, l)
		}
		nb := applyRaw(l.Raw, rr)
		length := l.Len()
		if l.Terminated {
			nb = append(nb, '\n')
			length++
		}
		var why []string
		for _, x := range rr {
			rules[x.rule]++
			why = append(why, fmt.Sprintf("%s (%s)", x.rule, x.where))
		}
		edits = append(edits, changeset.Edit{Line: l.N, Offset: l.Offset, Length: length, Count: 1, New: nb,
			Reason: "redact " + strings.Join(dedupe(why), ", ")})
		total += len(rr)
	}
	return edits, total, rd.Err()
}

// longLine is the refusal of a redaction of a line longer than
// session.MaxLine, whose bytes cfix never holds: Raw is its skeleton.
func longLine(path string, l session.Line) error {
	return fmt.Errorf("%s:%d: %s, over the %s cfix reads whole: cfix does not redact it", path, l.N, l.Long.Describe(), session.MB(session.MaxLine))
}

// hasFinding reports whether the scan found a secret at line n of path.
func (p *Plan) hasFinding(path string, n int) bool { return p.lines[path][n] }

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// span of a file's bytes to replace.
type fileRepl struct {
	start, end int64
	rule       string
}

// planText plans the edits of a file that is not JSON lines: the secrets'
// places first (a read in chunks, as the scan reads it, hashed), then the
// lines holding them, read again.
func (p *Plan) planText(j *job, f *os.File, hw io.Writer, rules map[string]int) ([]changeset.Edit, int, error) {
	var reps []fileRepl
	s := &scanner{eng: p.red.eng, filter: p.red.filter, j: j}
	// The hash sees every byte once, as the chunks are read.
	_, err := s.chunks(io.TeeReader(f, hw), func(chunk []byte, base int64, _, doneTo int) {
		for _, x := range p.red.find(str(chunk), nil) {
			if x.end > doneTo {
				reps = append(reps, fileRepl{base + int64(x.start), base + int64(x.end), x.rule})
			}
		}
	})
	if err != nil || len(reps) == 0 {
		return nil, 0, err
	}
	// Found again in the next chunk, a secret may overlap one found
	// before: merged.
	sort.SliceStable(reps, func(i, k int) bool { return reps[i].start < reps[k].start })
	merged := reps[:1]
	for _, x := range reps[1:] {
		if last := &merged[len(merged)-1]; x.start < last.end {
			last.end = max(last.end, x.end)
			continue
		}
		merged = append(merged, x)
	}
	reps = merged
	for _, x := range reps {
		rules[x.rule]++
	}
	// The lines holding them, read again: one edit per run of lines.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	rd := session.NewReader(f, nil)
	var edits []changeset.Edit
	var cur *changeset.Edit
	var old []byte
	ri := 0
	flush := func() {
		if cur == nil {
			return
		}
		base := cur.Offset
		var nb []byte
		last := int64(0)
		var why []string
		for ri < len(reps) && reps[ri].start < base+int64(len(old)) {
			x := reps[ri]
			nb = append(nb, old[last:x.start-base]...)
			nb = append(nb, marker(x.rule)...)
			last = x.end - base
			why = append(why, x.rule)
			ri++
		}
		nb = append(nb, old[last:]...)
		cur.New = nb
		cur.Reason = "redact " + strings.Join(dedupe(why), ", ") + " (" + string(WhereFor(j.kind)) + ")"
		edits = append(edits, *cur)
		cur, old = nil, nil
	}
	for rd.Next() && ri < len(reps) {
		l := rd.Line()
		end := l.End()
		x := reps[ri]
		inside := cur != nil && cur.Offset+cur.Length > l.Offset // a secret runs on
		if !inside && x.start >= end {
			continue
		}
		if l.Long != nil {
			return nil, 0, longLine(j.path, l)
		}
		if cur == nil {
			cur = &changeset.Edit{Line: l.N, Offset: l.Offset}
		}
		cur.Count++
		cur.Length = end - cur.Offset
		old = append(old, l.Raw...)
		if l.Terminated {
			old = append(old, '\n')
		}
		// The run goes on while a secret started in it ends further.
		runEnd := cur.Offset + cur.Length
		for k := ri; k < len(reps) && reps[k].start < runEnd; k++ {
			if reps[k].end > runEnd {
				cur.Length = reps[k].end - cur.Offset // extended by the next lines
			}
		}
		if cur.Offset+cur.Length <= end {
			cur.Length = end - cur.Offset
			flush()
		}
	}
	if err := rd.Err(); err != nil {
		return nil, 0, err
	}
	flush()
	return edits, len(reps), nil
}
