package catalog

import (
	"time"

	"github.com/cfix-dev/cfix/store"
)

// The JSON documents of cfix ls (--json): a project, a session, an extra,
// the health of a quick check, the next retention sweep.

// HealthDoc is the health of a session or an extra: its quick findings.
type HealthDoc struct {
	Errors   int                  `json:"errors"`
	Warnings int                  `json:"warnings"`
	Findings []store.QuickFinding `json:"findings"`
}

// ProjectDoc is a project folder in the listing of the store.
type ProjectDoc struct {
	Folder     string    `json:"folder"`
	Paths      []string  `json:"paths"`
	PathsFrom  string    `json:"paths_from"`
	Sessions   int       `json:"sessions"`
	Hidden     int       `json:"hidden"`
	Subagents  int       `json:"subagents"`
	Size       int64     `json:"size"`
	LastActive time.Time `json:"last_active"`
	Live       int       `json:"live"`
	Errors     int       `json:"errors"`
	Warnings   int       `json:"warnings"`
	MemoryOnly bool      `json:"memory_only"`
	Empty      bool      `json:"empty"`
}

// ExtraDoc is a transcript kept outside projects/.
type ExtraDoc struct {
	Kind       string    `json:"kind"`
	Path       string    `json:"path"`
	Name       string    `json:"name"`
	Title      string    `json:"title,omitempty"`
	Size       int64     `json:"size"`
	Started    time.Time `json:"started,omitzero"`
	LastActive time.Time `json:"last_active"`
	Messages   *int      `json:"messages"`
	Errors     int       `json:"errors"`
	Warnings   int       `json:"warnings"`
}

// SessionDoc is a session in the listing of a project.
type SessionDoc struct {
	ID           string    `json:"id"`
	Path         string    `json:"path"`
	Title        string    `json:"title"`
	TitleFrom    string    `json:"title_from"`
	FirstPrompt  string    `json:"first_prompt"`
	Started      time.Time `json:"started,omitzero"`
	LastActive   time.Time `json:"last_active"`
	Messages     *int      `json:"messages"`
	Size         int64     `json:"size"`
	Subagents    int       `json:"subagents"`
	SubagentSize int64     `json:"subagent_size"`
	Version      string    `json:"version"`
	CWDs         []string  `json:"cwds"`
	Live         bool      `json:"live"`
	Stub         bool      `json:"stub"`
	Empty        bool      `json:"empty"`
	Warmup       bool      `json:"warmup"`
	Swept        bool      `json:"swept"`
	Guarded      bool      `json:"guarded,omitempty"`
	Health       HealthDoc `json:"health"`
}

// HealthOf is the health of a glance (a file it could not read: the
// finding read-failed).
func HealthOf(g *store.Glance) HealthDoc {
	h := HealthDoc{Errors: g.Errors(), Warnings: g.Warnings(), Findings: g.Quick}
	if g.Err != nil {
		h.Findings = append(h.Findings, store.QuickFinding{Code: "read-failed", Severity: "error", Message: g.Err.Error()})
	}
	if h.Findings == nil {
		h.Findings = []store.QuickFinding{}
	}
	return h
}

// MessagesOf is the message count of a glance, nil when unknown.
func MessagesOf(g *store.Glance) *int {
	if !g.MessagesKnown {
		return nil
	}
	n := g.Messages
	return &n
}

// ProjectDocOf is the document of a project.
func ProjectDocOf(p store.ProjectInfo) ProjectDoc {
	paths := p.Paths
	if paths == nil {
		paths = []string{}
	}
	return ProjectDoc{Folder: p.Folder, Paths: paths, PathsFrom: p.PathsFrom, Sessions: p.Sessions, Hidden: p.Hidden,
		Subagents: p.Subagents, Size: p.Size, LastActive: p.LastActive.UTC(), Live: p.Live, Errors: p.Errors, Warnings: p.Warnings, MemoryOnly: p.MemoryOnly, Empty: p.Empty}
}

// ExtraDocOf is the document of an extra (g: its glance, nil when none).
func ExtraDocOf(x store.Extra, g *store.Glance) ExtraDoc {
	j := ExtraDoc{Kind: x.Kind.Dir(), Path: x.Path, Name: x.Name, Size: x.Size, LastActive: x.ModTime.UTC()}
	if g != nil {
		j.Title, j.Started, j.LastActive = g.FirstPrompt, g.Started.UTC(), g.LastActive.UTC()
		j.Messages, j.Errors, j.Warnings = MessagesOf(g), g.Errors(), g.Warnings()
	}
	return j
}

// SweepDoc is the next retention sweep.
type SweepDoc struct {
	PeriodDays   int       `json:"cleanup_period_days"`
	FromSettings bool      `json:"from_settings"`
	Off          bool      `json:"off"`
	LastCleanup  time.Time `json:"last_cleanup,omitzero"`
	NotBefore    time.Time `json:"not_before,omitzero"`
	Sessions     int       `json:"sessions"`
	Bytes        int64     `json:"bytes"`
}

// SweepDocOf is the document of the sweep sw, which deletes n sessions
// of bytes bytes.
func SweepDocOf(sw store.Sweep, n int, bytes int64) SweepDoc {
	return SweepDoc{PeriodDays: sw.PeriodDays, FromSettings: sw.FromSettings, Off: sw.Off,
		LastCleanup: sw.LastCleanup.UTC(), NotBefore: sw.NotBefore.UTC(), Sessions: n, Bytes: bytes}
}

// SessionDocOf is the document of a session.
func SessionDocOf(s *store.SessionInfo) SessionDoc {
	cwds := s.CWDs
	if cwds == nil {
		cwds = []string{}
	}
	return SessionDoc{ID: s.Session, Path: s.Path, Title: s.Title, TitleFrom: s.TitleFrom, FirstPrompt: s.FirstPrompt,
		Started: s.Started.UTC(), LastActive: s.LastActive.UTC(), Messages: MessagesOf(&s.Glance), Size: s.Size,
		Subagents: s.Subagents, SubagentSize: s.SubagentBytes, Version: s.Version, CWDs: cwds, Live: s.Live,
		Stub: s.MetaOnly, Empty: s.Empty, Warmup: s.Warmup, Swept: s.Swept, Guarded: s.Guarded, Health: HealthOf(&s.Glance)}
}
