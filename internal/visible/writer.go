package visible

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Writer writes to a terminal what cfix prints there, text from a store
// among it, so that no escape sequence a store holds (a window title, an
// OSC 52 write to the clipboard, the alternate screen, a cursor move, a
// DCS string) reaches the terminal: every control character but the line
// break and the tab (Control: ESC, BEL, CR, ...) as a \x escape, a C1
// control as a \u escape (an 8-bit CSI is U+009B), a byte that is not
// UTF-8 as a \x escape; the rest as it is, line breaks included (an
// export's Markdown stays readable). A UTF-8 character cut by the end of a
// write is held until the next. cfix's own styling goes through Raw.
type Writer struct {
	w    io.Writer
	held []byte // the start of a character the last write cut
	buf  []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap is the writer under w when w is a *Writer, else w.
func Unwrap(w io.Writer) io.Writer {
	if v, ok := w.(*Writer); ok {
		return v.w
	}
	return w
}

// Raw writes s to w as it is: past w's escaping when w is a *Writer
// (cfix's own styling and progress line).
func Raw(w io.Writer, s string) error {
	if v, ok := w.(*Writer); ok {
		if err := v.Flush(); err != nil {
			return err
		}
		w = v.w
	}
	_, err := io.WriteString(w, s)
	return err
}

func (v *Writer) Write(p []byte) (int, error) {
	b := p
	if len(v.held) > 0 {
		b = append(v.held, p...)
		v.held = nil
	}
	out := v.buf[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t' || c >= 0x20 && c != 0x7f:
				out = append(out, c)
			case c == '\r':
				out = append(out, `\r`...)
			default:
				out = fmt.Appendf(out, `\x%02x`, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			v.held = append([]byte(nil), b[i:]...)
			break
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case Control(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	v.buf = out[:0]
	if len(out) > 0 {
		if _, err := v.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held of a cut character, as the bytes that are not
// UTF-8 it is at the end.
func (v *Writer) Flush() error {
	if len(v.held) == 0 {
		return nil
	}
	var out []byte
	for _, c := range v.held {
		out = fmt.Appendf(out, `\x%02x`, c)
	}
	v.held = nil
	_, err := v.w.Write(out)
	return err
}
