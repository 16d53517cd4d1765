// Package session reads Claude Code transcripts: a streaming JSONL reader
// that keeps every line's raw bytes and offset, a light JSON parser, the
// entry header the checks need, and the parentUuid graph.
package session

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// Line is one line of a JSONL file. Raw excludes the line terminator and is
// only valid until the next call to Reader.Next.
type Line struct {
	N          int    // 1-based line number
	Offset     int64  // byte offset of the line's first byte in the file
	Raw        []byte // the line's bytes, without "\n" (a long line's skeleton)
	Terminated bool   // the line ended with "\n" (false only for the last line)
	// Long is set for a line longer than MaxLine: Raw is then its
	// skeleton, not its bytes (see Long).
	Long *Long
}

// Reader streams lines from an io.Reader. It reuses one buffer, grown for
// long lines and shrunk again afterwards, so a 60 MB line is read whole
// and memory goes back to normal after it. A line longer than MaxLine is
// measured as it streams past: the reader hands over its skeleton (see
// Long), so a line of any length costs at most MaxLine bytes of buffer.
type Reader struct {
	r     io.Reader
	buf   []byte
	beg   int // start of unread data in buf
	end   int // end of valid data in buf
	err   error
	line  Line
	n     int
	off   int64
	limit int // lineLimit
	sk    skeleton
}

// DefaultBufSize is the reader's starting and resting buffer size.
const DefaultBufSize = 256 << 10

// NewReader returns a Reader over r using buf as its buffer when it has a
// usable capacity (callers that read many files pass the same buffer back).
func NewReader(r io.Reader, buf []byte) *Reader {
	if cap(buf) < 4096 {
		buf = make([]byte, DefaultBufSize)
	}
	return &Reader{r: r, buf: buf[:cap(buf)], limit: lineLimit}
}

// Buffer returns the reader's buffer for reuse by the next reader.
func (r *Reader) Buffer() []byte {
	if len(r.buf) > 4*DefaultBufSize {
		return nil // do not keep a buffer grown for one long line
	}
	return r.buf
}

// Next advances to the next line. It returns false at the end of input or on
// a read error; Err tells which.
func (r *Reader) Next() bool {
	scanFrom := r.beg
	for {
		if i := bytes.IndexByte(r.buf[scanFrom:r.end], '\n'); i >= 0 {
			j := scanFrom + i
			if j-r.beg > r.limit {
				// Long, though the buffer holds it (it was read
				// with others).
				r.sk.reset()
				r.sk.write(r.buf[r.beg:j])
				r.beg = j + 1
				r.emitLong(true)
				return true
			}
			r.emit(r.buf[r.beg:j], true)
			r.beg = j + 1
			return true
		}
		scanFrom = r.end
		if r.end-r.beg > r.limit {
			// The line is longer than the limit: measured, not held.
			copy(r.buf, r.buf[r.beg:r.end])
			r.end -= r.beg
			return r.long()
		}
		if r.err != nil {
			if r.beg < r.end {
				r.emit(r.buf[r.beg:r.end], false)
				r.beg = r.end
				return true
			}
			if len(r.buf) > 4*DefaultBufSize {
				putBig(r.buf)
				r.buf = nil
			}
			return false
		}
		// Make room: slide unread data to the front, or grow for a long line.
		if r.beg > 0 {
			copy(r.buf, r.buf[r.beg:r.end])
			r.end -= r.beg
			scanFrom -= r.beg
			r.beg = 0
		}
		if r.end == len(r.buf) {
			// Four times the size (each growth copies what was read, and
			// leaves the old buffer to the collector), or just what is
			// left of a file; at most room for the longest line read
			// whole and a byte, a buffer readers share (bigBuf).
			size := 4 * len(r.buf)
			if rem := remaining(r.r); rem >= 0 && int64(r.end)+rem+1 < int64(size) {
				size = r.end + int(rem) + 1
			}
			if size >= r.limit {
				r.buf = bigBuf(r.buf[:r.end])
			} else {
				nb := make([]byte, size)
				copy(nb, r.buf[:r.end])
				r.buf = nb
			}
		} else if r.end < DefaultBufSize/2 && len(r.buf) > 4*DefaultBufSize {
			// A long line was consumed: shrink back.
			nb := make([]byte, DefaultBufSize)
			copy(nb, r.buf[:r.end])
			putBig(r.buf)
			r.buf = nb
		}
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			r.err = err
		}
	}
}

// remaining returns how many bytes src has left, or -1 when it cannot
// tell.
func remaining(src io.Reader) int64 {
	switch s := src.(type) {
	case interface{ Len() int }:
		return int64(s.Len())
	case *os.File:
		fi, err := s.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		pos, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-pos, 0)
	}
	return -1
}

// long reads the rest of a line longer than the limit, whose first bytes
// fill buf[:end], into its skeleton, and emits it.
func (r *Reader) long() bool {
	r.sk.reset()
	r.sk.write(r.buf[:r.end])
	r.beg, r.end = 0, 0
	for {
		if r.err != nil {
			r.emitLong(false)
			return true
		}
		n, err := r.r.Read(r.buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			r.err = err
		}
		if i := bytes.IndexByte(r.buf[:n], '\n'); i >= 0 {
			r.sk.write(r.buf[:i])
			r.beg, r.end = i+1, n
			r.emitLong(true)
			return true
		}
		r.sk.write(r.buf[:n])
	}
}

func (r *Reader) emitLong(terminated bool) {
	r.n++
	lg := r.sk.long()
	r.line = Line{N: r.n, Offset: r.off, Raw: r.sk.out, Terminated: terminated, Long: lg}
	r.off += lg.Size
	if terminated {
		r.off++
	}
}

func (r *Reader) emit(raw []byte, terminated bool) {
	r.n++
	r.line = Line{N: r.n, Offset: r.off, Raw: raw, Terminated: terminated}
	r.off += int64(len(raw))
	if terminated {
		r.off++
	}
}

// Line returns the current line.
func (r *Reader) Line() Line { return r.line }

// Err returns the first read error other than io.EOF.
func (r *Reader) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}
