package session

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// setLimits lowers the reader's limits for a test.
func setLimits(t testing.TB, line, keep, skel int) {
	t.Helper()
	l, k, s := lineLimit, keepString, skeletonLimit
	lineLimit, keepString, skeletonLimit = line, keep, skel
	t.Cleanup(func() { lineLimit, keepString, skeletonLimit = l, k, s })
}

// soundness is what the parser says of a line: the faults validate
// reports.
type soundness struct {
	err, deep, glued, badUTF8, surrogates, nulEscapes bool
}

func soundOf(p *Parser, raw []byte) soundness {
	r := p.Parse(raw)
	if r.Err != nil {
		// Nothing else of a line that is not JSON is reported.
		return soundness{err: !r.Err.Deep, deep: r.Err.Deep}
	}
	return soundness{glued: r.GluedAt >= 0, badUTF8: r.BadUTF8 >= 0, surrogates: r.Surrogates > 0, nulEscapes: r.NULEscapes > 0}
}

// skeletonAgrees checks the skeleton of line: written in pieces of any
// size it is the same; the parser finds in it the faults it finds in the
// line without its NUL bytes; it is that line when nothing was cut.
func skeletonAgrees(t testing.TB, p *Parser, line []byte) ([]byte, *Long) {
	t.Helper()
	sk, lg := Skeleton(line)
	sk = append([]byte(nil), sk...)
	for _, piece := range []int{1, 2, 3, 7, 64} {
		var s skeleton
		s.reset()
		for b := line; len(b) > 0; {
			n := min(piece, len(b))
			s.write(b[:n])
			b = b[n:]
		}
		if lg2 := s.long(); !bytes.Equal(s.out, sk) || !reflect.DeepEqual(lg2, lg) {
			t.Fatalf("skeleton of %q written %d bytes at a time = %q %+v, want %q %+v", line, piece, s.out, lg2, sk, lg)
		}
	}
	clean := bytes.ReplaceAll(line, []byte{0}, nil)
	if lg.Size != int64(len(line)) || lg.NULs != int64(len(line)-len(clean)) || lg.FirstNUL != int64(bytes.IndexByte(line, 0)) {
		t.Fatalf("skeleton of %q: size %d, NULs %d", line, lg.Size, lg.NULs)
	}
	if lg.Partial {
		return sk, lg
	}
	// Every span the skeleton maps back is the line's bytes there.
	for a := 0; a < len(sk); a++ {
		for b := a + 1; b <= len(sk) && b <= a+40; b++ {
			if s, e, ok := lg.Span(a, b); ok && !bytes.Equal(line[s:e], sk[a:b]) {
				t.Fatalf("skeleton %q of %q: span [%d,%d) maps to [%d,%d) %q", sk, line, a, b, s, e, line[s:e])
			}
		}
	}
	if lg.Exact && !bytes.Equal(sk, clean) {
		t.Fatalf("skeleton %q of %q: Exact %v", sk, line, lg.Exact)
	}
	if got, want := soundOf(p, sk), soundOf(p, clean); got != want {
		t.Fatalf("skeleton %q of %q: parser finds %+v, in the line %+v", sk, line, got, want)
	}
	return sk, lg
}

