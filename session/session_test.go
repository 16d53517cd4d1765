package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads every line of in through a Reader.
func readAll(t testing.TB, in []byte, buf []byte) []Line {
	t.Helper()
	r := NewReader(bytes.NewReader(in), buf)
	var out []Line
	for r.Next() {
		l := r.Line()
		l.Raw = append([]byte(nil), l.Raw...)
		out = append(out, l)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// join puts lines back together; it must give back the input exactly.
func join(lines []Line) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l.Raw)
		if l.Terminated {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func TestReaderLines(t *testing.T) {
	cases := []struct {
		in    string
		lines []string
		last  bool // last line terminated
	}{
		{"", nil, true},
		{"a\n", []string{"a"}, true},
		{"a\nb", []string{"a", "b"}, false},
		{"\n\n", []string{"", ""}, true},
		{"a\r\nb\n", []string{"a\r", "b"}, true},
	}
	for _, c := range cases {
		got := readAll(t, []byte(c.in), nil)
		var raws []string
		for _, l := range got {
			raws = append(raws, string(l.Raw))
		}
		if !reflect.DeepEqual(raws, c.lines) {
			t.Errorf("%q: lines %q, want %q", c.in, raws, c.lines)
		}
		if len(got) > 0 && got[len(got)-1].Terminated != c.last {
			t.Errorf("%q: last terminated = %v", c.in, got[len(got)-1].Terminated)
		}
		if !bytes.Equal(join(got), []byte(c.in)) {
			t.Errorf("%q: lines do not join back", c.in)
		}
	}
}

func TestReaderOffsetsAndNumbers(t *testing.T) {
	in := []byte("one\ntwo\n\nfour")
	got := readAll(t, in, nil)
	wantOff := []int64{0, 4, 8, 9}
	for i, l := range got {
		if l.N != i+1 || l.Offset != wantOff[i] {
			t.Errorf("line %d: N=%d Offset=%d, want N=%d Offset=%d", i, l.N, l.Offset, i+1, wantOff[i])
		}
		if !bytes.Equal(in[l.Offset:l.Offset+int64(len(l.Raw))], l.Raw) {
			t.Errorf("line %d: offset does not point at its bytes", l.N)
		}
	}
}

// TestReaderLongLine reads a line far longer than the buffer, through a
// reader that returns one byte at a time, then checks the buffer shrinks.
func TestReaderLongLine(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 3*DefaultBufSize+17)
	in := append(append([]byte("short\n"), long...), "\nend\n"...)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(in)), make([]byte, 4096))
	var got [][]byte
	for r.Next() {
		got = append(got, append([]byte(nil), r.Line().Raw...))
	}
	if len(got) != 3 || !bytes.Equal(got[1], long) || string(got[2]) != "end" {
		t.Fatalf("got %d lines, long line ok=%v", len(got), len(got) > 1 && bytes.Equal(got[1], long))
	}
	if n := len(r.Buffer()); n > 4*DefaultBufSize {
		t.Errorf("buffer kept %d bytes after the long line", n)
	}
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	valid := []string{
		`{}`, `[]`, `0`, `-0.5e+10`, `"a\"b\\c\/\b\f\n\r\t\u00e9\ud83d\ude00"`, `true`, `null`,
		`{"a":[1,2,{"b":null}],"c":"d"}`, ` {"a" : 1 } `, `"é"`,
	}
	invalid := []string{
		``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `{,}`, `01`, `1.`, `1e`, `-`, `"abc`, `"\x"`, `"\u12"`,
		`tru`, `nul`, `{"a":1,}`, "\"a\x01\"", `{"a":1} x`, `'a'`, `[1 2]`,
	}
	p := NewParser()
	for _, s := range valid {
		r := p.Parse([]byte(s))
		if r.Err != nil {
			t.Errorf("%s: unexpected error %v", s, r.Err)
			continue
		}
		var want any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if want = Light(want); !reflect.DeepEqual(r.Value, want) {
			t.Errorf("%s: value %#v, want %#v", s, r.Value, want)
		}
	}
	for _, s := range invalid {
		if r := p.Parse([]byte(s)); r.Err == nil {
			t.Errorf("%q: parsed without error", s)
		}
	}
}

