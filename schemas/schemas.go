// Package schemas holds the JSON Schemas of Claude Code transcript entries
// (one embedded <type>.json per entry type, sharing defs.json) and validates
// decoded entries against them.
//
// The schemas accept fields they do not know, and they constrain nothing
// deeper than depth 4 beyond its JSON type, so they also hold for the light
// tree the validator feeds: strings cut to 1024 bytes and containers at
// depth >= 5 (the entry is depth 0) replaced by empty ones.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// baseURL is the prefix of every schema's $id.
const baseURL = "https://cfix.dev/schemas/"

// defsFile holds the shared definitions; it is not an entry type.
const defsFile = "defs.json"

//go:embed *.json blocks/*.json
var files embed.FS

// The schemas are compiled one at a time, the first time an entry or a
// block of their type is validated: a store uses a few of the types, and
// compiling all of them took longer than checking a small store.
var (
	indexOnce    sync.Once
	entrySchemas map[string]*lazySchema // entry type → schema
	blockSchemas map[string]*lazySchema // content block type → schema
	types        []string
)

// lazySchema is one schema file, compiled on first use.
type lazySchema struct {
	name string
	once sync.Once
	s    *jsonschema.Schema
}

// get compiles the schema once; a failure is a programming error.
func (l *lazySchema) get() *jsonschema.Schema {
	l.once.Do(func() {
		s, err := compileOne(files, l.name)
		if err != nil {
			panic("schemas: " + err.Error())
		}
		l.s = s
	})
	return l.s
}

// index lists the schema files, once.
func index() {
	indexOnce.Do(func() {
		entrySchemas, blockSchemas = map[string]*lazySchema{}, map[string]*lazySchema{}
		names, _ := fs.Glob(files, "*.json")
		blocks, _ := fs.Glob(files, "blocks/*.json")
		for _, name := range append(names, blocks...) {
			key := strings.TrimSuffix(path.Base(name), path.Ext(name))
			switch {
			case strings.HasPrefix(name, "blocks/"):
				blockSchemas[key] = &lazySchema{name: name}
			case name != defsFile:
				entrySchemas[key] = &lazySchema{name: name}
				types = append(types, key)
			}
		}
		sort.Strings(types)
	})
}

// defsOnce parses defs.json for compileOne, once.
var defsOnce = sync.OnceValues(func() (map[string]any, error) { return readJSON(files, defsFile) })

// compileOne compiles schema file name of fsys (files) as compileAll does,
// with only defs.json beside it.
func compileOne(fsys fs.FS, name string) (*jsonschema.Schema, error) {
	defsDoc, err := defsOnce()
	if err != nil {
		return nil, err
	}
	defs, _ := defsDoc["$defs"].(map[string]any)
	doc, err := readJSON(fsys, name)
	if err != nil {
		return nil, err
	}
	doc = inline(doc, defs, 0).(map[string]any)
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = false
	for n, d := range map[string]map[string]any{name: doc, defsFile: defsDoc} {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(baseURL+n, bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("add %s: %w", n, err)
		}
	}
	s, err := c.Compile(baseURL + name)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}
	return s, nil
}

// compileAll registers every *.json and blockSchemas/*.json of fsys under
// baseURL and compiles one schema per entry type and one per content block
// type, keyed by the file name without ".json".
func compileAll(fsys fs.FS) (entries, blockSchemas map[string]*jsonschema.Schema, err error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, nil, err
	}
	blockNames, err := fs.Glob(fsys, "blocks/*.json")
	if err != nil {
		return nil, nil, err
	}
	names = append(names, blockNames...)
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = false
	defsDoc, err := readJSON(fsys, defsFile)
	if err != nil {
		return nil, nil, err
	}
	defs, _ := defsDoc["$defs"].(map[string]any)
	for _, name := range names {
		doc, err := readJSON(fsys, name)
		if err != nil {
			return nil, nil, err
		}
		if name != defsFile {
			doc = inline(doc, defs, 0).(map[string]any)
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, nil, err
		}
		if err := c.AddResource(baseURL+name, bytes.NewReader(b)); err != nil {
			return nil, nil, fmt.Errorf("add %s: %w", name, err)
		}
	}
	entries = make(map[string]*jsonschema.Schema, len(names))
	blockSchemas = make(map[string]*jsonschema.Schema, len(blockNames))
	for _, name := range names {
		s, err := c.Compile(baseURL + name)
		if err != nil {
			return nil, nil, fmt.Errorf("compile %s: %w", name, err)
		}
		key := strings.TrimSuffix(path.Base(name), path.Ext(name))
		switch {
		case strings.HasPrefix(name, "blocks/"):
			blockSchemas[key] = s
		case name != defsFile:
			entries[key] = s
		}
	}
	return entries, blockSchemas, nil
}

