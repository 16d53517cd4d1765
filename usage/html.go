package usage

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

// HTML writes the report rep as one self-contained page: the daily cost
// as bars and as a calendar, the cost by model, and rep's table. Its
// charts are SVG (no script: a page that reads anywhere).
func (v View) HTML(w io.Writer, rep, days *Report) error {
	m := measure(days)
	what := "cost"
	if days.Total.Cost == 0 {
		what = "tokens"
	}
	valueWords := func(r *Row) string {
		if what == "tokens" {
			return Thousands(r.Total()) + " tokens"
		}
		return CostWords(r)
	}
	most := 0.0
	for _, r := range days.Rows {
		most = max(most, m(r))
	}
	// Daily bars.
	var bars strings.Builder
	const bw, bh, gap = 14.0, 160.0, 3.0
	width := max(300.0, float64(len(days.Rows))*(bw+gap)+40)
	fmt.Fprintf(&bars, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="%s by day">`, width, bh+40, what)
	for i, r := range days.Rows {
		h := 0.0
		if most > 0 {
			h = m(r) / most * bh
		}
		x := 30 + float64(i)*(bw+gap)
		fmt.Fprintf(&bars, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="#2f81f7"><title>%s: %s</title></rect>`,
			x, 10+bh-h, bw, max(h, 0.5), template.HTMLEscapeString(r.Key), template.HTMLEscapeString(valueWords(r)))
		if i == 0 || i == len(days.Rows)-1 || len(days.Rows) <= 14 {
			fmt.Fprintf(&bars, `<text x="%.1f" y="%.0f" font-size="9" text-anchor="middle" fill="#555">%s</text>`, x+bw/2, bh+25, template.HTMLEscapeString(r.Key[5:]))
		}
	}
	fmt.Fprintf(&bars, `<line x1="28" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/></svg>`, bh+10, width, bh+10)

	// Calendar.
	var cal strings.Builder
	if len(days.Rows) > 0 {
		first, _ := time.ParseInLocation("2006-01-02", days.Rows[0].Key, days.Loc)
		last, _ := time.ParseInLocation("2006-01-02", days.Rows[len(days.Rows)-1].Key, days.Loc)
		start := first.AddDate(0, 0, -((int(first.Weekday()) + 6) % 7))
		weeks := int(last.Sub(start).Hours()/24)/7 + 1
		byDay := map[string]*Row{}
		for _, r := range days.Rows {
			byDay[r.Key] = r
		}
		const cell = 13.0
		fills := []string{"#ebedf0", "#9be9a8", "#40c463", "#30a14e", "#216e39"}
		fmt.Fprintf(&cal, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="calendar of %s by day">`, 40+float64(weeks)*cell, 30+7*cell, what)
		for d, name := range []string{"Mon", "", "Wed", "", "Fri", "", "Sun"} {
			fmt.Fprintf(&cal, `<text x="0" y="%.0f" font-size="9" fill="#555">%s</text>`, 28+float64(d)*cell, name)
		}
		prev := ""
		for k := 0; k < weeks; k++ {
			if mon := start.AddDate(0, 0, 7*k).Format("Jan"); mon != prev {
				fmt.Fprintf(&cal, `<text x="%.0f" y="10" font-size="9" fill="#555">%s</text>`, 30+float64(k)*cell, mon)
				prev = mon
			}
			for d := 0; d < 7; d++ {
				day := start.AddDate(0, 0, 7*k+d)
				if day.Before(first) || day.After(last) {
					continue
				}
				key := day.Format("2006-01-02")
				level, words := 0, "nothing"
				if r := byDay[key]; r != nil {
					words = valueWords(r)
					if most > 0 && m(r) > 0 {
						level = 1 + min(3, int(m(r)/most*4))
					}
				}
				fmt.Fprintf(&cal, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="2" fill="%s"><title>%s: %s</title></rect>`,
					30+float64(k)*cell, 18+float64(d)*cell, cell-2, cell-2, fills[level], key, template.HTMLEscapeString(words))
			}
		}
		cal.WriteString(`</svg>`)
	}

	// Cost by model.
	var mod strings.Builder
	mrows := rep.modelRows()
	mmost := 0.0
	for _, r := range mrows {
		mmost = max(mmost, m(r))
	}
	fmt.Fprintf(&mod, `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="%d" role="img" aria-label="%s by model">`, 20+len(mrows)*22, what)
	for i, r := range mrows {
		wdt := 0.0
		if mmost > 0 {
			wdt = m(r) / mmost * 300
		}
		y := 10 + float64(i)*22
		fmt.Fprintf(&mod, `<text x="0" y="%.0f" font-size="12">%s</text><rect x="200" y="%.0f" width="%.1f" height="14" fill="#8250df"/><text x="%.1f" y="%.0f" font-size="12">%s</text>`,
			y+12, template.HTMLEscapeString(r.Key), y, max(wdt, 0.5), 206+wdt, y+12, template.HTMLEscapeString(valueWords(r)))
	}
	mod.WriteString(`</svg>`)

	type trow struct {
		Label                                           string
		Input, Output, Write, Read, Total, Cost, Models string
	}
	var rows []trow
	for _, r := range rep.Rows {
		rows = append(rows, trow{v.Label(rep, r), Thousands(r.Input), Thousands(r.Output), Thousands(r.CacheWrite), Thousands(r.CacheRead),
			Thousands(r.Total()), CostWords(r), strings.Join(r.Models, ", ")})
	}
	t := &rep.Total
	data := map[string]any{
		"Group": string(rep.Group), "Rows": rows, "Total": trow{"total", Thousands(t.Input), Thousands(t.Output), Thousands(t.CacheWrite),
			Thousands(t.CacheRead), Thousands(t.Total()), CostWords(t), strings.Join(t.Models, ", ")},
		"Bars": template.HTML(bars.String()), "Calendar": template.HTML(cal.String()), "Models": template.HTML(mod.String()),
		"What": what, "Prices": rep.Prices, "Zone": rep.Loc.String(), "Archived": rep.Archived, "ArchivedSessions": rep.ArchivedSessions,
		"Days": len(days.Rows), "Replies": Thousands(int64(t.Replies)), "Cost": CostWords(t),
	}
	return pageTmpl.Execute(w, data)
}

