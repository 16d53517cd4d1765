package usage

import (
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/cfix-dev/cfix/internal/visible"
)

// View says how a report is drawn in a terminal.
type View struct {
	Color bool // style with colours (a terminal)
	// ProjectPath names a project folder's real path ("" left as the
	// folder).
	ProjectPath func(folder string) string
	Now         time.Time
}

var (
	barStyle  = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	headStyle = lipgloss.NewStyle().Bold(true)
	dimStyle  = lipgloss.NewStyle().Faint(true)
)

func (v View) style(s lipgloss.Style, text string) string {
	if !v.Color {
		return text
	}
	return s.Render(text)
}

// barWidth is the width of the longest bar.
const barWidth = 24

// bar draws n/max as a bar of eighths of a cell.
func bar(n, most float64) string {
	if most <= 0 || n <= 0 {
		return ""
	}
	eighths := int(n/most*barWidth*8 + 0.5)
	if eighths == 0 {
		eighths = 1
	}
	parts := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	return strings.Repeat("█", eighths/8) + parts[eighths%8]
}

// measure is what a row's bar and heat show: its cost, or its tokens
// when nothing in the report has a price.
func measure(rep *Report) func(*Row) float64 {
	if rep.Total.Cost == 0 {
		return func(r *Row) float64 { return float64(r.Total()) }
	}
	return func(r *Row) float64 { return float64(r.Cost) }
}

// Label is what a row is called in the table.
func (v View) Label(rep *Report, r *Row) string {
	switch rep.Group {
	case Session:
		id := r.Key
		if len(id) > 8 {
			id = id[:8]
		}
		return visible.String(id) + "  " + visible.String(v.path(r.Project))
	case Project:
		return visible.String(v.path(r.Key))
	case Block:
		s := r.First.In(rep.Loc)
		start, _ := time.Parse(time.RFC3339, r.Key)
		label := start.In(rep.Loc).Format("2006-01-02 15:04")
		if r.Active {
			label += fmt.Sprintf(" (active, %s left)", Left(r.End.Sub(v.Now)))
		}
		_ = s
		return label
	}
	return visible.String(r.Key)
}

func (v View) path(folder string) string {
	if v.ProjectPath != nil {
		if p := v.ProjectPath(folder); p != "" {
			return p
		}
	}
	return folder
}

// Left is a duration as the table says what is left of a block: 2h13m.
func Left(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Table writes the report as a table, a bar per row.
func (v View) Table(w io.Writer, rep *Report) {
	heads := map[Group]string{Day: "DAY", Week: "WEEK OF", Month: "MONTH", Session: "SESSION", Project: "PROJECT", Model: "MODEL", Block: "BLOCK (5 h)"}
	m := measure(rep)
	most := 0.0
	for _, r := range rep.Rows {
		most = max(most, m(r))
	}
	labels := make([]string, len(rep.Rows))
	width := len(heads[rep.Group])
	for i, r := range rep.Rows {
		labels[i] = v.Label(rep, r)
		width = max(width, lipgloss.Width(labels[i]))
		for _, b := range r.Breakdown {
			width = max(width, lipgloss.Width("  "+b.Key))
		}
	}
	width = max(width, len("total"))
	line := func(label string, r *Row, barText string) {
		pad := width - lipgloss.Width(label)
		fmt.Fprintf(w, "%s%s  %13s  %11s  %13s  %15s  %15s  %12s", label, strings.Repeat(" ", pad), Thousands(r.Input), Thousands(r.Output),
			Thousands(r.CacheWrite), Thousands(r.CacheRead), Thousands(r.Total()), CostWords(r))
		if barText != "" {
			fmt.Fprintf(w, "  %s", v.style(barStyle, barText))
		}
		fmt.Fprintln(w)
	}
	head := fmt.Sprintf("%-*s  %13s  %11s  %13s  %15s  %15s  %12s", width, heads[rep.Group], "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "TOTAL TOKENS", "COST")
	fmt.Fprintln(w, v.style(headStyle, head))
	for i, r := range rep.Rows {
		line(labels[i], r, bar(m(r), most))
		for _, b := range r.Breakdown {
			line(v.style(dimStyle, "  "+visible.String(b.Key)), b, "")
		}
	}
	line(v.style(headStyle, "total"), &rep.Total, "")
}

// Heatmap writes a calendar of the report's days (a Day report): a column
// per week, a row per weekday, each day shaded by its cost (its tokens
// when nothing has a price) against the costliest day.
func (v View) Heatmap(w io.Writer, rep *Report) {
	if len(rep.Rows) == 0 {
		fmt.Fprintln(w, "no usage")
		return
	}
	m := measure(rep)
	byDay := map[string]*Row{}
	most := 0.0
	for _, r := range rep.Rows {
		byDay[r.Key] = r
		most = max(most, m(r))
	}
	first, _ := time.ParseInLocation("2006-01-02", rep.Rows[0].Key, rep.Loc)
	last, _ := time.ParseInLocation("2006-01-02", rep.Rows[len(rep.Rows)-1].Key, rep.Loc)
	start := first.AddDate(0, 0, -((int(first.Weekday()) + 6) % 7)) // its Monday
	weeks := int(last.Sub(start).Hours()/24)/7 + 1
	shades := []string{"·", "░", "▒", "▓", "█"}
	colors := []lipgloss.Style{dimStyle, lipgloss.NewStyle().Foreground(lipgloss.Color("#0e4429")),
		lipgloss.NewStyle().Foreground(lipgloss.Color("#006d32")), lipgloss.NewStyle().Foreground(lipgloss.Color("#26a641")),
		lipgloss.NewStyle().Foreground(lipgloss.Color("#39d353"))}
	// Month names over the weeks they start in, where they fit.
	top := []byte(strings.Repeat(" ", 5+2*weeks+4))
	prev, free := "", 0
	for k := 0; k < weeks; k++ {
		mon := start.AddDate(0, 0, 7*k).Format("Jan")
		if at := 5 + 2*k; mon != prev && at >= free {
			copy(top[at:], mon)
			prev, free = mon, at+len(mon)+1
		}
	}
	fmt.Fprintln(w, strings.TrimRight(string(top), " "))
	names := []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	for d := 0; d < 7; d++ {
		var b strings.Builder
		fmt.Fprintf(&b, "%s  ", names[d])
		for k := 0; k < weeks; k++ {
			day := start.AddDate(0, 0, 7*k+d)
			if day.Before(first) || day.After(last) {
				b.WriteString("  ")
				continue
			}
			level := 0
			if r := byDay[day.Format("2006-01-02")]; r != nil && m(r) > 0 && most > 0 {
				level = 1 + min(3, int(m(r)/most*4))
			}
			b.WriteString(v.style(colors[level], shades[level]) + " ")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	what := "cost"
	top1 := CostWords(busiest(rep, m))
	if rep.Total.Cost == 0 {
		what, top1 = "tokens", Thousands(busiest(rep, m).Total())
	}
	fmt.Fprintf(w, "\n     less %s more  (%s a day; the most: %s on %s; %d days, %s in all)\n",
		strings.Join(shades, " "), what, top1, busiest(rep, m).Key, len(rep.Rows), CostWords(&rep.Total))
}

func busiest(rep *Report, m func(*Row) float64) *Row {
	best := rep.Rows[0]
	for _, r := range rep.Rows {
		if m(r) > m(best) {
			best = r
		}
	}
	return best
}
