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
