package session

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
)

// testValues are the value keys of the tests' Shapers: more than the
// schemas' ("type"), to try the value hash at every depth.
var testValues = map[string]bool{"type": true, "role": true, "name": true, "id": true, "operation": true}

// testShapers are a Shaper that counts every field and one that counts
// some (the header's and these).
func testShapers() []*Shaper {
	named := map[string]bool{"usage": true, "input_tokens": true, "toolUseResult": true, "a": true, "c": true,
		"input": true, "text": true, "attachment": true, "data": true, "name": true, "operation": true}
	return []*Shaper{NewShaper(testValues, nil), NewShaper(testValues, named)}
}

// scanAgrees checks Scan against Parse, HeaderOf and Shaper.Shape on one
// line: when Scan takes the line, Parse must find one sound object, and
// the header and the shape must be those of its tree. It reports whether
// Scan took the line and whether the line is one sound object.
func scanAgrees(t testing.TB, full, fast *Parser, s *Shaper, raw []byte) (took, clean bool) {
	t.Helper()
	r := full.Parse(raw)
	var want Entry
	clean = r.Err == nil && r.GluedAt < 0 && r.BadUTF8 < 0 && r.Surrogates == 0 && HeaderOf(r.Value, &want)
	return scanAgreesParsed(t, fast, s, raw, r, want, clean)
}

// scanAgreesParsed is scanAgrees on a line Parse has parsed into r, with
// header want and soundness clean: one Parse serves every Shaper.
func scanAgreesParsed(t testing.TB, fast *Parser, s *Shaper, raw []byte, r Parsed, want Entry, clean bool) (took, _ bool) {
	t.Helper()
	var got Entry
	h, ok := fast.Scan(raw, s, &got)
	if !ok {
		return false, clean
	}
	if !clean {
		t.Fatalf("Scan takes %q, which Parse finds unsound: %+v", raw, r)
	}
	want.Content = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan's header of %q:\n got %+v\nwant %+v", raw, got, want)
	}
	if sh := s.Shape(r.Value); h != sh {
		t.Fatalf("Scan's shape of %q is %x, the tree's %x", raw, h, sh)
	}
	return true, clean
}

// storeLines returns every line of the .jsonl files under the corpus and
// wild stores.
func storeLines(t testing.TB) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, root := range []string{"../testdata/corpus", "../testdata/wild"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, l := range readAll(t, b, nil) {
				lines = append(lines, l.Raw)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) < 10000 {
		t.Fatalf("only %d lines in the corpus and wild stores", len(lines))
	}
	return lines
}

// mutations derive lines of other shapes from a store line: fields
// removed, of another type, with escapes, deeper, repeated.
var mutations = []func(m map[string]any){
	func(m map[string]any) { delete(m, "uuid") },
	func(m map[string]any) { m["sessionId"] = json.Number("5") },
	func(m map[string]any) { m["isSidechain"] = "no" },
	func(m map[string]any) { m["parentUuid"] = nil },
	func(m map[string]any) { m["type"] = "<" + str(m["type"]) + ">" }, // escaped by Marshal
	func(m map[string]any) { m["zzz"] = map[string]any{"a": []any{1, map[string]any{"b": "&"}}} },
	func(m map[string]any) {
		m["toolUseResult"] = map[string]any{"x": map[string]any{"y": 1}, "z": []any{[]any{}}}
	},
	func(m map[string]any) { m["cwd"] = strings.Repeat("/é<", 700) },
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["role"] = json.Number("7")
			msg["model"] = "m<>"
		}
	},
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			if c, ok := msg["content"].([]any); ok && len(c) > 0 {
				if b, ok := c[0].(map[string]any); ok {
					b["type"] = "thinking"
					b["thinking"] = ""
					b["signature"] = "s&"
					b["input"] = map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}}}
				}
				msg["content"] = append(c, "str", []any{map[string]any{"type": "text"}}, nil)
			}
		}
	},
	func(m map[string]any) {
		if msg, ok := m["message"].(map[string]any); ok {
			msg["content"] = map[string]any{"type": "text"}
		}
	},
	func(m map[string]any) { m["message"] = []any{map[string]any{"id": "x"}} },
}

