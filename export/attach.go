package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/cfix-dev/cfix/internal/plural"
)

// The ways an export shows attachment entries (Options.Attachments).
const (
	// AttachSummary shows each attachment as one line naming its kind and
	// what it holds, and leaves out the quiet kinds: Claude Code's own
	// bookkeeping (prompt snapshots, tool, skill and agent listings,
	// dates, reminders). The default.
	AttachSummary = "summary"
	// AttachAll shows every attachment, the quiet kinds too, each folded
	// under its line with all it holds.
	AttachAll = "all"
	// AttachNone leaves attachments out.
	AttachNone = "none"
)

// AttachModes are the values Options.Attachments takes.
var AttachModes = []string{AttachSummary, AttachAll, AttachNone}

// Attachment is what an attachment entry stands for in an export: one
// line, "attachment · " then What, Name (a file, path or name, shown as
// code) and More.
type Attachment struct {
	Type string // the attachment's type; "" when it has none
	What string // what it is: "file", "hook output (SessionStart)"
	Name string // the file, path or name it is about; "" when none
	More string // the rest of the line: " (120 lines)", ": its first words…"
	// Quiet is Claude Code's own bookkeeping, which tells a reader
	// nothing of the conversation (the prompt and tool schemas it sent,
	// listings, dates, empty reminders): shown only with AttachAll.
	Quiet bool
}

// Line is the attachment's line as plain text.
func (a Attachment) Line() string {
	s := "attachment · " + a.What
	if a.Name != "" {
		s += " " + a.Name
	}
	return s + a.More
}

// Describe reads the value of an attachment entry's "attachment" field
// into its line.
func Describe(raw json.RawMessage) Attachment {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&m) != nil || m == nil {
		return Attachment{What: "that is not an object"}
	}
	typ, _ := m["type"].(string)
	if f, ok := describers[typ]; ok {
		a := f(m)
		a.Type = typ
		return a
	}
	if typ == "" {
		return Attachment{What: "of no type", Name: nameOf(m)}
	}
	// A kind this version of cfix does not know: its type, and what it
	// names.
	return Attachment{Type: typ, What: words(typ), Name: nameOf(m)}
}

