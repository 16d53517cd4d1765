package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// Name is the server's name in a client's configuration: Claude Code
// calls its tools mcp__cfix__<tool>.
const Name = "cfix"

// Entry is the member of mcpServers that `claude mcp add --scope user cfix
// -- cfix mcp` writes (measured with Claude Code 2.1.332).
type Entry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// EntryFor is the entry install writes for the cfix binary at bin, an
// absolute path: Claude Code starts the server with the PATH it was
// started with, which may not hold the folder cfix was installed into
// (~/go/bin), as cfix guard's hooks name their binary.
func EntryFor(bin string) Entry {
	return Entry{Type: "stdio", Command: bin, Args: []string{"mcp"}, Env: map[string]string{}}
}

// PlanInstall plans adding the cfix server that runs the binary at bin
// (an absolute path) to the user configuration of the store at root (its
// .claude.json, as Claude Code picks it), or with remove taking it out.
// Only the bytes of the cfix member change; an entry of another command
// (a cfix moved, or one found on PATH) is replaced. A plan with no op and
// a note says there is nothing to do.
func PlanInstall(root, bin string, remove bool) (*changeset.ChangeSet, error) {
	if !remove && !filepath.IsAbs(bin) {
		return nil, fmt.Errorf("the server's command %q is not an absolute path", bin)
	}
	command := "mcp install"
	if remove {
		command = "mcp uninstall"
	}
	cs := changeset.New(root, command)
	path := clone.ConfigPath(root)
	raw, err := rfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if remove {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%s does not exist: no cfix server to take out", path))
			return cs, nil
		}
		if filepath.Dir(path) != root {
			return nil, fmt.Errorf("%s does not exist: start claude once to make it, then run cfix mcp install again", path)
		}
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if raw != nil && !json.Valid(raw) {
		return nil, fmt.Errorf("%s is not valid JSON: fix it first (Claude Code does not read it either)", path)
	}
	var out []byte
	var reason string
	if remove {
		out, reason, err = removeEntry(raw)
	} else {
		out, reason, err = setEntry(raw, EntryFor(bin))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if out == nil {
		cs.Notes = append(cs.Notes, fmt.Sprintf("%s: %s", path, reason))
		return cs, nil
	}
	if raw == nil {
		cs.Add(changeset.Op{Action: changeset.Create, Path: path, Data: out, HasData: true, Reason: reason})
		return cs, nil
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return nil, err
	}
	cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: out, HasData: true, Reason: reason})
	return cs, nil
}

// setEntry sets mcpServers.cfix of the JSON object raw to e, keeping every
// other byte; nil when it is e already. raw nil is an empty file.
func setEntry(raw []byte, e Entry) ([]byte, string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]Entry{Name: e}}, "", "  ")
		return append(b, '\n'), "add the cfix MCP server (" + e.Command + " " + join(e.Args) + ")", nil
	}
	top, _, err := session.Fields(raw, firstByte(raw))
	if err != nil {
		return nil, "", err
	}
	for _, f := range top {
		if f.Key != "mcpServers" {
			continue
		}
		if raw[f.Start] != '{' {
			return nil, "", fmt.Errorf("mcpServers is not an object")
		}
		servers, _, err := session.Fields(raw, f.Start)
		if err != nil {
			return nil, "", err
		}
		for _, s := range servers {
			if s.Key != Name {
				continue
			}
			var old Entry
			if json.Unmarshal(raw[s.Start:s.End], &old) == nil && sameEntry(old, e) {
				return nil, "the cfix MCP server is installed already", nil
			}
			v := marshalAt(e, indentOf(raw, s.KeyStart))
			return session.Replace(raw, s.Start, s.End, v), "replace the cfix MCP server's entry " + string(raw[s.Start:s.End]), nil
		}
		return insertMember(raw, f.Start, servers, Name, e), "add the cfix MCP server (" + e.Command + " " + join(e.Args) + ")", nil
	}
	return insertMember(raw, firstByte(raw), top, "mcpServers", map[string]Entry{Name: e}),
		"add mcpServers with the cfix MCP server (" + e.Command + " " + join(e.Args) + ")", nil
}

// removeEntry takes mcpServers.cfix out of raw, keeping every other byte
// (an mcpServers left empty stays, as claude mcp remove leaves it).
func removeEntry(raw []byte) ([]byte, string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, "no cfix MCP server to take out", nil
	}
	start, _, ok := session.Find(raw, "mcpServers")
	if !ok || raw[start] != '{' {
		return nil, "no cfix MCP server to take out", nil
	}
	servers, end, err := session.Fields(raw, start)
	if err != nil {
		return nil, "", err
	}
	for i, s := range servers {
		if s.Key != Name {
			continue
		}
		reason := "take out the cfix MCP server " + string(raw[s.Start:s.End])
		switch {
		case len(servers) == 1:
			return session.Replace(raw, start, end, []byte("{}")), reason, nil
		case i == 0:
			// From the key to the next member's key.
			return session.Replace(raw, s.KeyStart, servers[1].KeyStart, nil), reason, nil
		default:
			// From the end of the member before to the end of this one.
			return session.Replace(raw, servers[i-1].End, s.End, nil), reason, nil
		}
	}
	return nil, "no cfix MCP server to take out", nil
}

// insertMember adds "key": v as the last member of the object at
// raw[at], indented as its members are.
func insertMember(raw []byte, at int, fields []session.Field, key string, v any) []byte {
	_, end, _ := session.Fields(raw, at)
	if len(fields) == 0 {
		ind := indentOf(raw, at)
		member := fmt.Sprintf("{\n%s  %s: %s\n%s}", ind, quote(key), marshalAt(v, ind+"  "), ind)
		return session.Replace(raw, at, end, []byte(member))
	}
	last := fields[len(fields)-1]
	ind := indentOf(raw, last.KeyStart)
	member := fmt.Sprintf(",\n%s%s: %s", ind, quote(key), marshalAt(v, ind))
	return session.Replace(raw, last.End, last.End, []byte(member))
}

// marshalAt renders v as JSON indented by two spaces, its lines after the
// first starting with ind.
func marshalAt(v any, ind string) []byte {
	b, _ := json.MarshalIndent(v, ind, "  ")
	return b
}

// indentOf is the white space that starts the line holding raw[i].
func indentOf(raw []byte, i int) string {
	s := bytes.LastIndexByte(raw[:i], '\n') + 1
	e := s
	for e < i && (raw[e] == ' ' || raw[e] == '\t') {
		e++
	}
	return string(raw[s:e])
}

func firstByte(raw []byte) int { return len(raw) - len(bytes.TrimLeft(raw, " \t\r\n")) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func join(args []string) string {
	b := bytes.Buffer{}
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
	}
	return b.String()
}

func sameEntry(a, b Entry) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
