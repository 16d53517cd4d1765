package browse

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cfix-dev/cfix/store"
)

// BenchmarkFilterKeystroke is a filter character typed, and the screen
// drawn again, over 6,000 sessions (the target: within 16 ms).
func BenchmarkFilterKeystroke(b *testing.B) {
	m := New(Options{Root: b.TempDir()})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	rows := make([]Row, 6000)
	now := time.Now()
	for i := range rows {
		r := &rows[i]
		r.Session = fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919, i)
		r.Path = "/store/projects/-home-dev-work-p" + fmt.Sprint(i%40) + "/" + r.Session + ".jsonl"
		r.Project = "-home-dev-work-p" + fmt.Sprint(i%40)
		r.ProjectPath = "/home/dev/work/p" + fmt.Sprint(i%40)
		r.Title = fmt.Sprintf("fix the flaky test number %d in the parser", i)
		r.FirstPrompt = fmt.Sprintf("the test TestParse%d fails one run in ten with a timeout; find out why and fix it without a sleep", i)
		r.LastActive = now.Add(-time.Duration(i) * time.Minute)
		r.Detailed = true
		r.MessagesKnown, r.Messages = true, i%300
		r.Glance.Quick = []store.QuickFinding{}
		r.index()
	}
	m.Update(scannedMsg{rows: rows})
	m.Update(detailsMsg{rows: rows})
	key := func(r rune) tea.KeyPressMsg { return tea.KeyPressMsg(tea.Key{Code: r, Text: string(r)}) }
	back := tea.KeyPressMsg(tea.Key{Code: tea.KeyBackspace})
	for _, r := range "flaky" {
		m.Update(key(r))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(key('t'))
		_ = m.View()
		m.Update(back)
		_ = m.View()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(2*b.N), "µs/keystroke")
}

// BenchmarkFirstFrame is the scan of a store of 6,000 sessions and the
// first frame drawn from it: the list painted before any transcript is
// read (the target: within 150 ms cold; here the page cache is
// warm).
func BenchmarkFirstFrame(b *testing.B) {
	root := b.TempDir()
	for i := 0; i < 6000; i++ {
		dir := filepath.Join(root, "projects", fmt.Sprintf("-home-dev-work-p%d", i%40))
		if i < 40 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919, i)
		line := fmt.Sprintf(`{"type":"user","sessionId":%q,"uuid":"u%d","parentUuid":null,"cwd":"/home/dev/work/p%d","message":{"role":"user","content":"hello %d"}}`+"\n", id, i, i%40, i)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(line), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := New(Options{Root: root})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		m.Update(m.Init()())
		if len(m.shown) != 6000 {
			b.Fatalf("%d rows", len(m.shown))
		}
		_ = m.View()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/frame")
}
