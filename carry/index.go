package carry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cfix-dev/cfix/store"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/session"
)

// Byte-preserving edits of sessions-index.json: entries are added, removed
// or retargeted without re-encoding the rest of the file (key order,
// formatting and fields cfix does not know stay as Claude Code wrote them).

// indexEntries returns the byte ranges of the elements of the "entries"
// array and the range of the array itself.
func indexEntries(raw []byte) (elems [][2]int, arr [2]int, err error) {
	s, e, ok := session.Find(raw, "entries")
	if !ok {
		return nil, arr, errors.New(`no "entries" array`)
	}
	elems, _, err = session.Elements(raw, s)
	if err != nil {
		return nil, arr, err
	}
	return elems, [2]int{s, e}, nil
}

// indexIDs returns the sessionId of each entry.
func indexIDs(raw []byte, elems [][2]int) []string {
	ids := make([]string, len(elems))
	for i, el := range elems {
		if a, b, ok := session.Find(raw[el[0]:el[1]], "sessionId"); ok {
			ids[i], _ = changeset.DecodeJSONString(raw[el[0]+a : el[0]+b])
		}
	}
	return ids
}

// indexEntry returns the raw bytes of the entry for id, or nil.
func indexEntry(raw []byte, id string) []byte {
	elems, _, err := indexEntries(raw)
	if err != nil {
		return nil
	}
	for i, got := range indexIDs(raw, elems) {
		if got == id {
			return raw[elems[i][0]:elems[i][1]]
		}
	}
	return nil
}

// indexAppend adds entries (JSON objects) at the end of the entries array.
// Entries are indented like the ones already there.
func indexAppend(raw []byte, add [][]byte) ([]byte, error) {
	if len(add) == 0 {
		return raw, nil
	}
	elems, arr, err := indexEntries(raw)
	if err != nil {
		return nil, err
	}
	pretty := bytes.IndexByte(raw, '\n') >= 0
	sep, closing := []byte(nil), []byte(nil)
	var at int
	if len(elems) > 0 {
		sep = bytes.Clone(raw[arr[0]+1 : elems[0][0]]) // the whitespace before the first entry
		at = elems[len(elems)-1][1]
	} else {
		if pretty {
			sep, closing = []byte("\n    "), []byte("\n  ")
		}
		at = arr[1] - 1 // before "]"
		// Drop whitespace inside an empty array.
		for at > arr[0]+1 && (raw[at-1] == ' ' || raw[at-1] == '\n' || raw[at-1] == '\t' || raw[at-1] == '\r') {
			at--
		}
	}
	indent := ""
	if i := bytes.LastIndexByte(sep, '\n'); i >= 0 {
		indent = string(sep[i+1:])
	}
	var mid bytes.Buffer
	for i, a := range add {
		if len(elems) > 0 || i > 0 {
			mid.WriteByte(',')
		}
		mid.Write(sep)
		mid.Write(reindent(a, indent))
	}
	mid.Write(closing)
	end := at
	if len(elems) == 0 {
		end = arr[1] - 1
	}
	out := make([]byte, 0, len(raw)+mid.Len())
	out = append(out, raw[:at]...)
	out = append(out, mid.Bytes()...)
	return append(out, raw[end:]...), nil
}

// reindent formats a compact or indented object for its place in the
// array: compact when indent is "", else indented by two spaces a level.
func reindent(obj []byte, indent string) []byte {
	var b bytes.Buffer
	if indent == "" {
		if json.Compact(&b, obj) != nil {
			return obj
		}
		return b.Bytes()
	}
	if bytes.IndexByte(obj, '\n') >= 0 {
		return obj // already indented (copied from a Claude Code index)
	}
	if json.Indent(&b, obj, indent, "  ") != nil {
		return obj
	}
	return b.Bytes()
}

// indexRemove removes the entry of session id. It reports whether there
// was one.
func indexRemove(raw []byte, id string) ([]byte, bool, error) {
	elems, arr, err := indexEntries(raw)
	if err != nil {
		return nil, false, err
	}
	for i, got := range indexIDs(raw, elems) {
		if got != id {
			continue
		}
		var from, to int
		switch {
		case len(elems) == 1:
			from, to = arr[0]+1, arr[1]-1
		case i == 0:
			from, to = elems[0][0], elems[1][0]
		default:
			from, to = elems[i-1][1], elems[i][1]
		}
		return append(bytes.Clone(raw[:from]), raw[to:]...), true, nil
	}
	return raw, false, nil
}

