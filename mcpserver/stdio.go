package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds a message the server reads: a tool call's arguments are
// bounded far below it (maxQuery, maxName), and a longer line is read to
// its end and refused without being held (the SDK's own bound is 16 MB).
const MaxLine = 1 << 20

// idPrefix is how much of a line over MaxLine is kept to find the id of
// the request it was.
const idPrefix = 4 << 10

// Serve serves the protocol over in and out (newline-delimited JSON-RPC,
// as over stdio) until in ends. A line that is not a JSON-RPC message, a
// batch (which the protocol has not had since its version 2025-06-18) and
// a line over MaxLine are answered with the protocol's error (parse
// error, invalid request) and the server reads on: the SDK's own
// transport ends the session on each.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	inflight := newPending()
	w := &lockedWriter{w: out, answered: inflight.answered}
	pr, pw := io.Pipe()
	go func() {
		err := screen(in, pw, w, inflight)
		// The requests read before the input ended are answered before the
		// server sees its end (the SDK's transport drops those in flight).
		inflight.wait()
		pw.CloseWithError(err)
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{opts: opts}
	go s.warm(ctx, warmDelay)
	err := newServer(s).Run(ctx, &mcp.IOTransport{Reader: pr, Writer: w})
	pr.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// lockedWriter serializes the writes of the SDK and of screen: each is a
// whole message and its newline. answered is told the id of each answer
// written.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	answered func(msg []byte)
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(b)
	if l.answered != nil {
		l.answered(b)
	}
	return n, err
}

// pending counts the requests handed to the server and not answered yet,
// by id.
type pending struct {
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]int
	last time.Time // when the last answer was written
}

// quiet is how long wait waits for the next answer: a request the server
// never answers does not keep it from ending.
var quiet = time.Minute

func newPending() *pending {
	p := &pending{ids: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// envelope is what pending reads of a message: its id, its method and,
// for a cancellation, the id of the request it cancels.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// idKey is a request id as a map key: a string and a number of the same
// text differ, 2 and 2.0 do not.
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return "s" + v
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}

// sent notes a message handed to the server: a request is awaited, a
// cancellation ends the wait for the request it names.
func (p *pending) sent(line []byte) {
	var e envelope
	if json.Unmarshal(line, &e) != nil || e.Method == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := idKey(e.ID); k != "" {
		p.ids[k]++
	} else if e.Method == "notifications/cancelled" {
		p.done(idKey(e.Params.RequestID))
	}
}

// answered notes a message written to the client: an answer (an id and
// no method) ends the wait for its request.
func (p *pending) answered(msg []byte) {
	var e envelope
	if json.Unmarshal(bytes.TrimSpace(msg), &e) != nil || e.Method != "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	p.done(idKey(e.ID))
}

func (p *pending) done(k string) {
	if p.ids[k] == 0 {
		return
	}
	if p.ids[k]--; p.ids[k] == 0 {
		delete(p.ids, k)
	}
	p.cond.Broadcast()
}

// wait returns when every request handed to the server is answered, or
// when no answer came for quiet.
func (p *pending) wait() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p.cond.Broadcast()
			}
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	for len(p.ids) > 0 && time.Since(p.last) < quiet {
		p.cond.Wait()
	}
}

func (l *lockedWriter) Close() error { return nil }

// screen copies the messages of in to the server, one a line, and answers
// a line that is none itself.
func screen(in io.Reader, server io.Writer, client io.Writer, inflight *pending) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 || tooLong {
			var answer any
			switch {
			case tooLong:
				answer = errorAnswer(idOf(line), jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("a message longer than %d bytes: a tool's arguments are far shorter", MaxLine))
			case !json.Valid(line):
				answer = errorAnswer(nil, jsonrpc.CodeParseError, "not JSON")
			case trimmed[0] == '[':
				answer = batchAnswer(trimmed)
			default:
				if id, msg := invalid(trimmed); msg != "" {
					answer = errorAnswer(id, jsonrpc.CodeInvalidRequest, msg)
				}
			}
			if answer == nil && trimmed[0] != '[' {
				inflight.sent(trimmed)
				if _, err := server.Write(append(line, '\n')); err != nil {
					return err
				}
			} else if answer != nil {
				b, _ := json.Marshal(answer)
				if _, err := client.Write(append(b, '\n')); err != nil {
					return err
				}
			}
		}
		if err != nil {
			return err
		}
	}
}

// errorAnswer is the protocol's error answer to the request id.
func errorAnswer(id any, code int64, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

// batchAnswer answers a batch: the protocol has had none since its
// version 2025-06-18, so each request of it gets an invalid request error
// (a batch of them, as JSON-RPC answers a batch), and its notifications
// nothing; an empty or malformed batch gets one error. nil: nothing to
// answer.
func batchAnswer(line []byte) any {
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
		return errorAnswer(nil, jsonrpc.CodeInvalidRequest, "an empty or malformed batch")
	}
	const msg = "a batch: send each message on a line of its own (the protocol has no batches since its version 2025-06-18)"
	var out []any
	for _, m := range batch {
		var v struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &v) != nil {
			out = append(out, errorAnswer(nil, jsonrpc.CodeInvalidRequest, msg))
			continue
		}
		if len(v.ID) == 0 && v.Method != "" {
			continue // a notification: no answer
		}
		var id any
		if json.Unmarshal(v.ID, &id) == nil {
			switch id.(type) {
			case string, float64:
			default:
				id = nil
			}
		}
		out = append(out, errorAnswer(id, jsonrpc.CodeInvalidRequest, msg))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// idOf finds the id of the request whose line starts with prefix: the
// value of its top-level "id" member, when the prefix holds it whole.
func idOf(prefix []byte) any {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		k, ok := key.(string)
		if !ok {
			return nil
		}
		if k != "id" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		v, err := dec.Token()
		if err != nil {
			return nil
		}
		switch v := v.(type) {
		case string:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
		return nil
	}
}

// invalid says what makes a JSON line no JSON-RPC message (and the id it
// names, if any); "" when it is one.
func invalid(line []byte) (id any, msg string) {
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var v struct {
			ID any `json:"id"`
		}
		json.Unmarshal(line, &v)
		switch v.ID.(type) {
		case string, float64:
			id = v.ID
		}
		return id, "not a JSON-RPC message: " + err.Error()
	}
	return nil, ""
}

// readLine reads a line without its newline; a line longer than MaxLine is
// read to its end and reported too long: only its first idPrefix bytes
// are kept (idOf).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := r.ReadLine()
		switch {
		case tooLong:
		case len(line)+len(chunk) > MaxLine:
			tooLong = true
			line = append(line, chunk[:min(len(chunk), max(0, idPrefix-len(line)))]...)
			line = append([]byte(nil), line[:min(len(line), idPrefix)]...)
		default:
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}