func TestSkeleton(t *testing.T) {
	setLimits(t, MaxLine, 8, 1<<20)
	p := NewParser()
	x := strings.Repeat("x", 20)
	cases := []struct {
		in, want string
		exact    bool
	}{
		{`{"a":"short"}`, `{"a":"short"}`, true},
		{`{"a":"` + x + `"}`, `{"a":"xxxxxxxx"}`, false},
		{`{"a":"12345678"}`, `{"a":"12345678"}`, true},
		{"\x00\x00{\"a\":1}\x00", `{"a":1}`, true},
		{"\x00\x00\x00", ``, true},
		// Escapes and characters are kept whole; a surrogate pair too.
		{`{"a":"1234567\n` + x + `"}`, `{"a":"1234567\n"}`, false},
		{`{"a":"1234567\u00e9` + x + `"}`, `{"a":"1234567\u00e9"}`, false},
		{"{\"a\":\"1234567\u00e9" + x + "\"}", "{\"a\":\"1234567\u00e9\"}", false},
		{`{"a":"123\ud83d\ude00` + x + `"}`, `{"a":"123\ud83d\ude00"}`, false},
		// Faults of the cut part are written into the kept part.
		{`{"a":"` + x + "\x01" + x + `"}`, "{\"a\":\"xxxxxxxx\x01\"}", false},
		{`{"a":"` + x + `\q"}`, `{"a":"xxxxxxxx\q"}`, false},
		{`{"a":"` + x + `\u00zz"}`, `{"a":"xxxxxxxx\u00z"}`, false},
		{`{"a":"` + x + `\ud83d` + x + `"}`, `{"a":"xxxxxxxx\ud83d?"}`, false},
		{`{"a":"` + x + `\ude00"}`, `{"a":"xxxxxxxx?\ude00"}`, false},
		{`{"a":"` + x + `\ud83d\ude00\u0000"}`, `{"a":"xxxxxxxx\u0000"}`, false},
		{"{\"a\":\"" + x + "\xff" + x + "\"}", "{\"a\":\"xxxxxxxx\xff\"}", false},
		{"{\"a\":\"" + x + "\xe2\x82\"}", "{\"a\":\"xxxxxxxx\xff\"}", false},
		{"{\"a\":\"" + x + "\xed\xa0\x80\"}", "{\"a\":\"xxxxxxxx\xff\"}", false},
		// Blanks between tokens: a long run becomes one space.
		{"{\"a\":" + strings.Repeat(" ", 40) + "1}", "{\"a\": 1}", false},
		{"{\"a\":" + strings.Repeat(" ", 16) + "1}", "{\"a\":" + strings.Repeat(" ", 16) + "1}", true},
		// A torn line stays torn.
		{`{"a":"` + x, `{"a":"xxxxxxxx`, false},
	}
	for _, c := range cases {
		sk, lg := skeletonAgrees(t, p, []byte(c.in))
		if string(sk) != c.want || lg.Exact != c.exact {
			t.Errorf("skeleton of %q = %q (exact %v), want %q (exact %v)", c.in, sk, lg.Exact, c.want, c.exact)
		}
	}
	// A line whose structure is longer than the skeleton's limit.
	setLimits(t, MaxLine, 8, 64)
	line := []byte("[" + strings.Repeat("1,", 100) + "1]\x00")
	sk, lg := skeletonAgrees(t, p, line)
	if !lg.Partial || len(sk) > 64 || lg.NULs != 1 || lg.Size != int64(len(line)) {
		t.Errorf("skeleton of a line of 203 bytes of structure, limit 64: %q %+v", sk, lg)
	}
}

// TestSkeletonCorpus: the skeleton of every line of the corpus stores has
// the line's header, and the faults of the damaged lines.
func TestSkeletonCorpus(t *testing.T) {
	setLimits(t, MaxLine, 200, MaxSkeleton)
	files, _ := filepath.Glob("../testdata/corpus/*/.claude/projects/*/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no corpus transcripts")
	}
	p, q := NewParser(), NewParser()
	sh := testShapers()[0]
	lines, cut := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range bytes.Split(b, []byte("\n")) {
			var want, got Entry
			_, okWant := p.Scan(raw, sh, &want)
			sk, lg := skeletonAgrees(t, p, raw)
			lines++
			if !lg.Exact {
				cut++
				// Its header fields map back to the line: a planner
				// rewrites them in place.
				for _, key := range []string{"sessionId", "cwd", "parentUuid", "uuid"} {
					if a, b, ok := Find(sk, key); ok {
						if s, e, ok := lg.Span(a, b); !ok || !bytes.Equal(raw[s:e], sk[a:b]) {
							t.Fatalf("%s: %s of a cut line does not map back: %v", f, key, ok)
						}
					}
				}
			}
			if _, ok := q.Scan(sk, sh, &got); ok != okWant {
				t.Fatalf("%s: Scan takes the line: %v, its skeleton: %v\n%s", f, okWant, ok, raw)
			} else if ok {
				want.BlankString, want.EmptyString, got.BlankString, got.EmptyString = false, false, false, false
				for i := range want.Blocks {
					want.Blocks[i].Blank, want.Blocks[i].EmptyText = false, false
				}
				for i := range got.Blocks {
					got.Blocks[i].Blank, got.Blocks[i].EmptyText = false, false
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: the skeleton's header\n%+v\nis not the line's\n%+v", f, got, want)
				}
			}
		}
	}
	if cut == 0 {
		t.Fatalf("no line of %d had a string cut", lines)
	}
}

