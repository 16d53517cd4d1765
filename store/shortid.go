package store

import (
	"slices"
	"strings"
)

// ShortLen is the length of a short session id: the prefix of a session
// id a listing prints, unless a longer one is needed to name the session
// alone (as git abbreviates object names).
const ShortLen = 8

// ShortIDs holds, for each session id of a store, the length of its
// shortest prefix that names that session alone to a Resolver of the
// store: ShortLen characters, more where two ids share them. What names no
// session by a prefix (a main transcript whose file name is no session
// id) is printed whole.
type ShortIDs struct {
	n map[string]int // lower-case id → length
}

// ShortIDsOf computes the short ids of the sessions of l, a scan of the
// whole store: every id a Resolver compares an id prefix with (the
// sessions of main transcripts and of subagent folders).
func ShortIDsOf(l *Layout) ShortIDs {
	var ids []string
	for _, f := range l.Files {
		if f.Kind != KindAgentFlat && f.Session != "" {
			ids = append(ids, strings.ToLower(f.Session))
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	s := ShortIDs{n: make(map[string]int, len(ids))}
	for i, id := range ids {
		need := 0
		if i > 0 {
			need = common(ids[i-1], id) + 1
		}
		if i+1 < len(ids) {
			need = max(need, common(id, ids[i+1])+1)
		}
		s.n[id] = min(max(need, ShortLen), len(id))
	}
	return s
}

// common is the length of the longest prefix a and b share.
func common(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Of is the short id of the session id: its first ShortLen characters, or
// as many more as the store needs to tell it from another id (a session
// of another store, or of none, gets ShortLen). A name that is no session
// id is given whole: only its whole name resolves.
func (s ShortIDs) Of(id string) string {
	if !IsUUID(id) {
		return id
	}
	n := ShortLen
	if k, ok := s.n[strings.ToLower(id)]; ok {
		n = k
	}
	return id[:n]
}

// Width is the widest short id of ids, at least ShortLen: the width of a
// column of them.
func (s ShortIDs) Width(ids []string) int {
	w := ShortLen
	for _, id := range ids {
		w = max(w, len(s.Of(id)))
	}
	return w
}