// describers say, per attachment type, what an attachment of that type
// holds: the types Claude Code writes (schemas/attachment.json's, those
// docs/clients.md measured and those found in real stores).
var describers = map[string]func(m map[string]any) Attachment{
	// Files and folders the prompt names (an @-mention, a file read
	// again after a compaction), or that changed.
	"file": func(m map[string]any) Attachment {
		a := Attachment{What: "file", Name: path(m, "displayPath", "filename")}
		c, _ := m["content"].(map[string]any)
		switch t, _ := c["type"].(string); t {
		case "text":
			f, _ := c["file"].(map[string]any)
			n, total, start := num(f, "numLines"), num(f, "totalLines"), num(f, "startLine")
			if n == 0 {
				n = lineCount(str(f, "content"))
			}
			switch {
			case total > n && n > 0:
				a.More = fmt.Sprintf(" (lines %d to %d of %d)", max(start, 1), max(start, 1)+n-1, total)
			default:
				a.More = fmt.Sprintf(" (%s)", plural.Count(n, "line"))
			}
		case "":
		default:
			a.More = " (" + words(t) + ")"
		}
		return a
	},
	"compact_file_reference": func(m map[string]any) Attachment {
		return Attachment{What: "file", Name: path(m, "displayPath", "filename"), More: " (read before the compaction, named only)"}
	},
	"already_read_file": func(m map[string]any) Attachment {
		return Attachment{What: "file", Name: path(m, "displayPath", "filename"), More: " (already read)"}
	},
	"pdf_reference": func(m map[string]any) Attachment {
		a := Attachment{What: "PDF", Name: path(m, "displayPath", "filename")}
		if n := num(m, "pageCount"); n > 0 {
			a.More = " (" + plural.Count(n, "page") + ")"
		}
		return a
	},
	"directory": func(m map[string]any) Attachment {
		a := Attachment{What: "directory", Name: path(m, "displayPath", "path")}
		if c := str(m, "content"); c != "" {
			a.More = " (" + plural.Count(lineCount(c), "entry") + ")"
		}
		return a
	},
	"edited_text_file": func(m map[string]any) Attachment {
		a := Attachment{What: "file changed", Name: path(m, "filename")}
		if s := str(m, "snippet"); strings.TrimSpace(s) != "" {
			a.More = " (" + plural.Count(lineCount(s), "line") + " of it)"
		}
		return a
	},
	"edited_image_file": func(m map[string]any) Attachment {
		return Attachment{What: "image changed", Name: path(m, "filename")}
	},
	"opened_file_in_ide": func(m map[string]any) Attachment {
		return Attachment{What: "file open in the IDE", Name: path(m, "filename")}
	},
	"selected_lines_in_ide":  selection("lines selected in the IDE"),
	"selected_lines_in_diff": selection("lines selected in a diff"),
	"nested_memory": func(m map[string]any) Attachment {
		a := Attachment{What: "memory", Name: path(m, "displayPath", "path")}
		c, _ := m["content"].(map[string]any)
		if s := str(c, "content"); s != "" {
			a.More = " (" + plural.Count(lineCount(s), "line") + ")"
		}
		return a
	},
	"memory_update": func(m map[string]any) Attachment {
		ps := strs(m["paths"])
		a := Attachment{What: "memory updated"}
		if len(ps) > 0 {
			a.Name = ps[0]
			if len(ps) > 1 {
				a.More = fmt.Sprintf(" and %d more", len(ps)-1)
			}
		}
		return a
	},
	"plan_file_reference": func(m map[string]any) Attachment {
		a := Attachment{What: "plan", Name: path(m, "planFilePath")}
		if s := str(m, "planContent"); s != "" {
			a.More = " (" + plural.Count(lineCount(s), "line") + ")"
		}
		return a
	},
	"plan_mode":         planMode("plan mode"),
	"plan_mode_reentry": planMode("plan mode again"),
	"plan_mode_exit":    planMode("plan mode ended"),
	"auto_mode":         func(map[string]any) Attachment { return Attachment{What: "auto mode"} },
	"auto_mode_exit":    func(map[string]any) Attachment { return Attachment{What: "auto mode ended"} },
	"diagnostics": func(m map[string]any) Attachment {
		fs, _ := m["files"].([]any)
		n := 0
		var one string
		for _, f := range fs {
			fm, _ := f.(map[string]any)
			ds, _ := fm["diagnostics"].([]any)
			n += len(ds)
			one = str(fm, "uri")
		}
		a := Attachment{What: "diagnostics", Quiet: n == 0}
		if len(fs) == 1 && one != "" {
			a.What = fmt.Sprintf("diagnostics: %d in", n)
			a.Name = oneLineText(strings.TrimPrefix(one, "file://"))
		} else {
			a.More = fmt.Sprintf(": %d in %s", n, plural.Count(len(fs), "file"))
		}
		return a
	},
	"todo_reminder": todos("todo list"),
	"task_reminder": todos("task list"),
	"task_status": func(m map[string]any) Attachment {
		a := Attachment{What: "task", Name: str(m, "taskId")}
		if s := str(m, "status"); s != "" {
			a.More = " " + s
		}
		if s := str(m, "description"); s != "" {
			a.More += ": " + firstWords(s)
		}
		return a
	},
	"queued_command": func(m map[string]any) Attachment {
		what := "prompt queued while Claude worked"
		if str(m, "commandMode") == "bash" {
			what = "shell command queued while Claude worked"
		}
		return Attachment{What: what, More: said(textOf(m["prompt"]))}
	},
	"invoked_skills": func(m map[string]any) Attachment {
		var names []string
		ss, _ := m["skills"].([]any)
		for _, s := range ss {
			if n := str(asMap(s), "name"); n != "" {
				names = append(names, n)
			}
		}
		return Attachment{What: "skills invoked", More: said(strings.Join(names, ", "))}
	},
	"mcp_resource": func(m map[string]any) Attachment {
		a := Attachment{What: "MCP resource", Name: str(m, "uri")}
		if s := str(m, "server"); s != "" {
			a.More = " (server " + oneLineText(s) + ")"
		}
		return a
	},
	"agent_mention": func(m map[string]any) Attachment {
		return Attachment{What: "agent named", Name: str(m, "agentType")}
	},
	"teammate_mailbox": func(m map[string]any) Attachment {
		ms, _ := m["messages"].([]any)
		return Attachment{What: "messages from teammates", More: " (" + fmt.Sprint(len(ms)) + ")"}
	},
	"max_turns_reached": func(m map[string]any) Attachment {
		a := Attachment{What: "the turn limit was reached"}
		if n := num(m, "maxTurns"); n > 0 {
			a.More = fmt.Sprintf(" (%d)", n)
		}
		return a
	},

	// What hooks said.
	"hook_success": func(m map[string]any) Attachment {
		out := str(m, "content")
		if strings.TrimSpace(out) == "" {
			out = str(m, "stdout")
		}
		if strings.TrimSpace(out) == "" {
			// A hook that ran and said nothing.
			return Attachment{What: "hook ran" + hookOf(m), Quiet: true}
		}
		return Attachment{What: "hook output" + hookOf(m), More: said(out)}
	},
	"hook_additional_context": func(m map[string]any) Attachment {
		return Attachment{What: "hook context" + hookOf(m), More: said(strings.Join(strs(m["content"]), "\n"))}
	},
	"hook_system_message": func(m map[string]any) Attachment {
		return Attachment{What: "hook message" + hookOf(m), More: said(str(m, "content"))}
	},
	"async_hook_response": func(m map[string]any) Attachment {
		r := asMap(m["response"])
		s := str(r, "systemMessage")
		if s == "" {
			s = str(asMap(r["hookSpecificOutput"]), "additionalContext")
		}
		return Attachment{What: "hook output" + hookOf(m), More: said(s), Quiet: strings.TrimSpace(s) == ""}
	},
	"hook_non_blocking_error":     hookError("hook error"),
	"hook_error_during_execution": hookError("hook error"),
	"hook_blocking_error":         hookError("hook blocked"),
	"hook_stopped_continuation":   hookError("hook stopped the turn"),
	"hook_cancelled":              hookError("hook cancelled"),
	"hook_permission_decision":    hookError("hook permission decision"),

	// Claude Code's own bookkeeping: what it sent (the system prompt and
	// tool schemas, listings of skills, agents and deferred tools), the
	// environment, the date, reminders.
	"prompt_snapshot": func(m map[string]any) Attachment {
		a := Attachment{What: "prompt snapshot", More: ": the system prompt sent", Quiet: true}
		if ts, ok := m["tools"].([]any); ok {
			a.More = fmt.Sprintf(": the system prompt and %s sent", plural.Count(len(ts), "tool schema"))
		}
		return a
	},
	"skill_listing": func(m map[string]any) Attachment {
		n := num(m, "skillCount")
		if n == 0 {
			n = len(strs(m["names"]))
		}
		if n == 0 {
			n = lineCount(str(m, "content"))
		}
		return Attachment{What: "skill listing", More: " (" + plural.Count(n, "skill") + ")", Quiet: true}
	},
	"agent_listing_delta":    delta("agent listing", "addedTypes", "removedTypes"),
	"deferred_tools_delta":   delta("deferred tools", "addedNames", "removedNames"),
	"mcp_instructions_delta": delta("MCP server instructions", "addedNames", "removedNames"),
	"mcp_dropped_tools_delta": func(map[string]any) Attachment {
		return Attachment{What: "MCP tools dropped", Quiet: true}
	},
	"tool_search_usage_reminder": quiet("tool search reminder"),
	"command_permissions": func(m map[string]any) Attachment {
		return Attachment{What: "tools the command allows", More: " (" + fmt.Sprint(len(strs(m["allowedTools"]))) + ")", Quiet: true}
	},
	"environment": func(m map[string]any) Attachment {
		s := asMap(m["snapshot"])
		var parts []string
		for _, k := range []string{"platform", "shell", "workingDirectory"} {
			if v := str(s, k); v != "" {
				parts = append(parts, oneLineText(v))
			}
		}
		a := Attachment{What: "environment", Quiet: true}
		if len(parts) > 0 {
			a.More = " (" + strings.Join(parts, ", ") + ")"
		}
		return a
	},
	"model": func(m map[string]any) Attachment {
		return Attachment{What: "model", Name: str(asMap(m["identity"]), "modelId"), Quiet: true}
	},
	"session_context": quiet("session context"),
	"date": func(m map[string]any) Attachment {
		return Attachment{What: "date", More: " " + oneLineText(str(m, "date")), Quiet: true}
	},
	"date_change": func(m map[string]any) Attachment {
		return Attachment{What: "date changed", More: " to " + oneLineText(str(m, "newDate")), Quiet: true}
	},
	"remote_session_change":    quiet("commit and pull request attribution"),
	"companion_intro":          quiet("companion introduced"),
	"total_tokens_reminder":    quiet("token usage reminder"),
	"token_usage":              quiet("token usage"),
	"output_token_usage":       quiet("output token usage"),
	"budget_usd":               quiet("budget"),
	"critical_system_reminder": quiet("system reminder"),
	"output_style":             quiet("output style"),
}

