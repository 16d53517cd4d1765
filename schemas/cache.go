package schemas

import (
	"encoding/json"
	"hash/maphash"
	"io/fs"
	"sort"
)

// Cache remembers Validate's result per entry shape. Two entries of the
// same type with the same shape (the same fields at every level, with
// values of the same JSON types, and the same values in the fields some
// schema compares with const or enum) get the same result, because the
// schemas constrain nothing else (TestSchemaKeywords keeps it so). Real
// stores repeat a few hundred shapes over millions of lines. A Cache is not
// safe for concurrent use.
type Cache struct {
	seed maphash.Seed
	m    map[uint64]error
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{seed: maphash.MakeSeed(), m: make(map[uint64]error)} }

// maxCached bounds the cache; past it, results are computed, not stored.
const maxCached = 1 << 16

// Validate is Validate, remembered by shape.
func (c *Cache) Validate(typ string, v any) error {
	load()
	if _, ok := compiled[typ]; !ok {
		return nil
	}
	k := maphash.String(c.seed, typ) ^ c.shape(v, 0)
	if err, ok := c.m[k]; ok {
		return err
	}
	err := Validate(typ, v)
	if len(c.m) < maxCached {
		c.m[k] = err
	}
	return err
}

// shape hashes what of v the schemas can see. valueKey marks a field whose
// string value counts.
func (c *Cache) shape(v any, salt uint64) uint64 {
	switch x := v.(type) {
	case map[string]any:
		h := uint64(0x9e3779b97f4a7c15)
		for k, e := range x {
			kh := maphash.String(c.seed, k)
			var vh uint64
			if s, ok := e.(string); ok && valueKeys[k] {
				vh = maphash.String(c.seed, s) ^ 0x5bd1e995
			} else {
				vh = c.shape(e, kh)
			}
			h += mix(kh ^ mix(vh))
		}
		return mix(h ^ salt ^ 1)
	case []any:
		h := uint64(2)
		for _, e := range x {
			h = mix(h ^ c.shape(e, 0))
		}
		return mix(h ^ salt ^ 3)
	case string:
		return mix(salt ^ 4)
	case bool:
		return mix(salt ^ 5)
	case nil:
		return mix(salt ^ 6)
	}
	// Numbers: json.Number, float64, ints.
	return mix(salt ^ 7)
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// valueKeys are the field names whose values some schema compares with
// const or enum.
var valueKeys = func() map[string]bool {
	m := map[string]bool{}
	var walk func(v any, prop string)
	walk = func(v any, prop string) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["const"]; ok && prop != "" {
				m[prop] = true
			}
			if _, ok := x["enum"]; ok && prop != "" {
				m[prop] = true
			}
			for k, e := range x {
				if k == "properties" {
					if props, ok := e.(map[string]any); ok {
						for name, s := range props {
							walk(s, name)
						}
					}
					continue
				}
				// Keywords whose schemas apply to the same instance keep prop.
				switch k {
				case "allOf", "anyOf", "oneOf", "not", "if", "then", "else":
					walk(e, prop)
				default:
					walk(e, "")
				}
			}
		case []any:
			for _, e := range x {
				walk(e, prop)
			}
		}
	}
	names, _ := fs.Glob(files, "*.json")
	more, _ := fs.Glob(files, "blocks/*.json")
	names = append(names, more...)
	sort.Strings(names)
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			continue
		}
		var doc any
		if json.Unmarshal(b, &doc) == nil {
			walk(doc, "")
		}
	}
	// Block schemas are chosen by the block's type.
	m["type"] = true
	return m
}()
