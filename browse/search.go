package browse

import (
	"errors"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/cfix-dev/cfix/search"
)

// MaxHits bounds the hits a search of the store keeps: it stops at the
// MaxHits-th.
const MaxHits = 500

// finder is the content search: the query typed, then its hits.
type finder struct {
	query   string
	typing  bool // the query is being typed
	running bool
	hits    []search.Hit
	more    bool // the search stopped at MaxHits
	err     error
	cursor  int
	top     int
	gen     uint64
}

// searchedMsg is what a search of the store found.
type searchedMsg struct {
	gen  uint64
	hits []search.Hit
	more bool
	err  error
}

var errEnough = errors.New("enough hits")

// searchCmd searches the text of every transcript of the store for query
// (as cfix search -i does), keeping the hits of sessions, at most MaxHits;
// it stops at the next file once gen is no longer the wanted one.
func searchCmd(root, query string, gen uint64, want *atomic.Uint64) tea.Cmd {
	return func() tea.Msg {
		msg := searchedMsg{gen: gen}
		gone := func() bool { return want.Load() != gen }
		_, err := search.Run(search.Options{Root: root, Pattern: query, IgnoreCase: true, Context: 40, Stop: gone}, func(h *search.Hit) error {
			if gone() {
				return search.ErrStopped
			}
			if h.Session == "" || h.Source == search.SourceHistory {
				return nil
			}
			if len(msg.hits) == MaxHits {
				msg.more = true
				return errEnough
			}
			msg.hits = append(msg.hits, *h)
			return nil
		})
		if err != nil && !errors.Is(err, errEnough) {
			msg.err = err
		}
		return msg
	}
}

// snippet is a hit's text on one line: a little before the match, the
// match, what follows.
func snippet(h *search.Hit) string {
	one := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	before := one(h.Before)
	if r := []rune(before); len(r) > 20 {
		before = "…" + string(r[len(r)-20:])
	} else if h.CutBefore {
		before = "…" + before
	}
	if before != "" && strings.TrimRight(h.Before, " \t\n") != h.Before {
		before += " "
	}
	after := one(h.After)
	if after != "" && strings.TrimLeft(h.After, " \t\n") != h.After {
		after = " " + after
	}
	s := before + one(h.Match) + after
	if h.CutAfter {
		s += "…"
	}
	return s
}

// around is the text the preview should hold near a hit's match: the
// match with the words of its line next to it.
func around(h *search.Hit) string {
	before := h.Before[strings.LastIndexByte(h.Before, '\n')+1:]
	after, _, _ := strings.Cut(h.After, "\n")
	if r := []rune(before); len(r) > 12 {
		before = string(r[len(r)-12:])
	}
	if r := []rune(after); len(r) > 12 {
		after = string(r[:12])
	}
	return before + h.Match + after
}

// foldOf is the kind of folded part a hit's text is in, in a preview.
func foldOf(h *search.Hit) int {
	switch {
	case h.Kind == search.KindThinking:
		return foldThinking
	case h.Kind == search.KindToolInput, h.Kind == search.KindToolOutput, h.Source == search.SourceSubagent, h.Kind == search.KindSummary:
		return foldTools
	}
	return 0
}
