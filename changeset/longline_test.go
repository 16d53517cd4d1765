package changeset

import (
	"bufio"
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestListLinesLongLine: listing a created file with a line of many MB
// allocates a bounded amount, not a copy of the line per 64 KB read of it
// (a clone's dry run of a session holding a 200 MB prompt took 78 s and
// 2.7 GB), and still says the line's length.
func TestListLinesLongLine(t *testing.T) {
	n := 16 << 20
	content := `{"type":"user","message":{"content":"` + strings.Repeat("x", n) + `"}}` + "\n" + `{"type":"last"}` + "\n"
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := listLines(w, strings.NewReader(content), "+", "why"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	w.Flush()
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("listLines of a line of %d bytes allocated %d bytes, want at most 1 MB", n, alloc)
	}
	want := fmt.Sprintf("… [%d bytes]\n+{\"type\":\"last\"}\n", n+len(`{"type":"user","message":{"content":""}}`))
	if got := out.String(); !strings.HasPrefix(got, "@@ -0,0 +1,2 @@ why\n+{\"type\":\"user\",\"message\":{\"content\":\"xxx") || !strings.HasSuffix(got, want) {
		t.Errorf("listLines shows %q", got)
	}
}

// TestDiffStreamsLongLine: the diff of a rewrite that changes a line of
// 32 MB allocates about what reading the two streams takes (a buffer grown
// to the line in each), not copies of the line for each step of the diff
// (a move of a session holding a 200 MB prompt took 1 GB), and still shows
// the line as changed.
func TestDiffStreamsLongLine(t *testing.T) {
	n := 32 << 20
	line := func(cwd string) string {
		return `{"type":"user","message":{"content":"` + strings.Repeat("x", n) + `"},"cwd":"` + cwd + `"}` + "\n"
	}
	head := `{"type":"first"}` + "\n"
	old, nw := head+line("/old/place"), head+line("/new/place")
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := diffStreams(w, strings.NewReader(old), strings.NewReader(nw), "why"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	w.Flush()
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(n) {
		t.Errorf("diffStreams of a changed line of %d MB allocated %d MB, want at most 8 times the line", n>>20, alloc>>20)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "-") || !strings.HasPrefix(lines[3], "+") || lines[2][1:] == lines[3][1:] {
		t.Errorf("diffStreams shows %.500q", out.String())
	}
}