func readJSON(fsys fs.FS, name string) (map[string]any, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return doc, nil
}

// inline replaces each "$ref" into defs.json by the definition itself,
// merged with the keywords beside the $ref. The result validates exactly
// as the original, but in one pass: jsonschema/v5 re-collects every
// property of an object for each $ref it follows, which dominated the cost
// of checking a store.
func inline(v any, defs map[string]any, depth int) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inline(e, defs, depth)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = inline(e, defs, depth)
		}
		ref, ok := out["$ref"].(string)
		i := strings.LastIndex(ref, "#/$defs/")
		if !ok || i < 0 || depth > 16 {
			return out
		}
		def, ok := defs[ref[i+len("#/$defs/"):]]
		if !ok {
			return out
		}
		delete(out, "$ref")
		return merge(inline(def, defs, depth+1).(map[string]any), out)
	}
	return v
}

// merge combines two schemas that must both hold: properties present in
// both become an allOf, required lists are joined, and other keywords of b
// win (they are annotations, or equal in the files here).
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		switch k {
		case "properties":
			pa, _ := out[k].(map[string]any)
			pb, _ := v.(map[string]any)
			props := make(map[string]any, len(pa)+len(pb))
			for n, s := range pa {
				props[n] = s
			}
			for n, s := range pb {
				if prev, ok := props[n]; ok {
					props[n] = map[string]any{"allOf": []any{prev, s}}
				} else {
					props[n] = s
				}
			}
			out[k] = props
		case "required":
			seen := map[string]bool{}
			var req []any
			for _, list := range []any{out[k], v} {
				l, _ := list.([]any)
				for _, r := range l {
					if s, ok := r.(string); ok && !seen[s] {
						seen[s] = true
						req = append(req, s)
					}
				}
			}
			out[k] = req
		default:
			out[k] = v
		}
	}
	return out
}

// Has reports whether an entry type has a schema.
func Has(typ string) bool {
	index()
	_, ok := entrySchemas[typ]
	return ok
}

// Types lists the entry types that have a schema, sorted.
func Types() []string {
	index()
	return append([]string(nil), types...)
}

// Validate checks one decoded entry against the schema of typ and returns
// nil when typ has no schema. Numbers may be float64, json.Number, int or
// int64. The error is one line naming the JSON pointer of the offending
// field ("(root)" for the entry itself), e.g. "/message/content/0/text:
// expected string, but got number" or "/uuid: missing required field".
func Validate(typ string, v any) error {
	index()
	l, ok := entrySchemas[typ]
	if !ok {
		return nil
	}
	var entryErr error
	if err := l.get().Validate(v); err != nil {
		entryErr = wrap("", err)
	}
	blockErr := validateBlocks(v)
	switch {
	case entryErr == nil:
		return blockErr
	case blockErr == nil:
		return entryErr
	}
	// Report the more specific of the two, as describe does within one.
	e, b := entryErr.Error(), blockErr.Error()
	de, db := strings.Count(pointerOf(e), "/"), strings.Count(pointerOf(b), "/")
	if db > de || db == de && b < e {
		return blockErr
	}
	return entryErr
}

// pointerOf returns the pointer part of a message made by wrap.
func pointerOf(msg string) string {
	p, _, _ := strings.Cut(msg, ": ")
	return p
}

// validateBlocks checks each block of message.content against the schema
// of its type. Choosing the schema here, not with if/then in the schema,
// keeps validation from building an error for every kind a block is not.
func validateBlocks(v any) error {
	m, _ := v.(map[string]any)
	msg, _ := m["message"].(map[string]any)
	content, _ := msg["content"].([]any)
	for i, b := range content {
		bm, _ := b.(map[string]any)
		typ, _ := bm["type"].(string)
		l, ok := blockSchemas[typ]
		if !ok {
			continue
		}
		if err := l.get().Validate(b); err != nil {
			return wrap(fmt.Sprintf("/message/content/%d", i), err)
		}
	}
	return nil
}

