package schemas

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"sort"
	"testing"
)

// TestSchemaKeywords keeps the schemas to the keywords Cache's shape
// covers: types, required fields, properties, items and const/enum values.
// A schema needing another keyword (pattern, minimum, ...) must extend
// session.Shaper first.
func TestSchemaKeywords(t *testing.T) {
	allowed := map[string]bool{
		"$schema": true, "$id": true, "$ref": true, "$defs": true, "title": true, "description": true,
		"type": true, "properties": true, "required": true, "items": true, "const": true, "enum": true, "allOf": true,
	}
	names, _ := fs.Glob(files, "*.json")
	more, _ := fs.Glob(files, "blocks/*.json")
	for _, n := range append(names, more...) {
		b, _ := files.ReadFile(n)
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v any, inProps bool)
		walk = func(v any, inProps bool) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if !inProps && !allowed[k] {
						t.Errorf("%s: keyword %q is not covered by Cache's shape", n, k)
					}
					walk(e, k == "properties" || k == "$defs")
				}
			case []any:
				for _, e := range x {
					walk(e, false)
				}
			}
		}
		walk(doc, false)
	}
	var keys []string
	for k := range valueKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"type"}) {
		t.Logf("value keys: %v", keys)
	}
}

// TestCacheAgrees checks the cache gives Validate's answer for every corpus
// line and for damaged copies, whatever order they come in.
func TestCacheAgrees(t *testing.T) {
	lines := loadCorpus(t)
	c := NewCache()
	check := func(typ string, v any) {
		t.Helper()
		want, got := Validate(typ, v), c.Validate(typ, v)
		if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
			t.Fatalf("%s: cache says %v, Validate says %v", typ, got, want)
		}
	}
	for round := 0; round < 2; round++ {
		for _, l := range lines {
			m := forms(t, l.raw)["light-number"].(map[string]any)
			typ, _ := m["type"].(string)
			check(typ, m)
			// Same shape, another value of a const field: must not hit.
			bad := forms(t, l.raw)["light-number"].(map[string]any)
			bad["type"] = "not-" + typ
			check(typ, bad)
			// A type change of one field.
			if _, ok := bad["sessionId"]; ok {
				bad["type"] = typ
				bad["sessionId"] = json.Number("5")
				check(typ, bad)
			}
		}
	}
	if len(c.m) == 0 || len(c.m) >= len(lines)*2 {
		t.Errorf("cache holds %d shapes for %d lines", len(c.m), len(lines))
	}
}

// TestUnnamedFieldsDoNotCount backs the cache's leaving out of fields no
// schema names (namedKeys): on every corpus line, and on copies the
// schemas reject, giving every such field a value of another type, and
// adding one such field to every object, leaves Validate's answer as it
// is.
func TestUnnamedFieldsDoNotCount(t *testing.T) {
	var retype func(v any) any
	retype = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{"zzUnnamed": []any{json.Number("1"), map[string]any{"type": "x"}}}
			for k, e := range x {
				if !namedKeys[k] {
					switch e.(type) {
					case string:
						out[k] = json.Number("7")
					default:
						out[k] = "s"
					}
					continue
				}
				out[k] = retype(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = retype(e)
			}
			return out
		}
		return v
	}
	same := func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) }
	n, invalid := 0, 0
	for i, l := range loadCorpus(t) {
		m := forms(t, l.raw)["light-number"].(map[string]any)
		typ, _ := m["type"].(string)
		if !Has(typ) {
			continue
		}
		if i%2 == 1 { // a copy the schemas reject
			m["sessionId"] = json.Number("5")
			if msg, ok := m["message"].(map[string]any); ok {
				msg["role"] = true
			}
		}
		want := Validate(typ, m)
		if got := Validate(typ, retype(m)); !same(got, want) {
			t.Fatalf("%s:%d: %v with unnamed fields changed, %v before", l.file, l.n, got, want)
		}
		if want != nil {
			invalid++
		}
		n++
	}
	t.Logf("%d entries, %d invalid", n, invalid)
}
