package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/schemas"
	"github.com/cfix-dev/cfix/session"
)

// fullWork is work as it was before Scan: every line parsed into its tree,
// the header read from the tree, the schema result from validate (see
// oldCache). It is the reference the fast path must agree with.
func fullWork(p *session.Parser, validate func(typ string, v any) error, ln session.Line) lineResult {
	var r lineResult
	add := func(code Code, format string, args ...any) {
		r.findings = append(r.findings, lineFinding{code: code, msg: fmt.Sprintf(format, args...)})
	}
	raw := ln.Raw
	if len(raw) == 0 {
		add(LineEmpty, "empty line")
		return r
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		clean := bytes.ReplaceAll(raw, []byte{0}, nil)
		n := len(raw) - len(clean)
		if len(bytes.TrimSpace(clean)) == 0 {
			add(NULBytes, "line holds only NUL bytes (%d)", n)
			return r
		}
		add(NULBytes, "line holds %s (first at column %d)", plural.Count(n, "NUL byte"), bytes.IndexByte(raw, 0)+1)
		raw = clean
	}
	pr := p.Parse(raw)
	if pr.Err != nil {
		if !ln.Terminated {
			add(LineTorn, "last line is cut off after %s (%s)", plural.Count(len(raw), "byte"), pr.Err.Msg)
		} else {
			add(JSONInvalid, "invalid JSON at column %d: %s", pr.Err.Offset+1, pr.Err.Msg)
		}
		return r
	}
	if !ln.Terminated {
		add(NoFinalNewline, "last line has no final newline")
	}
	if pr.GluedAt >= 0 {
		add(LineGlued, "%d records on one line (the second starts at column %d)", len(pr.More)+1, pr.GluedAt+1)
	}
	if pr.BadUTF8 >= 0 {
		add(UTF8Invalid, "invalid UTF-8 at column %d", pr.BadUTF8+1)
	}
	if pr.Surrogates > 0 {
		add(SurrogateLone, "%s, the first at column %d", plural.Count(pr.Surrogates, "lone surrogate escape"), pr.SurrogateOff+1)
	}
	values := append([]any{pr.Value}, pr.More...)
	for _, v := range values {
		var vr valueResult
		if vr.object = session.HeaderOf(v, &vr.entry); vr.object && vr.entry.Type != "" {
			if vr.hasSchema = schemas.Has(vr.entry.Type); vr.hasSchema {
				vr.schemaErr = validate(vr.entry.Type, v)
			}
		}
		vr.entry.Content = nil // not needed past here; let the tree go
		r.values = append(r.values, vr)
		if !vr.object {
			add(EntryNotObject, "line is a JSON %s, not an object", jsonKind(v))
		}
	}
	return r
}

// oldCache is schemas.Validate remembered as the cache did before Scan:
// by the shape of the whole tree (every field, and the values of the
// fields named "type", the one field some schema compares with const).
func oldCache() func(typ string, v any) error {
	shaper := session.NewShaper(map[string]bool{"type": true}, nil)
	type key struct {
		typ   string
		shape uint64
	}
	m := map[key]error{}
	return func(typ string, v any) error {
		k := key{typ, shaper.Shape(v)}
		if err, ok := m[k]; ok {
			return err
		}
		err := schemas.Validate(typ, v)
		m[k] = err
		return err
	}
}

// comparable is a lineResult with its schema errors as text.
type comparable struct {
	Findings []lineFinding
	Values   []valueResult
	Errs     []string
}

func comparableOf(r lineResult) comparable {
	c := comparable{Findings: r.findings}
	for _, v := range r.values {
		e := ""
		if v.schemaErr != nil {
			e = v.schemaErr.Error()
		}
		c.Errs = append(c.Errs, e)
		v.schemaErr = nil
		if len(v.entry.Blocks) == 0 {
			v.entry.Blocks = nil // no blocks: nil or empty, as the room reused had them
		}
		c.Values = append(c.Values, v)
	}
	return c
}

