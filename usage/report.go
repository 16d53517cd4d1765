package usage

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/usage/pricelist"
)

// Group is what a report's rows are.
type Group string

// The groups of a report.
const (
	Day     Group = "day"
	Week    Group = "week"
	Month   Group = "month"
	Session Group = "session"
	Project Group = "project"
	Model   Group = "model"
	Block   Group = "block"
)

// Groups are the groups by the names the command takes.
var Groups = map[string]Group{"daily": Day, "weekly": Week, "monthly": Month, "session": Session,
	"project": Project, "model": Model, "blocks": Block}

// BlockLength is how long a billing block lasts from its first reply's
// hour.
const BlockLength = 5 * time.Hour

// Filter says which replies a report counts.
type Filter struct {
	// Since and Until are days (YYYY-MM-DD) in Loc, both counted; "" is
	// no bound.
	Since, Until string
	Loc          *time.Location
	// Project is a project folder ("": all).
	Project string
	// Session is a session id ("": all).
	Session string
	// NoArchived leaves out the replies only an archive holds.
	NoArchived bool
}

// Row is one row of a report, or its totals.
type Row struct {
	Key         string // the day, week (its Monday), month, session id, project folder, model or block start
	First, Last time.Time
	Tokens
	Replies int
	// Cost is the cost of the priced replies; Unpriced counts the others.
	Cost     pricelist.Pico
	Unpriced int
	Models   []string // sorted
	// UnpricedModels are the models of the row the list has no price for.
	UnpricedModels []string
	// Project is a session's project folder.
	Project string
	// Breakdown holds the row by model (when asked).
	Breakdown []*Row
	// End is a block's end, and Active says it has not ended.
	End    time.Time
	Active bool

	models map[string]bool
}

// Priced reports whether every reply of the row has a price.
func (r *Row) Priced() bool { return r.Unpriced == 0 }

func (r *Row) add(rec *Record, cost pricelist.Pico, priced bool) {
	t := time.UnixMilli(rec.Time)
	if r.Replies == 0 || t.Before(r.First) {
		r.First = t
	}
	if r.Replies == 0 || t.After(r.Last) {
		r.Last = t
	}
	r.Replies++
	r.Tokens.Add(rec.Tokens)
	if r.models == nil {
		r.models = map[string]bool{}
	}
	if !r.models[rec.Model] {
		r.models[rec.Model] = true
		r.Models = append(r.Models, rec.Model)
	}
	if priced {
		r.Cost += cost
	} else {
		r.Unpriced++
		if !slices.Contains(r.UnpricedModels, rec.Model) {
			r.UnpricedModels = append(r.UnpricedModels, rec.Model)
		}
	}
}

// Report is the usage of a store grouped one way.
type Report struct {
	Group Group
	Loc   *time.Location
	Rows  []*Row
	Total Row
	// Archived counts the replies, and their sessions, that only an
	// archive holds (counted unless the filter leaves them out).
	Archived         int
	ArchivedSessions int
	Prices           *pricelist.List

	byModel []*Row // the totals by model
}

// DayOf is the day t falls on in loc, YYYY-MM-DD.
func DayOf(t time.Time, loc *time.Location) string { return t.In(loc).Format("2006-01-02") }