// modelRows is the report's replies by model: the totals of each model
// over its rows (from the breakdown when there is one, else the rows
// themselves for a model report).
func (rep *Report) modelRows() []*Row {
	if rep.Group == Model {
		return rep.Rows
	}
	return rep.byModel
}

var pageTmpl = template.Must(template.New("usage").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Claude Code usage</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#1f2328;max-width:1100px}
h1{font-size:1.4em} h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #d0d7de;text-align:right} th:first-child,td:first-child{text-align:left;white-space:nowrap}
tr.total td{font-weight:bold} .note{color:#57606a} .models{color:#57606a;text-align:left}
</style></head><body>
<h1>Claude Code usage: {{.Cost}}</h1>
<p class="note">{{.Replies}} replies over {{.Days}} days ({{.Zone}}){{if .Archived}}; {{.Archived}} replies of {{.ArchivedSessions}} sessions from cfix's archive{{end}}. Prices of {{.Prices.Date}} from {{.Prices.Source}}; "no price" where the list has none.</p>
<h2>{{.What}} by day</h2>
{{.Bars}}
<h2>calendar</h2>
{{.Calendar}}
<h2>{{.What}} by model</h2>
{{.Models}}
<h2>by {{.Group}}</h2>
<table><tr><th>{{.Group}}</th><th>input</th><th>output</th><th>cache write</th><th>cache read</th><th>total tokens</th><th>cost</th><th class="models">models</th></tr>
{{range .Rows}}<tr><td>{{.Label}}</td><td>{{.Input}}</td><td>{{.Output}}</td><td>{{.Write}}</td><td>{{.Read}}</td><td>{{.Total}}</td><td>{{.Cost}}</td><td class="models">{{.Models}}</td></tr>
{{end}}<tr class="total"><td>total</td><td>{{.Total.Input}}</td><td>{{.Total.Output}}</td><td>{{.Total.Write}}</td><td>{{.Total.Read}}</td><td>{{.Total.Total}}</td><td>{{.Total.Cost}}</td><td class="models">{{.Total.Models}}</td></tr>
</table>
</body></html>
`))
