// Package fakeapi is a fake Anthropic Messages API for end-to-end tests: it
// answers real Claude Code clients with scripted replies, validates the
// message history the way the real API does, and records every request.
//
// Replies are scripted from the latest user text (the text blocks of the
// last user message, without <system-reminder> sections):
//
//	BASH: cmd            a Bash tool_use {"command": cmd}
//	BASH2: a ;; b        two Bash tool_uses in one message (parallel calls)
//	AGENT: prompt        an Agent (or Task) tool_use running prompt in a subagent
//	WRITE: path :: text  a Write tool_use
//	READ: path           a Read tool_use
//	TODO: a, b           a TodoWrite tool_use
//	MCP: name {json}     a tool_use of the tool name (an MCP server's tool:
//	                     mcp__cfix__search_sessions) with the JSON input
//	THINK: text          a thinking block, then a text block (or the command
//	                     that follows: "THINK: hmm BASH: ls")
//
// When the last user message holds only tool_result blocks, the reply is
// "done: <first 40 characters of the first result>". Compaction requests get
// a "<summary>…</summary>" text, requests without tools (titles, topics) a
// short text or the JSON object they ask for, max_tokens=1 probes a single
// token. Anything else gets "ok: <first 40 characters of the prompt>".
//
// Before answering, every /v1/messages request is checked like the real API
// does: lone UTF-16 surrogates in the body, a body that ends early (cut
// short, or holding a raw NUL byte), tool_use ids without tool_result
// blocks in the next message, tool_result blocks without a tool_use in
// the previous message, server tool results apart from their
// server_tool_use, and empty or whitespace-only text blocks all get HTTP
// 400 with the real error texts.
package fakeapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is fine.
type Options struct {
	// Logf, when set, receives one line per request that is not a
	// /v1/messages call, and every error answer (t.Logf fits).
	Logf func(format string, args ...any)
	// RecordPath, when set, is a file every request is appended to as one
	// JSON line {n, url, messages, model}, like the corpus's
	// api-requests.jsonl.
	RecordPath string
	// Bill gives every reply a usage of its own (input, cache writes for
	// 5 minutes and an hour, cache reads, output, a web search and a web
	// fetch on some) and records it (Bills), so that a test can add up
	// what the replies a client wrote cost.
	Bill bool
}

// Bill is what the fake billed one reply.
type Bill struct {
	MessageID string
	Model     string
	Usage     Usage
}

// Usage is a reply's usage as the API reports it.
type Usage struct {
	InputTokens              int            `json:"input_tokens"`
	CacheCreationInputTokens int            `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int            `json:"cache_read_input_tokens"`
	OutputTokens             int            `json:"output_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	ServerToolUse            *ServerToolUse `json:"server_tool_use,omitempty"`
	ServiceTier              string         `json:"service_tier,omitempty"`
}

// CacheCreation splits a reply's cache writes by how long they last.
type CacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// ServerToolUse counts a reply's server tool requests.
type ServerToolUse struct {
	WebSearchRequests int `json:"web_search_requests"`
	WebFetchRequests  int `json:"web_fetch_requests"`
}

// Bills returns what the fake billed each reply so far, in order.
func (s *Server) Bills() []Bill {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Bill(nil), s.bills...)
}

// Request is one request the fake received.
type Request struct {
	N           int         // 1-based arrival order
	Time        time.Time   // arrival time
	Method      string      // GET, POST, ...
	URL         string      // path and query, e.g. /v1/messages?beta=true
	Path        string      // path only
	Header      http.Header // request headers; x-api-key and authorization are redacted
	Body        []byte      // raw body (decompressed)
	Model       string
	Stream      bool
	MaxTokens   int
	System      string          // system prompt text
	Tools       []string        // names of the offered tools
	Messages    []Message       // decoded messages (nil for other endpoints)
	RawMessages json.RawMessage // messages exactly as sent
	Status      int             // HTTP status the fake answered
	Reply       string          // what the fake answered: reply kind or error text
}

// IsMessages reports whether the request is a POST /v1/messages call.
func (r Request) IsMessages() bool {
	return r.Method == http.MethodPost && r.Path == "/v1/messages"
}

// Text returns the text of all messages of the request, one per line.
func (r Request) Text() string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Text())
	}
	return strings.Join(parts, "\n")
}

// Server is a running fake API, listening on 127.0.0.1.
type Server struct {
	// URL is the base URL to give clients, e.g. http://127.0.0.1:41234.
	URL string

	opts Options
	ln   net.Listener
	srv  *http.Server
	salt uint64

	mu     sync.Mutex
	reqs   []Request
	ids    uint64
	record *os.File
	bills  []Bill
}

