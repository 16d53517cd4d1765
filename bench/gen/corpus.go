package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/cfix-dev/cfix/store"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// tmplFile is one transcript of the corpus, kept as raw lines and copied
// many times.
type tmplFile struct {
	rel     string // path under the corpus project folder, for messages
	sub     bool   // a subagent transcript
	flat    bool   // flat subagent layout: agent-<id>.jsonl beside the sessions
	session string // main: the file's session id; subagent: the parent's
	agent   string // subagent: the agent id from the file name
	lines   [][]byte
	size    int64

	// defs holds the ids the file defines: entry uuids and tool_use ids.
	defs map[string]bool
	// ids lists every id-like string of the file (see isID), in order.
	ids []string
	// span is the time from the first to the last timestamp.
	span time.Duration

	hasMeta bool   // subagent with a .meta.json sidecar
	meta    []byte // its content (may be empty: some are 0 bytes)
	todo    []byte // main: the version's todos/<sid>-agent-<sid>.json, if any
	debug   []byte // main: the version's debug/<sid>.txt, if any
}

// unit is one project folder of one corpus version: its main sessions and
// subagents, copied together so references between them stay intact.
type unit struct {
	name     string // <version>/<folder>
	oldCwd   string // the folder's original path, as the entries name it
	mains    []*tmplFile
	subs     []*tmplFile
	size     int64
	sessions map[string]bool // session ids of the main files and subagent parents
	agents   []string        // agent ids, sorted
	// defOwner maps an id defined (as uuid or tool_use id) in a main file to
	// the index in mains of the first file defining it; refOwner does the
	// same for any id-like string of a main file.
	defOwner map[string]int
	refOwner map[string]int
}

// loadCorpus reads every <version>/.claude/projects/<folder> under root
// into units, sorted by name.
func loadCorpus(root string) ([]*unit, error) {
	vers, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var units []*unit
	for _, v := range vers {
		if !v.IsDir() {
			continue
		}
		claude := filepath.Join(root, v.Name(), ".claude")
		projects, err := os.ReadDir(filepath.Join(claude, "projects"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, p := range projects {
			if !p.IsDir() {
				continue
			}
			u, err := loadUnit(claude, v.Name(), p.Name())
			if err != nil {
				return nil, err
			}
			if len(u.mains) > 0 {
				units = append(units, u)
			}
		}
	}
	if len(units) == 0 {
		return nil, fmt.Errorf("no sessions under %s", root)
	}
	return units, nil
}

// loadUnit reads one project folder of one version.
func loadUnit(claude, version, folder string) (*unit, error) {
	dir := filepath.Join(claude, "projects", folder)
	u := &unit{
		name:     version + "/" + folder,
		sessions: map[string]bool{},
		defOwner: map[string]int{},
		refOwner: map[string]int{},
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		name := strings.TrimSuffix(parts[len(parts)-1], ".jsonl")
		f := &tmplFile{rel: rel}
		switch {
		case len(parts) == 1 && isUUID(name):
			f.session = name
		case len(parts) == 1 && strings.HasPrefix(name, "agent-"):
			f.sub, f.flat, f.agent = true, true, strings.TrimPrefix(name, "agent-")
		case len(parts) >= 3 && parts[1] == "subagents" && isUUID(parts[0]) && strings.HasPrefix(name, "agent-"):
			f.sub, f.agent, f.session = true, strings.TrimPrefix(name, "agent-"), parts[0]
			meta, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".meta.json")
			if err == nil {
				f.hasMeta, f.meta = true, meta
			}
		default:
			return nil // not a transcript we know how to copy
		}
		if err := f.load(path); err != nil {
			return err
		}
		if f.sub {
			u.subs = append(u.subs, f)
			u.agents = append(u.agents, f.agent)
		} else {
			f.todo, _ = os.ReadFile(filepath.Join(claude, "todos", f.session+"-agent-"+f.session+".json"))
			f.debug, _ = os.ReadFile(filepath.Join(claude, "debug", f.session+".txt"))
			u.mains = append(u.mains, f)
		}
		u.sessions[f.session] = true
		u.size += f.size
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(u.agents)
	for i, f := range u.mains {
		for _, id := range f.ids {
			if _, ok := u.defOwner[id]; !ok && f.defs[id] {
				u.defOwner[id] = i
			}
			if _, ok := u.refOwner[id]; !ok {
				u.refOwner[id] = i
			}
		}
	}
	// The original path: the first cwd that encodes to the folder name.
	for _, f := range append(append([]*tmplFile{}, u.mains...), u.subs...) {
		for _, line := range f.lines {
			var e struct {
				Cwd string `json:"cwd"`
			}
			if json.Unmarshal(line, &e) == nil && e.Cwd != "" && store.EncodeProject(e.Cwd) == folder {
				u.oldCwd = e.Cwd
				return u, nil
			}
		}
	}
	return u, nil
}

// load reads the file's lines and notes its ids, timestamps and (flat
// subagents) parent session.
func (f *tmplFile) load(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f.size = int64(len(data))
	f.defs = map[string]bool{}
	seen := map[string]bool{}
	var first, last time.Time
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n+1, err)
		}
		f.lines = append(f.lines, line)
		if u, ok := m["uuid"].(string); ok && u != "" {
			f.defs[u] = true
		}
		for _, id := range toolUseIDs(m) {
			f.defs[id] = true
		}
		walkStrings(m, func(s string) {
			if isID(s) && !seen[s] {
				seen[s] = true
				f.ids = append(f.ids, s)
			}
		})
		if ts, ok := m["timestamp"].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				if first.IsZero() || t.Before(first) {
					first = t
				}
				if t.After(last) {
					last = t
				}
			}
		}
		// A flat subagent's parent is named by its entries; they do not
		// always agree (2.0.77 Warmup agents), so take the last one.
		if sid, ok := m["sessionId"].(string); ok && f.flat && sid != "" {
			f.session = sid
		}
	}
	f.span = last.Sub(first)
	if f.flat && f.session == "" {
		return fmt.Errorf("%s: flat subagent without a sessionId", path)
	}
	return nil
}

// toolUseIDs returns the ids of the tool_use blocks of an entry's message.
func toolUseIDs(m map[string]any) []string {
	msg, _ := m["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	var ids []string
	for _, b := range blocks {
		if b, ok := b.(map[string]any); ok && b["type"] == "tool_use" {
			if id, ok := b["id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// walkStrings calls fn on every string value under v, in a fixed order.
func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], fn)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case string:
		fn(x)
	}
}
