package export

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
)

// markdown writes GitHub-flavoured Markdown. Folded parts are <details>
// blocks, which GitHub renders; text is escaped so that nothing in it (a
// fence left open, a tag such as </details>) can break the document.
type markdown struct {
	w *bufio.Writer
	// list says the last thing written is an item of a list of
	// attachment lines, which a blank line ends.
	list bool
}

// endList ends a list of attachment lines before what follows.
func (m *markdown) endList() {
	if m.list {
		m.w.WriteString("\n")
		m.list = false
	}
}

func (m *markdown) begin(h header) {
	fmt.Fprintf(m.w, "# %s\n\n", mdLine(h.Title))
	if h.Session != "" {
		fmt.Fprintf(m.w, "- session: `%s`\n", h.Session)
	}
	fmt.Fprintf(m.w, "- transcript: %s\n", codeSpan(h.Path))
	for _, f := range h.Facts {
		fmt.Fprintf(m.w, "- %s: %s\n", f[0], mdLine(f[1]))
	}
	fmt.Fprintf(m.w, "\n_%s_\n\n", mdLine(h.What))
}

func (m *markdown) message(role, model, ts string, other bool) {
	m.endList()
	head := "#### " + role
	if model != "" {
		head += " · " + mdLine(model)
	}
	if ts != "" {
		head += " · " + mdLine(ts)
	}
	if other {
		head += " · _other branch: a resume does not load it_"
	}
	fmt.Fprintf(m.w, "%s\n\n", head)
}

func (m *markdown) endMessage() {}

func (m *markdown) text(s string) {
	m.endList()
	writeMDText(m.w, s)
	m.w.WriteString("\n\n")
}

func (m *markdown) folded(title, body, class string) {
	m.endList()
	fmt.Fprintf(m.w, "<details><summary>%s</summary>\n\n", html.EscapeString(oneLine(title)))
	switch {
	case strings.TrimSpace(body) == "":
	case class == "thinking" || class == "summary":
		writeMDText(m.w, body)
		m.w.WriteString("\n\n")
	default:
		m.w.WriteString(fenced(body, ""))
		m.w.WriteString("\n\n")
	}
	m.w.WriteString("</details>\n\n")
}

func (m *markdown) tool(c toolCall, sub func() error) error {
	m.endList()
	title := "<code>" + html.EscapeString(oneLine(c.Name)) + "</code>"
	if c.Summary != "" {
		title += " " + html.EscapeString(oneLine(c.Summary))
	}
	if c.IsError {
		title += " (error)"
	}
	fmt.Fprintf(m.w, "<details><summary>%s</summary>\n\n", title)
	if c.Input != "" && c.Input != "{}" {
		fmt.Fprintf(m.w, "%s\n\n", fenced(c.Input, "json"))
	}
	if c.HasResult {
		label := "Result"
		if c.IsError {
			label = "Error"
		}
		fmt.Fprintf(m.w, "**%s**\n\n%s\n\n", label, fenced(c.Result, ""))
	}
	if sub != nil {
		fmt.Fprintf(m.w, "**Subagent conversation**\n\n")
		if err := sub(); err != nil {
			return err
		}
		fmt.Fprintf(m.w, "**End of the subagent conversation**\n\n")
	}
	m.w.WriteString("</details>\n\n")
	return nil
}

func (m *markdown) note(kind, body, ts string, other bool) {
	title := kind
	if other {
		title += " (other branch)"
	}
	m.folded(title, body, "note")
}

func (m *markdown) compaction(s, ts string) {
	m.endList()
	fmt.Fprintf(m.w, "---\n\n**%s** · %s\n\n---\n\n", mdLine(s), mdLine(ts))
}

// attachment writes an attachment's line as an item of a list (the
// attachments in a row are one list); with a body, a folded block whose
// summary is the line.
func (m *markdown) attachment(a Attachment, body, ts string, other bool) {
	if body != "" {
		title := html.EscapeString(oneLine("attachment · " + a.What))
		if a.Name != "" {
			title += " <code>" + html.EscapeString(oneLine(a.Name)) + "</code>"
		}
		title += html.EscapeString(oneLine(a.More))
		if other {
			title += " (other branch)"
		}
		m.endList()
		fmt.Fprintf(m.w, "<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", title, fenced(body, ""))
		return
	}
	line := "- attachment · " + mdLine(a.What)
	if a.Name != "" {
		line += " " + codeSpan(a.Name)
	}
	line += mdLine(a.More)
	if other {
		line += " _(other branch)_"
	}
	m.w.WriteString(line + "\n")
	m.list = true
}

