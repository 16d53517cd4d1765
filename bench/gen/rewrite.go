package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// rewriter gives one replay of one file of a copy its fresh values.
type rewriter struct {
	c     *copyCtx
	f     *tmplFile
	ns    string // id namespace of this file and replay
	shift time.Duration
	memo  map[string]string // old id -> new, a cache of id
}

// entry rewrites a decoded transcript line in place.
func (w *rewriter) entry(m map[string]any) {
	w.value("", m)
	// The file decides these, whatever the corpus entry said: a main
	// session's entries carry its id, a subagent's its parent's, and every
	// entry of the folder the folder's path.
	if _, ok := m["sessionId"]; ok {
		m["sessionId"] = w.c.session(w.f.session)
	}
	if _, ok := m["agentId"]; ok && w.f.sub {
		m["agentId"] = w.c.agents[w.f.agent]
	}
	if _, ok := m["cwd"]; ok {
		m["cwd"] = w.c.fo.cwd
	}
}

// value rewrites v, found under key, and returns the new value. Maps and
// slices are changed in place.
func (w *rewriter) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = w.value(k, e)
		}
	case []any:
		for i, e := range x {
			x[i] = w.value(key, e) // e.g. compactMetadata's allUuids: ids too
		}
	case string:
		return w.str(key, x)
	case json.Number:
		if key == "startTime" { // cost-state: milliseconds since the epoch
			if ms, err := x.Int64(); err == nil {
				return json.Number(strconv.FormatInt(ms+w.shift.Milliseconds(), 10))
			}
		}
	}
	return v
}

// str rewrites a string value found under key.
func (w *rewriter) str(key, s string) string {
	switch {
	case key == "timestamp":
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.Add(w.shift).UTC().Format("2006-01-02T15:04:05.000Z")
		}
	case key == "agentId":
		if n, ok := w.c.agents[s]; ok {
			return n
		}
	case isID(s):
		return w.id(s)
	}
	if old := w.c.u.oldCwd; old != "" && strings.Contains(s, old) {
		s = replacePath(s, old, w.c.fo.cwd)
	}
	if w.c.agentText != nil && strings.Contains(s, "agentId") {
		s = w.c.agentText.Replace(s)
	}
	return s
}

// id returns the new value of the id s. The same old id must get the same
// new value wherever it refers to the same thing:
//   - a session id of the unit: that session's new id;
//   - an id the file itself defines (entry uuid, tool_use id): the value of
//     this file and replay. This also gives fresh ids to entries a file
//     repeats from another (a compaction agent copies the main session's
//     entries; 1.0.x resumes repeat the history in a new file);
//   - an id another main file of the unit defines (a stub's leafUuid, a
//     compaction agent's parentUuid into the main session): that file's
//     value (first replay);
//   - in a subagent, an id shared with a main file (promptId, the Agent
//     call's toolUseId): the main file's value;
//   - anything else (message ids, promptIds, request ids): the value of this
//     file and replay, so replays do not share them.
func (w *rewriter) id(s string) string {
	if n, ok := w.memo[s]; ok {
		return n
	}
	u := w.c.u
	ns := w.ns
	if u.sessions[s] {
		n := w.c.session(s)
		w.memo[s] = n
		return n
	}
	if !w.f.defs[s] {
		if i, ok := u.defOwner[s]; ok {
			ns = w.c.fileNS(i, 0)
		} else if i, ok := u.refOwner[s]; ok && w.f.sub {
			ns = w.c.fileNS(i, 0)
		}
	}
	n := newID(ns, s)
	w.memo[s] = n
	return n
}
