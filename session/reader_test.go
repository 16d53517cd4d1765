package session

import (
	"runtime"
	"strings"
	"testing"
)

// TestReaderLongLineAllocs: reading a line of 17 MB from a source that
// knows its length grows the buffer to the line, not to twice what came
// before (32 MB for 17).
func TestReaderLongLineAllocs(t *testing.T) {
	n := 17 << 20
	src := strings.NewReader(strings.Repeat("x", n) + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rd := NewReader(src, nil)
	if !rd.Next() || len(rd.Line().Raw) != n {
		t.Fatalf("line of %d bytes not read", n)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(n) {
		t.Errorf("reading a line of %d MB allocated %d MB, want at most 3 times the line", n>>20, alloc>>20)
	}
}