// New starts a fake API on a free port of 127.0.0.1.
func New(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen: %w", err)
	}
	s := &Server{
		URL:  "http://" + ln.Addr().String(),
		opts: opts,
		ln:   ln,
		salt: rand.Uint64(),
	}
	if opts.RecordPath != "" {
		f, err := os.OpenFile(opts.RecordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("fakeapi: open record file: %w", err)
		}
		s.record = f
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server and closes the record file.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record != nil {
		if cerr := s.record.Close(); err == nil {
			err = cerr
		}
		s.record = nil
	}
	return err
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Len returns how many requests the server has received.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Since returns the requests received after the first n.
func (s *Server) Since(n int) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.reqs) {
		n = len(s.reqs)
	}
	return append([]Request(nil), s.reqs[n:]...)
}

// Messages returns the messages array of every /v1/messages request, in
// order.
func (s *Server) Messages() [][]Message {
	return MessagesOf(s.Requests())
}

// MessagesOf returns the messages array of each /v1/messages request of reqs.
func MessagesOf(reqs []Request) [][]Message {
	var out [][]Message
	for _, r := range reqs {
		if r.IsMessages() {
			out = append(out, r.Messages)
		}
	}
	return out
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// serve handles every request: it reads and records it, then dispatches.
func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := readBody(hr)
	req := Request{
		Time:   time.Now(),
		Method: hr.Method,
		URL:    hr.URL.RequestURI(),
		Path:   hr.URL.Path,
		Header: redact(hr.Header),
		Body:   body,
	}
	w.Header().Set("request-id", s.newID("req_"))
	switch {
	case err != nil:
		s.finish(&req, w, &APIError{Status: 400, Type: "invalid_request_error", Message: "fakeapi: read body: " + err.Error()})
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		s.messages(&req, w)
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		s.countTokens(&req, w)
	default:
		s.other(&req, w)
	}
}

func readBody(hr *http.Request) ([]byte, error) {
	var r io.Reader = hr.Body
	if strings.EqualFold(hr.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(hr.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	return io.ReadAll(io.LimitReader(r, 64<<20))
}

func redact(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"X-Api-Key", "Authorization"} {
		if out.Get(k) != "" {
			out.Set(k, "<redacted>")
		}
	}
	return out
}

// add stores a finished request and appends it to the record file.
func (s *Server) add(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, *req)
	if s.record == nil {
		return
	}
	line := struct {
		N        int             `json:"n"`
		URL      string          `json:"url"`
		Messages json.RawMessage `json:"messages"`
		Model    *string         `json:"model"`
		Status   int             `json:"status"`
	}{N: req.N, URL: req.URL, Messages: req.RawMessages, Status: req.Status}
	if line.Messages == nil {
		line.Messages = json.RawMessage("[]")
	}
	if req.Model != "" {
		line.Model = &req.Model
	}
	raw, err := json.Marshal(line)
	if err == nil {
		_, err = s.record.Write(append(raw, '\n'))
	}
	if err != nil {
		s.logf("fakeapi: record request %d: %v", req.N, err)
	}
}

