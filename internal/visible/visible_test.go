package visible

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"naïve 日本 🙂", "naïve 日本 🙂"},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00byte\x7f", `nul\x00byte\x7f`},
		{"c1 \u0085 \u009b", `c1 \x85 \x9b`},
		{"sep\u2028par\u2029bom\ufeff", `sep\u2028par\u2029bom\ufeff`},
		{"abc\u202edcba\u2066x\u2069\u200f", `abc\u202edcba\u2066x\u2069\u200f`},
		{"bad \xff\xfe utf8 \xe6\x97", `bad \xff\xfe utf8 \xe6\x97`},
		{"replacement \ufffd stays", "replacement \ufffd stays"},
		{"arabic mark \u061c", `arabic mark \u061c`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
