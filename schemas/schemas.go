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
	"embed"
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

//go:embed *.json
var files embed.FS

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	types    []string
)

// load compiles all schemas once; a failure is a programming error.
func load() {
	once.Do(func() {
		m, err := compileAll(files)
		if err != nil {
			panic("schemas: " + err.Error())
		}
		compiled = m
		for t := range m {
			types = append(types, t)
		}
		sort.Strings(types)
	})
}

// compileAll registers every *.json of fsys under baseURL and compiles one
// schema per entry type, keyed by the file name without ".json".
func compileAll(fsys fs.FS) (map[string]*jsonschema.Schema, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = false
	for _, name := range names {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, err
		}
		err = c.AddResource(baseURL+name, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("add %s: %w", name, err)
		}
	}
	m := make(map[string]*jsonschema.Schema, len(names))
	for _, name := range names {
		s, err := c.Compile(baseURL + name)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", name, err)
		}
		if name != defsFile {
			m[strings.TrimSuffix(name, path.Ext(name))] = s
		}
	}
	return m, nil
}

// Has reports whether an entry type has a schema.
func Has(typ string) bool {
	load()
	_, ok := compiled[typ]
	return ok
}

// Types lists the entry types that have a schema, sorted.
func Types() []string {
	load()
	return append([]string(nil), types...)
}

// Validate checks one decoded entry against the schema of typ and returns
// nil when typ has no schema. Numbers may be float64, json.Number, int or
// int64. The error is one line naming the JSON pointer of the offending
// field ("(root)" for the entry itself), e.g. "/message/content/0/text:
// expected string, but got number" or "/uuid: missing required field".
func Validate(typ string, v any) error {
	load()
	s, ok := compiled[typ]
	if !ok {
		return nil
	}
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(describe(ve))
	}
	return fmt.Errorf("invalid value: %v", err)
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