func TestParseFindings(t *testing.T) {
	p := NewParser()
	r := p.Parse([]byte(`{"a":"x\ud83d y","b":"\ude00","c":"\ud83d\ude00"}`))
	if r.Err != nil || r.Surrogates != 2 || r.SurrogateOff != 7 {
		t.Errorf("surrogates: err=%v n=%d off=%d, want 2 at 7", r.Err, r.Surrogates, r.SurrogateOff)
	}
	r = p.Parse([]byte(`{"a":"x\\u0000","b":"\u0000","c":"\u0000\u0000"}`))
	if r.Err != nil || r.NULEscapes != 3 || r.NULEscapeOff != 21 {
		t.Errorf("NUL escapes: err=%v n=%d off=%d, want 3 at 21", r.Err, r.NULEscapes, r.NULEscapeOff)
	}
	r = p.Parse([]byte("{\"a\":\"ok\xff\"}"))
	if r.Err != nil || r.BadUTF8 != 8 {
		t.Errorf("bad utf-8: err=%v off=%d, want 8", r.Err, r.BadUTF8)
	}
	r = p.Parse([]byte(`{"a":1}{"b":2} {"c":3}`))
	if r.Err != nil || r.GluedAt != 7 || len(r.More) != 2 {
		t.Errorf("glued: err=%v at=%d more=%d, want at 7 with 2 more", r.Err, r.GluedAt, len(r.More))
	}
	r = p.Parse([]byte(`{"a":"b"`))
	if r.Err == nil || r.Err.Offset != 8 {
		t.Errorf("torn: err=%v, want an error at offset 8", r.Err)
	}
	r = p.Parse([]byte(`{"a":1,"b":x}`))
	if r.Err == nil || r.Err.Offset != 11 || !strings.Contains(r.Err.Error(), "column 12") {
		t.Errorf("bad value: err=%v, want column 12", r.Err)
	}
}

func TestParseLightTree(t *testing.T) {
	long := strings.Repeat("ab", MaxString)
	in := `{"message":{"content":[{"type":"tool_use","input":{"deep":{"x":1}}}]},"toolUseResult":{"a":{"b":1}},"s":"` + long + `"}`
	r := NewParser().Parse([]byte(in))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	m := r.Value.(map[string]any)
	if len(m["s"].(string)) != MaxString {
		t.Errorf("long string kept %d bytes", len(m["s"].(string)))
	}
	input := m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["input"].(map[string]any)
	if d, ok := input["deep"].(map[string]any); !ok || len(d) != 0 {
		t.Errorf("depth-5 object = %#v, want empty", input["deep"])
	}
	if a, ok := m["toolUseResult"].(map[string]any)["a"].(map[string]any); !ok || len(a) != 0 {
		t.Errorf("depth-2 object outside message = %#v, want empty", m["toolUseResult"])
	}
	p := NewParser()
	p.TopKeys = map[string]bool{"message": true}
	r = p.Parse([]byte(in))
	if _, ok := r.Value.(map[string]any)["toolUseResult"]; ok {
		t.Error("TopKeys did not drop toolUseResult")
	}
}

// TestSpecialMask: the lowest byte specialMask flags is the first byte
// that needs attention, whatever follows it.
func TestSpecialMask(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			for c2 := 0; c2 < 256; c2 += 1 + c2%7 {
				for pos2 := pos + 1; pos2 <= 8; pos2++ {
					b := []byte("abcdefgh")
					b[pos] = byte(c)
					if pos2 < 8 {
						b[pos2] = byte(c2)
					}
					want := 8
					for i, x := range b {
						if !safe[x] {
							want = i
							break
						}
					}
					got := 8
					if m := specialMask(binary.LittleEndian.Uint64(b)); m != 0 {
						got = bits.TrailingZeros64(m) >> 3
					}
					if got != want {
						t.Fatalf("%q: first special byte at %d, mask says %d", b, want, got)
					}
				}
			}
		}
	}
}

func TestSpecial8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(b[i])
			}
			want := !safe[c]
			if got := special8(x); want && !got {
				t.Fatalf("byte 0x%02x at %d not flagged", c, pos)
			} else if !want && got {
				t.Fatalf("plain byte 0x%02x at %d flagged", c, pos)
			}
		}
	}
}

// TestCorpusParses parses every line of the corpus stores and compares the
// tree with encoding/json's under the light-tree rules.
func TestCorpusParses(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/*/.claude/projects/*/*.jsonl")
	if len(files) < 50 {
		t.Fatalf("found %d corpus files", len(files))
	}
	p := NewParser()
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range readAll(t, b, nil) {
			r := p.Parse(l.Raw)
			if r.Err != nil || r.GluedAt >= 0 || r.BadUTF8 >= 0 || r.Surrogates > 0 {
				t.Errorf("%s:%d: %+v", f, i+1, r)
				continue
			}
			var full any
			dec := json.NewDecoder(bytes.NewReader(l.Raw))
			dec.UseNumber()
			if err := dec.Decode(&full); err != nil {
				t.Fatal(err)
			}
			if want := Light(full); !reflect.DeepEqual(r.Value, want) {
				t.Errorf("%s:%d: tree differs from encoding/json's", f, i+1)
			}
			n++
		}
	}
	t.Logf("%d lines", n)
}

