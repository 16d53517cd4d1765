// Package shell quotes words for the command lines cfix prints.
package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/internal/visible"
)

// Quote quotes s for a POSIX shell when it needs it. A word holding a
// control character, a character that changes how text shows, or a byte
// that is not UTF-8 (a path a damaged store names) is quoted as $'...'
// with those bytes as \x escapes: printed, it cannot act on the terminal,
// and pasted into bash, zsh or ksh it is the same word. A word starting
// with "=" is quoted too (zsh expands =cmd to cmd's path). Quoting keeps a
// word starting with "-" an option all the same: a command line holding a
// name from a store takes it after "--", or as --option=NAME.
func Quote(s string) string {
	if s != "" && s[0] != '=' && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,", r))
	}) < 0 {
		return s
	}
	if visible.String(s) == s { // nothing a terminal would act on
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && n == 1 || visible.Control(r) || visible.Hidden(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}
