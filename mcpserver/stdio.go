package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds a message the server reads, as the SDK's stdio transport
// bounds it.
const maxLine = mcp.DefaultMaxLineLength

// Serve serves the protocol over in and out (newline-delimited JSON-RPC,
// as over stdio) until in ends. A line that is not a JSON-RPC message is
// answered with the protocol's error (parse error, invalid request) and
// the server reads on: the SDK's own transport ends the session on it.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(screen(in, pw, w))
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
// whole message and its newline.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) Close() error { return nil }

// screen copies the messages of in to the server, one a line, and answers
// a line that is none itself.
func screen(in io.Reader, server io.Writer, client io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var code int64
			var msg string
			var id any
			switch {
			case tooLong:
				code, msg = jsonrpc.CodeParseError, fmt.Sprintf("a message longer than %d bytes", maxLine)
			case !json.Valid(line):
				code, msg = jsonrpc.CodeParseError, "not JSON"
			default:
				id, msg = invalid(line)
				code = jsonrpc.CodeInvalidRequest
			}
			if msg == "" {
				if _, err := server.Write(append(line, '\n')); err != nil {
					return err
				}
			} else {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
					"error": map[string]any{"code": code, "message": msg}})
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

// invalid says what makes a JSON line no JSON-RPC message (and the id it
// names, if any); "" when it is one, or a batch of them.
func invalid(line []byte) (id any, msg string) {
	line = bytes.TrimSpace(line)
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return nil, "an empty or malformed batch"
		}
		for _, m := range batch {
			if _, msg := invalid(m); msg != "" {
				return nil, "a batch holding an invalid message: " + msg
			}
		}
		return nil, ""
	}
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

// readLine reads a line without its newline; a line longer than maxLine is
// read to its end and reported too long (its bytes are dropped).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := r.ReadLine()
		if len(line)+len(chunk) > maxLine {
			tooLong, line = true, nil
		} else if !tooLong {
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}
