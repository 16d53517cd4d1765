// Package visible writes text read from a store so that a terminal shows
// it as it is: a transcript, a title or a path can hold control
// characters, escape sequences and the characters that reorder text on
// the screen, and none of them may break a line of cfix's output, colour
// the terminal or move its cursor.
package visible

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Write writes s to b on one line: line breaks, tabs and other control
// characters (Control) as Go escapes (\n, \t, \x1b), the characters that
// change how the text around them shows (Hidden) as \u escapes, and a
// byte that is not UTF-8 as a \x escape. A backslash stays as it is: the
// JSON a line holds is full of them.
func Write(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case Control(r):
			fmt.Fprintf(b, `\x%02x`, r)
		case Hidden(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Control reports whether r is a control character (C0, DEL, C1).
func Control(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }

// Hidden reports whether r is a printable character that changes how the
// text around it shows: the line and paragraph separators, the byte order
// mark, and the bidirectional marks, embeddings, overrides and isolates.
func Hidden(r rune) bool {
	return r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// String returns s as Write writes it (s itself when every character of
// it prints).
func String(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	Write(&b, s)
	return b.String()
}
