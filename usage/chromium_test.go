package usage

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/chromium"
)

// TestHTMLInChromium: the report of a wild store as one page names no
// resource and runs no script; headless Chromium loads it with every
// chart (a bar per day, a cell per day of the calendar, a bar per model)
// and the table's rows, and takes a screenshot of it (CFIX_USAGE_SHOT=FILE
// keeps it).
func TestHTMLInChromium(t *testing.T) {
	browser := chromium.New(t, "the HTML report")
	set, err := Collect(Options{Root: "../testdata/wild/2.1.207-2.1.232/.claude"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rep := Build(set, Model, Filter{Loc: time.UTC}, NewPricer(nil), false, now)
	days := Build(set, Day, Filter{Loc: time.UTC}, NewPricer(nil), false, now)
	var page bytes.Buffer
	if err := (View{Now: now}).HTML(&page, rep, days); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?i)\ssrc=`, `(?i)<link\b`, `(?i)url\(`, `(?i)(href|action)="?https?:`, `(?i)<script\b`} {
		if loc := regexp.MustCompile(re).FindIndex(page.Bytes()); loc != nil {
			t.Errorf("the page names a resource or runs a script (%s): %q", re, page.Bytes()[loc[0]:min(loc[1]+40, page.Len())])
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "usage.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browser.DOM(file)
	// A bar and a calendar cell per day with usage (the calendar also
	// has the days between), a bar per model, a table row per model.
	if n := strings.Count(dom, `fill="#2f81f7"`); n != len(days.Rows) {
		t.Errorf("%d day bars, %d days", n, len(days.Rows))
	}
	first, _ := time.Parse("2006-01-02", days.Rows[0].Key)
	last, _ := time.Parse("2006-01-02", days.Rows[len(days.Rows)-1].Key)
	if n, want := strings.Count(dom, `rx="2"`), int(last.Sub(first).Hours()/24)+1; n != want {
		t.Errorf("%d calendar cells, %d days from the first to the last", n, want)
	}
	if n := strings.Count(dom, `fill="#8250df"`); n != len(rep.Rows) {
		t.Errorf("%d model bars, %d models", n, len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if !strings.Contains(dom, "<td>"+r.Key+"</td>") {
			t.Errorf("the table lacks the row of %s", r.Key)
		}
	}
	if !strings.Contains(dom, "Claude Code usage: "+CostWords(&rep.Total)) {
		t.Errorf("the heading lacks the total %s", CostWords(&rep.Total))
	}
	shot := filepath.Join(dir, "shot.png")
	if keep := os.Getenv("CFIX_USAGE_SHOT"); keep != "" {
		shot = keep
	}
	browser.Screenshot(file, shot, "1100,1000")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("no screenshot of the page: %v", err)
	}
}