// FuzzSkeleton: the skeleton of any line, with strings cut to 3 bytes,
// holds the faults the line holds.
func FuzzSkeleton(f *testing.F) {
	for _, s := range []string{
		`{"a":"abcdef\ud83d\ude00gh"}`,
		`{"a":"abcdef\ud83dx\ude00"}`,
		"{\"a\":\"abc\xe2\x82\xacdef\xff\"}",
		`["abcdef\u0000", "\q", 1 2]`,
		"\x00\x00{\"a\":\"b\x00c\"}",
		`{"a":"abcdef`,
		`{"a":      ` + "\t\t\t\t\t\t\t\t\t\t\t\t" + `1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		setLimits(t, MaxLine, 3, 1<<20)
		skeletonAgrees(t, NewParser(), in)
	})
}

// longInput is lines short and long (over a limit of 1000 bytes), with
// NUL runs, a line of NUL bytes only and an open last line.
func longInput(open bool) []byte {
	var in bytes.Buffer
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		switch i % 7 {
		case 3:
			fmt.Fprintf(&in, `{"type":"user","uuid":"u%d","message":{"content":"%s"}}`+"\n", i, strings.Repeat("y", 900+rng.Intn(3000)))
		case 5:
			in.Write(bytes.Repeat([]byte{0}, 500+rng.Intn(3000)))
			fmt.Fprintf(&in, `{"type":"user","uuid":"n%d"}`+"\n", i)
		default:
			fmt.Fprintf(&in, `{"type":"user","uuid":"s%d"}`+"\n", i)
		}
	}
	in.Write(bytes.Repeat([]byte{0}, 5000))
	in.WriteByte('\n')
	if open {
		in.WriteString(`{"type":"user","uuid":"torn","message":{"content":"` + strings.Repeat("z", 5000))
	}
	return in.Bytes()
}

// checkLongLines checks lines read from in with a limit of 1000 bytes:
// they follow each other, a line up to the limit is its bytes, a longer
// one is its skeleton.
func checkLongLines(t *testing.T, in []byte, lines []Line) {
	t.Helper()
	var off int64
	long := 0
	for i, l := range lines {
		if l.N != i+1 || l.Offset != off {
			t.Fatalf("line %d: number %d, offset %d, want %d", i+1, l.N, l.Offset, off)
		}
		raw := in[off : off+l.Len()]
		if l.Terminated && in[off+l.Len()] != '\n' || !l.Terminated && off+l.Len() != int64(len(in)) {
			t.Fatalf("line %d: not at a line end", l.N)
		}
		if bytes.IndexByte(raw, '\n') >= 0 {
			t.Fatalf("line %d holds a newline", l.N)
		}
		off = l.End()
		if len(raw) <= 1000 {
			if l.Long != nil || !bytes.Equal(l.Raw, raw) {
				t.Fatalf("line %d of %d bytes not read whole", l.N, len(raw))
			}
			continue
		}
		long++
		sk, lg := Skeleton(raw)
		if l.Long == nil || !reflect.DeepEqual(l.Long, lg) || !bytes.Equal(l.Raw, sk) {
			t.Fatalf("line %d of %d bytes: %+v %q, want %+v %q", l.N, len(raw), l.Long, short(l.Raw), lg, short(sk))
		}
	}
	if off != int64(len(in)) {
		t.Fatalf("lines end at %d of %d bytes", off, len(in))
	}
	if long < 50 {
		t.Fatalf("%d long lines", long)
	}
}

// short is b cut for a message.
func short(b []byte) string {
	if len(b) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", b[:80], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// TestReaderLongLines: a line over the limit is measured, not held: its
// skeleton, its size and its NUL bytes, whatever sizes the reads come in.
func TestReaderLongLines(t *testing.T) {
	setLimits(t, 1000, KeepString, MaxSkeleton)
	for _, open := range []bool{false, true} {
		in := longInput(open)
		for name, r := range map[string]func() io.Reader{
			"whole": func() io.Reader { return bytes.NewReader(in) },
			"one":   func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) },
			"half":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
		} {
			t.Run(fmt.Sprintf("%s open=%v", name, open), func(t *testing.T) {
				rd := NewReader(r(), make([]byte, 4096))
				var lines []Line
				for rd.Next() {
					l := rd.Line()
					l.Raw = append([]byte(nil), l.Raw...)
					lines = append(lines, l)
				}
				if err := rd.Err(); err != nil {
					t.Fatal(err)
				}
				checkLongLines(t, in, lines)
				if len(rd.buf) > 1001 && len(rd.buf) > 4096 {
					t.Errorf("buffer grew to %d bytes, limit 1000", len(rd.buf))
				}
			})
		}
	}
}

// TestPipelineLongLines: the pipeline hands over long lines as the reader
// does, and the tee gets every byte of them.
func TestPipelineLongLines(t *testing.T) {
	setLimits(t, 1000, KeepString, MaxSkeleton)
	for _, open := range []bool{false, true} {
		in := longInput(open)
		for name, r := range map[string]func() io.Reader{
			"whole": func() io.Reader { return bytes.NewReader(in) },
			"half":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
		} {
			for _, tee := range []bool{false, true} {
				h := sha256.New()
				var w io.Writer
				if tee {
					w = h
				}
				var lines []Line
				err := PipelineTee(r(), w, 2, func() func(Line) int64 {
					return func(l Line) int64 { return l.Len() }
				}, func(l Line, n int64) error {
					if n != l.Len() {
						return fmt.Errorf("line %d: result %d, len %d", l.N, n, l.Len())
					}
					l.Raw = append([]byte(nil), l.Raw...)
					lines = append(lines, l)
					return nil
				})
				if err != nil {
					t.Fatalf("%s open=%v tee=%v: %v", name, open, tee, err)
				}
				checkLongLines(t, in, lines)
				if sum := sha256.Sum256(in); tee && !bytes.Equal(h.Sum(nil), sum[:]) {
					t.Errorf("%s open=%v: the tee's hash is not the input's", name, open)
				}
			}
		}
	}
}

// TestPipelineBatchLines: a batch holds at most batchLines lines, so a
// file of empty objects costs no more than one of long lines.
func TestPipelineBatchLines(t *testing.T) {
	in := bytes.Repeat([]byte("{}\n"), 3*batchLines+5)
	most, n := 0, 0
	err := Pipeline(bytes.NewReader(in), 2, func() func(Line) int {
		count := 0
		return func(l Line) int { count++; return count }
	}, func(l Line, _ int) error {
		n++
		return nil
	})
	if err != nil || n != 3*batchLines+5 {
		t.Fatalf("%d lines, err %v", n, err)
	}
	var lines []Line
	end, k, _ := cutBatch(in, MaxLine, true)
	lines = splitLines(lines, in[:end], 1, 0)
	most = len(lines)
	if most != batchLines || k != batchLines {
		t.Errorf("a batch of %d bytes of {} lines holds %d lines (%d counted), want %d", len(in), most, k, batchLines)
	}
}
