package usage

import (
	"fmt"
	"strings"
	"time"
)

// Status is what cfix statusline says: the cost of a session so far, of
// today, of the current 5-hour block and what is left of it.
type Status struct {
	Session, Today, Block *Row
	Left                  time.Duration // of the block; 0 when none is active
}

// StatusOf is the status of session at now, days in loc.
func StatusOf(set *Set, session string, now time.Time, loc *time.Location, p *Pricer) Status {
	var st Status
	sess := Build(set, Session, Filter{Loc: loc, Session: session}, p, false, now)
	st.Session = &sess.Total
	today := DayOf(now, loc)
	day := Build(set, Day, Filter{Loc: loc, Since: today, Until: today}, p, false, now)
	st.Today = &day.Total
	// The blocks of the last two block lengths are all that can be
	// active.
	since := DayOf(now.Add(-2*BlockLength), loc)
	blocks := Build(set, Block, Filter{Loc: loc, Since: since}, p, false, now)
	if n := len(blocks.Rows); n > 0 && blocks.Rows[n-1].Active {
		st.Block = blocks.Rows[n-1]
		st.Left = st.Block.End.Sub(now)
	}
	return st
}

// Line is the status as one line, health (the session's quick checks:
// "ok", "1 error" ...) at its end.
func (st Status) Line(health string) string {
	cost := func(r *Row) string {
		if r == nil || r.Replies == 0 {
			return "$0.00"
		}
		return CostWords(r)
	}
	parts := []string{"session " + cost(st.Session), "today " + cost(st.Today)}
	if st.Block != nil {
		parts = append(parts, fmt.Sprintf("block %s (%s left)", cost(st.Block), Left(st.Left)))
	} else {
		parts = append(parts, "no active block")
	}
	if health != "" {
		parts = append(parts, health)
	}
	return strings.Join(parts, " · ")
}
