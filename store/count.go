package store

import (
	"bytes"
	"io"
	"sync"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// CountMessages counts the messages of the transcript at path from byte
// offset from (0: the whole file) to its end, by the glance's rules: user
// and assistant entries of the chain, as validate counts them; a line that
// is not JSON, glued records and a torn last line count nothing.
func CountMessages(path string, from int64) (int, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	gl := counters.Get().(*glancer)
	defer counters.Put(gl)
	rd := session.NewReader(io.NewSectionReader(fh, from, 1<<62), gl.buf)
	n := 0
	for rd.Next() {
		if gl.isMessage(rd.Line().Raw) {
			n++
		}
	}
	gl.buf = rd.Buffer()
	if err := rd.Err(); err != nil {
		return 0, err
	}
	return n, nil
}

var counters = sync.Pool{New: func() any { return newGlancer() }}

// isMessage reports whether a line is a message as the glance counts it.
func (gl *glancer) isMessage(raw []byte) bool {
	if bytes.IndexByte(raw, 0) >= 0 {
		raw = bytes.ReplaceAll(raw, []byte{0}, nil)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return false
	}
	e := &gl.e
	if _, ok := gl.p.Scan(raw, gl.sh, e); !ok {
		r := gl.p.Parse(raw)
		if r.Err != nil || r.GluedAt >= 0 || !session.HeaderOf(r.Value, e) {
			return false
		}
	}
	return e.IsChain() && (e.Type == "user" || e.Type == "assistant")
}

// Parallel calls fn for 0 <= i < n on every core.
func Parallel(n int, fn func(i int)) {
	parallel(n, func(_ *glancer, i int) { fn(i) })
}
