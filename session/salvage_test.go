package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// deepTorn is a user entry whose message opens n objects and never closes
// them.
func deepTorn(n int) []byte {
	return []byte(`{"type":"user","message":` + strings.Repeat(`{"a":`, n) + `1`)
}

// glued is a complete entry, as Claude Code writes one.
const glued = `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}`

// TestSalvageAllocs: a torn line of thousands of nested objects costs
// Salvage a few allocations, not some for every object in it (it parsed
// again from every one, each time down the whole depth: 49 s for a 600 KB
// line of 100,000).
func TestSalvageAllocs(t *testing.T) {
	p := NewParser()
	for _, line := range [][]byte{deepTorn(5000), append(deepTorn(5000), glued...)} {
		var out [][]byte
		allocs := testing.AllocsPerRun(1, func() { out = Salvage(p, line) })
		if allocs > 100 {
			t.Errorf("Salvage of a line of %d bytes: %.0f allocations, want at most 100", len(line), allocs)
		}
		if want := bytes.HasSuffix(line, []byte(glued)); (len(out) == 1 && string(out[0]) == glued) != want {
			t.Errorf("Salvage of a line of %d bytes: %q, want the glued entry: %v", len(line), out, want)
		}
	}
}

// TestSalvageWork: Salvage's tries read a small multiple of the line, on
// deep lines (over and under MaxNesting, objects and arrays) and on torn
// records of the corpus with an entry glued after them.
func TestSalvageWork(t *testing.T) {
	p := NewParser()
	lines := [][]byte{
		deepTorn(100000),
		append(deepTorn(100000), glued...),
		append(deepTorn(9000), glued...),
		[]byte(`{"type":"user","message":` + strings.Repeat(`[{"a":`, 50000) + `1`),
		[]byte(strings.Repeat(`{"a":1}`, 50000)),
		[]byte(strings.Repeat(`{"a":"{"},`, 50000)),
	}
	rec := []byte(`{"parentUuid":null,"type":"assistant","uuid":"u2","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"if x {"},{"type":"tool_use","id":"t","input":{"a":{"b":[{"c":"d"}]}}}]}}`)
	for cut := 1; cut < len(rec); cut += 7 {
		lines = append(lines, append(append([]byte(nil), rec[:cut]...), glued...))
	}
	for _, line := range lines {
		out, work := salvage(p, line)
		if work > 3*len(line)+4096 {
			t.Errorf("salvage of %.60q… (%d bytes): read %d bytes, want at most 3x the line", line, len(line), work)
		}
		if bytes.HasSuffix(line, []byte(glued)) && (len(out) == 0 || string(out[len(out)-1]) != glued) {
			t.Errorf("salvage of %.60q… (%d bytes): %q, want the glued entry", line, len(line), out)
		}
	}
}