func quiet(what string) func(map[string]any) Attachment {
	return func(map[string]any) Attachment { return Attachment{What: what, Quiet: true} }
}

func selection(what string) func(map[string]any) Attachment {
	return func(m map[string]any) Attachment {
		a := Attachment{What: what, Name: path(m, "displayPath", "filename")}
		if s, e := num(m, "lineStart"), num(m, "lineEnd"); s > 0 && e >= s {
			a.More = fmt.Sprintf(" (lines %d to %d)", s, e)
		}
		return a
	}
}

func planMode(what string) func(map[string]any) Attachment {
	return func(m map[string]any) Attachment {
		return Attachment{What: what, Name: path(m, "planFilePath")}
	}
}

// todos describes a todo or task list: its items, and how many are done.
func todos(what string) func(map[string]any) Attachment {
	return func(m map[string]any) Attachment {
		items, _ := m["content"].([]any)
		done := 0
		for _, it := range items {
			if str(asMap(it), "status") == "completed" {
				done++
			}
		}
		a := Attachment{What: what, More: " (" + plural.Count(len(items), "item"), Quiet: len(items) == 0}
		if done > 0 {
			a.More += fmt.Sprintf(", %d done", done)
		}
		a.More += ")"
		return a
	}
}

func hookError(what string) func(map[string]any) Attachment {
	return func(m map[string]any) Attachment {
		var s string
		for _, k := range []string{"blockingError", "stderr", "message", "content", "decision", "reason"} {
			if v := textOf(m[k]); strings.TrimSpace(v) != "" {
				s = v
				break
			}
		}
		if be := asMap(m["blockingError"]); be != nil {
			s = str(be, "blockingError")
		}
		return Attachment{What: what + hookOf(m), More: said(s)}
	}
}

