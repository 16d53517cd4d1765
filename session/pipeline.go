package session

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// batchBytes is about how many bytes of lines go to a worker at once.
const batchBytes = 1 << 20

// batch is a run of whole lines read straight into buf: the reader only
// reads and finds the last line end, the worker splits buf into lines.
type batch[R any] struct {
	buf   []byte // whole lines; the last may lack "\n" at the end of input
	n     int    // number of buf's first line
	off   int64  // offset of buf in the input
	lines []Line
	res   []R
	done  chan struct{} // the work is done
	teed  chan struct{} // the tee is done with buf
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
		free <- &batch[R]{buf: make([]byte, 0, batchBytes+batchBytes/4)}
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
				b.lines, b.res = splitLines(b.lines[:0], b.buf, b.n, b.off), b.res[:0]
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
		)
		for err == nil {
			var b *batch[R]
			select {
			case b = <-free:
			case <-stop:
				readErr <- nil
				return
			}
			if cap(b.buf) > 4*batchBytes {
				b.buf = make([]byte, 0, batchBytes+batchBytes/4) // grown for a long line
			}
			b.buf = append(b.buf[:0], carry...)
			end := -1    // the last "\n" in buf
			scanned := 0 // buf[:scanned] holds no "\n"
			for err == nil {
				if len(b.buf) >= batchBytes {
					if i := bytes.LastIndexByte(b.buf[scanned:], '\n'); i >= 0 {
						end = scanned + i
						break
					}
					scanned = len(b.buf)
				}
				if len(b.buf) == cap(b.buf) { // a long line: grow
					nb := make([]byte, len(b.buf), 2*cap(b.buf))
					copy(nb, b.buf)
					b.buf = nb
				}
				var k int
				k, err = r.Read(b.buf[len(b.buf):cap(b.buf)])
				b.buf = b.buf[:len(b.buf)+k]
			}
			if err != nil {
				end = len(b.buf) - 1 // the end of input ends the last line
			}
			carry = append(carry[:0], b.buf[end+1:]...)
			b.buf = b.buf[:end+1]
			if len(b.buf) == 0 {
				free <- b
				break
			}
			b.n, b.off = n, off
			n += bytes.Count(b.buf, []byte{'\n'})
			off += int64(len(b.buf))
			b.done = make(chan struct{})
			b.teed = make(chan struct{})
			select {
			case ordered <- b:
			case <-stop:
				readErr <- nil
				return
			}
			todo <- b
			if tee != nil {
				teeq <- b
			} else {
				close(b.teed)
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
	if err != nil {
		return err
	}
	if teeErr != nil {
		return teeErr
	}
	return <-readErr
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