// setIfPresent sets top-level fields of the object obj that it has.
func setIfPresent(obj []byte, vals map[string][]byte) []byte {
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if s, e, ok := session.Find(obj, k); ok {
			obj = session.Replace(obj, s, e, vals[k])
		}
	}
	return obj
}

// retargetEntry rewrites an index entry for its new place: sessionId,
// fullPath and fileMtime, and projectPath mapped from oldDir to newDir.
func retargetEntry(obj []byte, id, fullPath string, mtimeMS int64, oldDir, newDir string) []byte {
	vals := map[string][]byte{
		"sessionId": changeset.QuoteJSON(id),
		"fullPath":  changeset.QuoteJSON(fullPath),
	}
	if mtimeMS != 0 {
		vals["fileMtime"] = []byte(strconv.FormatInt(mtimeMS, 10))
	}
	if s, e, ok := session.Find(obj, "projectPath"); ok && oldDir != "" {
		if p, ok := changeset.DecodeJSONString(obj[s:e]); ok {
			if np, ok := changeset.MapPath(oldDir, newDir, p); ok {
				vals["projectPath"] = changeset.QuoteJSON(np)
			}
		}
	}
	return setIfPresent(obj, vals)
}

// newEntry builds an index entry from a summary, fields in the order
// Claude Code writes them.
func newEntry(id, fullPath string, mtimeMS int64, s *store.SessionSummary, projectPath string) []byte {
	var b bytes.Buffer
	field := func(k string, v []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(changeset.QuoteJSON(k))
		b.WriteByte(':')
		b.Write(v)
	}
	q := changeset.QuoteJSON
	b.WriteByte('{')
	field("sessionId", q(id))
	field("fullPath", q(fullPath))
	field("fileMtime", []byte(strconv.FormatInt(mtimeMS, 10)))
	field("firstPrompt", q(s.FirstPrompt))
	if s.Summary != "" {
		field("summary", q(s.Summary))
	}
	field("messageCount", []byte(strconv.Itoa(s.Messages)))
	field("created", q(s.First))
	field("modified", q(s.Last))
	field("gitBranch", q(s.Branch))
	field("projectPath", q(projectPath))
	field("isSidechain", []byte("false"))
	b.WriteByte('}')
	return b.Bytes()
}

// retargetIndex rewrites a whole index for a moved folder: each entry's
// fullPath into newFolder (when it pointed into oldFolder), projectPath and
// the top-level originalPath mapped from oldDir to newDir.
func retargetIndex(raw []byte, oldFolder, newFolder, oldDir, newDir string) ([]byte, error) {
	elems, _, err := indexEntries(raw)
	if err != nil {
		return nil, err
	}
	type rep struct {
		s, e int
		v    []byte
	}
	var reps []rep
	for _, el := range elems {
		obj := raw[el[0]:el[1]]
		vals := map[string][]byte{}
		if s, e, ok := session.Find(obj, "fullPath"); ok {
			if p, ok := changeset.DecodeJSONString(obj[s:e]); ok && filepath.Dir(p) == oldFolder {
				vals["fullPath"] = changeset.QuoteJSON(filepath.Join(newFolder, filepath.Base(p)))
			}
		}
		if s, e, ok := session.Find(obj, "projectPath"); ok {
			if p, ok := changeset.DecodeJSONString(obj[s:e]); ok {
				if np, ok := changeset.MapPath(oldDir, newDir, p); ok {
					vals["projectPath"] = changeset.QuoteJSON(np)
				}
			}
		}
		if len(vals) > 0 {
			reps = append(reps, rep{el[0], el[1], setIfPresent(bytes.Clone(obj), vals)})
		}
	}
	if s, e, ok := session.Find(raw, "originalPath"); ok {
		if p, ok := changeset.DecodeJSONString(raw[s:e]); ok {
			if np, ok := changeset.MapPath(oldDir, newDir, p); ok {
				reps = append(reps, rep{s, e, changeset.QuoteJSON(np)})
			}
		}
	}
	// Apply from the end so earlier offsets stay valid.
	sort.Slice(reps, func(i, j int) bool { return reps[i].s < reps[j].s })
	out := bytes.Clone(raw)
	for i := len(reps) - 1; i >= 0; i-- {
		out = session.Replace(out, reps[i].s, reps[i].e, reps[i].v)
	}
	return out, nil
}

// checkIndex reports whether raw is an index cfix can edit.
func checkIndex(path string, raw []byte) error {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if _, _, err := indexEntries(raw); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