// finish answers an error, or records the status of a success, and stores
// the request.
func (s *Server) finish(req *Request, w http.ResponseWriter, apiErr *APIError) {
	if apiErr != nil {
		req.Status = apiErr.Status
		req.Reply = apiErr.Message
		s.logf("fakeapi: %s %s -> %d %s", req.Method, req.URL, apiErr.Status, apiErr.Message)
		writeJSON(w, apiErr.Status, map[string]any{
			"type":  "error",
			"error": map[string]string{"type": apiErr.Type, "message": apiErr.Message},
		})
	}
	s.add(req)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		status, raw = 500, []byte(`{"type":"error","error":{"type":"api_error","message":"fakeapi: encode reply"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(raw)
}

// decode parses a Messages API body: the surrogate check first (Go's
// decoder would hide lone surrogates), then JSON, then the messages.
func decode(req *Request) (*apiRequest, *APIError) {
	if e := CheckSurrogates(req.Body); e != nil {
		return nil, e
	}
	if e := CheckEndOfData(req.Body); e != nil {
		return nil, e
	}
	var ar apiRequest
	if err := json.Unmarshal(req.Body, &ar); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, invalidRequest("The request body is not valid JSON: %v", err)
		}
		return nil, invalidRequest("fakeapi: %v", err)
	}
	req.Model, req.Stream, req.MaxTokens = ar.Model, ar.Stream, ar.MaxTokens
	req.System = systemText(ar.System)
	for _, t := range ar.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	if len(bytes.TrimSpace(ar.Messages)) == 0 {
		return nil, invalidRequest("messages: Field required")
	}
	req.RawMessages = ar.Messages
	if err := json.Unmarshal(ar.Messages, &req.Messages); err != nil {
		return nil, invalidRequest("messages: %v", err)
	}
	return &ar, nil
}

// messages answers POST /v1/messages.
func (s *Server) messages(req *Request, w http.ResponseWriter) {
	ar, apiErr := decode(req)
	if apiErr == nil {
		apiErr = CheckToolIDs(req.Messages)
	}
	if apiErr == nil {
		apiErr = CheckToolPairing(req.Messages)
	}
	if apiErr == nil {
		apiErr = CheckServerToolPairing(req.Messages)
	}
	if apiErr == nil {
		apiErr = CheckBlankText(req.RawMessages)
	}
	if apiErr != nil {
		s.finish(req, w, apiErr)
		return
	}
	rep := s.script(ar, req.Messages)
	req.Reply = rep.Kind
	req.Status = http.StatusOK
	msg := message{
		ID:         s.newID("msg_"),
		Type:       "message",
		Role:       "assistant",
		Model:      ar.Model,
		Content:    rep.Blocks,
		StopReason: rep.StopReason,
		Usage:      usage(len(req.Body), rep),
	}
	if s.opts.Bill {
		msg.Usage = s.bill(msg.ID, ar.Model, msg.Usage)
	}
	if ar.Stream {
		streamMessage(w, msg, s.opts.Bill)
	} else {
		writeJSON(w, http.StatusOK, msg)
	}
	s.add(req)
}

// countTokens answers POST /v1/messages/count_tokens.
func (s *Server) countTokens(req *Request, w http.ResponseWriter) {
	if _, apiErr := decode(req); apiErr != nil {
		s.finish(req, w, apiErr)
		return
	}
	req.Status = http.StatusOK
	req.Reply = "count_tokens"
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": inputTokens(len(req.Body))})
	s.add(req)
}

// other answers every other path with something harmless, so clients that
// probe endpoints at start-up go on instead of waiting.
func (s *Server) other(req *Request, w http.ResponseWriter) {
	s.logf("fakeapi: %s %s (%d bytes)", req.Method, req.URL, len(req.Body))
	switch {
	case req.Path == "/" || req.Method == http.MethodHead:
		req.Status = http.StatusOK
		w.WriteHeader(http.StatusOK)
	case req.Path == "/v1/models":
		req.Status = http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
	case strings.HasPrefix(req.Path, "/api/"), strings.HasPrefix(req.Path, "/v1/"):
		req.Status = http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{})
	default:
		req.Status = http.StatusNotFound
		writeJSON(w, http.StatusNotFound, map[string]any{
			"type":  "error",
			"error": map[string]string{"type": "not_found_error", "message": "Not found"},
		})
	}
	req.Reply = "other"
	s.add(req)
}

// message is a full Messages API reply.
type message struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []outBlock `json:"content"`
	StopReason   string     `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        Usage      `json:"usage"`
}

// bill gives the reply id a usage of its own, from the n-th bill: every
// field differs from one reply to the next, the 5-minute and 1-hour
// cache writes and the reads among them (the prompt stays under 5,000
// tokens, so no client thinks its context full); every third reply
// made a web search, every fifth a web fetch.
func (s *Server) bill(id, model string, u Usage) Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.bills) + 1
	b := Usage{
		InputTokens:   min(u.InputTokens, 2000) + n,
		CacheCreation: &CacheCreation{Ephemeral5m: 100 + 3*n, Ephemeral1h: 50 + 2*n},
		ServerToolUse: &ServerToolUse{},
		ServiceTier:   "standard",
	}
	b.CacheCreationInputTokens = b.CacheCreation.Ephemeral5m + b.CacheCreation.Ephemeral1h
	b.CacheReadInputTokens = 1000 + 7*n
	b.OutputTokens = u.OutputTokens + 11*n
	if n%3 == 0 {
		b.ServerToolUse.WebSearchRequests = 1 + n%2
	}
	if n%5 == 0 {
		b.ServerToolUse.WebFetchRequests = 1
	}
	s.bills = append(s.bills, Bill{MessageID: id, Model: model, Usage: b})
	return b
}

// inputTokens estimates a request's input tokens from its size, capped so
// that no client decides its context is full.
func inputTokens(bodyLen int) int {
	n := bodyLen/8 + 1
	return min(n, 5000)
}

func usage(bodyLen int, rep reply) Usage {
	out := 1
	for _, b := range rep.Blocks {
		raw, _ := json.Marshal(b)
		out += len(raw) / 8
	}
	return Usage{InputTokens: inputTokens(bodyLen), OutputTokens: out}
}
