package changeset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
)

// longSource writes a transcript of three lines, the second longer than
// session.MaxLine (a prompt of pasted text with NUL bytes in it, a string
// of 9 KB the skeleton cuts after it) into a file of dir, with the
// session id and cwd given; it returns the file and the hash of its bytes.
func longSource(t *testing.T, dir, name, id, cwd string) (string, string) {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	fmt.Fprintf(w, `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":%q,"cwd":%q,"message":{"role":"user","content":"hi"}}`+"\n", id, cwd)
	fmt.Fprintf(w, `{"parentUuid":"u1","cwd":%q,"sessionId":%q,"type":"user","message":{"role":"user","content":[{"type":"text","text":"`, cwd, id)
	block := bytes.Repeat([]byte("pasted text "), 1<<16)
	for n := 0; n < session.MaxLine+(8<<20); n += len(block) {
		w.Write(block)
		if n == 16<<20 {
			w.Write(make([]byte, 1000)) // NUL bytes in the middle of it
		}
	}
	fmt.Fprintf(w, `"},{"type":"text","text":"%s"}]},"uuid":"u2","timestamp":"2026-01-01T00:00:00Z"}`+"\n", strings.Repeat("z", 9<<10))
	fmt.Fprintf(w, `{"type":"assistant","uuid":"u3","parentUuid":"u2","sessionId":%q,"cwd":%q,"message":{"role":"assistant","content":"ok"}}`+"\n", id, cwd)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p, fmt.Sprintf("%x", h.Sum(nil))
}

// TestTransformLongLine: a line longer than session.MaxLine is copied from
// the file as it streams past, its sessionId and cwd rewritten in place,
// every other byte (its NUL bytes too) as it was; a trim that drops it
// drops it; a trim of its content, or a copy without the file to read it
// from, is refused.
func TestTransformLongLine(t *testing.T) {
	dir := t.TempDir()
	src, _ := longSource(t, dir, "src.jsonl", "s-old", "/a/x")
	_, want := longSource(t, dir, "want.jsonl", "s-new-id", "/b/x")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := &Transform{Kind: TransformRetarget, OldSession: "s-old", NewSession: "s-new-id", OldDir: "/a", NewDir: "/b"}
	h := sha256.New()
	if err := tr.Stream(h, f, f); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("the copy is not the source with its values rewritten")
	}

	drop := &Transform{Kind: TransformRetarget, Trim: []LineTrim{{Line: 2, Drop: true}}}
	var out bytes.Buffer
	f.Seek(0, io.SeekStart)
	if err := drop.Stream(&out, f, f); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `"u3"`) {
		t.Errorf("the long line not dropped: %d lines", len(lines))
	}

	for name, c := range map[string]struct {
		tr  *Transform
		src io.ReaderAt
	}{
		"trim":    {&Transform{Kind: TransformRetarget, Trim: []LineTrim{{Line: 2, ToolOutput: true}}}, f},
		"no file": {tr, nil},
	} {
		f.Seek(0, io.SeekStart)
		err := c.tr.Stream(io.Discard, f, c.src)
		if err == nil || !strings.Contains(err.Error(), "line 2: line of 72.") || !strings.Contains(err.Error(), "over the 64.0 MB cfix reads whole") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestDiffStreamsBounded: a diff of two streams of 600,000 lines keeps
// the hashes of the last diffRing lines of each, not of every line: one
// line changed shows as its hunk when the lines after it fit in the ring,
// as where the difference starts when they do not; streams that differ in
// nothing say so.
func TestDiffStreamsBounded(t *testing.T) {
	lines := func(n, changed int) io.Reader {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			if i == changed {
				fmt.Fprintf(&b, "{\"changed\":%d}\n", i)
				continue
			}
			fmt.Fprintf(&b, "{\"line\":%d}\n", i)
		}
		return &b
	}
	for _, c := range []struct {
		changed int
		want    string
	}{
		{-1, "@@ no change in lines @@"},
		{600_000 - 10, "+{\"changed\":599990}"},
		{10, "… lines differ from line 11 on (too many to show) …"},
	} {
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		if err := diffStreams(w, lines(600_000, -1), lines(600_000, c.changed), "r"); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if !strings.Contains(out.String(), c.want) || out.Len() > 4096 {
			t.Errorf("changed line %d: diff %q", c.changed, out.String())
		}
	}
}