// delta describes a listing's change: how many were added and removed.
func delta(what, added, removed string) func(map[string]any) Attachment {
	return func(m map[string]any) Attachment {
		a, r := len(asList(m[added])), len(asList(m[removed]))
		more := fmt.Sprintf(" (%d added", a)
		if r > 0 {
			more += fmt.Sprintf(", %d removed", r)
		}
		return Attachment{What: what, More: more + ")", Quiet: true}
	}
}

// hookOf names the hook of a hook attachment: " (SessionStart)".
func hookOf(m map[string]any) string {
	n := str(m, "hookName")
	if n == "" {
		n = str(m, "hookEvent")
	}
	if n == "" {
		return ""
	}
	return " (" + oneLineText(n) + ")"
}

// said is ": " and the first words of s, or "" when s is blank.
func said(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return ": " + firstWords(s)
}

// firstWords is the first line of s that holds text, cut to 100
// characters.
func firstWords(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := oneLineText(lines[0])
	cut := len(lines) > 1
	if r := []rune(line); len(r) > 100 {
		line, cut = strings.TrimRight(string(r[:100]), " "), true
	}
	if cut {
		line += "…"
	}
	return line
}

// oneLineText puts s on one line: control characters become spaces.
func oneLineText(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s))
}

// nameOf is what an attachment of a kind cfix does not know names: a
// file, a path, a URI or a name.
func nameOf(m map[string]any) string {
	return path(m, "displayPath", "filename", "path", "filePath", "uri", "name")
}

// path is the first of keys that holds a string, on one line and cut to
// 200 characters.
func path(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := oneLineText(str(m, k)); s != "" {
			if r := []rune(s); len(r) > 200 {
				s = string(r[:200]) + "…"
			}
			return s
		}
	}
	return ""
}

// words turns a type's name into words: "todo_reminder" → "todo reminder".
func words(t string) string {
	return oneLineText(strings.ReplaceAll(t, "_", " "))
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int {
	if n, ok := m[k].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i >= 0 && i < 1<<40 {
			return int(i)
		}
	}
	return 0
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// strs is the strings of a list.
func strs(v any) []string {
	var out []string
	for _, x := range asList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// textOf is a string, or the text blocks of a list of content blocks.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		return promptText(v)
	}
	return ""
}

// lineCount is the number of lines of s (a last line without a newline
// counts).
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}
