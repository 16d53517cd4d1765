package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReader feeds random bytes to the reader and the parser. Lines must
// join back to the input, the parser must never panic, and it must accept
// exactly the lines encoding/json accepts (one value, or glued values).
// Scan must agree with the parser's tree on every line it takes.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"{\"a\":1}\n{\"b\":[true,null]}\n",
		"{\"type\":\"user\",\"message\":{\"content\":\"\\ud83d\"}}\n",
		"{\"a\":1}{\"b\":2}\n",
		"{\"a\":\"\xff\"}",
		"\x00\x00\x00{\"a\":1}\n",
		"{\"torn\":\"ab",
		"\n\n[1,2,3]\n\"str\"\n-1.5e3\n",
		"{\"type\":\"assistant\",\"uuid\":\"u\",\"parentUuid\":null,\"message\":{\"role\":\"r\\u0065\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"s\"},{\"type\":\"tool_use\",\"id\":\"t\",\"input\":{\"a\":{\"b\":{}}}}]},\"toolUseResult\":{\"a\":[{}]}}\n",
		strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting) + "\n",
		strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1) + "\n",
		strings.Repeat(`{"a":`, MaxNesting+1) + "1" + strings.Repeat("}", MaxNesting) + "\n",
	} {
		f.Add([]byte(s))
	}
	p := NewParser()
	shapers := testShapers()
	f.Fuzz(func(t *testing.T, in []byte) {
		lines := readAll(t, in, make([]byte, 4096))
		if !bytes.Equal(join(lines), in) {
			t.Fatalf("lines do not join back to the input")
		}
		for _, l := range lines {
			for _, s := range shapers {
				scanAgrees(t, p, p, s, l.Raw)
			}
			r := p.Parse(l.Raw)
			if r.Err != nil {
				if r.Err.Offset < 0 || r.Err.Offset > len(l.Raw) {
					t.Fatalf("error offset %d outside line of %d bytes", r.Err.Offset, len(l.Raw))
				}
				if json.Valid(l.Raw) {
					t.Fatalf("parser rejects valid JSON %q: %v", l.Raw, r.Err)
				}
				continue
			}
			if len(r.More) == 0 && !json.Valid(l.Raw) && r.BadUTF8 < 0 {
				t.Fatalf("parser accepts invalid JSON %q", l.Raw)
			}
			if len(r.More) == 0 && r.BadUTF8 < 0 && r.Surrogates == 0 {
				var want any
				dec := json.NewDecoder(bytes.NewReader(l.Raw))
				dec.UseNumber()
				if err := dec.Decode(&want); err != nil {
					t.Fatal(err)
				}
				if lv := Light(want); !equalJSON(r.Value, lv) {
					t.Fatalf("tree %#v differs from encoding/json's %#v", r.Value, lv)
				}
			}
		}
	})
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