func (m *markdown) turn(n int) {
	m.endList()
	fmt.Fprintf(m.w, "### Turn %d\n\n", n)
}

func (m *markdown) end() { m.endList() }

// forkStart and forkEnd write HTML comments, which a Markdown viewer
// does not show, on lines of their own.
func (m *markdown) forkStart() {
	m.endList()
	m.w.WriteString("<!-- cfix:message -->\n")
}

func (m *markdown) forkEnd(uuid string) {
	m.endList()
	fmt.Fprintf(m.w, "<!-- cfix:at %s -->\n", uuid)
}

// fenced puts s in a fenced code block whose fence is longer than any run
// of backticks in s.
func fenced(s, info string) string {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + info + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// codeSpan puts s in an inline code span, with the spaces that keep it
// whole only when it needs them (s holds a backtick or starts or ends with
// a space).
func codeSpan(s string) string {
	s = oneLine(s)
	if s != "" && !strings.Contains(s, "`") && strings.TrimSpace(s) == s {
		return "`" + s + "`"
	}
	f := "`"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + " " + s + " " + f
}

// mdLine escapes one line of plain text for Markdown.
func mdLine(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '#', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// oneLine puts s on one line: a line break in a <summary> or a heading
// would end the HTML block or the heading that holds it.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}

// mdText makes a message's text, which is Markdown, safe to embed: outside
// code, < and & are escaped so that no HTML in it (</details>, <script>) is
// taken as HTML. Code is never passed on as the text has it: where a list
// item or a block quote holds a fence, a line that leaves the container
// ends the fence too, and what follows would be read as HTML. Each fenced
// block is written again as one of export's own at the left margin, which
// nothing before it can hold, with a fence longer than any backtick run
// inside; an indented line stays text, escaped.
func mdText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	writeMDText(&b, s)
	return b.String()
}

// writeMDText writes mdText(s) to out, line by line: a pasted file of
// hundreds of MB is not copied whole again.
func writeMDText(out io.StringWriter, s string) {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
	}
	first := true
	put := func(t string) {
		if !first {
			out.WriteString("\n")
		}
		out.WriteString(t)
		first = false
	}
	var code []string
	fence, info, indent := "", "", 0
	for rest, more := strings.TrimRight(s, "\n"), true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		t := strings.TrimLeft(line, " ")
		n := len(line) - len(t)
		if fence != "" {
			if c := strings.TrimRight(t, " \t"); n <= 3 && len(c) >= len(fence) && strings.Trim(c, fence[:1]) == "" {
				put(fenced(strings.Join(code, "\n"), info))
				fence, code = "", nil
				continue
			}
			code = append(code, line[min(n, indent):])
			continue
		}
		if n <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			run := len(t) - len(strings.TrimLeft(t, t[:1]))
			if t[0] != '`' || !strings.Contains(t[run:], "`") {
				fence, indent = t[:run], n
				// The info string's first word names the language.
				info = ""
				if f := strings.Fields(t[run:]); len(f) > 0 {
					info = strings.Map(func(r rune) rune {
						if r == '`' || r == '<' || r == '&' {
							return -1
						}
						return r
					}, f[0])
				}
				continue
			}
		}
		put(escapeInline(line))
	}
	if fence != "" {
		put(fenced(strings.Join(code, "\n"), info))
	}
}

// escapeInline escapes < and & outside the code spans of a line. A
// backslash escape is kept whole: an escaped backtick opens no code span.
func escapeInline(line string) string {
	if strings.IndexAny(line, "\\`<&") < 0 {
		return line
	}
	var b strings.Builder
	b.Grow(len(line))
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && i+1 < len(line) && strings.IndexByte(punct, line[i+1]) >= 0 {
			b.WriteString(line[i : i+2])
			i += 2
			continue
		}
		if c == '`' {
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			if end := closingRun(line[i+n:], n); end >= 0 {
				b.WriteString(line[i : i+n+end+n])
				i += n + end + n
				continue
			}
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		switch c {
		case '<':
			b.WriteString("&lt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

// punct is the ASCII punctuation a backslash escapes in Markdown.
const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// closingRun returns where in s a run of exactly n backticks starts, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		k := 0
		for i+k < len(s) && s[i+k] == '`' {
			k++
		}
		if k == n {
			return i
		}
		i += k
	}
	return -1
}
