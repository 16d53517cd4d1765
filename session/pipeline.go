package session

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// batchBytes is about how many bytes of lines go to a worker at once, and
// batchLines the most lines (so a file of short lines costs no more).
const (
	batchBytes = 1 << 20
	batchLines = 4 << 10
)

// batch is a run of whole lines read straight into buf: the reader only
// reads and finds the last line end, the worker splits buf into lines.
// A line longer than the limit goes as batches of its bytes for the tee
// alone (teeOnly), then one batch of its skeleton (long).
type batch[R any] struct {
	buf     []byte // whole lines; the last may lack "\n" at the end of input
	n       int    // number of buf's first line
	off     int64  // offset of buf in the input
	teeOnly bool   // buf is bytes of a long line, for the tee only
	long    *Long  // buf is the skeleton of line n, a long line
	term    bool   // ... which ended with "\n"
	lines   []Line
	res     []R
	done    chan struct{} // the work is done
	teed    chan struct{} // the tee is done with buf
}

// Pipeline reads lines from r and runs work on them in parallel (one work
// function per worker, so each can keep its own parser), then calls commit
// for each line in file order with its result. Line.Raw is valid during
// both calls. It stops at the first error commit returns.
func Pipeline[R any](r io.Reader, workers int, newWork func() func(Line) R, commit func(Line, R) error) error {
	return PipelineTee(r, nil, workers, newWork, commit)
}

