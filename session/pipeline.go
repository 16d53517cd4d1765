package session

import (
	"io"
	"runtime"
	"sync"
)

// batchBytes is about how many bytes of lines go to a worker at once.
const batchBytes = 1 << 20

type batch[R any] struct {
	seq   int
	buf   []byte
	lines []Line
	res   []R
	done  chan struct{} // the work is done
	used  chan struct{} // commit is done with the batch
}

// Pipeline reads lines from r and runs work on them in parallel (one work
// function per worker, so each can keep its own parser), then calls commit
// for each line in file order with its result. Line.Raw is valid during
// both calls. It stops at the first error commit returns.
func Pipeline[R any](r io.Reader, workers int, newWork func() func(Line) R, commit func(Line, R) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rd := NewReader(r, nil)
	todo := make(chan *batch[R], workers)
	ordered := make(chan *batch[R], workers*2)
	free := make(chan *batch[R], workers*3)
	for i := 0; i < workers*3; i++ {
		free <- &batch[R]{buf: make([]byte, 0, batchBytes+batchBytes/4)}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWork()
			for b := range todo {
				b.res = b.res[:0]
				for _, l := range b.lines {
					b.res = append(b.res, work(l))
				}
				close(b.done)
			}
		}()
	}
	// The reader fills batches in order; commit drains them in order.
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(ordered)
		defer close(todo)
		seq := 0
		b := <-free
		reset := func(b *batch[R]) {
			b.buf, b.lines, b.seq = b.buf[:0], b.lines[:0], seq
			b.done, b.used = make(chan struct{}), make(chan struct{})
			seq++
		}
		reset(b)
		send := func() bool {
			select {
			case ordered <- b:
			case <-stop:
				return false
			}
			todo <- b
			select {
			case b = <-free:
			case <-stop:
				return false
			}
			reset(b)
			return true
		}
		for rd.Next() {
			l := rd.Line()
			if len(l.Raw) > batchBytes {
				// A huge line goes alone, without a copy: the reader waits
				// until commit is done with it before reading on.
				if len(b.lines) > 0 && !send() {
					return
				}
				b.lines = append(b.lines, l)
				huge := b
				if !send() {
					return
				}
				select {
				case <-huge.used:
				case <-stop:
					return
				}
				continue
			}
			start := len(b.buf)
			b.buf = append(b.buf, l.Raw...)
			l.Raw = b.buf[start:len(b.buf):len(b.buf)]
			b.lines = append(b.lines, l)
			if len(b.buf) >= batchBytes && !send() {
				return
			}
		}
		readErr <- rd.Err()
		if len(b.lines) > 0 {
			send()
		}
	}()
	var err error
	for b := range ordered {
		<-b.done
		if err == nil {
			for i, l := range b.lines {
				if err = commit(l, b.res[i]); err != nil {
					close(stop)
					break
				}
			}
		}
		b.lines = b.lines[:0]
		close(b.used)
		free <- b
	}
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case e := <-readErr:
		return e
	default:
		return nil
	}
}