// schemaBreaks derive lines the schemas reject (or accept in another way)
// from a store line, so the fast path meets cached errors too.
var schemaBreaks = []func(m map[string]any){
	func(m map[string]any) { delete(m, "uuid") },
	func(m map[string]any) { delete(m, "sessionId") },
	func(m map[string]any) { m["sessionId"] = json.Number("5") },
	func(m map[string]any) { m["timestamp"] = true },
	func(m map[string]any) { m["isSidechain"] = "no" },
	func(m map[string]any) { m["zzz"] = map[string]any{"a": []any{1}} }, // a field no check reads
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["role"] = json.Number("7")
		}
	},
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["content"] = []any{map[string]any{"type": "text", "text": json.Number("1")}}
		}
	},
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["content"] = []any{map[string]any{"type": "tool_use", "id": "t<1>", "name": "N"}}
		}
	},
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["content"] = []any{map[string]any{"type": "thinking", "thinking": "", "signature": json.Number("0")}}
		}
	},
	func(m map[string]any) { m["message"] = "m" },
	// Fields no schema names, inside ones some schema names.
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["usage"] = map[string]any{"input_tokens": "many", "zz": []any{1}}
			msg["stop_details"] = json.Number("5")
			if c, ok := msg["content"].([]any); ok && len(c) > 0 {
				if b, ok := c[0].(map[string]any); ok {
					b["caller"] = []any{true}
				}
			}
		}
	},
	func(m map[string]any) { m["type"] = "user" },
	func(m map[string]any) { m["type"] = "assistant" },
}

// TestWorkFastPath: on every line of the corpus and wild stores, on
// copies the schemas reject, and on damaged lines, work (Scan and the
// cache's answer for a shape seen before) finds exactly what the full
// parse of every line with the cache as it was found; the schema results
// also equal uncached schemas.Validate on the tree (on a sample of the
// lines).
func TestWorkFastPath(t *testing.T) {
	var lines []session.Line
	for _, root := range []string{"../testdata/corpus", "../testdata/wild"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rd := session.NewReader(bytes.NewReader(b), nil)
			for rd.Next() {
				l := rd.Line()
				l.Raw = bytes.Clone(l.Raw)
				lines = append(lines, l)
			}
			return rd.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := len(lines)
	for i := 0; i < n; i++ {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(lines[i].Raw))
		dec.UseNumber()
		if dec.Decode(&m) != nil || m == nil {
			continue
		}
		schemaBreaks[i%len(schemaBreaks)](m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, session.Line{Raw: b, Terminated: true})
	}
	for _, s := range []string{
		``, "\x00\x00", "{\"type\":\"user\"}\x00", `{"type":"user","uuid":oops}`, `{"type":"a"}{"type":"b"}`,
		`{"type":"user","x":"\ud83d"}`, "{\"type\":\"user\",\"x\":\"\xff\"}", `[1]`, `"s"`, `{}`, `{"type":""}`,
		`{"type":"user","type":"user"}`, `{"typ\u0065":"user"}`,
	} {
		lines = append(lines, session.Line{Raw: []byte(s), Terminated: true}, session.Line{Raw: []byte(s)})
	}
	if n < 40000 {
		t.Fatalf("only %d store lines", n)
	}

	fast, full, old := newChecker(), newChecker(), oldCache()
	probe := session.NewParser()
	probe.TopKeys = topKeys
	hits, errs := 0, 0
	var room []valueResult
	for i, l := range lines {
		var e session.Entry
		if shape, ok := probe.Scan(l.Raw, fast.schema.Shaper(), &e); ok {
			if known, err := fast.schema.Known(e.Type, shape); known && schemas.Has(e.Type) {
				hits++
				if err != nil {
					errs++
				}
			}
		}
		got := comparableOf(work(fast.parser, fast.schema, l, nil))
		want := comparableOf(fullWork(full.parser, old, l))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d %.200q:\nfast %+v\nfull %+v", i, l.Raw, got, want)
		}
		// With the values of the line before as room (as check does).
		r := work(fast.parser, fast.schema, l, room)
		if again := comparableOf(r); !reflect.DeepEqual(again, want) {
			t.Fatalf("line %d %.200q, reusing the values of the line before:\nfast %+v\nfull %+v", i, l.Raw, again, want)
		}
		room = r.values
		// The cache's answers are the schemas' answers (on every 8th line:
		// a schema check costs far more than a line's parse).
		if i%8 != 0 {
			continue
		}
		if pr := full.parser.Parse(l.Raw); pr.Err == nil && len(pr.More) == 0 {
			var e session.Entry
			if session.HeaderOf(pr.Value, &e) && schemas.Has(e.Type) {
				err, got := schemas.Validate(e.Type, pr.Value), want.Errs[0]
				if (err == nil) != (got == "") || err != nil && err.Error() != got {
					t.Fatalf("line %d %.200q: cached %q, schemas.Validate %v", i, l.Raw, got, err)
				}
			}
		}
	}
	t.Logf("%d lines (%d from the stores): %d answered from a known shape (%d of them schema errors)", len(lines), n, hits, errs)
	if hits*10 < len(lines)*8 || errs < 1000 {
		t.Errorf("the fast path took only %d lines, %d with errors", hits, errs)
	}
}