// Build groups the replies of set the filter keeps; breakdown splits each
// row by model. now decides which block is active.
func Build(set *Set, g Group, f Filter, p *Pricer, breakdown bool, now time.Time) *Report {
	if f.Loc == nil {
		f.Loc = time.Local
	}
	rep := &Report{Group: g, Loc: f.Loc, Prices: p.List}
	recs := make([]*Record, 0, len(set.Records))
	archivedSessions := map[string]bool{}
	days := keyCache{loc: f.Loc, g: Day}
	for i := range set.Records {
		r := &set.Records[i]
		if f.NoArchived && r.Archived || f.Project != "" && r.Project != f.Project || f.Session != "" && r.Session != f.Session {
			continue
		}
		if f.Since != "" || f.Until != "" {
			d := days.of(r.Time)
			if f.Since != "" && d < f.Since || f.Until != "" && d > f.Until {
				continue
			}
		}
		recs = append(recs, r)
		if r.Archived {
			rep.Archived++
			archivedSessions[r.Session] = true
		}
	}
	rep.ArchivedSessions = len(archivedSessions)
	if g == Block {
		// Blocks follow one another: the replies in time order.
		slices.SortStableFunc(recs, func(a, b *Record) int { return cmp.Compare(a.Time, b.Time) })
	}
	keys := keyCache{loc: f.Loc, g: g}
	rows := map[string]*Row{}
	models := map[string]*Row{}
	var block *Row
	for _, r := range recs {
		cost, priced := p.Cost(&r.Reply)
		var key string
		switch g {
		case Day, Week, Month:
			key = keys.of(r.Time)
		case Session:
			key = r.Session
		case Project:
			key = r.Project
		case Model:
			key = r.Model
		case Block:
			t := time.UnixMilli(r.Time).In(f.Loc)
			if block == nil || !t.Before(block.End) || t.Sub(block.Last) >= BlockLength {
				start := t.UTC().Truncate(time.Hour).In(f.Loc)
				block = &Row{Key: start.Format(time.RFC3339), End: start.Add(BlockLength)}
				rows[block.Key] = block
				rep.Rows = append(rep.Rows, block)
			}
			key = block.Key
		}
		row := rows[key]
		if row == nil {
			row = &Row{Key: key}
			if g == Session {
				row.Project = r.Project
			}
			rows[key] = row
			rep.Rows = append(rep.Rows, row)
		}
		row.add(r, cost, priced)
		rep.Total.add(r, cost, priced)
		if mr := models[r.Model]; mr != nil {
			mr.add(r, cost, priced)
		} else {
			mr = &Row{Key: r.Model}
			mr.add(r, cost, priced)
			models[r.Model] = mr
			rep.byModel = append(rep.byModel, mr)
		}
		if breakdown && g != Model {
			var m *Row
			for _, b := range row.Breakdown {
				if b.Key == r.Model {
					m = b
				}
			}
			if m == nil {
				m = &Row{Key: r.Model}
				row.Breakdown = append(row.Breakdown, m)
			}
			m.add(r, cost, priced)
		}
	}
	for _, row := range append(rep.Rows, &rep.Total) {
		sort.Strings(row.Models)
		sort.Strings(row.UnpricedModels)
		sort.Slice(row.Breakdown, func(i, j int) bool { return costlier(row.Breakdown[i], row.Breakdown[j]) })
		if g == Block && row != &rep.Total {
			row.Active = now.Before(row.End) && now.Sub(row.Last) < BlockLength
		}
	}
	sort.SliceStable(rep.byModel, func(i, j int) bool { return costlier(rep.byModel[i], rep.byModel[j]) })
	switch g {
	case Session, Project, Model:
		sort.SliceStable(rep.Rows, func(i, j int) bool { return costlier(rep.Rows[i], rep.Rows[j]) })
	default:
		sort.SliceStable(rep.Rows, func(i, j int) bool { return rep.Rows[i].First.Before(rep.Rows[j].First) })
	}
	return rep
}

// keyCache names the day, week or month of a time, remembering the name
// of each quarter of an hour (every time zone's offset is a whole number
// of them): formatting a time for each of many replies is most of a
// report's work.
type keyCache struct {
	loc  *time.Location
	g    Group
	m    map[int64]string
	last int64
	key  string
}

const quarter = 15 * 60 * 1000

func (k *keyCache) of(ms int64) string {
	q := ms / quarter
	if ms < 0 {
		q--
	}
	if k.m != nil && q == k.last {
		return k.key
	}
	if k.m == nil {
		k.m = map[int64]string{}
	}
	key, ok := k.m[q]
	if !ok {
		t := time.UnixMilli(ms).In(k.loc)
		switch k.g {
		case Day:
			key = t.Format("2006-01-02")
		case Week:
			wd := (int(t.Weekday()) + 6) % 7 // Monday 0
			key = t.AddDate(0, 0, -wd).Format("2006-01-02")
		case Month:
			key = t.Format("2006-01")
		}
		k.m[q] = key
	}
	k.last, k.key = q, key
	return key
}

// costlier orders rows by cost, then tokens, then key.
func costlier(a, b *Row) bool {
	if a.Cost != b.Cost {
		return a.Cost > b.Cost
	}
	if a.Total() != b.Total() {
		return a.Total() > b.Total()
	}
	return a.Key < b.Key
}

// CostWords is a row's cost as the table shows it: $1.23, "no price"
// when none of its replies has one, "$1.23 + no price" when some have
// none.
func CostWords(r *Row) string {
	switch {
	case r.Replies == 0:
		return "$0.00"
	case r.Unpriced == r.Replies:
		return "no price"
	case r.Unpriced > 0:
		return Dollars(r.Cost) + " + no price"
	}
	return Dollars(r.Cost)
}

// Dollars is p rounded to the cent: $1,234.56.
func Dollars(p pricelist.Pico) string {
	cents := (int64(p) + 5e9) / 1e10
	return "$" + Thousands(cents/100) + fmt.Sprintf(".%02d", cents%100)
}

// Thousands writes n with commas between thousands.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
