package session

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// pipelineInput is lines of many lengths, a line of three batches, empty
// lines, and a last line without "\n" when open is set.
func pipelineInput(open bool) []byte {
	var in bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&in, "line %d %s\n", i, strings.Repeat("x", i%3000))
		switch i {
		case 7000:
			in.Write(bytes.Repeat([]byte("h"), 3*batchBytes+17))
			in.WriteByte('\n')
		case 9000:
			in.WriteString("\n\n")
		}
	}
	if open {
		in.WriteString(`{"type":"user","uuid":"torn`)
	}
	return in.Bytes()
}

// TestPipelineTee: the tee gets every byte read, in order, whatever sizes
// the reads come in; the lines join back to the input with the numbers and
// offsets a Reader gives them.
func TestPipelineTee(t *testing.T) {
	for _, open := range []bool{false, true} {
		in := pipelineInput(open)
		want := readAll(t, in, nil)
		for name, r := range map[string]func() io.Reader{
			"whole": func() io.Reader { return bytes.NewReader(in) },
			"half":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
			"eof":   func() io.Reader { return iotest.DataErrReader(bytes.NewReader(in)) },
		} {
			h := sha256.New()
			var got []Line
			err := PipelineTee(r(), h, 2, func() func(Line) int {
				return func(l Line) int { return len(l.Raw) }
			}, func(l Line, n int) error {
				if n != len(l.Raw) {
					return fmt.Errorf("line %d: result %d, len %d", l.N, n, len(l.Raw))
				}
				l.Raw = append([]byte(nil), l.Raw...)
				got = append(got, l)
				return nil
			})
			if err != nil {
				t.Fatalf("%s open=%v: %v", name, open, err)
			}
			if sum := sha256.Sum256(in); !bytes.Equal(h.Sum(nil), sum[:]) {
				t.Errorf("%s open=%v: the tee's hash is not the input's", name, open)
			}
			if len(got) != len(want) {
				t.Fatalf("%s open=%v: %d lines, want %d", name, open, len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.N != w.N || g.Offset != w.Offset || g.Terminated != w.Terminated || !bytes.Equal(g.Raw, w.Raw) {
					t.Fatalf("%s open=%v: line %d = {%d %d %v %d bytes}, want {%d %d %v %d bytes}", name, open, i,
						g.N, g.Offset, g.Terminated, len(g.Raw), w.N, w.Offset, w.Terminated, len(w.Raw))
				}
			}
		}
	}
}

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

// TestPipelineErrors: a read error comes back after the lines read before
// it; a write error from the tee stops the pipeline and comes back.
func TestPipelineErrors(t *testing.T) {
	in := pipelineInput(false)
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(in[:5*batchBytes+100]), iotest.ErrReader(boom))
	var n int64
	err := PipelineTee(r, io.Discard, 2, func() func(Line) int { return func(Line) int { return 0 } },
		func(l Line, _ int) error {
			n = l.Offset + int64(len(l.Raw))
			return nil
		})
	if err != boom {
		t.Fatalf("err = %v, want boom", err)
	}
	if n != 5*batchBytes+100 {
		t.Errorf("lines read to %d, want %d", n, 5*batchBytes+100)
	}
	err = PipelineTee(bytes.NewReader(in), &failWriter{after: 2}, 2, func() func(Line) int { return func(Line) int { return 0 } },
		func(Line, int) error { return nil })
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v, want disk full", err)
	}
}
