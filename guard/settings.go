// Package guard installs cfix's hooks into Claude Code's settings.json and
// runs them: cfix hook EVENT checks the session being resumed and the one
// just written, never blocking Claude Code.
package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/session"
)

// Events are the hook events cfix installs, in the order it adds them.
var Events = []string{"SessionStart", "SessionEnd"}

// Command is the command line of cfix's hook for event, run by the cfix
// binary at bin (an absolute path), acting on the store root (recorded at
// install: --root ROOT); "" records none (a project's settings, read by a
// Claude Code of any store: the hook acts on $CLAUDE_CONFIG_DIR's).
func Command(bin, event, root string) string {
	c := shell.Quote(bin) + " hook " + event
	if root != "" {
		c += " --root " + shell.Quote(root)
	}
	return c
}

// Installed is one hook of cfix found in a settings file.
type Installed struct {
	Event   string
	Command string
	Binary  string // the cfix the command runs, as the command names it
	// Root is the store the command names (--root), "" when it names none:
	// written by an earlier cfix, or in a project's settings.
	Root string
}

// ourCommand reports whether command is a hook of cfix for event (its own
// command line: BIN hook EVENT [--root ROOT], BIN's file name starting with
// cfix), with the binary it runs and the store it names.
func ourCommand(command, event string) (bin, root string, ok bool) {
	bin, rest, ok := word(command)
	if !ok {
		return "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, " hook "+event); !ok {
		return "", "", false
	}
	if rest != "" {
		if rest, ok = strings.CutPrefix(rest, " --root "); !ok {
			return "", "", false
		}
		if root, rest, ok = word(rest); !ok || rest != "" || root == "" {
			return "", "", false
		}
	}
	base := bin[strings.LastIndexAny(bin, `/\`)+1:]
	if !strings.HasPrefix(base, "cfix") {
		return "", "", false
	}
	return bin, root, true
}

// word reads the first word of s as shell.Quote writes one: bare, in
// single quotes (a quote inside closes them, escapes itself and opens
// them again), or $'...' (kept as it is written: a path with control
// characters); rest is what follows it.
func word(s string) (w, rest string, ok bool) {
	switch {
	case strings.HasPrefix(s, "$'"):
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				return s[:i+1], s[i+1:], true
			}
		}
		return "", "", false
	case strings.HasPrefix(s, "'"):
		var b strings.Builder
		for i := 1; i < len(s); {
			j := strings.IndexByte(s[i:], '\'')
			if j < 0 {
				return "", "", false
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if strings.HasPrefix(s[i:], `\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			return b.String(), s[i:], true
		}
		return "", "", false
	}
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		i = len(s)
	}
	if i == 0 {
		return "", "", false
	}
	return s[:i], s[i:], true
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

// hookTypes are the hook types Claude Code 2.1.332 knows: 2.1.205 rejects
// a whole settings file with a hook of another type.
var hookTypes = map[string]bool{"command": true, "prompt": true, "agent": true, "http": true, "mcp_tool": true}

