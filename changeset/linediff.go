package changeset

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
)

// How a long line replaced by another is shown.
const (
	pairContext  = 40      // bytes of unchanged text shown on each side of a change
	pairMember   = 80      // how far a change's JSON member may start before it, or end after it
	pairChanged  = 160     // the longest changed text shown whole
	pairRegions  = 4       // changes shown per line
	pairMaxDiff  = 1 << 16 // past this many differing bytes, no character diff
	pairHeadSize = 40      // the start of the line, shown before a change further in
)

// change is a run of changed bytes: a[a0:a1] became b[b0:b1].
type change struct{ a0, a1, b0, b1 int }

// changedPair renders a line replaced by one line. Short lines are shown
// whole. Of long ones (a re-parent rewrites one field of a line of
// kilobytes), go-diff finds the changed characters and each line shows
// its side of every change with the JSON member around it or some context:
// the old value on the - line, the new one on the + line, at the same
// place, and the line's start, its length and "…" for the rest.
func changedPair(a, b string) (string, string) {
	if len(a) <= MaxShownLine && len(b) <= MaxShownLine {
		return visible.String(a), visible.String(b)
	}
	cs := changes(a, b)
	if len(cs) == 0 {
		return shorten([]byte(a)), shorten([]byte(b))
	}
	x, y := a, b
	if len(a) > MaxShownLine {
		x = window(a, cs, false)
	}
	if len(b) > MaxShownLine {
		y = window(b, cs, true)
	}
	return visible.String(x), visible.String(y)
}

// changes lists the changed runs of a against b: common head and tail
// are skipped by bytes, the middle is diffed by characters and cleaned up
// to whole words and values (DiffCleanupSemantic), and changes with little
// between them are joined.
func changes(a, b string) []change {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && (p < len(a) && !utf8.RuneStart(a[p]) || p < len(b) && !utf8.RuneStart(b[p])) {
		p--
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && (!utf8.RuneStart(a[len(a)-s]) || !utf8.RuneStart(b[len(b)-s])) {
		s--
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	// go-diff works on characters: bytes that are not UTF-8 would come
	// back as U+FFFD, longer, and the offsets would drift.
	if len(am)+len(bm) > pairMaxDiff || !utf8.ValidString(am) || !utf8.ValidString(bm) {
		return []change{{p, len(a) - s, p, len(b) - s}}
	}
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(am, bm, false))
	var out []change
	ai, bi := p, p
	open := false
	for _, d := range diffs {
		n := len(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			open = false
			ai += n
			bi += n
			continue
		}
		if !open {
			// Join a change to the last one when little lies between.
			if k := len(out) - 1; k >= 0 && ai-out[k].a1 <= pairContext {
				open = true
			} else {
				out = append(out, change{ai, ai, bi, bi})
				open = true
			}
		}
		if d.Type == diffmatchpatch.DiffDelete {
			ai += n
		} else {
			bi += n
		}
		out[len(out)-1].a1, out[len(out)-1].b1 = ai, bi
	}
	return out
}

// window renders one side of a changed line.
func window(s string, cs []change, second bool) string {
	var w strings.Builder
	pos := 0 // end of what is shown
	for i, c := range cs {
		if i == pairRegions {
			w.WriteString(fmt.Sprintf("… (%d more %s)", len(cs)-i, plural.Of(len(cs)-i, "change")))
			pos = -1
			break
		}
		c0, c1 := c.a0, c.a1
		if second {
			c0, c1 = c.b0, c.b1
		}
		from, to := memberStart(s, c0), memberEnd(s, c1)
		if from < pos {
			from = pos
		}
		switch {
		case from <= pos:
		case pos == 0 && from <= pairHeadSize+pairContext:
			from = 0
		case pos == 0:
			w.WriteString(s[:runeStart(s, pairHeadSize)])
			w.WriteString("…")
		default:
			w.WriteString("…")
		}
		w.WriteString(s[from:c0])
		if c1-c0 > pairChanged {
			w.WriteString(s[c0:runeStart(s, c0+pairChanged-40)])
			w.WriteString(fmt.Sprintf("…[%d bytes]…", c1-c0))
			w.WriteString(s[runeStart(s, c1-30):c1])
		} else {
			w.WriteString(s[c0:c1])
		}
		if next := i + 1; next < len(cs) && next < pairRegions {
			n0 := cs[next].a0
			if second {
				n0 = cs[next].b0
			}
			if to > n0 {
				to = n0
			}
		}
		w.WriteString(s[c1:to])
		pos = to
	}
	if pos >= 0 && pos < len(s) {
		w.WriteString("…")
	}
	if len(s) > MaxShownLine {
		fmt.Fprintf(&w, " [%d bytes]", len(s))
	}
	return w.String()
}

// memberStart returns where the JSON member holding byte at starts (its
// key's opening quote) when that is near, else at less some context.
func memberStart(s string, at int) int {
	lo := max(at-pairMember, 0)
	if i := max(strings.LastIndex(s[lo:at], `,"`), strings.LastIndex(s[lo:at], `{"`)); i >= 0 {
		return lo + i + 1
	}
	return runeStart(s, max(at-pairContext, 0))
}

// memberEnd returns where the context after a change ending at at ends:
// some context, to the end of the JSON member it falls in when that is
// near.
func memberEnd(s string, at int) int {
	end := runeStart(s, min(at+pairContext, len(s)))
	hi := min(at+pairMember, len(s))
	if i := strings.IndexAny(s[end:max(hi, end)], ",}"); i >= 0 {
		return end + i
	}
	return end
}

// runeStart moves i back to the start of the character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
