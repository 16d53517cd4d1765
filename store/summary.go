package store

import (
	"io"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// SessionSummary is what a sessions-index.json entry says of a session.
type SessionSummary struct {
	Messages             int // user and assistant entries, as validate counts them
	First, Last          string
	FirstPrompt, Summary string
	Branch, CWD          string
}

// Add takes one entry into the summary: v is its tree, e its header.
func (s *SessionSummary) Add(v any, e *session.Entry) {
	if m, ok := v.(map[string]any); ok {
		if t, _ := m["summary"].(string); t != "" && e.Type == "summary" {
			s.Summary = t
		}
		if b, _ := m["gitBranch"].(string); b != "" && s.Branch == "" {
			s.Branch = b
		}
	}
	if !e.IsChain() {
		return
	}
	if e.Type == "user" || e.Type == "assistant" {
		s.Messages++
	}
	if e.IsSidechain {
		return
	}
	if s.CWD == "" {
		s.CWD = e.CWD
	}
	if e.Timestamp != "" {
		if s.First == "" {
			s.First = e.Timestamp
		}
		s.Last = e.Timestamp
	}
	if e.Type == "user" && s.FirstPrompt == "" && !e.IsMeta {
		if t, ok := e.Content.(string); ok {
			s.FirstPrompt = t
		}
	}
}

// Summarize reads a transcript into its summary.
func Summarize(path string) (*SessionSummary, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return SummarizeReader(fh)
}

// SummarizeReader reads a transcript's content into its summary.
func SummarizeReader(r io.Reader) (*SessionSummary, error) {
	s := &SessionSummary{}
	rd := session.NewReader(r, nil)
	p := session.NewParser()
	var e session.Entry
	for rd.Next() {
		r := p.Parse(rd.Line().Raw)
		if r.Err == nil && session.HeaderOf(r.Value, &e) {
			s.Add(r.Value, &e)
		}
	}
	return s, rd.Err()
}