// wrap turns a validation error into a one-line error whose pointer is
// prefixed with prefix.
func wrap(prefix string, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("invalid value: %v", err)
	}
	d := describe(ve)
	if prefix == "" {
		return errors.New(d)
	}
	if rest, ok := strings.CutPrefix(d, "(root)"); ok {
		d = rest
	}
	return errors.New(prefix + d)
}

// describe renders the most specific leaf cause of ve: the deepest
// instance location, ties broken by pointer and message so the result does
// not depend on map order.
func describe(ve *jsonschema.ValidationError) string {
	var bestLoc, bestMsg string
	bestDepth := -1
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc, msg := leaf(e)
		d := strings.Count(loc, "/")
		if d > bestDepth || d == bestDepth && (loc < bestLoc || loc == bestLoc && msg < bestMsg) {
			bestDepth, bestLoc, bestMsg = d, loc, msg
		}
	}
	walk(ve)
	if bestLoc == "" {
		bestLoc = "(root)"
	}
	return bestLoc + ": " + bestMsg
}

// leaf returns the display pointer and message of one leaf error; a
// missing required property is reported at the property's own pointer.
func leaf(e *jsonschema.ValidationError) (loc, msg string) {
	loc, msg = displayPointer(e.InstanceLocation), e.Message
	if rest, ok := strings.CutPrefix(msg, "missing properties: "); ok && strings.HasSuffix(e.KeywordLocation, "/required") {
		if name, ok := firstQuoted(rest); ok {
			return loc + "/" + escapeToken(name), "missing required field"
		}
	}
	return loc, strings.ReplaceAll(msg, "\n", " ")
}

// firstQuoted returns the first name of jsonschema's missing-properties
// list, whose names are written in single quotes.
func firstQuoted(s string) (string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", false
	}
	end := strings.Index(s[1:], "'")
	if end < 0 {
		return "", false
	}
	return s[1 : 1+end], true
}

// displayPointer undoes the URL path escaping jsonschema applies to each
// token of an instance location, keeping JSON pointer escapes (~0, ~1).
func displayPointer(p string) string {
	toks := strings.Split(p, "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			toks[i] = u
		}
	}
	return strings.Join(toks, "/")
}

// escapeToken escapes one JSON pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Keys returns every top-level field name that some entry schema declares
// or requires. A validator may drop other top-level fields before calling
// Validate: the schemas accept unknown fields, so the result is the same.
func Keys() []string {
	keysOnce.Do(computeKeys)
	return append([]string(nil), topKeys...)
}

var keysOnce sync.Once

var topKeys []string

// computeKeys fills topKeys from the embedded schema files.
func computeKeys() {
	{
		defs := map[string]any{}
		var defsDoc map[string]any
		if b, err := files.ReadFile(defsFile); err == nil && json.Unmarshal(b, &defsDoc) == nil {
			defs, _ = defsDoc["$defs"].(map[string]any)
		}
		seen := map[string]bool{}
		var collect func(node map[string]any, depth int)
		collect = func(node map[string]any, depth int) {
			if node == nil || depth > 8 {
				return
			}
			props, _ := node["properties"].(map[string]any)
			for k := range props {
				seen[k] = true
			}
			req, _ := node["required"].([]any)
			for _, k := range req {
				if s, ok := k.(string); ok {
					seen[s] = true
				}
			}
			if ref, ok := node["$ref"].(string); ok {
				if i := strings.LastIndex(ref, "/$defs/"); i >= 0 {
					d, _ := defs[ref[i+len("/$defs/"):]].(map[string]any)
					collect(d, depth+1)
				}
			}
		}
		names, _ := fs.Glob(files, "*.json")
		for _, name := range names {
			if name == defsFile {
				continue
			}
			var doc map[string]any
			if b, err := files.ReadFile(name); err == nil && json.Unmarshal(b, &doc) == nil {
				collect(doc, 0)
			}
		}
		for k := range seen {
			topKeys = append(topKeys, k)
		}
		sort.Strings(topKeys)
	}
}