// TestScanAgrees: on every line of the corpus and wild stores, and on
// changed copies of them, Scan gives the header and shape of the tree
// Parse builds, with and without TopKeys, and leaves to Parse only lines
// that are not one sound object, and a rare few that are.
func TestScanAgrees(t *testing.T) {
	lines := storeLines(t)
	top := map[string]bool{"toolUseResult": true, "userType": true}
	for _, k := range HeaderKeys {
		top[k] = true
	}
	// Each store line, then the line a mutation derives from it: made once
	// for the four rounds.
	var tried [][]byte
	for i, raw := range lines {
		tried = append(tried, raw)
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		mutations[i%len(mutations)](m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		tried = append(tried, b)
	}
	// The rounds: every field or only the shapers' named ones, without
	// or with TopKeys. Rounds of the same TopKeys share one Parse of a line.
	rounds := []map[string]bool{nil, top, nil, top}
	for _, topKeys := range []map[string]bool{nil, top} {
		full := NewParser()
		full.TopKeys = topKeys
		var idx []int
		for i, tk := range rounds {
			if (tk == nil) == (topKeys == nil) {
				idx = append(idx, i)
			}
		}
		fast, shapers := make([]*Parser, len(idx)), make([]*Shaper, len(idx))
		took, clean, bails := make([]int, len(idx)), make([]int, len(idx)), make([]int, len(idx))
		for k := range idx {
			fast[k] = NewParser()
			fast[k].TopKeys = topKeys
			shapers[k] = testShapers()[idx[k]/2]
		}
		for _, raw := range tried {
			r := full.Parse(raw)
			var want Entry
			cl := r.Err == nil && r.GluedAt < 0 && r.BadUTF8 < 0 && r.Surrogates == 0 && HeaderOf(r.Value, &want)
			for k := range idx {
				tk, _ := scanAgreesParsed(t, fast[k], shapers[k], raw, r, want, cl)
				if tk {
					took[k]++
				}
				if cl {
					clean[k]++
				}
				if cl && !tk {
					bails[k]++
				}
			}
		}
		for k, i := range idx {
			t.Logf("TopKeys %v, every field %v: Scan took %d of %d sound lines (%d left to Parse)", topKeys != nil, i < 2, took[k], clean[k], bails[k])
			if bails[k]*1000 > clean[k] {
				t.Errorf("Scan leaves %d of %d sound lines to Parse", bails[k], clean[k])
			}
		}
	}
}

// TestScanForms: Scan on the forms a store line rarely takes.
func TestScanForms(t *testing.T) {
	long := strings.Repeat("x", MaxString+10)
	longEsc := strings.Repeat(`\u00e9`, MaxString) // 2 bytes each unescaped
	deep := `{"a":{"b":{"c":{"d":{"e":{"f":[1,{"g":2}]}}}}}}`
	many := make([]string, 200)
	for i := range many {
		many[i] = `"k` + strings.Repeat("y", i) + `":1`
	}
	cases := []struct {
		line string
		take bool // Scan must take it (false: it may not)
	}{
		{`{}`, true},
		{`  { "type" : "user" , "uuid" : "u" , "parentUuid" : null }  `, true},
		{"{\"type\":\t\"user\",\"uuid\": \"u\",\"parentUuid\":\r\nnull ,\"a\":[1 ,2 ],\"b\":{\"c\":1 }}", true},
		{`{"type":`, false},
		{`{"type":"a","b":1,`, false},
		{`{"type":"a","b":1 `, false},
		{`{"type":"us\u0065r","uuid":"\u0075","parentUuid":"p\/q","message":{"role":"\u0061ssistant","id":"m\n","model":"m\u00e9","content":[{"type":"th\u0069nking","thinking":"","signature":"\u0041"},{"type":"tool_use","id":"t\"1"},{"type":"tool_result","tool_use_id":"t\\1"},{"id":"x"},{"type":"thinking","thinking":"x"},"s",7,null,[],{}]}}`, true},
		{`{"type":"` + long + `","cwd":"` + long + `","version":"` + longEsc + `"}`, true},
		{`{"type":"x` + longEsc + `","sessionId":"` + longEsc + `"}`, true},
		{`{"type":"user","toolUseResult":` + deep + `,"message":{"content":[{"type":"tool_use","input":` + deep + `}],"x":` + deep + `}}`, true},
		{`{"message":` + deep + `,"attachment":[` + deep + `,[[[]]]]}`, true},
		{`{"message":{"content":"text"},"isSidechain":true,"isMeta":false}`, true},
		{`{"message":{"content":{"type":"text"}},"isSidechain":"yes","isMeta":1}`, true},
		{`{"message":[{"id":"x"}],"type":7,"uuid":null,"parentUuid":5}`, true},
		{`{"message":"m","content":[{"type":"thinking"}]}`, true},
		{`{"a":-1.5e3,"b":0,"c":1E+2,"d":true,"e":false,"f":null,"g":[],"h":{}}`, true},
		{`{"type":"a","x":"\ud83d\ude00"}`, true},
		{`{"message":{"content":[{"type":"tool_use","id":1},{"type":"tool_result","tool_use_id":[]},{"type":"server_tool_use","id":"s"}]}}`, true},
		{`{"message":{"content":[{"type":"text","text":""},{"type":"text","text":" \n\t"},{"type":"text","text":"\u00a0 x"},{"type":"text","text":"\u00a0\u2003\r\f"},{"type":"text","text":"\\n"},{"type":"text","text":"Â "},{"type":"text","text":5},{"type":"text"},{"type":"web_search_tool_result","tool_use_id":"s"},{"type":"mcp_tool_use","id":"m"}]}}`, true},
		{`{"message":{"content":[{"type":"text","text":"` + strings.Repeat(" ", MaxString) + `x"}]}}`, true},
		{`{"type":"a","x":"nul\u0000"}`, false},
		{`{"message":{"content":" \n"},"type":"user"}`, true},
		{`{"message":{"content":""},"type":"user"}`, true},
		{`{"message":{"content":"\u0020x"},"type":"user"}`, true},
		{`{"type":"user","type":"assistant"}`, false},
		{`{"a":{"k":1,"k":2}}`, false},
		{`{"typ\u0065":"user"}`, false},
		{`{"a":{` + strings.Join(many, ",") + `}}`, false},
		{`{"type":"a"}{"type":"b"}`, false},
		{`{"type":"a"} x`, false},
		{`{"type":"\xff"}`, false},
		{`{"type":"\ud83d"}`, false},
		{`{"type":"a"`, false},
		{`{"type":"a",}`, false},
		{`[{"type":"a"}]`, false},
		{`"str"`, false},
		{`7`, false},
		{``, false},
		{`   `, false},
	}
	for i, topKeys := range []map[string]bool{nil, {"type": true, "message": true, "a": true}, nil, {"type": true, "a": true}} {
		s := testShapers()[i/2]
		full, fast := NewParser(), NewParser()
		full.TopKeys, fast.TopKeys = topKeys, topKeys
		for _, c := range cases {
			took, clean := scanAgrees(t, full, fast, s, []byte(c.line))
			if c.take && !took {
				t.Errorf("Scan leaves %.80q to Parse (sound: %v)", c.line, clean)
			}
		}
	}
}

// BenchmarkScan and BenchmarkParse read every line of the corpus and wild
// stores (SetBytes: MB/s of lines).
func BenchmarkScan(b *testing.B) {
	lines := storeLines(b)
	p, s := NewParser(), testShapers()[1]
	var e Entry
	b.SetBytes(int64(len(bytes.Join(lines, nil))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			p.Scan(l, s, &e)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	lines := storeLines(b)
	p := NewParser()
	b.SetBytes(int64(len(bytes.Join(lines, nil))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			p.Parse(l)
		}
	}
}

// TestShapeLeavesOut: a Shaper with named fields leaves the others out
// with all they hold, and counts the header's fields.
func TestShapeLeavesOut(t *testing.T) {
	s := NewShaper(map[string]bool{"type": true}, map[string]bool{"a": true})
	shape := func(line string) uint64 {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		return s.Shape(Light(v))
	}
	same := [][2]string{
		{`{"a":1}`, `{"a":2,"z":{"a":"x"}}`},
		{`{"a":[{"a":true}]}`, `{"a":[{"a":false,"q":[1]}],"r":null}`},
		{`{"type":"user","message":{"content":[{"type":"text"}]}}`, `{"type":"user","z":1,"message":{"content":[{"type":"text","citations":5}],"usage":{}}}`},
	}
	for _, c := range same {
		if shape(c[0]) != shape(c[1]) {
			t.Errorf("%s and %s differ", c[0], c[1])
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1}`, `{}`},
		{`{"type":"user"}`, `{"type":"assistant"}`},
		{`{"uuid":"u"}`, `{"uuid":5}`},
		{`{"message":{"role":"user"}}`, `{"message":{"role":1}}`},
		{`{"message":{"content":[{"signature":""}]}}`, `{"message":{"content":[{"signature":0}]}}`},
		{`{"a":[1,2]}`, `{"a":[2]}`},
	}
	for _, c := range differ {
		if shape(c[0]) == shape(c[1]) {
			t.Errorf("%s and %s have the same shape", c[0], c[1])
		}
	}
}

// TestScanKeyCacheEviction: keys of one set of the key cache, nested so
// that scanning a field's value evicts the field's own key, leave the
// shape as it is.
func TestScanKeyCacheEviction(t *testing.T) {
	bySet := map[uint64][]string{}
	var same []string
	for i := 0; len(same) == 0; i++ {
		k := fmt.Sprintf("key%d", i)
		set := slotOf([]byte(k))
		bySet[set] = append(bySet[set], k)
		if len(bySet[set]) == 4 {
			same = bySet[set]
		}
	}
	a, b, c, d := same[0], same[1], same[2], same[3]
	lines := []string{
		fmt.Sprintf(`{"%s":{"%s":{"%s":1,"%s":"x"},"%s":[{"%s":true}]},"%s":2}`, a, b, c, d, c, a, d),
		fmt.Sprintf(`{"%s":[{"%s":{"%s":null}},{"%s":[1]}],"%s":{"%s":{"%s":{}}}}`, a, b, c, d, b, a, c),
		fmt.Sprintf(`{"message":{"%s":{"%s":1,"%s":2,"%s":3},"content":[{"%s":{"%s":1},"type":"text"}]}}`, a, b, c, d, a, b),
	}
	for _, s := range testShapers() {
		p := NewParser()
		for _, l := range lines {
			for round := 0; round < 3; round++ {
				if took, _ := scanAgrees(t, p, p, s, []byte(l)); !took {
					t.Errorf("Scan leaves %s to Parse", l)
				}
			}
		}
	}
}

// TestKeyWords: the words key reads a key in with are keyWords', for keys
// of every length, with the line ending right after them or not.
func TestKeyWords(t *testing.T) {
	p := NewParser()
	for n := 0; n <= 40; n++ {
		k := strings.Repeat("k", n/2) + strings.Repeat("é", n%3) + strings.Repeat("z", n-n/2)
		for _, tail := range []string{`:1}`, `:"a long value to read on"}`} {
			p.b, p.i = []byte(`{"`+k+`"`+tail), 1
			got, w0, w1 := p.key()
			if string(got) != k {
				t.Fatalf("key %q read as %q", k, got)
			}
			if x0, x1 := keyWords(got); x0 != w0 || x1 != w1 {
				t.Fatalf("key %q: words %x %x, keyWords %x %x", k, w0, w1, x0, x1)
			}
		}
	}
	p.b = nil
}
