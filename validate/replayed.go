package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/session"
)

// AmbientFields are the fields of an entry that say where and by what it
// was written rather than what it holds: a resume that writes the history
// again, or /branch, repeats an entry under its uuid with these changed
// (anthropics/claude-code#40363, #22178, #61974).
var AmbientFields = []string{"cwd", "gitBranch", "promptId", "slug", "version"}

var ambient = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range AmbientFields {
		m[f] = true
	}
	return m
}()

// ReplayedFields reports whether records a and b, two entries of one
// uuid, hold the same entry but for AmbientFields, and which of those
// differ (none when only the JSON's layout does).
func ReplayedFields(a, b []byte) ([]string, bool) {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return nil, false
	}
	var diff []string
	for _, pair := range [2][2]map[string]json.RawMessage{{ma, mb}, {mb, ma}} {
		for k, va := range pair[0] {
			vb, ok := pair[1][k]
			if ok && sameJSON(va, vb) {
				continue
			}
			if !ambient[k] {
				return nil, false
			}
			if !contains(diff, k) {
				diff = append(diff, k)
			}
		}
	}
	sort.Strings(diff)
	return diff, true
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// sameJSON reports whether two JSON values are equal, whatever their
// layout.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// replayed reads back the record of node first (a single record on its
// line) and compares it with line ln (nrec records): see ReplayedFields.
func replayed(fh *os.File, first *session.Node, ln session.Line, nrec int) ([]string, bool) {
	if nrec != 1 || first.Len == 0 {
		return nil, false
	}
	buf := make([]byte, first.Len)
	if _, err := fh.ReadAt(buf, first.Off); err != nil {
		return nil, false
	}
	return ReplayedFields(buf, ln.Raw)
}

// sameLine reports whether the line of the first entry of a uuid holds the
// very bytes of raw, NUL bytes aside (the line checks read a line without
// them). It reads the first line back: uuids repeat rarely, so no line is
// hashed in advance.
func sameLine(fh *os.File, first *session.Node, raw []byte) bool {
	if first.Len == 0 {
		return false // its line held several records
	}
	buf := make([]byte, first.Len)
	if _, err := fh.ReadAt(buf, first.Off); err != nil {
		return false
	}
	return bytes.Equal(dropNUL(buf), dropNUL(raw))
}

// dropNUL returns b without its NUL bytes.
func dropNUL(b []byte) []byte {
	if bytes.IndexByte(b, 0) < 0 {
		return b
	}
	return bytes.ReplaceAll(b, []byte{0}, nil)
}

// fieldsDiffer says which fields differ, for a message.
func fieldsDiffer(fields []string) string {
	if len(fields) == 0 {
		return "differing only in the layout of its JSON"
	}
	return fmt.Sprintf("differing only in %s", strings.Join(fields, ", "))
}
