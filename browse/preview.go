package browse

import (
	"html"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cfix-dev/cfix/internal/plural"
)

// The kinds of folded parts of a preview: thinking, and the rest that
// cfix export folds (tool calls with their input and output, subagent
// conversations, notes, compaction summaries).
const (
	foldThinking = 1 + iota
	foldTools
)

// part is a piece of a preview: plain lines, a turn's heading, the
// heading of a message a fork can end at, or a folded block (its summary
// and its body).
type part struct {
	fold  int // foldThinking or foldTools for a folded block; 0 else
	title string
	lines []string
	turn  int // the turn a "### Turn N" heading opens
	msg   int // 1 + the index in doc.msgs of the message this heading opens
}

// message is a message of the preview a fork can end at (export's
// Options.Anchors marks them).
type message struct {
	at   string // the entry cfix fork --at ends the fork at
	head string // its heading, without the "#### "
	turn int    // the turn it is part of; 0 when its heading is not in the preview
	last bool   // the last message of its turn: a fork at it is one at the turn
}

// doc is a preview's conversation, parsed from the Markdown cfix export
// writes, so that its folded blocks can be opened and closed and its
// messages chosen.
type doc struct {
	parts []part
	turns []int     // the turns whose heading the preview holds, in order
	msgs  []message // the messages a fork can end at, in order
}

// The lines export's Options.Anchors writes around a message: before its
// heading, and after it with the entry a fork at it ends at.
const (
	markStart = "<!-- cfix:message -->"
	markAt    = "<!-- cfix:at "
	markEnd   = " -->"
)

// parseDoc parses the Markdown export writes: a folded block is a line
// "<details><summary>TITLE</summary>" and everything to its matching
// "</details>" (nested blocks inside, in a subagent's conversation, go with
// it); a fenced code block (export's own, at the left margin) is read
// through, so a line inside it is never taken for a tag or a heading. The
// marks of Options.Anchors make the heading after a start mark a message
// a fork can end at, at the entry its end mark names; they are not shown.
// A message without an end mark, or an end mark without its message (the
// preview cut before it), is no fork point.
func parseDoc(text string) *doc {
	d := &doc{}
	var cur *part
	// open is the message whose end mark comes next (-1: none); start: the
	// line before was a start mark; ended: the message the last line that
	// is not blank ended, or -1.
	open, start, ended, turn := -1, false, -1, 0
	plain := func() *part {
		if cur == nil || cur.fold != 0 || cur.turn != 0 {
			d.parts = append(d.parts, part{})
			cur = &d.parts[len(d.parts)-1]
		}
		return cur
	}
	fence, depth := "", 0
	for line := range strings.SplitSeq(text, "\n") {
		wasStart, wasEnded := start, ended
		start = false
		if line != "" {
			ended = -1
		}
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
				if wasEnded >= 0 {
					d.msgs[wasEnded].last = true
				}
				d.parts = append(d.parts, part{turn: n, lines: []string{line}})
				d.turns = append(d.turns, n)
				cur, turn = nil, n
				continue
			}
			if line == markStart {
				start, open = true, -1
				continue
			}
			if at, ok := strings.CutPrefix(line, markAt); ok {
				if at, ok = strings.CutSuffix(at, markEnd); ok && open >= 0 && at != "" && !strings.ContainsAny(at, " <>") {
					d.msgs[open].at = at
					ended = open
				}
				open = -1
				continue
			}
			if head, ok := strings.CutPrefix(line, "#### "); ok && wasStart {
				d.msgs = append(d.msgs, message{head: unescape.Replace(head), turn: turn})
				open = len(d.msgs) - 1
				d.parts = append(d.parts, part{msg: open + 1, lines: []string{unescape.Replace(line)}})
				cur = nil
				continue
			}
			plain()
			if strings.HasPrefix(line, attachLine) {
				line = unescapeLine(line)
			}
		}
		cur.lines = append(cur.lines, unescape.Replace(line))
	}
	if ended >= 0 {
		// The conversation's last message: the last of its turn.
		d.msgs[ended].last = true
	}
	d.points()
	return d
}

// points keeps of d.msgs the messages a fork can end at (an end mark
// named its entry): the headings of the others are plain lines.
func (d *doc) points() {
	var keep []message
	for i := range d.parts {
		p := &d.parts[i]
		if p.msg == 0 {
			continue
		}
		if m := d.msgs[p.msg-1]; m.at != "" {
			keep = append(keep, m)
			p.msg = len(keep)
		} else {
			p.msg = 0
		}
	}
	d.msgs = keep
}

// unescape takes back what export escapes in text outside code (< and &
// that Markdown would read as HTML): the preview shows text, not HTML.
var unescape = strings.NewReplacer("&lt;", "<", "&amp;", "&")

// attachLine starts the line export writes for an attachment
// (export.Attachment), whose words it escapes as Markdown.
const attachLine = "- attachment · "

// unescapeLine takes the backslashes off the punctuation export escapes in
// a line of Markdown, outside its code spans (whose text is as it is).
func unescapeLine(line string) string {
	if !strings.Contains(line, `\`) {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && i+1 < len(line) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", line[i+1]) >= 0 {
			b.WriteByte(line[i+1])
			i += 2
			continue
		}
		if c == '`' {
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			if end := strings.Index(line[i+n:], line[i:i+n]); end >= 0 {
				b.WriteString(line[i : i+n+end+n])
				i += n + end + n
				continue
			}
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

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
	msg   []int // a message (its index in doc.msgs) → the line of its heading
}

// render lays d out: the folded blocks of the kinds open shows whole
// (▾ and the summary, then the body), the others on one line (▸, the
// summary and how many lines it folds); the heading of message cur (an
// index in d.msgs) is marked.
func (d *doc) render(open map[int]bool, cur int) rendered {
	r := rendered{msg: make([]int, len(d.msgs))}
	for i := range d.parts {
		p := &d.parts[i]
		switch {
		case p.msg != 0:
			r.msg[p.msg-1] = len(r.lines)
			if p.msg-1 == cur {
				r.lines = append(r.lines, selStyle.Render("▶ "+p.lines[0]+" · f forks here"))
			} else {
				r.lines = append(r.lines, p.lines[0])
			}
		case p.turn != 0:
			r.lines = append(r.lines, p.lines[0])
		case p.fold != 0 && open[p.fold]:
			r.lines = append(r.lines, "▾ "+p.title)
			r.lines = append(r.lines, p.lines...)
			r.lines = append(r.lines, "")
		case p.fold != 0:
			n := len(p.lines)
			more := ""
			if n > 0 {
				more = dimStyle.Render(" (" + plural.Count(n, "line") + ")")
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
