package guard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/session"
)

// StatusLineCommand is the command line of cfix's status line, run by the
// cfix binary at bin (an absolute path).
func StatusLineCommand(bin string) string { return shell.Quote(bin) + " statusline" }

// statusLine is the statusLine setting install writes.
type statusLine struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// ourStatusLine reports whether the statusLine value raw is cfix's (a
// command of a binary whose name starts with cfix, run as BIN statusline).
func ourStatusLine(raw []byte) bool {
	var s statusLine
	if json.Unmarshal(raw, &s) != nil || s.Type != "command" {
		return false
	}
	rest, ok := strings.CutSuffix(s.Command, " statusline")
	if !ok || rest == "" {
		return false
	}
	if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
		rest = strings.ReplaceAll(rest[1:len(rest)-1], `'\''`, "'")
	}
	return strings.HasPrefix(rest[strings.LastIndexAny(rest, `/\`)+1:], "cfix")
}

// InstallStatusLine sets Claude Code's statusLine setting in the settings
// raw read from path to cfix's (run by bin), editing the text as Install
// does. A statusLine of cfix's gets this binary; one that is someone
// else's is refused (cfix does not replace the user's status line).
func InstallStatusLine(path string, raw []byte, bin string) ([]byte, error) {
	want := statusLine{Type: "command", Command: StatusLineCommand(bin)}
	if blank(raw) {
		b, _ := json.MarshalIndent(map[string]statusLine{"statusLine": want}, "", "  ")
		return append(b, '\n'), nil
	}
	if err := check(path, raw); err != nil {
		return nil, err
	}
	top, _, err := session.Fields(raw, 0)
	if err != nil {
		return nil, &SettingsError{Path: path, Msg: err.Error()}
	}
	f := field(top, "statusLine")
	if f == nil {
		return insertMember(raw, 0, "statusLine", want), nil
	}
	cur := raw[f.Start:f.End]
	if !ourStatusLine(cur) {
		return nil, &SettingsError{Path: path, Msg: fmt.Sprintf("statusLine is %s, not cfix's: cfix does not replace a status line of yours; remove it first to have cfix's", clipJSON(cur))}
	}
	var s statusLine
	json.Unmarshal(cur, &s)
	if s.Command == want.Command {
		return raw, nil
	}
	// cfix's status line of another binary (cfix moved) runs this one.
	fs, _, err := session.Fields(raw, f.Start)
	if err != nil {
		return nil, &SettingsError{Path: path, Msg: err.Error()}
	}
	c := field(fs, "command")
	b, _ := json.Marshal(want.Command)
	out := append([]byte(nil), raw[:c.Start]...)
	out = append(out, b...)
	return append(out, raw[c.End:]...), nil
}

// UninstallStatusLine removes cfix's statusLine from raw (another one is
// left as it is).
func UninstallStatusLine(path string, raw []byte) ([]byte, error) {
	if blank(raw) {
		return raw, nil
	}
	if err := check(path, raw); err != nil {
		return nil, err
	}
	top, _, err := session.Fields(raw, 0)
	if err != nil {
		return nil, &SettingsError{Path: path, Msg: err.Error()}
	}
	f := field(top, "statusLine")
	if f == nil || !ourStatusLine(raw[f.Start:f.End]) {
		return raw, nil
	}
	return removeItem(raw, firstNonSpace(raw, 0), memberSpans(top), lastIndex(top, "statusLine")), nil
}

// StatusLineOf is the command of cfix's statusLine in raw, "" when it has
// none of cfix's.
func StatusLineOf(raw []byte) string {
	var s struct {
		StatusLine json.RawMessage `json:"statusLine"`
	}
	if blank(raw) || json.Unmarshal(raw, &s) != nil || !ourStatusLine(s.StatusLine) {
		return ""
	}
	var l statusLine
	json.Unmarshal(s.StatusLine, &l)
	return l.Command
}

func clipJSON(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
