package schemas

import (
	"encoding/json"
	"hash/maphash"
	"io/fs"
	"sort"

	"github.com/cfix-dev/cfix/session"
)

// Cache remembers Validate's result per entry shape. Two entries of the
// same type with the same shape (the same fields at every level, with
// values of the same JSON types, and the same values in the fields some
// schema compares with const or enum: session.Shaper's hash) get the same
// result, because the schemas constrain nothing else (TestSchemaKeywords
// keeps it so). Real stores repeat a few hundred shapes over millions of
// lines. A Cache is not safe for concurrent use.
type Cache struct {
	seed   maphash.Seed
	shaper *session.Shaper
	m      map[uint64]error
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{seed: maphash.MakeSeed(), shaper: session.NewShaper(valueKeys), m: make(map[uint64]error)}
}

// maxCached bounds the cache; past it, results are computed, not stored.
const maxCached = 1 << 16

// Shaper returns the hash of shapes the cache remembers results by, for
// session.Parser.Scan.
func (c *Cache) Shaper() *session.Shaper { return c.shaper }

// Validate is Validate, remembered by shape.
func (c *Cache) Validate(typ string, v any) error {
	load()
	if _, ok := compiled[typ]; !ok {
		return nil
	}
	k := c.key(typ, c.shaper.Shape(v))
	if err, ok := c.m[k]; ok {
		return err
	}
	err := Validate(typ, v)
	if len(c.m) < maxCached {
		c.m[k] = err
	}
	return err
}

// Known returns the result Validate gave an entry of type typ whose tree
// has the given shape (Shaper().Shape), if the cache remembers one. An
// entry type without a schema is known and valid.
func (c *Cache) Known(typ string, shape uint64) (known bool, err error) {
	load()
	if _, ok := compiled[typ]; !ok {
		return true, nil
	}
	err, known = c.m[c.key(typ, shape)]
	return known, err
}

func (c *Cache) key(typ string, shape uint64) uint64 { return maphash.String(c.seed, typ) ^ shape }

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
