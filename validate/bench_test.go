package validate

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
)

// wildLines reads every transcript line of the wild stores.
func wildLines(t testing.TB) (lines []session.Line, size int64) {
	t.Helper()
	err := filepath.WalkDir("../testdata/wild", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rd := session.NewReader(bytes.NewReader(b), nil)
		for rd.Next() {
			l := rd.Line()
			l.Raw = bytes.Clone(l.Raw)
			lines = append(lines, l)
			size += int64(len(l.Raw)) + 1
		}
		return rd.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines, size
}

// BenchmarkWorkWild runs the per-line checks of one worker over every line
// of the wild stores, as a small file's worker does (SetBytes: MB/s of
// lines).
func BenchmarkWorkWild(b *testing.B) {
	lines, size := wildLines(b)
	c := newChecker()
	for _, l := range lines { // the shapes seen, as in a long run
		r := work(c.parser, c.schema, l, c.vals)
		c.vals = r.values
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			r := work(c.parser, c.schema, l, c.vals)
			c.vals = r.values
		}
	}
}
