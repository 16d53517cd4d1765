package clone

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// ConfigPath returns the user settings file that holds the `projects` map
// for the store at root, as Claude Code picks it: a legacy .config.json
// inside the store wins; with CLAUDE_CONFIG_DIR set to the store it is
// $CLAUDE_CONFIG_DIR/.claude.json; a store named .claude (~/.claude) has
// it beside itself ($HOME/.claude.json); any other store (a
// CLAUDE_CONFIG_DIR given with --root) has it inside.
func ConfigPath(root string) string {
	if p := filepath.Join(root, ".config.json"); exists(p) {
		return p
	}
	if env := os.Getenv("CLAUDE_CONFIG_DIR"); env != "" {
		if abs, err := filepath.Abs(env); err == nil && filepath.Clean(abs) == filepath.Clean(root) {
			return filepath.Join(root, ".claude.json")
		}
	}
	if filepath.Base(root) == ".claude" {
		return filepath.Join(filepath.Dir(root), ".claude.json")
	}
	return filepath.Join(root, ".claude.json")
}

// planConfig renames the keys of the `projects` map of the settings file
// at path that are old or under it. Only the bytes of those keys change:
// key order, formatting and every other field stay as they were.
func planConfig(path, old, nw string) (*changeset.Op, []string, error) {
	raw, err := rfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []string{fmt.Sprintf("%s does not exist: no projects map to update", path)}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !json.Valid(raw) {
		return nil, []string{fmt.Sprintf("%s is not valid JSON: its projects map was not updated", path)}, nil
	}
	out, notes, n, err := renameProjectKeys(raw, old, nw)
	if err != nil || n == 0 {
		return nil, notes, err
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil {
		return nil, nil, err
	}
	return &changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: out, HasData: true,
		Reason: fmt.Sprintf("rename %s of the projects map: %s → %s", plural.Count(n, "key"), old, nw)}, notes, nil
}

// renameProjectKeys renames the keys of raw's top-level "projects" object.
func renameProjectKeys(raw []byte, old, nw string) ([]byte, []string, int, error) {
	s, _, ok := session.Find(raw, "projects")
	if !ok || raw[s] != '{' {
		return raw, nil, 0, nil
	}
	fields, _, err := session.Fields(raw, s)
	if err != nil {
		return nil, nil, 0, err
	}
	keys := map[string]bool{}
	for _, f := range fields {
		keys[f.Key] = true
	}
	type rep struct {
		s, e int
		v    []byte
	}
	var reps []rep
	var notes []string
	for _, f := range fields {
		nk, ok := changeset.MapPath(old, nw, f.Key)
		if !ok || nk == f.Key {
			continue
		}
		if keys[nk] {
			if _, renamedAway := changeset.MapPath(old, nw, nk); !renamedAway {
				notes = append(notes, fmt.Sprintf("the projects map already has %q: the entry of %q was left as it is", nk, f.Key))
				continue
			}
		}
		end := stringEnd(raw, f.KeyStart)
		if end < 0 {
			return nil, nil, 0, fmt.Errorf("projects key at byte %d: unterminated string", f.KeyStart)
		}
		reps = append(reps, rep{f.KeyStart, end, changeset.QuoteJSON(nk)})
	}
	out := bytes.Clone(raw)
	for i := len(reps) - 1; i >= 0; i-- {
		out = session.Replace(out, reps[i].s, reps[i].e, reps[i].v)
	}
	return out, notes, len(reps), nil
}

// stringEnd returns the offset just past the JSON string that starts at
// raw[i] (a '"'), or -1.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// planHistory rewrites the `project` field of the history.jsonl lines
// whose project is old or under it (and only that field of those lines).
func planHistory(path, old, nw string) (*changeset.Op, error) {
	fp, err := changeset.Stat(path)
	if err != nil || !fp.Exists {
		return nil, err
	}
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := changeset.NewHashWriter()
	rd := session.NewReader(io.TeeReader(f, h), nil)
	q := changeset.QuoteJSON(old)
	needle := q[1 : len(q)-1]
	var edits []changeset.Edit
	for rd.Next() {
		l := rd.Line()
		if !bytes.Contains(l.Raw, needle) {
			continue
		}
		a, b, ok := session.Find(l.Raw, "project")
		if !ok {
			continue
		}
		p, ok := changeset.DecodeJSONString(l.Raw[a:b])
		if !ok {
			continue
		}
		np, ok := changeset.MapPath(old, nw, p)
		if !ok {
			continue
		}
		if l.Long != nil {
			// Its skeleton is not its bytes: a line cfix never holds whole
			// is not rewritten.
			return nil, fmt.Errorf("%s:%d: %s, over the %s cfix reads whole, names %s: cfix does not rewrite it", path, l.N, l.Long.Describe(), session.MB(session.MaxLine), p)
		}
		nb := session.Replace(l.Raw, a, b, changeset.QuoteJSON(np))
		length := int64(len(l.Raw))
		if l.Terminated {
			nb = append(nb, '\n')
			length++
		}
		edits = append(edits, changeset.Edit{Line: l.N, Offset: l.Offset, Length: length, Count: 1, New: nb,
			Reason: fmt.Sprintf("project %s → %s", p, np)})
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(edits) == 0 {
		return nil, nil
	}
	fp.SHA256 = h.Sum()
	return &changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Edits: edits,
		Reason: fmt.Sprintf("history.jsonl: %s of %s %s to %s", plural.Count(len(edits), "prompt"), old, map[bool]string{true: "moves", false: "move"}[len(edits) == 1], nw)}, nil
}

// planSessionMeta rewrites project_path in the /insights summaries of
// sessions (usage-data/session-meta/<session-id>.json, written by 2.1.330
// with "project_path" the session's project directory) under old, as
// planHistory does for history.jsonl: only the value's bytes change.
func planSessionMeta(root, old, nw string) ([]changeset.Op, error) {
	metas, err := store.SessionMetas(root)
	if err != nil {
		return nil, err
	}
	var ops []changeset.Op
	for _, m := range metas {
		fp, err := changeset.Stat(m.Path)
		if err != nil || !fp.Exists {
			return nil, err
		}
		raw, err := rfile.ReadFile(m.Path)
		if err != nil {
			return nil, err
		}
		h := changeset.NewHashWriter()
		h.Write(raw)
		fp.SHA256 = h.Sum()
		a, b, ok := session.Find(raw, "project_path")
		if !ok {
			continue
		}
		p, ok := changeset.DecodeJSONString(raw[a:b])
		if !ok {
			continue
		}
		np, ok := changeset.MapPath(old, nw, p)
		if !ok {
			continue
		}
		nb := session.Replace(raw, a, b, changeset.QuoteJSON(np))
		ops = append(ops, changeset.Op{Action: changeset.Rewrite, Path: m.Path, Expect: fp, Data: nb, HasData: true, Session: m.Session,
			Reason: fmt.Sprintf("usage-data/session-meta: project_path %s → %s", p, np)})
	}
	return ops, nil
}