// PipelineTee is Pipeline that also writes every byte read from r, in
// order, to tee (a hash, say), on a goroutine of its own beside the
// reader, the workers and commit; it is done with tee when it returns.
// A write error from tee stops it as an error from commit does.
func PipelineTee[R any](r io.Reader, tee io.Writer, workers int, newWork func() func(Line) R, commit func(Line, R) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pool := workers * 3
	if tee != nil {
		pool += 2 // room for the tee to lag behind the workers
	}
	todo := make(chan *batch[R], workers)
	ordered := make(chan *batch[R], pool)
	teeq := make(chan *batch[R], pool)
	free := make(chan *batch[R], pool)
	for i := 0; i < pool; i++ {
		free <- &batch[R]{} // its buffer is made when first taken
	}
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWork()
			for b := range todo {
				switch {
				case b.teeOnly:
					b.lines = b.lines[:0]
				case b.long != nil:
					b.lines = append(b.lines[:0], Line{N: b.n, Offset: b.off, Raw: b.buf, Terminated: b.term, Long: b.long})
				default:
					b.lines = splitLines(b.lines[:0], b.buf, b.n, b.off)
				}
				b.res = b.res[:0]
				for _, l := range b.lines {
					b.res = append(b.res, work(l))
				}
				close(b.done)
			}
		}()
	}

	var teeErr error
	teeDone := make(chan struct{})
	go func() {
		defer close(teeDone)
		for b := range teeq {
			if teeErr == nil {
				if _, teeErr = tee.Write(b.buf); teeErr != nil {
					halt()
				}
			}
			close(b.teed)
		}
	}()

	// The reader fills batches in order; commit drains them in order.
	readErr := make(chan error, 1)
	go func() {
		defer close(teeq)
		defer close(ordered)
		defer close(todo)
		var (
			carry []byte // the start of a line the last batch did not end
			n     = 1
			off   int64
			err   error
			sk    skeleton
		)
		limit := lineLimit
		// get takes a free batch, or says the pipeline stopped.
		get := func() *batch[R] {
			select {
			case b := <-free:
				if cap(b.buf) > 4*batchBytes {
					putBig(b.buf)
					b.buf = nil // grown for a long line
				}
				if b.buf == nil {
					// Small at first, grown as lines come: most files
					// are read whole into one batch of a few KB.
					b.buf = make([]byte, 0, 64<<10)
				}
				b.teeOnly, b.long, b.term = false, nil, false
				return b
			case <-stop:
				return nil
			}
		}
		// send hands b on; false: the pipeline stopped.
		send := func(b *batch[R]) bool {
			b.done = make(chan struct{})
			b.teed = make(chan struct{})
			select {
			case ordered <- b:
			case <-stop:
				return false
			}
			if b.teeOnly {
				close(b.done)
			} else {
				todo <- b
			}
			if tee != nil && b.long == nil {
				teeq <- b
			} else {
				close(b.teed)
			}
			return true
		}
		// long reads the rest of a line longer than the limit, whose
		// first bytes start b.buf, into its skeleton, and sends it: its
		// bytes to the tee, its skeleton to the workers; what follows
		// its "\n" in b.buf goes to carry.
		long := func(b *batch[R]) bool {
			sk.reset()
			term := false
			for {
				if i := bytes.IndexByte(b.buf, '\n'); i >= 0 {
					sk.write(b.buf[:i])
					carry = append(carry[:0], b.buf[i+1:]...)
					b.buf, term = b.buf[:i+1], true
				} else {
					sk.write(b.buf)
				}
				if tee != nil {
					b.teeOnly = true
					if !send(b) {
						return false
					}
					if b = get(); b == nil {
						return false
					}
				}
				if term || err != nil {
					break
				}
				var k int
				k, err = r.Read(b.buf[:cap(b.buf)])
				b.buf = b.buf[:k]
			}
			lg := sk.long()
			b.buf = append(b.buf[:0], sk.out...)
			b.teeOnly, b.n, b.off, b.long, b.term = false, n, off, lg, term
			n++
			off += lg.Size
			if term {
				off++
			}
			return send(b)
		}
		for err == nil || len(carry) > 0 {
			b := get()
			if b == nil {
				readErr <- nil
				return
			}
			b.buf = append(b.buf[:0], carry...)
			carry = carry[:0]
			scanned := 0 // buf[:scanned] holds no "\n"
			for err == nil {
				if len(b.buf) >= batchBytes || len(b.buf) > limit {
					if bytes.IndexByte(b.buf[scanned:], '\n') >= 0 {
						break
					}
					if scanned = len(b.buf); scanned > limit {
						break // the first line is long
					}
				}
				if len(b.buf) == cap(b.buf) { // a long line: grow
					// As the Reader does: four times, then room for
					// the longest line read whole, and a byte.
					size := 4 * cap(b.buf)
					if size >= limit || cap(b.buf) >= 16<<20 {
						b.buf = bigBuf(b.buf)[:len(b.buf)]
					} else {
						nb := make([]byte, len(b.buf), max(size, cap(b.buf)+1))
						copy(nb, b.buf)
						b.buf = nb
					}
				}
				var k int
				k, err = r.Read(b.buf[len(b.buf):cap(b.buf)])
				b.buf = b.buf[:len(b.buf)+k]
			}
			end, lines, isLong := cutBatch(b.buf, limit, err != nil)
			if isLong {
				if !long(b) {
					readErr <- nil
					return
				}
				continue
			}
			carry = append(carry[:0], b.buf[end:]...)
			b.buf = b.buf[:end]
			if len(b.buf) == 0 {
				free <- b
				continue
			}
			b.n, b.off = n, off
			n += lines
			off += int64(len(b.buf))
			if !send(b) {
				readErr <- nil
				return
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		readErr <- err
	}()

	var err error
	for b := range ordered {
		<-b.done
		if err == nil {
			for i, l := range b.lines {
				if err = commit(l, b.res[i]); err != nil {
					halt()
					break
				}
			}
		}
		<-b.teed
		b.lines = b.lines[:0]
		free <- b
	}
	wg.Wait()
	<-teeDone
	for len(free) > 0 {
		putBig((<-free).buf)
	}
	if err != nil {
		return err
	}
	if teeErr != nil {
		return teeErr
	}
	return <-readErr
}

// cutBatch says where a batch read into buf ends: after its whole lines,
// at most batchLines of them, none longer than limit (the end of input,
// eof, ends the last line), and how many "\n" they hold. isLong: buf
// starts with a line longer than limit, which goes on its own.
func cutBatch(buf []byte, limit int, eof bool) (end, lines int, isLong bool) {
	at := 0 // the start of the next line
	for lines < batchLines {
		i := bytes.IndexByte(buf[at:], '\n')
		if i < 0 {
			break
		}
		if i > limit {
			return at, lines, at == 0
		}
		at += i + 1
		lines++
	}
	if rest := len(buf) - at; lines < batchLines && eof && rest > 0 {
		if rest > limit {
			return at, lines, at == 0
		}
		return len(buf), lines, false
	}
	if at == 0 && len(buf) > limit {
		return 0, 0, true
	}
	return at, lines, false
}

// splitLines appends the lines of buf, the first numbered n at offset off,
// to lines. Only the last line may lack its "\n".
func splitLines(lines []Line, buf []byte, n int, off int64) []Line {
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return append(lines, Line{N: n, Offset: off, Raw: buf[:len(buf):len(buf)]})
		}
		lines = append(lines, Line{N: n, Offset: off, Raw: buf[:i:i], Terminated: true})
		n++
		off += int64(i) + 1
		buf = buf[i+1:]
	}
	return lines
}