// TestParseDeep: a line nested past MaxNesting is reported as Deep when it
// is valid JSON, as the syntax error otherwise, without recursing past
// the limit.
func TestParseDeep(t *testing.T) {
	p := NewParser()
	n := 100000
	for _, c := range []struct {
		line string
		deep bool
	}{
		{`{"type":"user","message":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n+1), true},
		{strings.Repeat(`[`, n) + strings.Repeat(`]`, n), true},
		{strings.Repeat(`[{"a":`, n) + `1` + strings.Repeat(`}]`, n) + `{"b":2}`, true},
		{strings.Repeat(`[`, n) + strings.Repeat(`]`, n-1), false},
		{strings.Repeat(`[`, n) + strings.Repeat(`]`, n) + `x`, false},
		{strings.Repeat(`{"a":`, n) + `tru` + strings.Repeat(`}`, n), false},
		{strings.Repeat(`[`, MaxNesting) + strings.Repeat(`]`, MaxNesting), false},
	} {
		r := p.Parse([]byte(c.line))
		valid := json.Valid([]byte(c.line))
		switch {
		case c.deep && (r.Err == nil || !r.Err.Deep):
			t.Errorf("%.40q… (%d bytes): %v, want too deep", c.line, len(c.line), r.Err)
		case !c.deep && r.Err != nil && r.Err.Deep:
			t.Errorf("%.40q… (%d bytes): too deep, want a syntax error or none", c.line, len(c.line))
		case !c.deep && (r.Err == nil) != valid:
			t.Errorf("%.40q… (%d bytes): error %v, json.Valid %v", c.line, len(c.line), r.Err, valid)
		}
	}
}

// naiveSalvage is Salvage as it was: a try from every `{"`.
func naiveSalvage(p *Parser, raw []byte) [][]byte {
	var e Entry
	for k := 1; k < len(raw)-1; k++ {
		if raw[k] != '{' || raw[k+1] != '"' {
			continue
		}
		r := p.Parse(raw[k:])
		if r.Err != nil {
			continue
		}
		entries := true
		for _, v := range append([]any{r.Value}, r.More...) {
			if !HeaderOf(v, &e) || e.Type == "" || (e.UUID == "" && e.SessionID == "" && e.LeafUUID == "") {
				entries = false
				break
			}
		}
		if !entries {
			continue
		}
		var out [][]byte
		for _, sp := range r.Spans {
			out = append(out, raw[k+sp[0]:k+sp[1]])
		}
		return out
	}
	return nil
}

// FuzzSalvage: Salvage finds what a try from every `{"` finds, and
// checkFlat accepts exactly the lines Parse accepts.
func FuzzSalvage(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"content":"ab` + glued,
		`{"type":"user","message":{"content":"ab{"` + glued + glued,
		`{"a":{"b":` + glued,
		`{"a":` + glued + `,"x":1}` + glued,
		`{"a":1}{"type":"x"}` + glued,
		`[{"a":[{"b":"{"}]` + glued,
		`{"message` + glued,
	} {
		f.Add([]byte(s))
	}
	p := NewParser()
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.IndexByte(in, '\n') >= 0 {
			return
		}
		got, want := Salvage(p, in), naiveSalvage(p, in)
		if !equalRecords(got, want) {
			t.Fatalf("Salvage(%q) = %q, a try from every {\" finds %q", in, got, want)
		}
		r := p.Parse(in)
		res := Parsed{BadUTF8: -1, SurrogateOff: -1, NULEscapeOff: -1, GluedAt: -1}
		p.b, p.res = in, &res
		err := p.checkFlat()
		p.b, p.res = nil, nil
		if (err == nil) != (r.Err == nil) || err != nil && *err != *r.Err {
			t.Fatalf("checkFlat(%q) = %v, Parse: %v", in, err, r.Err)
		}
	})
}

func equalRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FuzzUnquote: Unquote decodes what encoding/json decodes, and refuses
// only what it refuses or what holds invalid UTF-8.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00\ud800x\udc00\u0000"`, `"\ud800\u0041"`, `"é"`, "\"\xff\"", `"abc`, `"a"b"`, `x`, `""`} {
		f.Add([]byte(s))
	}
	p := NewParser()
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := p.Unquote(in)
		var want string
		err := json.Unmarshal(in, &want)
		switch {
		case ok && err != nil:
			t.Fatalf("Unquote(%q) = %q, encoding/json: %v", in, got, err)
		case ok && got != want:
			t.Fatalf("Unquote(%q) = %q, encoding/json %q", in, got, want)
		case !ok && err == nil && utf8.Valid(in) && bytes.TrimSpace(in)[0] == '"' && len(bytes.TrimSpace(in)) == len(in):
			t.Fatalf("Unquote(%q) refused, encoding/json decodes %q", in, want)
		}
	})
}

// FuzzField: Field finds the bytes encoding/json finds for a key of an
// object decoded into a map (the last of repeated keys).
func FuzzField(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a" : [1, {"a":2}] ,"b":"x"}`, `{"b":{"a":1},"a":"\u0041","a":null}`, `{"\u0061":true}`, `[1]`, `{"a":`, `{}`} {
		f.Add([]byte(s))
	}
	p := NewParser()
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := p.Field(in, "a")
		var m map[string]json.RawMessage
		if json.Unmarshal(in, &m) != nil || !utf8.Valid(in) {
			return
		}
		want, has := m["a"]
		if ok != has || !bytes.Equal(got, want) {
			t.Fatalf("Field(%q, a) = %q, %v; encoding/json %q, %v", in, got, ok, want, has)
		}
	})
}
