package schemas

import (
	"encoding/json"
	"errors"
	"hash/maphash"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cfix-dev/cfix/session"
)

// Cache remembers Validate's result per entry shape. Two entries of the
// same type with the same shape (the same fields at every level, of the
// names some schema names, with values of the same JSON types, and the
// same values in the fields some schema compares with const or enum:
// session.Shaper's hash) get the same result, because the schemas
// constrain nothing else (TestSchemaKeywords keeps it so): a field no
// schema names, and all it holds, cannot change a result. Real stores repeat a few hundred shapes over millions of
// lines.
//
// The caches of a process share what they learn (a shape is validated
// once, whichever core meets it first); each also keeps the results it
// used in a map of its own, so a Cache is not safe for concurrent use.
type Cache struct {
	*results
	m map[uint64]error
}

// results is the table the caches of a process share.
type results struct {
	seed   maphash.Seed
	shaper *session.Shaper
	m      sync.Map // uint64 → error (nil stored as noErr)
	n      atomic.Int64
}

// noErr stands for a nil result in results.m.
var noErr = errors.New("valid")

var shared = sync.OnceValue(func() *results {
	return &results{seed: maphash.MakeSeed(), shaper: session.NewShaper(valueKeys, namedKeys)}
})

// NewCache returns a cache that knows what the process's caches learned.
func NewCache() *Cache { return &Cache{results: shared(), m: make(map[uint64]error)} }

// maxCached bounds the cache; past it, results are computed, not stored.
const maxCached = 1 << 16

// Shaper returns the hash of shapes the cache remembers results by, for
// session.Parser.Scan.
func (c *Cache) Shaper() *session.Shaper { return c.shaper }

// Validate is Validate, remembered by shape.
func (c *Cache) Validate(typ string, v any) error {
	if !Has(typ) {
		return nil
	}
	k := c.key(typ, c.shaper.Shape(v))
	if known, err := c.lookup(k); known {
		return err
	}
	err := Validate(typ, v)
	if c.n.Load() < maxCached {
		c.n.Add(1)
		stored := err
		if stored == nil {
			stored = noErr
		}
		c.results.m.Store(k, stored)
		c.m[k] = err
	}
	return err
}

// Known returns the result Validate gave an entry of type typ whose tree
// has the given shape (Shaper().Shape), if a cache of the process
// remembers one. An entry type without a schema is known and valid.
func (c *Cache) Known(typ string, shape uint64) (known bool, err error) {
	if known, err := c.lookup(c.key(typ, shape)); known {
		return true, err
	}
	return !Has(typ), nil
}

// lookup finds a result in the cache's own map, then in the shared one.
func (c *Cache) lookup(k uint64) (known bool, err error) {
	if err, ok := c.m[k]; ok {
		return true, err
	}
	v, ok := c.results.m.Load(k)
	if !ok {
		return false, nil
	}
	if err = v.(error); err == noErr {
		err = nil
	}
	if len(c.m) < maxCached {
		c.m[k] = err
	}
	return true, err
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

// namedKeys are the field names some schema names: the keys of every
// "properties" and the names in every "required", wherever they are. A
// schema with no additionalProperties, patternProperties or the like
// (TestSchemaKeywords) reaches a field only through names it gives.
var namedKeys = func() map[string]bool {
	m := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch e := e.(type) {
				case map[string]any:
					if k == "properties" {
						for name := range e {
							m[name] = true
						}
					}
				case []any:
					if k == "required" {
						for _, name := range e {
							if s, ok := name.(string); ok {
								m[s] = true
							}
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	names, _ := fs.Glob(files, "*.json")
	more, _ := fs.Glob(files, "blocks/*.json")
	for _, n := range append(names, more...) {
		b, err := files.ReadFile(n)
		if err != nil {
			continue
		}
		var doc any
		if json.Unmarshal(b, &doc) == nil {
			walk(doc)
		}
	}
	return m
}()
