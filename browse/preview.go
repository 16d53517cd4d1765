package browse

import (
	"html"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The kinds of folded parts of a preview: thinking, and the rest that
// cfix export folds (tool calls with their input and output, subagent
// conversations, notes, compaction summaries).
const (
	foldThinking = 1 + iota
	foldTools
)

// part is a piece of a preview: plain lines, a turn's heading, or a
// folded block (its summary and its body).
type part struct {
	fold  int // foldThinking or foldTools for a folded block; 0 else
	title string
	lines []string
	turn  int // the turn a "### Turn N" heading opens
}

// doc is a preview's conversation, parsed from the Markdown cfix export
// writes, so that its folded blocks can be opened and closed and its
// turns chosen.
type doc struct {
	parts []part
	turns []int // the turns whose heading the preview holds, in order
}

// parseDoc parses the Markdown export writes: a folded block is a line
// "<details><summary>TITLE</summary>" and everything to its matching
// "</details>" (nested blocks inside, in a subagent's conversation, go with
// it); a fenced code block (export's own, at the left margin) is read
// through, so a line inside it is never taken for a tag or a heading.
func parseDoc(text string) *doc {
	d := &doc{}
	var cur *part
	plain := func() *part {
		if cur == nil || cur.fold != 0 || cur.turn != 0 {
			d.parts = append(d.parts, part{})
			cur = &d.parts[len(d.parts)-1]
		}
		return cur
	}
	fence, depth := "", 0
	for line := range strings.SplitSeq(text, "\n") {
		if fence != "" {
			if line == fence {
				fence = ""
			}
			cur.lines = append(cur.lines, line)
			continue
		}
		if f := fenceOf(line); f != "" {
			fence = f
			if depth == 0 {
				plain()
			}
			cur.lines = append(cur.lines, line)
			continue
		}
		if title, ok := strings.CutPrefix(line, "<details><summary>"); ok {
			if depth == 0 {
				title = strings.TrimSuffix(title, "</summary>")
				fold := foldTools
				if title == "Thinking" || title == "Thinking (redacted)" {
					fold = foldThinking
				}
				title = strings.NewReplacer("<code>", "", "</code>", "").Replace(title)
				d.parts = append(d.parts, part{fold: fold, title: html.UnescapeString(title)})
				cur = &d.parts[len(d.parts)-1]
				depth = 1
				continue
			}
			depth++
		}
		if line == "</details>" {
			switch depth {
			case 0:
				// The end of a block whose start the preview cut off.
				continue
			case 1:
				depth = 0
				cur.lines = trimBlank(cur.lines)
				cur = nil
				continue
			}
			depth--
		}
		if depth == 0 {
			if n, ok := turnHeading(line); ok {
				d.parts = append(d.parts, part{turn: n, lines: []string{line}})
				d.turns = append(d.turns, n)
				cur = nil
				continue
			}
			plain()
		}
		cur.lines = append(cur.lines, unescape.Replace(line))
	}
	return d
}

// unescape takes back what export escapes in text outside code (< and &
// that Markdown would read as HTML): the preview shows text, not HTML.
var unescape = strings.NewReplacer("&lt;", "<", "&amp;", "&")

// fenceOf returns the fence a line of export's opens (a run of three
// backticks or more at the left margin, no backtick after it), or "".
func fenceOf(line string) string {
	if !strings.HasPrefix(line, "```") {
		return ""
	}
	run := len(line) - len(strings.TrimLeft(line, "`"))
	if strings.Contains(line[run:], "`") {
		return ""
	}
	return line[:run]
}

// turnHeading reads export's "### Turn N".
func turnHeading(line string) (int, bool) {
	s, ok := strings.CutPrefix(line, "### Turn ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// rendered is a doc as the preview shows it.
type rendered struct {
	lines []string
	turn  map[int]int // a turn → the line of its heading
}

// render lays d out: the folded blocks of the kinds open shows whole
// (▾ and the summary, then the body), the others on one line (▸, the
// summary and how many lines it folds); the heading of turn cur is marked.
func (d *doc) render(open map[int]bool, cur int) rendered {
	r := rendered{turn: map[int]int{}}
	for i := range d.parts {
		p := &d.parts[i]
		switch {
		case p.turn != 0:
			r.turn[p.turn] = len(r.lines)
			if p.turn == cur {
				r.lines = append(r.lines, selStyle.Render("▶ "+p.lines[0]+" · f forks here"))
			} else {
				r.lines = append(r.lines, p.lines[0])
			}
		case p.fold != 0 && open[p.fold]:
			r.lines = append(r.lines, "▾ "+p.title)
			r.lines = append(r.lines, p.lines...)
			r.lines = append(r.lines, "")
		case p.fold != 0:
			n := len(p.lines)
			more := ""
			if n > 0 {
				more = dimStyle.Render(" (" + strconv.Itoa(n) + " lines)")
			}
			r.lines = append(r.lines, "▸ "+p.title+more)
		default:
			r.lines = append(r.lines, p.lines...)
		}
	}
	return r
}

// find returns the first line of r that holds text (case folded) and, if
// one does, best the snippet around it, or -1.
func (r rendered) find(text, around string) int {
	text, around = strings.ToLower(text), strings.ToLower(around)
	at := -1
	for i, l := range r.lines {
		l = strings.ToLower(ansi.Strip(l))
		if !strings.Contains(l, text) {
			continue
		}
		if around != "" && strings.Contains(l, around) {
			return i
		}
		if at < 0 {
			at = i
		}
	}
	return at
}

// offset is the first screen line of line i when the lines are wrapped
// to w columns (as the preview's viewport wraps them).
func (r rendered) offset(i, w int) int {
	y := 0
	for _, l := range r.lines[:min(i, len(r.lines))] {
		y += max(1, (ansi.StringWidth(l)+max(1, w)-1)/max(1, w))
	}
	return y
}

// lineAt is the line of r that screen line y (lines wrapped to w
// columns) is part of.
func (r rendered) lineAt(y, w int) int {
	at := 0
	for i, l := range r.lines {
		at += max(1, (ansi.StringWidth(l)+max(1, w)-1)/max(1, w))
		if at > y {
			return i
		}
	}
	return max(0, len(r.lines)-1)
}
