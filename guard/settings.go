// Package guard installs cfix's hooks into Claude Code's settings.json and
// runs them: cfix hook EVENT checks the session being resumed and the one
// just written, never blocking Claude Code.
package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/session"
)

// Events are the hook events cfix installs, in the order it adds them.
var Events = []string{"SessionStart", "SessionEnd"}

// Command is the command line of cfix's hook for event, run by the cfix
// binary at bin (an absolute path).
func Command(bin, event string) string {
	return shell.Quote(bin) + " hook " + event
}

// Installed is one hook of cfix found in a settings file.
type Installed struct {
	Event   string
	Command string
	Binary  string // the cfix the command runs, as the command names it
}

// ourBinary reports whether command is a hook of cfix for event (its own
// command line: BIN hook EVENT, BIN's file name starting with cfix) and
// which binary it runs.
func ourBinary(command, event string) (string, bool) {
	rest, ok := strings.CutSuffix(command, " hook "+event)
	if !ok || rest == "" {
		return "", false
	}
	bin := rest
	if len(bin) >= 2 && bin[0] == '\'' && bin[len(bin)-1] == '\'' {
		bin = strings.ReplaceAll(bin[1:len(bin)-1], `'\''`, "'")
	}
	base := bin[strings.LastIndexAny(bin, `/\`)+1:]
	if !strings.HasPrefix(base, "cfix") {
		return "", false
	}
	return bin, true
}

// SettingsError says why a settings file is not changed.
type SettingsError struct {
	Path string
	Msg  string
}

func (e *SettingsError) Error() string { return e.Path + ": " + e.Msg }

// group is the entry install adds to the array of an event.
type group struct {
	Hooks []hookEntry `json:"hooks"`
}

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// check refuses what is not a JSON object, naming the line of a syntax
// error.
func check(path string, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
			return &SettingsError{Path: path, Msg: fmt.Sprintf("line %d: not valid JSON (%v); fix it first, Claude Code does not read it either", line, se)}
		}
		return &SettingsError{Path: path, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if _, ok := v.(map[string]any); !ok {
		return &SettingsError{Path: path, Msg: "not a JSON object; Claude Code's settings are one"}
	}
	return nil
}

// blank reports whether raw holds nothing but white space: a settings file
// that is missing or empty.
func blank(raw []byte) bool { return len(bytes.TrimSpace(raw)) == 0 }

// Fresh is the settings file install writes where there is none (or an
// empty one): cfix's hooks, indented by two spaces.
func Fresh(bin string) []byte {
	var hooks struct {
		Hooks struct {
			SessionStart []group
			SessionEnd   []group
		} `json:"hooks"`
	}
	hooks.Hooks.SessionStart = []group{ourGroup(bin, "SessionStart")}
	hooks.Hooks.SessionEnd = []group{ourGroup(bin, "SessionEnd")}
	b, _ := json.MarshalIndent(hooks, "", "  ")
	return append(b, '\n')
}

func ourGroup(bin, event string) group {
	return group{Hooks: []hookEntry{{Type: "command", Command: Command(bin, event)}}}
}

// Install adds cfix's hooks (run by bin) to the settings raw read from
// path, editing the text: the bytes of everything else are kept, and what
// is added is indented as the file is (compact, on one line, in a file of one line).
// An event that already has a hook of cfix gets this binary in its command
// line (the rest of the entry is left as it is). It refuses a
// file that is not a JSON object, a hooks field that is not an object
// (null among them: Claude Code rejects the whole file), and an event
// whose value is not an array.
func Install(path string, raw []byte, bin string) ([]byte, error) {
	if blank(raw) {
		return Fresh(bin), nil
	}
	if err := check(path, raw); err != nil {
		return nil, err
	}
	out := raw
	for _, ev := range Events {
		top, _, err := session.Fields(out, 0)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		hooks := field(top, "hooks")
		if hooks == nil {
			out = insertMember(out, 0, "hooks", map[string][]group{ev: {ourGroup(bin, ev)}})
			continue
		}
		if out[hooks.Start] != '{' {
			return nil, &SettingsError{Path: path, Msg: fmt.Sprintf("hooks is %s, not an object: Claude Code rejects the whole file; fix it first (a hooks field of {} or none at all)", kind(out[hooks.Start]))}
		}
		evs, _, err := session.Fields(out, hooks.Start)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		f := field(evs, ev)
		if f == nil {
			out = insertMember(out, hooks.Start, ev, []group{ourGroup(bin, ev)})
			continue
		}
		if out[f.Start] != '[' {
			return nil, &SettingsError{Path: path, Msg: fmt.Sprintf("hooks.%s is %s, not an array: Claude Code rejects the whole file; fix it first", ev, kind(out[f.Start]))}
		}
		elems, _, err := session.Elements(out, f.Start)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		if mine := ours(out, elems, ev); len(mine) > 0 {
			// cfix's hook of another binary (cfix moved) runs this one.
			if out, err = setCommand(out, elems[mine[0]], Command(bin, ev)); err != nil {
				return nil, &SettingsError{Path: path, Msg: err.Error()}
			}
			continue
		}
		out = appendElement(out, f.Start, ourGroup(bin, ev))
	}
	return out, nil
}

// setCommand sets the command of the hook of the group at span (one of
// cfix's) to command, leaving every other byte.
func setCommand(raw []byte, span [2]int, command string) ([]byte, error) {
	g, _, err := session.Fields(raw, span[0])
	if err != nil {
		return nil, err
	}
	hs := field(g, "hooks")
	hooks, _, err := session.Elements(raw, hs.Start)
	if err != nil {
		return nil, err
	}
	h, _, err := session.Fields(raw, hooks[0][0])
	if err != nil {
		return nil, err
	}
	c := field(h, "command")
	var cur string
	if json.Unmarshal(raw[c.Start:c.End], &cur) == nil && cur == command {
		return raw, nil
	}
	b, _ := json.Marshal(command)
	out := append([]byte(nil), raw[:c.Start]...)
	out = append(out, b...)
	return append(out, raw[c.End:]...), nil
}

// Uninstall removes from raw the hooks of cfix: each entry install added,
// then an event's array it leaves empty, then a hooks object it leaves
// empty. After Install, it gives back the bytes Install was given (an
// empty array or object with white space inside comes back without it).
func Uninstall(path string, raw []byte) ([]byte, error) {
	if blank(raw) {
		return raw, nil
	}
	if err := check(path, raw); err != nil {
		return nil, err
	}
	out := raw
	for i := len(Events) - 1; i >= 0; i-- {
		ev := Events[i]
		top, _, err := session.Fields(out, 0)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		hooks := field(top, "hooks")
		if hooks == nil || out[hooks.Start] != '{' {
			return out, nil
		}
		evs, _, err := session.Fields(out, hooks.Start)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		f := field(evs, ev)
		if f == nil || out[f.Start] != '[' {
			continue
		}
		elems, _, err := session.Elements(out, f.Start)
		if err != nil {
			return nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		mine := ours(out, elems, ev)
		if len(mine) == 0 {
			continue
		}
		if len(mine) == len(elems) {
			out = removeItem(out, hooks.Start, memberSpans(evs), indexOf(evs, ev))
		} else {
			for j := len(mine) - 1; j >= 0; j-- {
				out = removeItem(out, f.Start, elems, mine[j])
				elems, _, _ = session.Elements(out, f.Start)
			}
		}
		// The hooks object left empty goes too.
		top, _, _ = session.Fields(out, 0)
		if h := field(top, "hooks"); h != nil {
			if evs, _, _ := session.Fields(out, h.Start); len(evs) == 0 {
				out = removeItem(out, firstNonSpace(out, 0), memberSpans(top), indexOf(top, "hooks"))
			}
		}
	}
	return out, nil
}

// List returns cfix's hooks found in the settings raw.
func List(raw []byte) []Installed {
	var s struct {
		Hooks map[string][]struct {
			Hooks []hookEntry `json:"hooks"`
		} `json:"hooks"`
	}
	if blank(raw) || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []Installed
	for _, ev := range Events {
		for _, g := range s.Hooks[ev] {
			for _, h := range g.Hooks {
				if bin, ok := ourBinary(h.Command, ev); ok {
					out = append(out, Installed{Event: ev, Command: h.Command, Binary: bin})
				}
			}
		}
	}
	return out
}

// ours returns the indexes of the elements of an event's array that are
// cfix's entries: a group whose only hook is cfix's command for event.
func ours(raw []byte, elems [][2]int, event string) []int {
	var idx []int
	for i, e := range elems {
		var g struct {
			Hooks []hookEntry `json:"hooks"`
		}
		var all map[string]json.RawMessage
		if json.Unmarshal(raw[e[0]:e[1]], &all) != nil || len(all) != 1 || json.Unmarshal(raw[e[0]:e[1]], &g) != nil || len(g.Hooks) != 1 {
			continue
		}
		if _, ok := ourBinary(g.Hooks[0].Command, event); ok && g.Hooks[0].Type == "command" {
			idx = append(idx, i)
		}
	}
	return idx
}

func field(fs []session.Field, key string) *session.Field {
	if i := indexOf(fs, key); i >= 0 {
		return &fs[i]
	}
	return nil
}

func indexOf(fs []session.Field, key string) int {
	for i := range fs {
		if fs[i].Key == key {
			return i
		}
	}
	return -1
}

func memberSpans(fs []session.Field) [][2]int {
	out := make([][2]int, len(fs))
	for i, f := range fs {
		out[i] = [2]int{f.KeyStart, f.End}
	}
	return out
}

func kind(c byte) string {
	switch c {
	case 'n':
		return "null"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

func firstNonSpace(raw []byte, at int) int {
	for at < len(raw) && isSpace(raw[at]) {
		at++
	}
	return at
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lineIndent is the white space that starts the line holding raw[at].
func lineIndent(raw []byte, at int) string {
	s := bytes.LastIndexByte(raw[:at], '\n') + 1
	e := s
	for e < len(raw) && (raw[e] == ' ' || raw[e] == '\t') {
		e++
	}
	return string(raw[s:e])
}

// unit is the file's indentation step: the indent of the first member of
// the top-level object, or two spaces.
func unit(raw []byte) string {
	top, _, err := session.Fields(raw, 0)
	if err == nil && len(top) > 0 {
		open := firstNonSpace(raw, 0)
		if bytes.IndexByte(raw[open:top[0].KeyStart], '\n') >= 0 {
			if u := lineIndent(raw, top[0].KeyStart); u != "" {
				return u
			}
		}
	}
	return "  "
}

// render is v as JSON for the line indented by indent: indented by the
// file's step, or on one line when the file is.
func render(raw []byte, v any, indent string) string {
	if flat(raw) {
		b, _ := json.Marshal(v)
		return string(b)
	}
	b, _ := json.MarshalIndent(v, indent, unit(raw))
	return string(b)
}

// flat reports whether the settings are written on one line: a top-level
// object with members and no line break inside (an empty one, {}, gets
// lines as Fresh writes them).
func flat(raw []byte) bool {
	top, _, err := session.Fields(raw, 0)
	return err == nil && len(top) > 0 && bytes.IndexByte(bytes.TrimSpace(raw), '\n') < 0
}

// insertMember adds "key": v as the last member of the object at raw[at].
func insertMember(raw []byte, at int, key string, v any) []byte {
	open := firstNonSpace(raw, at)
	fs, _, _ := session.Fields(raw, open)
	k, _ := json.Marshal(key)
	colon := ": "
	if flat(raw) {
		colon = ":"
	}
	return insertItem(raw, open, memberSpans(fs), func(indent string) string {
		return string(k) + colon + render(raw, v, indent)
	})
}

// appendElement adds v as the last element of the array at raw[at].
func appendElement(raw []byte, at int, v any) []byte {
	elems, _, _ := session.Elements(raw, at)
	return insertItem(raw, at, elems, func(indent string) string { return render(raw, v, indent) })
}

// insertItem adds an item after the last of items, the spans of the
// members or elements of the container opening at raw[open]: after a comma
// and the white space that comes before the last item. Into an empty
// container, it goes on a line of its own, one step deeper (or as is in a
// file of one line), and the white space inside is dropped.
func insertItem(raw []byte, open int, items [][2]int, text func(indent string) string) []byte {
	var b bytes.Buffer
	if len(items) > 0 {
		last := items[len(items)-1]
		ws := last[0]
		for ws > 0 && isSpace(raw[ws-1]) {
			ws--
		}
		sep := string(raw[ws:last[0]])
		b.Write(raw[:last[1]])
		b.WriteString("," + sep + text(lineIndent(raw, last[0])))
		b.Write(raw[last[1]:])
		return b.Bytes()
	}
	close := firstNonSpace(raw, open+1)
	b.Write(raw[:open+1])
	if flat(raw) {
		b.WriteString(text(""))
	} else {
		indent := lineIndent(raw, open)
		step := unit(raw)
		b.WriteString("\n" + indent + step + text(indent+step) + "\n" + indent)
	}
	b.Write(raw[close:])
	return b.Bytes()
}

// removeItem removes item i of items, the spans of the members or elements
// of the container opening at raw[open]: with the comma and white space
// before it (as insertItem added it), or, for the first, with those after
// it; the only one leaves the container empty.
func removeItem(raw []byte, open int, items [][2]int, i int) []byte {
	var s, e int
	switch {
	case len(items) == 1:
		s = open + 1
		e = items[0][1]
		e = firstNonSpace(raw, e)
	case i > 0:
		s, e = items[i-1][1], items[i][1]
	default:
		s, e = items[0][0], items[1][0]
	}
	out := make([]byte, 0, len(raw)-(e-s))
	out = append(out, raw[:s]...)
	return append(out, raw[e:]...)
}
