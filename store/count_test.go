package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
)

// TestCountMessagesStores: on every transcript of the corpus and wild
// stores, CountMessages counts what a full read (Summarize) counts.
func TestCountMessagesStores(t *testing.T) {
	n := 0
	for _, root := range wild.AllRoots(t) {
		l, err := Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if f.Kind != KindSession || f.Size == 0 {
				continue
			}
			sum, err := Summarize(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CountMessages(f.Path, 0)
			if err != nil || got != sum.Messages {
				t.Errorf("%s: CountMessages %d (%v), a full read counts %d", f.Path, got, err, sum.Messages)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("%d transcripts counted", n)
	}
}

// bigTranscript writes a transcript of turns user and assistant entries
// (about 2 KB each) and a torn line, and returns its path.
func bigTranscript(t *testing.T, dir string, turns int) string {
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
	var b strings.Builder
	b.WriteString(`{"type":"summary","summary":"s","leafUuid":"a0"}` + "\n")
	for i := 0; i < turns; i++ {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","parentUuid":"a%d","sessionId":"%s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"%s"}}`+"\n", i, i-1, id, strings.Repeat("x", 1000))
		fmt.Fprintf(&b, `{"type":"progress","uuid":"p%d","parentUuid":"u%d","data":{"message":{"type":"user","uuid":"n%d","parentUuid":null}}}`+"\n", i, i, i)
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","parentUuid":"u%d","sessionId":"%s","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]}}`+"\n", i, i, id, strings.Repeat("y", 1000))
	}
	b.WriteString(`{"type":"user","uuid":"torn`)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMessageCache: the cache gives a count only for the file as it was
// counted; a grown file is counted from its old end; a file replaced by
// another (a rename over it), or a cache that is not JSON, is counted
// again.
func TestMessageCache(t *testing.T) {
	dir := t.TempDir()
	cacheFile := filepath.Join(dir, "cache", "cfix", "message-counts.json")
	path := bigTranscript(t, dir, 100)
	count := func(want int, what string) {
		t.Helper()
		c := OpenMessageCache(cacheFile)
		n, err := c.Count(path)
		if err != nil || n != want {
			t.Fatalf("%s: %d messages (%v), want %d", what, n, err, want)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(n int) {
		t.Helper()
		c := OpenMessageCache(cacheFile)
		e, ok := c.m[path]
		if !ok {
			t.Fatalf("no cache entry for %s", path)
		}
		e.Messages = n
		c.m[path], c.gone = e, true
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(s string) {
		t.Helper()
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(s)
		fh.Close()
	}
	count(200, "first count")
	// An entry is used while the file is as it names it.
	plant(7)
	count(7, "a count planted for the file as it is")
	// The old end (a torn line) ended no line: counted again, whole.
	appendTo("\n")
	count(200, "the torn line ended")
	// Appends after a whole line: only the new lines are read.
	plant(50)
	appendTo(`{"type":"user","uuid":"v1","parentUuid":"a99","message":{"role":"user","content":"more"}}` + "\n" +
		`{"type":"assistant","uuid":"v2","parentUuid":"v1","message":{"role":"assistant","content":"ok"}}` + "\n")
	count(52, "appended to a planted count")
	// A cache that is not JSON is ignored.
	if err := os.WriteFile(cacheFile, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	count(202, "a corrupt cache")
	// A file renamed over the transcript, of its size and mtime: another
	// inode, counted again.
	plant(9)
	fi, _ := os.Stat(path)
	b, _ := os.ReadFile(path)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte(strings.Replace(string(b), `"type":"assistant","uuid":"v2"`, `"type":"assistant","uuid":"w2"`, 1)), 0o600)
	os.Chtimes(other, fi.ModTime(), fi.ModTime())
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	count(202, "a file renamed over the transcript")
	if full, _ := CountMessages(path, 0); full != 202 {
		t.Fatalf("a full count says %d", full)
	}
}
