package visible

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriter writes what a hostile store holds, a byte at a time and
// whole: no escape sequence reaches what the writer writes to; line
// breaks, tabs and characters of every script do; Raw passes as it is.
func TestWriter(t *testing.T) {
	in := "title \x1b]0;PWNED\x07 clip \x1b]52;c;aGVsbG8=\x1b\\ alt \x1b[?1049h csi8 \u009b2J cr\rover\n" +
		"tab\tend é ü 日本 😀 bad \xff\xfe del \x7f bell \a\n"
	want := `title \x1b]0;PWNED\x07 clip \x1b]52;c;aGVsbG8=\x1b\ alt \x1b[?1049h csi8 \u009b2J cr\rover` + "\n" +
		"tab\tend é ü 日本 😀 bad \\xff\\xfe del \\x7f bell \\x07\n"
	for _, chunk := range []int{len(in), 1, 2, 3} {
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(in); i += chunk {
			n, err := w.Write([]byte(in[i:min(i+chunk, len(in))]))
			if err != nil || n != min(chunk, len(in)-i) {
				t.Fatalf("write: %d %v", n, err)
			}
		}
		w.Flush()
		if got := b.String(); got != want {
			t.Errorf("in writes of %d bytes:\n%q\nwant\n%q", chunk, got, want)
		}
		if strings.ContainsAny(b.String(), "\x1b\x07\r\u009b") {
			t.Errorf("a control character passed")
		}
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write([]byte("a\xe6\x97")) // cut inside 日
	Raw(w, "\x1b[1;31m")
	w.Write([]byte("b"))
	if got := b.String(); got != "a\\xe6\\x97\x1b[1;31mb" {
		t.Errorf("raw: %q", got)
	}
	if Unwrap(w) != &b || Unwrap(&b) != &b {
		t.Error("unwrap")
	}
}
