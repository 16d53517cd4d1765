package repair

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/validate"
)

// lineVariants derive damaged lines from a store line: glued, torn, with a
// NUL byte, invalid UTF-8, a lone surrogate, a \u0000 escape, a BOM.
var lineVariants = []func([]byte) []byte{
	func(b []byte) []byte { return append(bytes.Clone(b), b...) },
	func(b []byte) []byte { return bytes.Clone(b[:len(b)/2]) },
	func(b []byte) []byte { return append(bytes.Clone(b[:len(b)-1]), 0, '}') },
	func(b []byte) []byte { return bytes.Replace(b, []byte(`":"`), []byte("\":\"\xff"), 1) },
	func(b []byte) []byte { return bytes.Replace(b, []byte(`":"`), []byte(`":"\ud800`), 1) },
	func(b []byte) []byte { return bytes.Replace(b, []byte(`":"`), []byte(`":"\u0000`), 1) },
	func(b []byte) []byte { return append([]byte("\xef\xbb\xbf"), b...) },
	func(b []byte) []byte { return append(append([]byte("  "), b...), ' ') },
}

// TestScannedAgrees: on every line of the corpus and wild stores and on
// damaged copies of them, a line the fast path (scanned) takes is one
// repairLine leaves as it is, with the same header and title records.
func TestScannedAgrees(t *testing.T) {
	x := &fixer{allow: func(validate.Code) bool { return true }}
	p, q := session.NewParser(), session.NewParser()
	p.Header, q.Header = true, true
	taken, lines := 0, 0
	check := func(ln session.Line) {
		fast, ok := scanned(p, headerShaper, ln)
		if !ok {
			return
		}
		taken++
		slow := x.repairLine(q, ln)
		if slow.skip || slow.del != "" || slow.changed || slow.recs != nil || !slow.json || len(slow.heads) != 1 {
			t.Fatalf("line %q: scanned takes it, repairLine repairs it: %+v", ln.Raw, slow)
		}
		want := slow.heads[0]
		want.e.Content = nil // Scan leaves it nil; commit does not read it
		if !reflect.DeepEqual(fast.heads[0], want) || !reflect.DeepEqual(fast.titles, slow.titles) || !fast.json {
			t.Fatalf("line %q:\nscanned:    %+v %v\nrepairLine: %+v %v", ln.Raw, fast.heads[0], fast.titles, want, slow.titles)
		}
	}
	for _, root := range []string{"../testdata/corpus", "../testdata/wild"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rd := session.NewReader(bytes.NewReader(b), nil)
			for rd.Next() {
				ln := rd.Line()
				ln.Raw = bytes.Clone(ln.Raw)
				lines++
				check(ln)
				unterminated := ln
				unterminated.Terminated = false
				if _, ok := scanned(p, headerShaper, unterminated); ok {
					t.Fatalf("scanned takes a line with no final newline: %q", ln.Raw)
				}
				if len(ln.Raw) < 2 {
					continue
				}
				for _, v := range lineVariants {
					d := ln
					d.Raw = v(ln.Raw)
					check(d)
				}
			}
			return rd.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if lines < 1000 || taken < lines*9/10 {
		t.Fatalf("scanned took %d lines of %d (and their copies)", taken, lines)
	}
}