// Refusal says why cfix does not install into the settings raw read from
// path, or nil. Measured with the clients (e2e TestSettingsShapes): a
// hooks member that is not an object, or an event that is not an array,
// is ignored (2.1.332 says so), and cfix's hooks there would never run; a
// null where a matcher group or a hook goes, a group without its hooks
// array, a hook without a type Claude Code knows or a command hook without
// its command, a matcher that is not a string, make 2.1.205 reject the
// whole file (2.1.332 skips the entry): fix it first. Where a member is
// written twice, the last is the one read, as JSON.parse reads it.
func Refusal(path string, raw []byte) error {
	if err := check(path, raw); err != nil {
		return err
	}
	refuse := func(format string, args ...any) error {
		return &SettingsError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil
	}
	h, ok := top["hooks"]
	if !ok {
		return nil
	}
	var hooks map[string]json.RawMessage
	if c := bytes.TrimSpace(h)[0]; c != '{' || json.Unmarshal(h, &hooks) != nil {
		return refuse("hooks is %s, not an object: Claude Code ignores it, and cfix's hooks would never run; fix it first (a hooks of {} or none at all)", kind(c))
	}
	for _, ev := range Events {
		if raw, ok := hooks[ev]; ok {
			if c := bytes.TrimSpace(raw)[0]; c != '[' {
				return refuse("hooks.%s is %s, not an array: Claude Code ignores it, and cfix's hook would never run; fix it first", ev, kind(c))
			}
		}
	}
	const whole = "Claude Code (2.1.205) rejects the whole file for it, 2.1.332 skips it; fix it first"
	for _, ev := range slices.Sorted(maps.Keys(hooks)) {
		var groups []json.RawMessage
		if json.Unmarshal(hooks[ev], &groups) != nil {
			continue // an event that is not an array is ignored (not cfix's)
		}
		for i, g := range groups {
			at := fmt.Sprintf("hooks.%s[%d]", ev, i)
			var group map[string]json.RawMessage
			if bytes.Equal(bytes.TrimSpace(g), []byte("null")) || json.Unmarshal(g, &group) != nil {
				return refuse("%s is %s, not a matcher group: %s", at, kind(bytes.TrimSpace(g)[0]), whole)
			}
			if m, ok := group["matcher"]; ok && bytes.TrimSpace(m)[0] != '"' {
				return refuse("%s.matcher is %s, not a string: %s", at, kind(bytes.TrimSpace(m)[0]), whole)
			}
			var list []json.RawMessage
			if hs, ok := group["hooks"]; !ok || bytes.TrimSpace(hs)[0] != '[' || json.Unmarshal(hs, &list) != nil {
				return refuse("%s has no hooks array: %s", at, whole)
			}
			for j, e := range list {
				at := fmt.Sprintf("%s.hooks[%d]", at, j)
				var hook struct {
					Type    *string `json:"type"`
					Command *string `json:"command"`
				}
				if bytes.TrimSpace(e)[0] != '{' || json.Unmarshal(e, &hook) != nil {
					return refuse("%s is %s, not a hook: %s", at, kind(bytes.TrimSpace(e)[0]), whole)
				}
				switch {
				case hook.Type == nil || !hookTypes[*hook.Type]:
					return refuse("%s has no type Claude Code knows (%s): %s", at, strings.Join(slices.Sorted(maps.Keys(hookTypes)), ", "), whole)
				case *hook.Type == "command" && (hook.Command == nil || *hook.Command == ""):
					return refuse("%s is a command hook without its command: %s", at, whole)
				}
			}
		}
	}
	return nil
}

// blank reports whether raw holds nothing but white space: a settings file
// that is missing or empty.
func blank(raw []byte) bool { return len(bytes.TrimSpace(raw)) == 0 }

// Fresh is the settings file install writes where there is none (or an
// empty one): cfix's hooks, indented by two spaces.
func Fresh(bin, root string) []byte {
	var hooks struct {
		Hooks struct {
			SessionStart []group
			SessionEnd   []group
		} `json:"hooks"`
	}
	hooks.Hooks.SessionStart = []group{ourGroup(bin, "SessionStart", root)}
	hooks.Hooks.SessionEnd = []group{ourGroup(bin, "SessionEnd", root)}
	b, _ := json.MarshalIndent(hooks, "", "  ")
	return append(b, '\n')
}

func ourGroup(bin, event, root string) group {
	return group{Hooks: []hookEntry{{Type: "command", Command: Command(bin, event, root)}}}
}

// Before is what an install found that its uninstall needs to give the
// settings file back byte for byte: whether the file was missing, the
// bytes of a blank one, the containers the install made ("hooks",
// "hooks.EVENT"), those it found and filled (with the white space inside
// the empty ones: "" is the top-level object). cfix keeps it in its state
// folder (SaveBefore) until the uninstall.
type Before struct {
	Missing bool              `json:"missing,omitempty"`
	Blank   *string           `json:"blank,omitempty"`
	Made    map[string]bool   `json:"made,omitempty"`
	Found   map[string]bool   `json:"found,omitempty"`
	Inner   map[string]string `json:"inner,omitempty"`
}

