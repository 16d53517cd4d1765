package session

import (
	"strings"
	"testing"
)

func TestEditHelpers(t *testing.T) {
	raw := []byte(`{"a": 1, "parentUuid":"x","message":{"content":[{"t":1}, "s" ,[2]]},"z":null}`)
	fields, end, err := Fields(raw, 0)
	if err != nil || end != len(raw) || len(fields) != 4 || fields[1].Key != "parentUuid" || string(raw[fields[1].Start:fields[1].End]) != `"x"` {
		t.Fatalf("Fields: %+v %d %v", fields, end, err)
	}
	s, e, ok := Find(raw, "message", "content")
	if !ok {
		t.Fatal("Find message.content")
	}
	elems, _, err := Elements(raw, s)
	if err != nil || len(elems) != 3 || string(raw[elems[1][0]:elems[1][1]]) != `"s"` || e <= s {
		t.Fatalf("Elements: %v %v", elems, err)
	}
	out, err := SetField(raw, "parentUuid", []byte("null"))
	if err != nil || !strings.Contains(string(out), `"parentUuid":null,"message"`) || !strings.HasPrefix(string(out), `{"a": 1, `) {
		t.Fatalf("SetField: %s %v", out, err)
	}
	if _, err := SetField(raw, "nope", []byte("1")); err == nil {
		t.Error("SetField of a missing field")
	}
	if _, _, err := Fields([]byte(`{"a":`), 0); err == nil {
		t.Error("Fields of a torn object")
	}
	if _, _, err := Fields([]byte(`{\a":1}`), 0); err == nil {
		t.Error("Fields of a key without its opening quote")
	}
	if _, _, err := Elements([]byte(`{}`), 0); err == nil {
		t.Error("Elements of an object")
	}
}

func TestFixSurrogates(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"x\ud83d"}`:            `{"a":"x\ufffd"}`,
		`{"a":"\ud83d\ude00"}`:       `{"a":"\ud83d\ude00"}`,
		`{"a":"\ude00\ud83d y"}`:     `{"a":"\ufffd\ufffd y"}`,
		`{"\\ud83d":"\\\ud83d"}`:     `{"\\ud83d":"\\\ufffd"}`,
		`{"a":"\u0041\ud800\u0041"}`: `{"a":"\u0041\ufffd\u0041"}`,
	} {
		got, _ := FixSurrogates([]byte(in))
		if string(got) != want {
			t.Errorf("FixSurrogates(%s) = %s, want %s", in, got, want)
		}
		if r := NewParser().Parse(got); r.Err != nil || r.Surrogates != 0 {
			t.Errorf("FixSurrogates(%s): result still has %d lone surrogates (%v)", in, r.Surrogates, r.Err)
		}
	}
	if got := FixUTF8([]byte("{\"a\":\"\xff\"}")); string(got) != "{\"a\":\"\uFFFD\"}" {
		t.Errorf("FixUTF8: %q", got)
	}
}

func TestFixNULEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"x\u0000y"}`:          `{"a":"x\ufffdy"}`,
		`{"a":"\u0000\u0000"}`:      `{"a":"\ufffd\ufffd"}`,
		`{"a":"\\u0000","b":"ok"}`:  `{"a":"\\u0000","b":"ok"}`,
		`{"a":"\\\u0000"}`:          `{"a":"\\\ufffd"}`,
		`{"\u0000":"\u00001"}`:      `{"\ufffd":"\ufffd1"}`,
		`{"a":"\u0041","b":"\u00"}`: `{"a":"\u0041","b":"\u00"}`,
	} {
		got, _ := FixNULEscapes([]byte(in))
		if string(got) != want {
			t.Errorf("FixNULEscapes(%s) = %s, want %s", in, got, want)
		}
		if len(got) != len(in) {
			t.Errorf("FixNULEscapes(%s) changed the length", in)
		}
	}
}
