package show

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// Text writes the report for a person: the session's figures, its files
// as a tree, and validate's findings.
func Text(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	row := func(k, v string) { fmt.Fprintf(b, "%-12s %s\n", k, v) }
	if r.Resumable {
		fmt.Fprintf(b, "session %s\n", r.Session)
	} else {
		fmt.Fprintf(b, "file %s\n", quoted(r.Files[0].Path))
		row("resumable", "no: "+r.NotResumable)
	}
	if l := r.Left; l != nil {
		what := "its main transcript is missing"
		if l.Why == "stub" {
			what = "its transcript holds only metadata lines, no message (rewritten to a stub at resume?)"
		}
		row("lost", what+"; left: "+store.Left(l.Subagents, l.Backups, len(l.Prompts))+" (cfix export writes them)")
		for _, p := range l.Prompts {
			ts := ""
			if p.Timestamp > 0 {
				ts = time.UnixMilli(p.Timestamp).UTC().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(b, "%12s %16s  %s\n", "", ts, quotedWords(p.Display))
		}
	}
	if len(r.Titles) > 0 {
		var ts []string
		for _, t := range r.Titles {
			ts = append(ts, fmt.Sprintf("%q (%s)", t.Text, t.Kind))
		}
		row("titles", strings.Join(ts, ", "))
	}
	list := func(k string, vs []string) {
		if len(vs) > 0 {
			var out []string
			for _, v := range vs {
				out = append(out, quoted(v))
			}
			row(k, strings.Join(out, ", "))
		}
	}
	list("slug", r.Slugs)
	list("cwd", r.CWDs)
	list("versions", r.Versions)
	list("models", r.Models)
	if r.First != "" {
		row("time", span(r.First, r.Last))
	}
	if r.Resumable {
		row("turns", turnsWords(r))
		for _, t := range r.Turns {
			fmt.Fprintf(b, "%12s %4d  %s  %s\n", "", t.N, turnTime(t.Time), quotedWords(t.Words))
		}
	} else {
		row("prompts", plural.Count(r.Prompts, "prompt"))
	}
	row("entries", fmt.Sprintf("%d%s", r.Entries, types(r.Types)))
	u := r.Usage
	row("tokens", fmt.Sprintf("%d input, %d output, %d cache write, %d cache read (all transcripts)", u.Input, u.Output, u.CacheCreation, u.CacheRead))
	row("compactions", fmt.Sprint(r.Compactions))
	for _, f := range r.Files {
		if f.Resume == nil {
			continue
		}
		rs := f.Resume
		s := fmt.Sprintf("%s (loader %s) loads %s", quoted(orNone(rs.Version)), rs.Loader, plural.Count(rs.Loaded, "entry"))
		if rs.Leaf > 0 {
			s += fmt.Sprintf(" up to line %d", rs.Leaf)
		}
		var more []string
		if rs.Compacted > 0 {
			more = append(more, fmt.Sprintf("%d behind compactions", rs.Compacted))
		}
		more = append(more, fmt.Sprintf("%d on other branches", rs.Branches))
		if rs.Progress > 0 {
			more = append(more, plural.Count(rs.Progress, "progress entry")+" beside it")
		}
		if rs.Sidechain > 0 {
			more = append(more, fmt.Sprintf("%d inline subagent entries", rs.Sidechain))
		}
		if rs.Dropped > 0 {
			more = append(more, fmt.Sprintf("%d unanswered tool calls dropped", rs.Dropped))
		}
		if rs.Cut {
			more = append(more, "cut at a missing parent")
		}
		if rs.Cycle {
			more = append(more, "stopped at a cycle")
		}
		s += "; " + strings.Join(more, ", ")
		if mains(r) > 1 {
			s = rel(r.Root, f.Path) + ": " + s
		}
		row("resume", s)
		for k, br := range rs.OtherBranches {
			if k == 5 {
				fmt.Fprintf(b, "%12s and %d more %s (show --json lists %d)\n", "", rs.BranchCount-k, plural.Of(rs.BranchCount-k, "branch"), len(rs.OtherBranches))
				break
			}
			from := "a root of its own"
			if br.Fork > 0 {
				from = fmt.Sprintf("off line %d", br.Fork)
			}
			fmt.Fprintf(b, "%12s branch %s, %s: %s, %s, last %s: cfix fork --at %s\n", "", br.Lines(), from,
				plural.Count(br.Entries, "entry"), plural.Count(br.Messages, "message"), turnTime(br.Last), shell.Quote(br.Leaf))
		}
	}
	b.WriteString("\n")
	tree(b, r)
	if r.Resumable {
		b.WriteString("\n")
		shown := map[string]int{}
		for _, f := range r.Findings {
			// A run of one notice: the first few, then how many more.
			k := f.Path + "\x00" + string(f.Code)
			if shown[k]++; f.Severity < validate.Error && shown[k] > 3 {
				continue
			}
			loc := rel(r.Root, f.Path)
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, f.Line)
			}
			fmt.Fprintf(b, "%s: %s %s: %s\n", visible.String(loc), f.Severity, f.Code, visible.String(f.Message))
			if f.Hint != "" {
				fmt.Fprintf(b, "  hint: %s\n", f.Hint)
			}
		}
		for _, f := range r.Findings {
			k := f.Path + "\x00" + string(f.Code)
			if n := shown[k]; n > 3 && f.Severity < validate.Error {
				fmt.Fprintf(b, "%s: %d more %s findings (cfix validate lists them)\n", rel(r.Root, f.Path), n-3, f.Code)
				shown[k] = 0
			}
		}
		fmt.Fprintf(b, "validate: %s, %s, %s\n", plural.Count(r.Counts["error"], "error"), plural.Count(r.Counts["warning"], "warning"), plural.Count(r.Counts["notice"], "notice"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// quoted returns s as it is when every character of it prints, and
// quoted otherwise: a cwd, slug or file name that holds a line break or an
// escape sequence neither breaks the listing nor reaches the terminal.
func quoted(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}

func mains(r *Report) int {
	n := 0
	for _, f := range r.Files {
		if f.Kind == "main" {
			n++
		}
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "no version"
	}
	return s
}

// span renders a time span: its ends and how long it lasted.
func span(first, last string) string {
	a, err1 := time.Parse(time.RFC3339Nano, first)
	z, err2 := time.Parse(time.RFC3339Nano, last)
	if err1 != nil || err2 != nil {
		return first + " to " + last
	}
	const layout = "2006-01-02 15:04:05"
	return fmt.Sprintf("%s to %s UTC (%s)", a.UTC().Format(layout), z.UTC().Format(layout), z.Sub(a).Round(time.Second))
}

// types renders the entry counts by type, most first.
func types(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		name := k
		if name == "" {
			name = "(no type)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// turnsWords is the turns row: the turns of the history a resume loads,
// the prompts of the whole transcript, and why the two differ: the turns
// that start at what the client wrote (an interruption, a command's
// output), the prompts behind compactions or on other branches.
func turnsWords(r *Report) string {
	s := fmt.Sprintf("%d on the history a resume loads (cfix fork --turn N), %s in all", len(r.Turns), plural.Count(r.Prompts, "prompt"))
	var marks []string
	for _, t := range r.Turns {
		if notPrompt(t.Words) {
			marks = append(marks, strconv.Itoa(t.N))
		}
	}
	var why []string
	switch {
	case len(marks) == 1:
		why = append(why, "turn "+marks[0]+" starts at what the client wrote (an interruption or a command's output), not at a prompt")
	case len(marks) > 1:
		why = append(why, "turns "+strings.Join(marks, ", ")+" start at what the client wrote (an interruption or a command's output), not at a prompt")
	}
	if n := r.Prompts - (len(r.Turns) - len(marks)); n > 0 {
		why = append(why, plural.Count(n, "prompt")+" behind compactions or on other branches")
	}
	if len(why) > 0 {
		s += ": " + strings.Join(why, "; ")
	}
	return s
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// SideName names a side run's label.
func SideName(label string) string {
	switch label {
	case "acompact":
		return "compaction"
	case "aprompt_suggestion":
		return "prompt suggestion"
	case "aside_question":
		return "side question"
	}
	return strings.TrimPrefix(label, "a")
}

// label describes a transcript in the tree.
func (f *File) label() string {
	var what string
	switch f.Kind {
	case "main":
		what = "main transcript"
	case "side":
		what = "side file: " + SideName(f.Side) + ", never resumed"
	case "workflow":
		what = "workflow subagent"
	case "loose":
		what = "not resumable"
	default:
		what = "subagent"
	}
	if f.Layout == "flat" {
		what += " (flat)"
	}
	if f.AgentType != "" {
		what += " " + quoted(f.AgentType)
	}
	if f.Description != "" {
		what += fmt.Sprintf(": %q", f.Description)
	}
	s := f.Stats
	what += ", " + plural.Count(s.Entries, "entry")
	if f.Kind != "main" && f.Kind != "loose" {
		if t := s.Usage.Total(); t > 0 {
			what += ", " + plural.Count(t, "token")
		}
	}
	if s.NotJSON > 0 {
		what += ", " + plural.Count(s.NotJSON, "line") + " not JSON"
	}
	return what + ", " + changeset.Size(f.Size)
}

func (s *Sidecar) label() string {
	var parts []string
	if s.Kind != filepath.Base(s.Path) && s.Kind != filepath.Base(filepath.Dir(s.Path)) && s.Kind != "session folder" {
		parts = append(parts, s.Kind)
	}
	if s.Dir {
		parts = append(parts, plural.Count(s.Files, "file"))
	}
	return strings.Join(append(parts, changeset.Size(s.Size)), ", ")
}

type node struct {
	name     string
	label    string
	children map[string]*node
	order    []string
}

func (n *node) child(name string) *node {
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c, ok := n.children[name]
	if !ok {
		c = &node{name: name}
		n.children[name] = c
		n.order = append(n.order, name)
	}
	return c
}

// tree writes the family's files as a tree of their paths under the store.
func tree(b *strings.Builder, r *Report) {
	top := &node{}
	put := func(path, label string) {
		n := top
		dir := strings.HasSuffix(path, "/")
		parts := strings.Split(filepath.ToSlash(rel(r.Root, strings.TrimSuffix(path, "/"))), "/")
		if dir {
			parts[len(parts)-1] += "/"
		}
		for _, part := range parts {
			n = n.child(part)
		}
		n.label = label
	}
	for i := range r.Files {
		put(r.Files[i].Path, r.Files[i].label())
	}
	for i := range r.Sidecars {
		p := r.Sidecars[i].Path
		if r.Sidecars[i].Dir {
			p += "/"
		}
		put(p, r.Sidecars[i].label())
	}
	var walk func(n *node, prefix string)
	walk = func(n *node, prefix string) {
		names := append([]string(nil), n.order...)
		// A transcript before its session folder: x.jsonl, then x/.
		key := func(name string) string {
			if n == top && name == "projects" {
				return "\x00" // the transcripts first
			}
			if n.children[name].children != nil {
				return name + "/"
			}
			return name
		}
		sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
		for i, name := range names {
			c := n.children[name]
			branch, next := "├── ", "│   "
			if i == len(names)-1 {
				branch, next = "└── ", "    "
			}
			if prefix == "" && n == top {
				branch, next = "", ""
			}
			// Fold a folder of one folder into one line (projects/<folder>/).
			shown := name
			for c.label == "" && len(c.order) == 1 && c.children[c.order[0]].children != nil && c.children[c.order[0]].label == "" {
				shown += "/" + c.order[0]
				c = c.children[c.order[0]]
			}
			if c.label != "" {
				fmt.Fprintf(b, "%s%s%s  %s\n", prefix, branch, quoted(shown), c.label)
			} else {
				fmt.Fprintf(b, "%s%s%s/\n", prefix, branch, quoted(shown))
			}
			walk(c, prefix+next)
		}
	}
	walk(top, "")
}

// turnTime shows a turn's timestamp as the time row does, in UTC.
func turnTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return fmt.Sprintf("%-19s", ts)
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// quotedWords shows a prompt's first words as a terminal shows them.
func quotedWords(s string) string { return visible.String(s) }
