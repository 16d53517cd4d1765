package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/remote"
)

// lsRemoteJSON is the --json document of cfix ls --remote.
type lsRemoteJSON struct {
	Remote   string            `json:"remote"`
	Machines []lsRemoteMachine `json:"machines"`
}

type lsRemoteMachine struct {
	Machine   string            `json:"machine"`
	Updated   time.Time         `json:"updated"`
	Encrypted string            `json:"encrypted"`
	Sessions  []lsRemoteSession `json:"sessions"`
}

type lsRemoteSession struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	CWD   string `json:"cwd"`
	Last  string `json:"last"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	Size  int64  `json:"size"`
	// Sealed says its title and cwd are encrypted and no key given opens
	// them.
	Sealed bool `json:"sealed"`
}

// runLsRemote lists what a remote holds, by machine: each session's last
// activity, size and title, newest first.
func runLsRemote(opts *lsOptions) error {
	st, err := remote.Open(opts.remote)
	if err != nil {
		return usageError(err)
	}
	keys, err := identityKeys(opts.identities)
	if err != nil {
		return err
	}
	keys.Passphrase = nil // a listing never asks
	if p, ok := os.LookupEnv(passphraseEnv); ok {
		keys.Passphrase = func() (string, error) { return p, nil }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	machines, err := carryremote.Machines(ctx, st)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	doc := lsRemoteJSON{Remote: st.String(), Machines: []lsRemoteMachine{}}
	for _, m := range machines {
		if opts.machine != "" && m != opts.machine {
			continue
		}
		ix, err := carryremote.ReadIndex(ctx, st, m, keys)
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		lm := lsRemoteMachine{Machine: m, Updated: ix.Updated, Encrypted: ix.Encrypted, Sessions: []lsRemoteSession{}}
		for _, e := range ix.Sessions {
			s := lsRemoteSession{ID: e.ID, Last: e.Last, Files: e.Files, Bytes: e.Bytes, Size: e.Size, Sealed: e.Meta == nil}
			if e.Meta != nil {
				s.Title, s.CWD = e.Meta.Title, e.Meta.CWD
			}
			lm.Sessions = append(lm.Sessions, s)
		}
		sort.SliceStable(lm.Sessions, func(i, j int) bool { return lm.Sessions[i].Last > lm.Sessions[j].Last })
		doc.Machines = append(doc.Machines, lm)
	}
	if opts.machine != "" && len(doc.Machines) == 0 {
		return usageError(fmt.Errorf("%s holds no sessions of machine %s", st, opts.machine))
	}
	if opts.json {
		return printJSON(opts.out, doc)
	}
	w := opts.out
	if len(doc.Machines) == 0 {
		fmt.Fprintf(w, "%s holds no sessions (cfix push puts them there)\n", visible.String(st.String()))
		return nil
	}
	for i, m := range doc.Machines {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var bytes int64
		for _, s := range m.Sessions {
			bytes += s.Bytes
		}
		enc := ""
		if m.Encrypted != "" {
			enc = ", encrypted"
		}
		fmt.Fprintf(w, "%s: %d %s, %s, pushed %s%s\n", m.Machine, len(m.Sessions), plural.Of(len(m.Sessions), "session"), changeset.Size(bytes),
			m.Updated.Local().Format("2006-01-02 15:04"), enc)
		sealed := 0
		for _, s := range m.Sessions {
			title := textCell(s.Title)
			if s.Sealed {
				title, sealed = "(encrypted)", sealed+1
			}
			last := s.Last
			if t, err := time.Parse(time.RFC3339Nano, s.Last); err == nil {
				last = t.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "  %s  %-16s  %9s  %s\n", s.ID[:8], last, changeset.Size(s.Bytes), cut(title, 60))
		}
		if sealed > 0 {
			fmt.Fprintf(w, "  (%d %s encrypted: --identity FILE shows them)\n", sealed, plural.Of(sealed, "title"))
		}
	}
	return nil
}
