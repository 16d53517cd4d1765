package export

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// leftOf tells whether the family is a session whose conversation is gone
// while its subagents survive: no main transcript (validate's
// agent-orphan), or one main transcript that holds only metadata lines
// (transcript-lost). stub is that main transcript, or nil.
func leftOf(fam *show.Family) (stub *store.File, ok bool) {
	if fam.Loose != "" || fam.Named != "" || fam.Layout == nil {
		return nil, false
	}
	var mains []store.File
	agents := 0
	for _, f := range fam.Layout.Files {
		switch {
		case f.Kind == store.KindSession:
			mains = append(mains, f)
		case !f.Side():
			agents++
		}
	}
	switch {
	case agents == 0 || len(mains) > 1:
		return nil, false
	case len(mains) == 0:
		return nil, true
	case !validate.HasConversation(mains[0].Path):
		return &mains[0], true
	}
	return nil, false
}

// writeLeft writes what is left of a session whose conversation is gone:
// the prompts history.jsonl kept of it, then the conversation of each of
// its subagents, in file order.
func writeLeft(w io.Writer, fam *show.Family, stub *store.File, opts Options) error {
	var agents []store.File
	for _, f := range fam.Layout.Files {
		if f.Kind != store.KindSession && !f.Side() {
			agents = append(agents, f)
		}
	}
	if opts.Format == "jsonl" {
		var paths []string
		for _, f := range agents {
			paths = append(paths, f.Path)
		}
		return &InputError{Msg: fmt.Sprintf("session %s has no conversation of its own, only subagents: --format jsonl writes one transcript; name a subagent transcript by its path: %s", fam.Session, strings.Join(paths, ", "))}
	}
	prompts, err := store.SessionPrompts(fam.Root, map[string]bool{fam.Session: true})
	if err != nil {
		return err
	}
	ps := prompts[fam.Session]
	bw := bufio.NewWriterSize(w, 64<<10)
	x := &exporter{fam: fam, opts: opts, used: map[string]bool{}}
	switch opts.Format {
	case "md":
		x.r = &markdown{w: bw}
	case "html":
		x.r = &htmlOut{w: bw}
	default:
		return &InputError{Msg: fmt.Sprintf("format %q: want one of %s", opts.Format, strings.Join(Formats, ", "))}
	}
	h := header{Session: fam.Session, Title: "Session " + fam.Session + ": what is left"}
	left := store.Left(len(agents), store.FileHistoryBackups(fam.Root, fam.Session), len(ps))
	if stub != nil {
		h.Path = stub.Path
		if title, _ := validate.MetaTitle(stub.Path); title != "" {
			h.Title = opts.redactText(title) + ": what is left"
		}
		h.What = "Its transcript holds only metadata lines, no message: its conversation is lost (rewritten to a stub at resume, anthropics/claude-code#79298). "
	} else {
		h.Path = filepath.Dir(agents[0].Path)
		h.What = "Its main transcript is missing. "
	}
	h.What += "Left: " + left + ". What follows: the prompts history.jsonl kept, then each subagent's conversation; file-history holds copies of the files it edited."
	x.r.begin(h)
	for _, p := range ps {
		ts := ""
		if p.Timestamp > 0 {
			ts = time.UnixMilli(p.Timestamp).UTC().Format("2006-01-02 15:04:05")
		}
		x.r.message("user (history.jsonl)", "", ts, false)
		x.r.text(opts.redactText(p.Display))
		x.r.endMessage()
	}
	for _, f := range agents {
		x.last = ""
		summary := filepath.Base(f.Path)
		if m, err := show.MetaOf(f.Path); err == nil && (m.AgentType != "" || m.Description != "") {
			summary += ": " + strings.TrimSpace(m.AgentType+" "+m.Description)
		}
		if err := x.subagentCall(f, summary); err != nil {
			return err
		}
	}
	x.r.end()
	return bw.Flush()
}
