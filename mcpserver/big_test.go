package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
)

// bigSession writes a session of about size bytes into the project alpha
// of root: turns of a prompt and an answer of about a KB each, one chain.
func bigSession(t *testing.T, root, id string, size int) string {
	t.Helper()
	path := filepath.Join(root, "projects", "-home-dev-work-alpha", id+".jsonl")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 20)
	parent := any(nil)
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for n, written := 0, 0; written < size; n++ {
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		e := map[string]any{"parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": "/home/dev/work/alpha",
			"sessionId": id, "version": "2.1.332", "uuid": uuid, "timestamp": start.Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano)}
		if n%2 == 0 {
			e["type"], e["message"] = "user", map[string]any{"role": "user", "content": fmt.Sprintf("prompt %d: %s", n/2+1, text)}
		} else {
			e["type"], e["message"] = "assistant", map[string]any{"role": "assistant", "model": "claude-opus-5-5", "id": fmt.Sprintf("msg_%d", n),
				"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("answer %d: %s%s", n/2+1, text, text)}}}
		}
		b, _ := json.Marshal(e)
		w.Write(append(b, '\n'))
		written += len(b) + 1
		parent = uuid
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	return path
}

// peakHeap runs fn and returns the most heap in use while it ran, above
// what was in use before (sampled every millisecond).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak - base
}

// TestReadBigSession pages a session of 48 MB: the first read of it
// (which reads the transcript once and writes its index) keeps the heap
// to half the file's size, the pages that follow it (the export goes on)
// to an eighth, and pages read through the index from the start to half;
// each page is the export's bytes at its offset.
func TestReadBigSession(t *testing.T) {
	const size = 48 << 20
	// The heap counts garbage not yet collected, up to GOGC percent more
	// than is live: collect early, so that the peak is near what is live.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	root := damage.CopyStore(t, "2.1.332")
	const id = "b16b16b1-0000-4000-8000-000000000001"
	bigSession(t, root, id, size)
	index := t.TempDir()
	cs := connectWith(t, Options{Root: root, Dir: t.TempDir(), Index: index})

	var out ReadOutput
	cold := peakHeap(func() { call(t, cs, "read_session", map[string]any{"session": id}, &out) })
	if out.NextOffset == nil || !strings.Contains(out.Text, "### Turn 1\n") || !strings.Contains(out.Text, "prompt 1: the quick") {
		t.Fatalf("first page:\n%s", out.Text)
	}
	first := out.Text
	if ents, _ := os.ReadDir(index); len(ents) != 1 {
		t.Fatalf("index folder holds %d files, want the session's index", len(ents))
	}
	// The next pages continue the export the first page paused.
	var next uint64
	off := *out.NextOffset
	for i := 0; i < 20; i++ {
		next = max(next, peakHeap(func() { call(t, cs, "read_session", map[string]any{"session": id, "offset": off}, &out) }))
		off = *out.NextOffset
	}
	warm := peakHeap(func() { call(t, cs, "read_session", map[string]any{"session": id}, &out) })
	if out.Text != first {
		t.Errorf("the first page read through the index differs")
	}
	// A page a MB into the export, read from the start, and turns far
	// into it.
	var mid ReadOutput
	later := peakHeap(func() { call(t, cs, "read_session", map[string]any{"session": id, "offset": 1 << 20}, &mid) })
	var turns ReadOutput
	call(t, cs, "read_session", map[string]any{"session": id, "from_turn": 10000, "to_turn": 10001}, &turns)
	if !strings.HasPrefix(turns.Text, "### Turn 10000\n") || !strings.Contains(turns.Text, "prompt 10001: ") || strings.Contains(turns.Text, "### Turn 10002") {
		t.Errorf("turns 10000-10001:\n%.500s", turns.Text)
	}
	t.Logf("heap at its peak above the start: first read %d MB, the next pages %d MB, the first page again %d MB, a page 1 MB in %d MB (the file: %d MB)",
		cold>>20, next>>20, warm>>20, later>>20, size>>20)
	if cold > size/2 || next > size/8 || warm > size/2 || later > size/2 {
		t.Errorf("heap at its peak: first read %d MB, the next pages %d MB, the first page again %d MB, a page 1 MB in %d MB; want at most %d, %d, %d and %d MB",
			cold>>20, next>>20, warm>>20, later>>20, size/2>>20, size/8>>20, size/2>>20, size/2>>20)
	}

	// The pages are the export's bytes.
	want := exportOf(t, root, id)
	if !strings.HasPrefix(want, first) || mid.Text != want[1<<20:1<<20+len(mid.Text)] {
		t.Errorf("pages differ from the export")
	}
}