func (b *Before) made(key string) {
	if b.Made == nil {
		b.Made = map[string]bool{}
	}
	b.Made[key] = true
}

// found records a container install fills: with the white space inside
// when it is empty.
func (b *Before) found(key string, raw []byte, at int, empty bool) {
	if b.Found == nil {
		b.Found = map[string]bool{}
	}
	b.Found[key] = true
	if empty {
		if b.Inner == nil {
			b.Inner = map[string]string{}
		}
		b.Inner[key] = string(raw[at+1 : firstNonSpace(raw, at+1)])
	}
}

// Install adds cfix's hooks (run by bin, acting on the store root) to the
// settings raw read from path, editing the text: the bytes of everything
// else are kept, and what is added is indented as the file is (compact,
// on one line, in a file of one line; with its line ends, \r\n in a file
// that has them). Where a member is written twice, the last is the one
// Claude Code reads (JSON.parse): it is the one edited. An event that
// already has a hook of cfix gets this command line (the rest of the entry
// is left as it is). It refuses a file Claude Code would not run cfix's
// hooks from (Refusal), saying why. Before says what uninstall needs.
func Install(path string, raw []byte, bin, root string) ([]byte, *Before, error) {
	b := &Before{}
	if blank(raw) {
		s := string(raw)
		b.Blank = &s
		return Fresh(bin, root), b, nil
	}
	if err := Refusal(path, raw); err != nil {
		return nil, nil, err
	}
	out := raw
	for _, ev := range Events {
		top, _, err := session.Fields(out, 0)
		if err != nil {
			return nil, nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		hooks := field(top, "hooks")
		if hooks == nil {
			open := firstNonSpace(out, 0)
			if len(top) == 0 {
				b.found("", out, open, true)
			}
			b.made("hooks")
			b.made("hooks." + ev)
			out = insertMember(out, 0, "hooks", map[string][]group{ev: {ourGroup(bin, ev, root)}})
			continue
		}
		evs, _, err := session.Fields(out, hooks.Start)
		if err != nil {
			return nil, nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		if !b.Made["hooks"] {
			b.found("hooks", out, hooks.Start, len(evs) == 0)
		}
		f := field(evs, ev)
		if f == nil {
			b.made("hooks." + ev)
			out = insertMember(out, hooks.Start, ev, []group{ourGroup(bin, ev, root)})
			continue
		}
		elems, _, err := session.Elements(out, f.Start)
		if err != nil {
			return nil, nil, &SettingsError{Path: path, Msg: err.Error()}
		}
		if mine := ours(out, elems, ev); len(mine) > 0 {
			// cfix's hook of another binary (cfix moved), or of an
			// earlier cfix (no store): this command line. What was there
			// before that install is not known: uninstall removes an
			// array it leaves empty.
			if out, err = setCommand(out, elems[mine[0]], Command(bin, ev, root)); err != nil {
				return nil, nil, &SettingsError{Path: path, Msg: err.Error()}
			}
			continue
		}
		b.found("hooks."+ev, out, f.Start, len(elems) == 0)
		out = appendElement(out, f.Start, ourGroup(bin, ev, root))
	}
	return out, b, nil
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

// Uninstall removes from raw the hooks of cfix: each entry of cfix, then
// an event's array and a hooks object left empty that the install made.
// With what the install found (before, nil when unknown: a file installed
// by an earlier cfix), what it filled stays, with the white space it held,
// and a file that was missing or blank comes back as it was when nothing
// else was added to it (gone says the file is to be removed): after
// Install, the bytes Install was given. Without it, an array or hooks
// object left empty goes.
func Uninstall(path string, raw []byte, before *Before) (out []byte, gone bool, err error) {
	if blank(raw) {
		return raw, false, nil
	}
	if err := check(path, raw); err != nil {
		return nil, false, err
	}
	if before == nil {
		before = &Before{}
	}
	// made reports whether uninstall removes the container key when it
	// leaves it empty: the install made it, or it is not known.
	made := func(key string) bool { return before.Made[key] || !before.Found[key] }
	out = raw
	removed := false
	for i := len(Events) - 1; i >= 0; i-- {
		ev := Events[i]
		top, _, err := session.Fields(out, 0)
		if err != nil {
			return nil, false, &SettingsError{Path: path, Msg: err.Error()}
		}
		hooks := field(top, "hooks")
		if hooks == nil || out[hooks.Start] != '{' {
			break
		}
		evs, _, err := session.Fields(out, hooks.Start)
		if err != nil {
			return nil, false, &SettingsError{Path: path, Msg: err.Error()}
		}
		f := field(evs, ev)
		if f == nil || out[f.Start] != '[' {
			continue
		}
		elems, _, err := session.Elements(out, f.Start)
		if err != nil {
			return nil, false, &SettingsError{Path: path, Msg: err.Error()}
		}
		mine := ours(out, elems, ev)
		if len(mine) == 0 {
			continue
		}
		removed = true
		if len(mine) == len(elems) && made("hooks."+ev) {
			out = removeItem(out, hooks.Start, memberSpans(evs), lastIndex(evs, ev))
		} else {
			for j := len(mine) - 1; j >= 0; j-- {
				out = removeItem(out, f.Start, elems, mine[j])
				elems, _, _ = session.Elements(out, f.Start)
			}
			if len(elems) == 0 {
				out = fillEmpty(out, f.Start, before.Inner["hooks."+ev])
			}
		}
		// The hooks object left empty goes too, or gets its white space.
		top, _, _ = session.Fields(out, 0)
		if h := field(top, "hooks"); h != nil {
			if evs, _, _ := session.Fields(out, h.Start); len(evs) == 0 {
				if made("hooks") {
					out = removeItem(out, firstNonSpace(out, 0), memberSpans(top), lastIndex(top, "hooks"))
				} else {
					out = fillEmpty(out, h.Start, before.Inner["hooks"])
				}
			}
		}
	}
	if !removed {
		return raw, false, nil
	}
	if top, _, err := session.Fields(out, 0); err == nil && len(top) == 0 {
		// What install made of a missing or blank file, or of an empty
		// object, and nothing else since.
		switch {
		case before.Missing && string(out) == "{}\n":
			return nil, true, nil
		case before.Blank != nil && string(out) == "{}\n":
			return []byte(*before.Blank), false, nil
		case before.Found[""]:
			out = fillEmpty(out, firstNonSpace(out, 0), before.Inner[""])
		}
	}
	return out, false, nil
}

// fillEmpty puts inner between the brackets of the empty container that
// opens at raw[open] (which holds no white space).
func fillEmpty(raw []byte, open int, inner string) []byte {
	if inner == "" {
		return raw
	}
	out := make([]byte, 0, len(raw)+len(inner))
	out = append(out, raw[:open+1]...)
	out = append(out, inner...)
	return append(out, raw[open+1:]...)
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
				if bin, root, ok := ourCommand(h.Command, ev); ok {
					out = append(out, Installed{Event: ev, Command: h.Command, Binary: bin, Root: root})
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
		if _, _, ok := ourCommand(g.Hooks[0].Command, event); ok && g.Hooks[0].Type == "command" {
			idx = append(idx, i)
		}
	}
	return idx
}

// field is the member key of an object, the last when it is written
// twice: Claude Code reads the file with JSON.parse, which takes the last.
func field(fs []session.Field, key string) *session.Field {
	if i := lastIndex(fs, key); i >= 0 {
		return &fs[i]
	}
	return nil
}

func lastIndex(fs []session.Field, key string) int {
	for i := len(fs) - 1; i >= 0; i-- {
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
	case '{':
		return "an object"
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
	return strings.ReplaceAll(string(b), "\n", eol(raw))
}

// eol is the file's line end: \r\n when it has one, else \n.
func eol(raw []byte) string {
	if bytes.Contains(raw, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
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
		nl := eol(raw)
		b.WriteString(nl + indent + step + text(indent+step) + nl + indent)
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
