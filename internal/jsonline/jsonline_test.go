package jsonline

import (
	"strings"
	"testing"
)

// skipper walks every value of a line and keeps its strings.
type skipper struct {
	Scanner
	strs []Span
}

func (w *skipper) value() {
	switch w.Next() {
	case '"':
		w.strs = append(w.strs, w.Str())
	case '{':
		for _, more := w.Object(); more; _, more = w.NextKey() {
			w.value()
		}
	case '[':
		for more := w.Array(); more; more = w.NextElem() {
			w.value()
		}
	default:
		w.Scalar()
	}
}

func TestWalkErrors(t *testing.T) {
	for _, c := range []struct{ line, err string }{
		{`{"a":[1,-2.5e3,true,false,null,{},[]],"b":{"c":"d"}}`, ""},
		{` {"a":1} `, ""},
		{`[1]`, "column 1: not a JSON object"},
		{`{"a":1}x`, "column 8: data after the object"},
		{`{"a":"b`, "column 8: string not terminated"},
		{`{"a":tru}`, "column 6: invalid literal"},
		{`{"a":}`, `column 6: invalid character '}'`},
		{`{"a":1`, "column 7: unexpected end of line in an object"},
		{`{"a":[1 2]}`, "column 9: expected , or ] in an array"},
		{`{"a":1 "b":2}`, "column 8: expected , or } in an object"},
		{`{1:2}`, "column 2: expected a member name"},
		{`{"a" 1}`, "column 6: expected : after a member name"},
		{`{"a":`, "column 6: unexpected end of line"},
		{`{"a":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, "column 517: nested too deep"},
	} {
		var w skipper
		err := w.Walk([]byte(c.line), w.value)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%.40s: got %q, want %q", c.line, got, c.err)
		}
	}
}

func TestStrEscaped(t *testing.T) {
	for _, c := range []struct {
		line, str string
		escaped   bool
	}{
		{`{"a":"plain"}`, "plain", false},
		{`{"a":"x\ny"}`, `x\ny`, true},
		{`{"a":"q\"q"}`, `q\"q`, true},
		{`{"a":"b\\"}`, `b\\`, true},
		{`{"a":"b\\\""}`, `b\\\"`, true},
	} {
		var w skipper
		if err := w.Walk([]byte(c.line), w.value); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		s := w.strs[0]
		if got := c.line[s.Start:s.End]; got != c.str || s.Escaped != c.escaped {
			t.Errorf("%s: got %q escaped %v, want %q escaped %v", c.line, got, s.Escaped, c.str, c.escaped)
		}
	}
}
