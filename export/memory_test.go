package export

import (
	"bytes"
	"io"
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
	"github.com/cfix-dev/cfix/show"
)

// tailWriter counts what is written and keeps its last bytes.
type tailWriter struct {
	n    int64
	tail []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 64<<10 {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-32<<10:]...)
	}
	return len(p), nil
}

// TestMemoryHostile: cfix export of a session of hostile input peaks
// under 200 MB of RSS, as Markdown and as the chain's JSONL: the prompt
// of 256 MB is shown up to its first 8 KB, with a note saying so, and
// copied whole into the JSONL as it streams past.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				fam, err := show.Resolve(root, path)
				if err != nil {
					t.Fatal(err)
				}
				var md tailWriter
				if err := Write(&md, fam, Options{Format: "md"}); err != nil {
					t.Fatal(err)
				}
				var jl tailWriter
				if err := Write(&jl, fam, Options{Format: "jsonl"}); err != nil {
					t.Fatal(err)
				}
				if kind != rsstest.HugeLine {
					return
				}
				if !bytes.Contains(md.tail, []byte("is 256.0 MB, over the 64.0 MB cfix reads whole: each of its texts is shown up to its first 8 KB]")) ||
					!bytes.Contains(md.tail, []byte("Read it.")) || md.n > 1<<20 {
					t.Errorf("markdown of %d bytes ends with %q", md.n, md.tail[max(0, len(md.tail)-600):])
				}
				if jl.n < rsstest.HugeBytes || !bytes.HasSuffix(jl.tail, []byte(`"timestamp":"2027-01-02T03:04:06.000Z"}`+"\n")) {
					t.Errorf("JSONL of %d bytes", jl.n)
				}
			})
		})
	}
}

var _ io.Writer = (*tailWriter)(nil)