func TestGraph(t *testing.T) {
	g := NewGraph()
	add := func(uuid, parent, ts string, line int) {
		e := Entry{Type: "user", UUID: uuid, Parent: parent, HasParent: true, Timestamp: ts}
		if !g.Add(&e, line) {
			t.Fatalf("duplicate %s", uuid)
		}
	}
	add("a", "", "1", 1)
	add("b", "a", "2", 2)
	add("c", "b", "3", 3)
	add("d", "a", "4", 4) // fork from a, latest
	add("x", "missing", "0", 5)
	add("y", "z", "0", 6)
	add("z", "y", "0", 7) // cycle y <-> z
	add("s", "s", "0", 8) // self
	if got := g.Leaf(false); g.Nodes[got].UUID != "d" {
		t.Errorf("leaf = %s, want d", g.Nodes[got].UUID)
	}
	chain, trunc := g.Walk(g.Lookup("d"))
	if len(chain) != 2 || trunc {
		t.Errorf("walk from d = %v truncated=%v", chain, trunc)
	}
	if _, trunc := g.Walk(g.Lookup("x")); !trunc {
		t.Error("walk from x not truncated")
	}
	if d := g.Dangling(); len(d) != 1 || g.Nodes[d[0]].UUID != "x" {
		t.Errorf("dangling = %v", d)
	}
	cyc := g.Cycles()
	if len(cyc) != 2 {
		t.Fatalf("cycles = %v, want 2", cyc)
	}
	dup := Entry{UUID: "a", HasParent: true}
	if g.Add(&dup, 9) {
		t.Error("duplicate uuid added")
	}
}

// TestReaderShrinkKeepsData reads a long line followed by data larger than
// the resting buffer: shrinking must not lose or cut it.
func TestReaderShrinkKeepsData(t *testing.T) {
	// The buffer grows to 16 × DefaultBufSize for the 10× line and holds
	// 6× more: the 4.5× line and 1.5× of the 3× line, which are still in
	// the buffer when it shrinks.
	var in bytes.Buffer
	for _, n := range []int{10 * DefaultBufSize, 9 * DefaultBufSize / 2, 3 * DefaultBufSize, 100} {
		in.Write(bytes.Repeat([]byte("a"), n))
		in.WriteByte('\n')
	}
	got := readAll(t, in.Bytes(), nil)
	if len(got) != 4 || !bytes.Equal(join(got), in.Bytes()) {
		t.Fatalf("read %d lines; joined back equal: %v", len(got), bytes.Equal(join(got), in.Bytes()))
	}
}

// TestHeaderMode: the header tree gives HeaderOf the same entry as the
// full tree, for every corpus line.
func TestHeaderMode(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/*/.claude/projects/*/*.jsonl")
	full, head := NewParser(), NewParser()
	head.Header = true
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for i, l := range readAll(t, b, nil) {
			a, h := full.Parse(l.Raw), head.Parse(l.Raw)
			if (a.Err == nil) != (h.Err == nil) {
				t.Fatalf("%s:%d: errors differ", f, i+1)
			}
			var ea, eh Entry
			HeaderOf(a.Value, &ea)
			HeaderOf(h.Value, &eh)
			ea.Content, eh.Content = nil, nil
			if !reflect.DeepEqual(ea, eh) {
				t.Fatalf("%s:%d: header %+v, want %+v", f, i+1, eh, ea)
			}
		}
	}
}

// TestPipeline: results come back in file order, whatever the workers do,
// huge lines included, and the lines are the file's.
func TestPipeline(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&in, "line %d %s\n", i, strings.Repeat("x", i%97))
		if i == 30000 {
			in.Write(bytes.Repeat([]byte("h"), 3*batchBytes))
			in.WriteByte('\n')
		}
	}
	in.WriteString("last")
	var got bytes.Buffer
	n := 0
	err := Pipeline(bytes.NewReader(in.Bytes()), 3, func() func(Line) int {
		return func(l Line) int { return len(l.Raw) }
	}, func(l Line, r int) error {
		n++
		if l.N != n || r != len(l.Raw) {
			return fmt.Errorf("line %d: N=%d result %d, len %d", n, l.N, r, len(l.Raw))
		}
		got.Write(l.Raw)
		if l.Terminated {
			got.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), in.Bytes()) {
		t.Fatal("lines do not join back to the input")
	}
	// An error from commit stops it.
	stop := errors.New("stop")
	err = Pipeline(bytes.NewReader(in.Bytes()), 2, func() func(Line) int { return func(Line) int { return 0 } },
		func(l Line, _ int) error {
			if l.N == 1000 {
				return stop
			}
			return nil
		})
	if err != stop {
		t.Fatalf("err = %v", err)
	}
}

// TestDeepNesting: a line nested millions deep is an error (Deep: valid
// JSON, too deep to build), not a stack overflow.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 3_000_000) + strings.Repeat("]", 3_000_000)
	r := NewParser().Parse([]byte(deep))
	if r.Err == nil || !r.Err.Deep || !strings.Contains(r.Err.Msg, "deeper than") {
		t.Fatalf("err = %v", r.Err)
	}
	ok := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	if r := NewParser().Parse([]byte(ok)); r.Err != nil {
		t.Fatalf("5000 deep: %v", r.Err)
	}
}
