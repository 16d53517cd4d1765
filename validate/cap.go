package validate

import "fmt"

// MaxPerCode is how many findings of one code a file gets listed. The
// rest are counted, not kept: one finding per severity stands for them
// (Finding.More), so a file of ten million bad lines costs what a file of
// a hundred does, and the counts stay exact.
const MaxPerCode = 100

// findingCap keeps at most MaxPerCode findings of each code per file, and
// counts the others.
type findingCap struct {
	kept    map[capKey]int
	more    map[moreKey]int // index in order
	order   []Finding       // the findings that stand for the others
	scratch Finding         // the finding being counted, not kept
	pending bool            // scratch holds one (settle counts it)
}

type capKey struct {
	path string
	code Code
}

type moreKey struct {
	capKey
	sev Severity
}

// admit settles the finding counted last, and reports whether a new
// finding of code in path is kept. When it is not, the caller fills and
// returns hold's finding, which settle counts once the caller is done
// with it (its severity may still change).
func (c *findingCap) admit(path string, code Code) bool {
	c.settle()
	if c.kept == nil {
		c.kept = map[capKey]int{}
	}
	k := capKey{path, code}
	if c.kept[k] < MaxPerCode {
		c.kept[k]++
		return true
	}
	return false
}

// hold returns the finding not kept, for the caller to fill.
func (c *findingCap) hold(f Finding) *Finding {
	c.scratch, c.pending = f, true
	return &c.scratch
}

// settle counts the finding held last.
func (c *findingCap) settle() {
	if !c.pending {
		return
	}
	c.pending = false
	f := c.scratch
	k := moreKey{capKey{f.Path, f.Code}, f.Severity}
	if c.more == nil {
		c.more = map[moreKey]int{}
	}
	i, ok := c.more[k]
	if !ok {
		i = len(c.order)
		c.more[k] = i
		c.order = append(c.order, Finding{Code: f.Code, Severity: f.Severity, Path: f.Path, Line: f.Line})
	}
	m := &c.order[i]
	m.More++
	m.last = f.Line
}

// finish settles and returns the findings that stand for those not kept.
func (c *findingCap) finish() []Finding {
	c.settle()
	out := c.order
	for i := range out {
		f := &out[i]
		lines := fmt.Sprintf("on line %d", f.Line)
		if f.last != f.Line {
			lines = fmt.Sprintf("from line %d to line %d", f.Line, f.last)
		}
		f.Message = fmt.Sprintf("%d more %s %s findings in this file, %s, not listed (cfix lists the first %d of each code in a file)",
			f.More, f.Severity, f.Code, lines, MaxPerCode)
	}
	c.order, c.more, c.kept = nil, nil, nil
	return out
}

// Total is how many findings fs stand for (see Count).
func Total(fs []Finding) int {
	n := 0
	for i := range fs {
		n += fs[i].Count()
	}
	return n
}

// Count is how many findings f stands for: 1, or More.
func (f *Finding) Count() int {
	if f.More > 0 {
		return f.More
	}
	return 1
}
