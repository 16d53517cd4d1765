package browse

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// run runs cmd and what its messages lead to, as the program would,
// leaving out what quits; it reports whether a quit was asked.
func run(t *testing.T, m *Model, cmd tea.Cmd) (quit bool) {
	t.Helper()
	for n := 0; cmd != nil; n++ {
		if n > 100 {
			t.Fatal("commands do not settle")
		}
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
			return quit
		case tea.QuitMsg:
			return true
		case tea.BatchMsg:
			for _, c := range msg {
				quit = run(t, m, c) || quit
			}
			return quit
		}
		_, cmd = m.Update(msg)
	}
	return quit
}

// press sends keys: a name a KeyPressMsg's String gives (enter, esc,
// tab, up, down, ctrl+c), or text typed a letter at a time.
func press(t *testing.T, m *Model, keys ...string) (quit bool) {
	t.Helper()
	named := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "backspace": {Code: tea.KeyBackspace},
		"ctrl+c": {Code: 'c', Mod: tea.ModCtrl}, "ctrl+f": {Code: 'f', Mod: tea.ModCtrl},
		"ctrl+s": {Code: 's', Mod: tea.ModCtrl}, "shift+up": {Code: tea.KeyUp, Mod: tea.ModShift},
	}
	for _, k := range keys {
		if key, ok := named[k]; ok {
			_, cmd := m.Update(tea.KeyPressMsg(key))
			quit = run(t, m, cmd) || quit
			continue
		}
		for _, r := range k {
			_, cmd := m.Update(tea.KeyPressMsg(tea.Key{Code: r, Text: string(r)}))
			quit = run(t, m, cmd) || quit
		}
	}
	return quit
}

// open returns a browser of root, loaded, w×h.
func open(t *testing.T, root string, w, h int, opts Options) *Model {
	t.Helper()
	opts.Root = root
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	run(t, m, m.Init())
	if m.loading {
		t.Fatal("still loading after the commands ran")
	}
	return m
}

func screen(m *Model) string { return ansi.Strip(m.View().Content) }

// corpus88 is a copy of the 2.1.88 corpus store, its mtimes kept.
func corpus88(t *testing.T) string {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return damage.CopyStore(t, damage.V88)
}

// titles of the 2.1.88 store's sessions, as the list shows them.
const (
	alphaTitle = "hello, first session"
	gammaTitle = "a fresh one in gamma"
)

func TestListShowsEverySessionNewestFirst(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 120, 30, Options{})
	if len(m.shown) != 4 {
		t.Fatalf("%d sessions listed, want 4:\n%s", len(m.shown), screen(m))
	}
	for i := 1; i < len(m.shown); i++ {
		if m.all[m.shown[i]].LastActive.After(m.all[m.shown[i-1]].LastActive) {
			t.Errorf("row %d is newer than row %d", i, i-1)
		}
	}
	s := screen(m)
	for _, want := range []string{alphaTitle, gammaTitle, "/home/dev/work/alpha", "4/4", "3ba86ea1"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
}

func TestScanPaintsBeforeDetails(t *testing.T) {
	root := corpus88(t)
	m := New(Options{Root: root})
	msg := m.Init()()
	if _, ok := msg.(scannedMsg); !ok {
		t.Fatalf("first message %T, want the scan", msg)
	}
	m.Update(msg)
	s := screen(m)
	if len(m.shown) != 4 || !strings.Contains(s, "loading") || !strings.Contains(s, "3ba86ea1") {
		t.Errorf("before any glance, the list shows %d rows:\n%s", len(m.shown), s)
	}
}

func TestTypingFilters(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	press(t, m, "gamma")
	s := screen(m)
	if len(m.shown) != 1 || !strings.Contains(s, gammaTitle) || strings.Contains(s, alphaTitle) || !strings.Contains(s, "1/4") {
		t.Fatalf("filter gamma:\n%s", s)
	}
	// Fuzzy: the letters in order.
	press(t, m, "backspace", "backspace", "backspace", "backspace", "backspace", "hlofrst")
	if r := m.current(); r == nil || r.Session != damage.V88Session {
		t.Errorf("fuzzy filter hlofrst selects %v, want %s:\n%s", r, damage.V88Session, screen(m))
	}
	// The id and the project path match too; ctrl+f goes back to the
	// filter from the action keys.
	press(t, m, "esc", "esc", "ctrl+f", "d835b")
	if len(m.shown) != 1 || !strings.Contains(screen(m), gammaTitle) {
		t.Errorf("filter by id:\n%s", screen(m))
	}
}

func TestTabSwitchesToThisProject(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{Here: damage.V88Project})
	press(t, m, "tab")
	s := screen(m)
	if !strings.Contains(s, "this project") || strings.Contains(s, gammaTitle) || !strings.Contains(s, alphaTitle) {
		t.Fatalf("after tab:\n%s", s)
	}
	for _, i := range m.shown {
		if m.all[i].Project != damage.V88Project {
			t.Errorf("%s of %s listed in this project's scope", m.all[i].Session, m.all[i].Project)
		}
	}
	press(t, m, "tab")
	if len(m.shown) != 4 {
		t.Errorf("tab again: %d rows, want 4", len(m.shown))
	}
}

func TestPreviewShowsTheConversationLastMessagesInView(t *testing.T) {
	root := corpus88(t)
	p := damage.MainFile(root)
	n := damage.FindLast(t, p, damage.IsType("assistant"))
	damage.EditLine(t, p, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "PLANTED-LAST-ANSWER"}}
	})
	m := open(t, root, 100, 30, Options{})
	press(t, m, damage.V88Session[:8])
	if s := screen(m); !strings.Contains(s, "PLANTED-LAST-ANSWER") {
		t.Fatalf("the preview does not show the last answer:\n%s", s)
	}
}

func TestPreviewKeepsTheEndOfABigSession(t *testing.T) {
	root := corpus88(t)
	p := damage.MainFile(root)
	ls := damage.Lines(t, p)
	// Some 2 MB of answers: the first says FIRST, the last LAST.
	n := damage.FindLast(t, p, damage.IsType("assistant"))
	var big string
	for i := 0; i < 2000; i++ {
		big += fmt.Sprintf("line %d of a long answer, long enough to weigh on a preview that held it all.\n", i)
	}
	damage.EditLine(t, p, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "FIRST-WORDS\n" + strings.Repeat(big, 12) + "LAST-WORDS"}}
	})
	if fi, _ := os.Stat(p); fi.Size() < 1<<20 {
		t.Fatalf("the session is only %d bytes (%d lines)", fi.Size(), len(ls))
	}
	msg := previewCmd(root, p, 1, nil)().(previewMsg)
	if msg.err != nil {
		t.Fatal(msg.err)
	}
	if len(msg.text) > PreviewCap || !msg.cut {
		t.Errorf("the preview holds %d bytes (cut %v), want at most %d", len(msg.text), msg.cut, PreviewCap)
	}
	if !strings.Contains(msg.text, "LAST-WORDS") || strings.Contains(msg.text, "FIRST-WORDS") {
		t.Errorf("the preview is not the end of the conversation")
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := &tail{n: 10}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(tl, "line %02d\n", i)
	}
	if got := tl.text(); got != "line 99\n" {
		t.Errorf("tail text %q, want the last whole line", got)
	}
	if cap(tl.buf) > 64 {
		t.Errorf("the tail grew to %d bytes", cap(tl.buf))
	}
}

// realPlan plans as cfix browse does, and applies with changeset.Apply
// (journals in journals), counting the applies in applied.
func realPlan(t *testing.T, root string, applied *int) func(Action, string) (*Planned, error) {
	journals := t.TempDir()
	return func(a Action, path string) (*Planned, error) {
		var cs *changeset.ChangeSet
		var err error
		switch a {
		case Remove:
			cs, err = archive.Rm(archive.RmOptions{Root: root, Sessions: []string{path}})
		case Repair:
			cs, err = repair.Plan(repair.Options{Root: root, Targets: []string{path}})
		default:
			return nil, fmt.Errorf("no %s here", a)
		}
		if err != nil {
			return nil, err
		}
		return &Planned{ChangeSet: cs, Apply: func() (string, error) {
			*applied++
			res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("applied %d changes; backup journal: %s", res.Applied, res.Journal), nil
		}}, nil
	}
}

// tear cuts the 2.1.88 session's last line in two and ages the file
// past the live window.
func tear(t *testing.T, root string) string {
	p := damage.MainFile(root)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","message":{"role":"us`)
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	return p
}

func errorsIn(t *testing.T, root, path string) int {
	rep, err := validate.Run(validate.Options{Root: root, Targets: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			n++
		}
	}
	return n
}

func TestRepairShowsThePlanAndAppliesOnYes(t *testing.T) {
	root := corpus88(t)
	p := tear(t, root)
	if errorsIn(t, root, p) == 0 {
		t.Fatal("the torn session has no error")
	}
	var applied int
	m := open(t, root, 80, 30, Options{Plan: realPlan(t, root, &applied)})
	press(t, m, "hello", "esc")
	if s := screen(m); !strings.Contains(s, "1E") {
		t.Errorf("the torn session's health:\n%s", s)
	}
	press(t, m, "r")
	s := screen(m)
	if m.dialog == nil || !strings.Contains(s, "drop the torn last line") || !strings.Contains(s, "apply these changes?") {
		t.Fatalf("after r, no plan dialog:\n%s", s)
	}
	press(t, m, "n")
	if m.dialog != nil || applied != 0 || errorsIn(t, root, p) == 0 {
		t.Fatalf("n applied the plan or left the dialog open:\n%s", screen(m))
	}
	press(t, m, "r", "y")
	if s := screen(m); applied != 1 || !strings.Contains(s, "applied 1 change") {
		t.Fatalf("y did not apply:\n%s", s)
	}
	if n := errorsIn(t, root, p); n != 0 {
		t.Errorf("validate finds %d errors after the repair", n)
	}
	press(t, m, "enter")
	if s := screen(m); m.dialog != nil || !strings.Contains(s, alphaTitle) || strings.Contains(s, "1E") {
		t.Errorf("after the dialog closed, the list is not read again:\n%s", s)
	}
}

func TestLiveSessionIsNotChanged(t *testing.T) {
	root := corpus88(t)
	damage.PIDFile(t, root, os.Getpid(), damage.V88Session)
	planned := false
	m := open(t, root, 100, 30, Options{Plan: func(Action, string) (*Planned, error) { planned = true; return nil, nil }})
	press(t, m, "hello", "esc", "d")
	s := screen(m)
	if planned || m.dialog != nil || !strings.Contains(s, "is live") || !strings.Contains(s, "[live]") {
		t.Errorf("d on a live session:\n%s", s)
	}
}

func TestEnterChoosesTheSessionAndQuits(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	if !press(t, m, "gamma", "enter") {
		t.Fatal("enter did not quit")
	}
	if filepath.Base(filepath.Dir(m.Chosen)) != "-home-dev-work-gamma-with-space" || !strings.HasPrefix(filepath.Base(m.Chosen), "d835ba00") {
		t.Errorf("chosen %q", m.Chosen)
	}
}

func TestQuitKeys(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	if press(t, m, "x", "q") || m.filter != "xq" {
		t.Errorf("q in a filter quit instead of filtering: filter %q", m.filter)
	}
	if !press(t, m, "esc", "q") {
		t.Error("q among the actions did not quit")
	}
	if !press(t, m, "ctrl+c") || m.Chosen != "" {
		t.Error("ctrl+c did not quit, or chose")
	}
}

// TestKeysWorkAtOnce: the keys the first screen advertises act at once,
// the filter empty: / opens the search, ? lists the keys, q quits; any
// other letter starts the filter.
func TestKeysWorkAtOnce(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	bar := screen(m)
	for _, k := range []string{"type to filter", "/: search every session", "?: all keys", "q: quit"} {
		if !strings.Contains(bar, k) {
			t.Errorf("the first screen lacks %q:\n%s", k, bar)
		}
	}
	press(t, m, "/")
	if m.find == nil || m.filter != "" || !strings.Contains(screen(m), "search: ") {
		t.Fatalf("/ at the start did not open the search (filter %q):\n%s", m.filter, screen(m))
	}
	press(t, m, "esc", "?")
	if !m.help || m.filter != "" {
		t.Fatalf("? at the start did not list the keys (filter %q)", m.filter)
	}
	press(t, m, "x")
	if m.help || m.filter != "" {
		t.Fatalf("the key closing the help went on: filter %q", m.filter)
	}
	if !press(t, m, "q") || m.filter != "" {
		t.Errorf("q at the start did not quit: filter %q", m.filter)
	}
	// A filter typed, then emptied: the keys work again.
	m = open(t, root, 100, 30, Options{})
	press(t, m, "g", "/")
	if m.find != nil || m.filter != "g/" {
		t.Errorf("/ in a filter: find %v, filter %q", m.find != nil, m.filter)
	}
	press(t, m, "backspace", "backspace")
	if !press(t, m, "q") {
		t.Errorf("q with the filter emptied did not quit: filter %q", m.filter)
	}
}

// TestStubsListedLast: a stub (a summary line, no conversation) written
// last is listed after every session with a conversation, so the first
// row selected has a conversation to preview.
func TestStubsListedLast(t *testing.T) {
	root := corpus88(t)
	stub := filepath.Join(root, "projects", damage.V88Project, "55555555-5555-4555-8555-555555555555.jsonl")
	damage.WriteLines(t, stub, [][]byte{[]byte(`{"type":"summary","summary":"a stub's title","leafUuid":"00000000-0000-4000-8000-000000000000"}`)}, true)
	m := open(t, root, 120, 30, Options{})
	if len(m.shown) != 5 {
		t.Fatalf("%d rows, want 5:\n%s", len(m.shown), screen(m))
	}
	if last := m.all[m.shown[4]]; last.Path != stub || !last.MetaOnly {
		t.Errorf("the last row is %s (stub %v), want the stub", last.Path, last.MetaOnly)
	}
	if r := m.current(); r == nil || r.MetaOnly {
		t.Fatalf("the stub is selected first")
	}
	if m.doc == nil || len(m.doc.msgs) == 0 {
		t.Errorf("the first preview has no message:\n%s", screen(m))
	}
}

func TestFitsSixtyColumns(t *testing.T) {
	root := corpus88(t)
	var applied int
	m := open(t, root, 60, 20, Options{Plan: realPlan(t, root, &applied)})
	check := func(what string) {
		lines := strings.Split(m.View().Content, "\n")
		if len(lines) > 20 {
			t.Errorf("%s: %d lines on a screen of 20", what, len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > 60 {
				t.Errorf("%s: a line of %d columns: %q", what, w, ansi.Strip(l))
			}
		}
	}
	check("the list")
	press(t, m, "?")
	check("the help")
	press(t, m, "x", "esc", "esc", "r")
	if m.dialog == nil {
		t.Fatalf("no dialog:\n%s", screen(m))
	}
	check("the dialog")
	press(t, m, "n", "o", "v")
	check("the preview unfolded")
	press(t, m, "t")
	check("the trim's question")
	press(t, m, "esc", "/", "first session", "enter")
	if m.find == nil || len(m.find.hits) == 0 {
		t.Fatalf("no hits:\n%s", screen(m))
	}
	check("the hits")
}

func TestMouseWheelMovesTheList(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	first := m.current().Session
	_, cmd := m.Update(tea.MouseWheelMsg{X: 5, Y: 2, Button: tea.MouseWheelDown})
	run(t, m, cmd)
	if m.cursor != 1 || m.current().Session == first {
		t.Errorf("the wheel over the list left the cursor at %d", m.cursor)
	}
	_, cmd = m.Update(tea.MouseWheelMsg{X: 5, Y: 2, Button: tea.MouseWheelUp})
	run(t, m, cmd)
	if m.cursor != 0 {
		t.Errorf("the wheel up left the cursor at %d", m.cursor)
	}
	// Over the preview, the wheel scrolls it (it opens at its end).
	press(t, m, "hello")
	at := m.preview.YOffset()
	if at == 0 {
		t.Fatalf("the preview of a long session opens at its top:\n%s", screen(m))
	}
	_, cmd = m.Update(tea.MouseWheelMsg{X: 5, Y: 25, Button: tea.MouseWheelUp})
	run(t, m, cmd)
	if m.preview.YOffset() >= at || m.current().Session != damage.V88Session {
		t.Errorf("the wheel over the preview: offset %d, was %d; selected %s", m.preview.YOffset(), at, m.current().Session)
	}
	if v := m.View(); v.MouseMode != tea.MouseModeCellMotion || !v.AltScreen {
		t.Errorf("the view asks for mouse mode %v, alt screen %v", v.MouseMode, v.AltScreen)
	}
}

func TestNoKeyCutsAnApplyShort(t *testing.T) {
	root := corpus88(t)
	tear(t, root)
	var applied int
	m := open(t, root, 100, 30, Options{Plan: realPlan(t, root, &applied)})
	press(t, m, "hello", "esc", "r")
	if m.dialog == nil {
		t.Fatalf("no dialog:\n%s", screen(m))
	}
	_, apply := m.Update(tea.KeyPressMsg(tea.Key{Code: 'y', Text: "y"}))
	if apply == nil {
		t.Fatal("y started no apply")
	}
	// While it runs, enter does not close the dialog and Ctrl+C waits.
	for _, k := range []string{"enter", "esc", "ctrl+c"} {
		if press(t, m, k) || m.dialog == nil {
			t.Fatalf("%s during the apply closed the dialog or quit", k)
		}
	}
	_, cmd := m.Update(apply())
	if applied != 1 || cmd == nil {
		t.Fatalf("applied %d times; after it, no quit", applied)
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("the Ctrl+C pressed during the apply did not quit after it")
	}
}

func TestExportWritesTheSessionOutsideTheStore(t *testing.T) {
	root := corpus88(t)
	t.Setenv("TMPDIR", t.TempDir())
	msg := exportCmd(root, damage.MainFile(root), damage.V88Session)().(exportedMsg)
	if msg.err != nil {
		t.Fatal(msg.err)
	}
	b, err := os.ReadFile(msg.file)
	if err != nil || !strings.Contains(string(b), "# Session "+damage.V88Session) || !strings.Contains(string(b), alphaTitle) {
		t.Errorf("export file %s: %v\n%.300s", msg.file, err, b)
	}
	if strings.HasPrefix(msg.file, root) {
		t.Errorf("the export %s is in the store", msg.file)
	}
}

// applying makes a Planned of cs applied with changeset.Apply (journals
// in a temporary folder), counting the applies in applied.
func applying(t *testing.T, cs *changeset.ChangeSet, applied *int) *Planned {
	journals := t.TempDir()
	return &Planned{ChangeSet: cs, Apply: func() (string, error) {
		*applied++
		res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("applied %d changes; backup journal: %s", res.Applied, res.Journal), nil
	}}
}

// plantThinkingAndToolOutput puts a thinking block in the 2.1.88
// session's last answer and a text in the output of its last tool result.
func plantThinkingAndToolOutput(t *testing.T, root string) {
	p := damage.MainFile(root)
	n := damage.FindLast(t, p, damage.IsType("assistant"))
	damage.EditLine(t, p, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{
			map[string]any{"type": "thinking", "thinking": "PLANTED-THOUGHT", "signature": "sig"},
			map[string]any{"type": "text", "text": "PLANTED-ANSWER"},
		}
	})
	n = damage.FindLast(t, p, damage.HasBlock("tool_result"))
	damage.EditLine(t, p, n, func(m map[string]any) {
		for _, b := range damage.Blocks(m) {
			if b := b.(map[string]any); b["type"] == "tool_result" {
				b["content"] = "PLANTED-TOOL-OUTPUT"
			}
		}
	})
}

func TestPreviewFoldsThinkingAndToolsAndTogglesThem(t *testing.T) {
	root := corpus88(t)
	plantThinkingAndToolOutput(t, root)
	m := open(t, root, 100, 60, Options{})
	press(t, m, "hello", "esc")
	all := func() string { return ansi.Strip(m.preview.GetContent()) }
	s := all()
	if !strings.Contains(s, "PLANTED-ANSWER") || !strings.Contains(s, "▸ Thinking") || strings.Contains(s, "PLANTED-THOUGHT") {
		t.Fatalf("the preview does not fold the thinking:\n%s", s)
	}
	if strings.Contains(s, "PLANTED-TOOL-OUTPUT") || strings.Contains(s, "<details>") || !strings.Contains(s, "▸ Bash run it") {
		t.Fatalf("the preview does not fold the tool calls:\n%s", s)
	}
	if bar := screen(m); !strings.Contains(bar, "v thinking") || !strings.Contains(bar, "o tools") {
		t.Errorf("the help bar does not show the toggles:\n%s", bar)
	}
	press(t, m, "v")
	if s := all(); !strings.Contains(s, "▾ Thinking") || !strings.Contains(s, "PLANTED-THOUGHT") || strings.Contains(s, "PLANTED-TOOL-OUTPUT") {
		t.Errorf("v does not show the thinking alone:\n%s", s)
	}
	press(t, m, "o")
	if s := all(); !strings.Contains(s, "PLANTED-TOOL-OUTPUT") || !strings.Contains(s, "PLANTED-THOUGHT") {
		t.Errorf("o does not show the tool output:\n%s", s)
	}
	press(t, m, "v", "o")
	if s := all(); strings.Contains(s, "PLANTED-TOOL-OUTPUT") || strings.Contains(s, "PLANTED-THOUGHT") {
		t.Errorf("v and o again do not fold them:\n%s", s)
	}
	// While typing, v and o are letters of the filter.
	press(t, m, "ctrl+f", "v")
	if m.filter != "hellov" || m.open[foldThinking] {
		t.Errorf("v while typing: filter %q, thinking shown %v", m.filter, m.open[foldThinking])
	}
}

func TestParseDocReadsThroughCode(t *testing.T) {
	text := "### Turn 1\n\n<!-- cfix:message -->\n#### User\n\n```\n<details><summary>not a tag</summary>\n### Turn 9\n<!-- cfix:message -->\n#### User\n<!-- cfix:at fake -->\n```\n\n" +
		"<details><summary><code>Bash</code> a &amp; b</summary>\n\n````\n</details>\n````\n\n<details><summary>inner</summary>\n\n<!-- cfix:message -->\n#### Assistant\n\nx\n\n<!-- cfix:at inner -->\n</details>\n\ny\n\n</details>\n\n<!-- cfix:at u1 -->\n### Turn 2\n\n" +
		"<!-- cfix:message -->\n#### User · now\n\nsecond\n\n<!-- cfix:at u2 -->\n<!-- cfix:message -->\n#### Assistant · &lt;synthetic>\n\nreply\n\n<!-- cfix:at u3 -->\n"
	d := parseDoc(text)
	if !slices.Equal(d.turns, []int{1, 2}) {
		t.Errorf("turns %v, want [1 2]", d.turns)
	}
	want := []message{{at: "u1", head: "User", turn: 1, last: true}, {at: "u2", head: "User · now", turn: 2}, {at: "u3", head: "Assistant · <synthetic>", turn: 2, last: true}}
	if !slices.Equal(d.msgs, want) {
		t.Errorf("messages %+v, want %+v", d.msgs, want)
	}
	r := d.render(map[int]bool{}, 1)
	got := ansi.Strip(strings.Join(r.lines, "\n"))
	if !strings.Contains(got, "not a tag") || !strings.Contains(got, "▸ Bash a & b (15 lines)") || strings.Contains(got, "inner") {
		t.Errorf("rendered:\n%s", got)
	}
	// The marks in the code block are text; the others are not shown.
	if strings.Count(got, "cfix:") != 2 || !strings.Contains(got, "\n▶ #### User · now · f forks here\n") || strings.Count(got, "f forks here") != 1 ||
		!slices.Equal(r.msg, []int{2, 16, 20}) || r.lines[16] != selStyle.Render("▶ #### User · now · f forks here") {
		t.Errorf("message headings: %v\n%s", r.msg, got)
	}
}

func TestParseDocCutOrUnmarked(t *testing.T) {
	// The preview cut inside a message: its end mark names no message; a
	// heading without its start mark (typed in a prompt) is no message; a
	// message without its end mark is no fork point.
	text := "text of a message cut\n\n<!-- cfix:at cut -->\n### Turn 3\n\n<!-- cfix:message -->\n#### User\n\n#### Assistant typed\n\n<!-- cfix:at u1 -->\n<!-- cfix:message -->\n#### Assistant\n\nno end\n"
	d := parseDoc(text)
	if want := []message{{at: "u1", head: "User", turn: 3}}; !slices.Equal(d.msgs, want) {
		t.Errorf("messages %+v, want %+v", d.msgs, want)
	}
	got := ansi.Strip(strings.Join(d.render(nil, 0).lines, "\n"))
	if !strings.Contains(got, "▶ #### User · f forks here") || !strings.Contains(got, "\n#### Assistant typed\n") || !strings.Contains(got, "\n#### Assistant\n") {
		t.Errorf("rendered:\n%s", got)
	}
}

// forkPlanner plans as cfix browse does with trim.Fork, recording the
// entry asked.
func forkPlanner(t *testing.T, root string, asked *string, applied *int) func(string, string) (*Planned, error) {
	return func(path string, at string) (*Planned, error) {
		*asked = at
		p, err := trim.Fork(trim.ForkOptions{Root: root, Session: path, At: at})
		if err != nil {
			return nil, err
		}
		return applying(t, p.Plan.ChangeSet, applied), nil
	}
}

// forkLeaf is where the fork of the session at path ends, asked so.
func forkLeaf(t *testing.T, root, path string, o trim.ForkOptions) string {
	t.Helper()
	o.Root, o.Session = root, path
	p, err := trim.Fork(o)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s line %d, %d entries", p.Leaf, p.LeafLine, p.Entries)
}

func TestForkAtTheMessageUnderTheCursor(t *testing.T) {
	root := corpus88(t)
	var asked string
	var applied int
	m := open(t, root, 100, 40, Options{PlanFork: forkPlanner(t, root, &asked, &applied)})
	press(t, m, "hello", "esc")
	// The history a resume loads: turn 1 (/compact, a synthetic reply),
	// turn 2 (a prompt, a reply with a Bash call, the answer).
	if len(m.doc.msgs) != 5 || m.msg != 4 {
		t.Fatalf("the preview's messages %+v, the cursor on %d, want 5 and the last", m.doc.msgs, m.msg)
	}
	s := screen(m)
	if !strings.Contains(s, "▶ #### Assistant · 2026-11-21 10:43:01 · f forks here") || strings.Count(s, "▶") != 1 {
		t.Fatalf("the cursor is not on the last message:\n%s", s)
	}
	// [: the reply with the Bash call, the message before; ] [ back there.
	press(t, m, "[")
	s = screen(m)
	if m.msg != 3 || strings.Count(s, "f forks here") != 1 || !strings.Contains(s, "▶ #### Assistant") || !strings.Contains(s, "▸ Bash run it") {
		t.Fatalf("[ left the cursor on message %d:\n%s", m.msg, s)
	}
	press(t, m, "]", "[", "f")
	s = screen(m)
	want := m.doc.msgs[3].at
	if m.dialog == nil || asked != want || !strings.Contains(s, fmt.Sprintf("cfix fork 3ba86ea1 --at %s: the plan", want[:8])) ||
		!strings.Contains(s, "hello, first session (fork)") || !strings.Contains(s, "apply these changes?") ||
		!strings.Contains(s, "in turn 2") || strings.Contains(s, "--turn") {
		t.Fatalf("f: %q planned (want %s), dialog:\n%s", asked, want, s)
	}
	press(t, m, "y")
	if applied != 1 || !strings.Contains(screen(m), "applied") {
		t.Fatalf("y: applied %d:\n%s", applied, screen(m))
	}
	press(t, m, "enter")
	if len(m.all) != 5 || !strings.Contains(screen(m), "hello, first session (fork)") {
		t.Fatalf("the fork is not in the list:\n%s", screen(m))
	}
	var fork string
	for _, r := range m.all {
		if r.Title == alphaTitle+" (fork)" {
			fork = r.Path
		}
	}
	// The fork's history: turn 2 up to the Bash call's result, not the
	// answer after it.
	fam, err := show.Resolve(root, fork)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := export.Write(&b, fam, export.Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "hello-from-bash") || !strings.Contains(md, "after compaction BASH: pwd") ||
		!strings.Contains(md, "/home/dev/work/alpha") || strings.Contains(md, "done: /home/dev/work/alpha") {
		t.Errorf("the fork's conversation:\n%s", md)
	}
}

// TestForkAtATurnsLastMessageIsTheTurn: f on the last message of a turn
// plans the fork cfix fork --turn N plans, and the dialog says so.
func TestForkAtATurnsLastMessageIsTheTurn(t *testing.T) {
	root := corpus88(t)
	var asked string
	m := open(t, root, 100, 40, Options{PlanFork: forkPlanner(t, root, &asked, new(int))})
	press(t, m, "hello", "esc")
	path := damage.MainFile(root)
	for _, c := range []struct{ steps, turn int }{{0, 2}, {3, 1}} {
		for range c.steps {
			press(t, m, "[")
		}
		press(t, m, "f")
		s := screen(m)
		flat := strings.ReplaceAll(s, " │\n│ ", "") // the dialog's lines, unwrapped
		if m.dialog == nil || !strings.Contains(flat, fmt.Sprintf("the last of turn %d: the same fork as cfix fork --turn %d", c.turn, c.turn)) {
			t.Fatalf("f on the last message of turn %d:\n%s", c.turn, s)
		}
		if got, want := forkLeaf(t, root, path, trim.ForkOptions{At: asked}), forkLeaf(t, root, path, trim.ForkOptions{Turn: c.turn}); got != want {
			t.Errorf("turn %d: --at %s ends at %s; --turn %d at %s", c.turn, asked, got, c.turn, want)
		}
		press(t, m, "n")
	}
}

func TestForkWithoutAMessageSaysSo(t *testing.T) {
	root := corpus88(t)
	planned := false
	m := open(t, root, 100, 30, Options{PlanFork: func(string, string) (*Planned, error) { planned = true; return nil, nil }})
	// Headings without the marks of a fork point.
	m.Update(previewMsg{gen: m.previewGen, path: m.previewPath, text: "### Turn 1\n\n#### User\n\nno fork point here\n"})
	press(t, m, "esc", "[", "f")
	if planned || m.dialog != nil || !strings.Contains(screen(m), "no message in the preview to fork at") || strings.Contains(screen(m), "▶") {
		t.Errorf("f without a message:\n%s", screen(m))
	}
}

// TestForkMarkAtSixtyColumnsWithoutColour: the marked message reads at 60
// columns, wrapped, and without colours (the ▶ and the words).
func TestForkMarkAtSixtyColumnsWithoutColour(t *testing.T) {
	root := corpus88(t)
	t.Setenv("NO_COLOR", "1")
	m := open(t, root, 60, 24, Options{})
	press(t, m, "hello", "esc", "[")
	s := screen(m)
	if !strings.Contains(s, "▶ #### Assistant") || !strings.Contains(s, "f forks here") {
		t.Errorf("the mark at 60 columns:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("a line of %d columns: %q", w, l)
		}
	}
}

func TestTrimAsksWhatGoesThenShowsThePlan(t *testing.T) {
	root := corpus88(t)
	plantThinkingAndToolOutput(t, root)
	var asked []string
	var applied int
	m := open(t, root, 100, 40, Options{PlanTrim: func(path string, thinking, tools bool) (*Planned, error) {
		asked = append(asked, fmt.Sprint(thinking, tools))
		p, err := trim.Trim(trim.Options{Root: root, Session: path, Thinking: thinking, ToolOutput: tools, KeepTurns: trim.DefaultKeepTurns})
		if err != nil {
			return nil, err
		}
		return applying(t, p.Plan.ChangeSet, &applied), nil
	}})
	press(t, m, "hello", "esc", "t")
	if s := screen(m); m.choosing != Trim || !strings.Contains(s, "trim into a new session: t thinking · o tool output") {
		t.Fatalf("t does not ask what goes:\n%s", s)
	}
	press(t, m, "esc")
	if m.choosing != "" || m.dialog != nil || len(asked) != 0 {
		t.Fatalf("esc planned a trim: %v", asked)
	}
	press(t, m, "t", "t")
	s := screen(m)
	if m.dialog == nil || !strings.Contains(s, "cfix trim 3ba86ea1 --thinking: the plan") || !strings.Contains(s, "(trimmed)") {
		t.Fatalf("t t: no plan of a trim of the thinking:\n%s", s)
	}
	press(t, m, "n", "t", "enter")
	if s := screen(m); m.dialog == nil || !strings.Contains(s, "--thinking --tool-output: the plan") {
		t.Fatalf("t enter: no plan of both:\n%s", s)
	}
	press(t, m, "y", "enter")
	if !slices.Equal(asked, []string{"true false", "true true"}) || applied != 1 || len(m.all) != 5 {
		t.Errorf("asked %v, applied %d, %d sessions", asked, applied, len(m.all))
	}
}

// plantNeedle puts text in the last answer of the gamma session.
func plantNeedle(t *testing.T, root, text string) {
	ps, _ := filepath.Glob(filepath.Join(root, "projects", "-home-dev-work-gamma-with-space", "d835ba00*.jsonl"))
	if len(ps) != 1 {
		t.Fatalf("gamma sessions: %v", ps)
	}
	n := damage.FindLast(t, ps[0], damage.IsType("assistant"))
	damage.EditLine(t, ps[0], n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "before the " + text + " and after it"}}
	})
}

func TestSearchGoesToTheHit(t *testing.T) {
	root := corpus88(t)
	plantNeedle(t, root, "PLANTED-NEEDLE")
	m := open(t, root, 100, 40, Options{})
	// While typing, / is a letter of the filter; ctrl+s searches.
	press(t, m, "alpha/")
	if m.find != nil || m.filter != "alpha/" {
		t.Fatalf("/ while typing: filter %q, search %v", m.filter, m.find != nil)
	}
	press(t, m, "esc", "esc")
	if r := m.current(); r == nil || strings.HasPrefix(r.Session, "d835ba00") {
		t.Fatalf("the gamma session is selected first")
	}
	press(t, m, "/")
	if s := screen(m); m.find == nil || !strings.Contains(s, "search: ▏") {
		t.Fatalf("/ among the action keys does not open the search:\n%s", s)
	}
	press(t, m, "planted-needle", "enter")
	s := screen(m)
	if m.find == nil || len(m.find.hits) != 1 || !strings.Contains(s, "1 hit") || !strings.Contains(s, gammaTitle+" · before the PLANTED-NEEDLE and after it") {
		t.Fatalf("the hits:\n%s", s)
	}
	if r := m.current(); r == nil || !strings.HasPrefix(r.Session, "d835ba00") || !strings.Contains(s, "── d835ba00") {
		t.Fatalf("the hit's session is not selected:\n%s", s)
	}
	if !strings.Contains(s, "before the PLANTED-NEEDLE and after it") {
		t.Errorf("the preview does not show the hit:\n%s", s)
	}
	press(t, m, "enter")
	s = screen(m)
	if m.find != nil || m.typing || !strings.Contains(s, "> d835ba00") || !strings.Contains(s, "filter: ") {
		t.Errorf("enter on the hit:\n%s", s)
	}
	// Nothing found.
	press(t, m, "ctrl+s", "no such words anywhere", "enter")
	if s := screen(m); !strings.Contains(s, "no session holds no such words anywhere") || !strings.Contains(s, "0 hits") {
		t.Errorf("a search that finds nothing:\n%s", s)
	}
	press(t, m, "esc")
	if m.find != nil {
		t.Error("esc leaves the search open")
	}
}

func TestSearchOpensTheFoldOfItsHit(t *testing.T) {
	root := corpus88(t)
	plantThinkingAndToolOutput(t, root)
	m := open(t, root, 100, 40, Options{})
	press(t, m, "ctrl+s", "planted-tool-output", "enter")
	if m.find == nil || len(m.find.hits) != 1 {
		t.Fatalf("the hits:\n%s", screen(m))
	}
	s := screen(m)
	if !m.open[foldTools] || m.current().Session != damage.V88Session || !strings.Contains(s, "PLANTED-TOOL-OUTPUT") {
		t.Errorf("the preview of a hit in a tool's output:\n%s", s)
	}
	// The cursor is on the message of the hit: the reply with the call,
	// not the answer after it.
	if last := len(m.doc.msgs) - 1; m.msg != last-1 || !strings.Contains(s, "▶ #### Assistant") {
		t.Errorf("the cursor is on message %d of %d:\n%s", m.msg, last+1, s)
	}
}

func TestSearchStaleResultsAreDropped(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 40, Options{})
	press(t, m, "ctrl+s", "hello")
	_, cmd := m.Update(tea.KeyPressMsg(tea.Key{Code: tea.KeyEnter}))
	press(t, m, "/", "x", "enter")
	m.Update(cmd())
	if m.find == nil || m.find.query != "hellox" || len(m.find.hits) != 0 {
		t.Errorf("the results of the search before were taken: %+v", m.find)
	}
}

func TestSweptMark(t *testing.T) {
	root := corpus88(t)
	os.WriteFile(filepath.Join(root, "settings.json"), []byte(`{"cleanupPeriodDays": 1}`), 0o644)
	ps, _ := filepath.Glob(filepath.Join(root, "projects", "*", "faa4037a*.jsonl"))
	old := time.Now().Add(-72 * time.Hour)
	if len(ps) != 1 || os.Chtimes(ps[0], old, old) != nil {
		t.Fatalf("the faa4037a session: %v", ps)
	}
	now := time.Now()
	os.Chtimes(damage.MainFile(root), now, now)
	m := open(t, root, 100, 30, Options{})
	for _, l := range strings.Split(screen(m), "\n") {
		switch {
		case strings.Contains(l, "faa4037a") && !strings.Contains(l, "[swept]"):
			t.Errorf("the old session is not marked: %q", l)
		case strings.Contains(l, "3ba86ea1") && strings.Contains(l, "swept"):
			t.Errorf("a session of today is marked: %q", l)
		}
	}
}

func TestHelpBarAtSixtyColumns(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 60, 20, Options{})
	press(t, m, "esc")
	s := screen(m)
	for _, k := range []string{"f fork", "t trim", "/ search", "[ ] msg", "v thinking", "o tools"} {
		if !strings.Contains(s, k) {
			t.Errorf("the help bar at 60 columns lacks %q:\n%s", k, s)
		}
	}
	press(t, m, "?")
	keys := screen(m)
	if !strings.Contains(keys, "↓ more") {
		t.Errorf("the keys do not say there are more:\n%s", keys)
	}
	// They scroll with the arrows; another key closes them.
	for range 40 {
		press(t, m, "down")
		keys += screen(m)
	}
	for _, k := range []string{"ctrl+f     back to the filter", "/ ctrl+s   search", "f          fork", "swept (Claude Code's next"} {
		if !strings.Contains(keys, k) {
			t.Errorf("the keys lack %q:\n%s", k, keys)
		}
	}
	if !m.help {
		t.Fatal("down closed the keys")
	}
	press(t, m, "x")
	if m.help || m.filter != "" {
		t.Errorf("x did not only close the keys: filter %q", m.filter)
	}
}

func TestMouseWheelMovesTheHits(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 30, Options{})
	press(t, m, "ctrl+s", "session", "enter")
	if m.find == nil || len(m.find.hits) < 2 {
		t.Fatalf("hits of session:\n%s", screen(m))
	}
	_, cmd := m.Update(tea.MouseWheelMsg{X: 5, Y: 2, Button: tea.MouseWheelDown})
	run(t, m, cmd)
	if m.find.cursor != 1 || m.current().Session != m.find.hits[1].Session {
		t.Errorf("the wheel over the hits: cursor %d", m.find.cursor)
	}
}

func TestTheMessageCursorFollowsTheScroll(t *testing.T) {
	root := corpus88(t)
	m := open(t, root, 100, 40, Options{})
	press(t, m, "hello", "esc")
	last := len(m.doc.msgs) - 1
	if last < 2 || m.msg != last {
		t.Fatalf("the cursor is on message %d of %d, want the last", m.msg, len(m.doc.msgs))
	}
	// Up until the heading of the last message is below the view: the
	// cursor is on the one before, then further up, marked.
	for i := 0; i < 40 && m.msg == last; i++ {
		press(t, m, "shift+up")
		if at := m.rend.msg[last]; m.msg == last && m.rend.lineAt(m.preview.YOffset()+m.preview.Height()-1, m.preview.Width()) < at {
			t.Fatalf("the last message's heading (line %d) left the view and the cursor stayed:\n%s", at, screen(m))
		}
	}
	for i := 0; i < 40 && m.msg > 0; i++ {
		press(t, m, "shift+up")
	}
	if s := screen(m); m.msg != 0 || !strings.Contains(s, "▶ #### User · 2026-11-21 10:43:00 · f forks here") {
		t.Errorf("after scrolling up, the cursor is on message %d:\n%s", m.msg, s)
	}
	// Above the first message, it stays there.
	for range 40 {
		press(t, m, "shift+up")
	}
	if m.msg != 0 {
		t.Errorf("at the top, the cursor is on message %d", m.msg)
	}
	// The wheel over the preview too, back down to the end.
	for range 40 {
		_, cmd := m.Update(tea.MouseWheelMsg{X: 5, Y: 35, Button: tea.MouseWheelDown})
		run(t, m, cmd)
	}
	if m.msg != last {
		t.Errorf("at the end again, the cursor is on message %d", m.msg)
	}
}

// TestShortIDsInTheList: two sessions sharing their first 8 characters
// are listed with the ids that tell them apart (the catalog's short ids),
// before and after the glances.
func TestShortIDsInTheList(t *testing.T) {
	root := corpus88(t)
	b, err := os.ReadFile(damage.MainFile(root))
	if err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(root, "projects", damage.V88Project, "3ba86ea1-3a00-4000-8000-000000000000.jsonl")
	if err := os.WriteFile(twin, b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := New(Options{Root: root})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	msg := m.Init()()
	m.Update(msg)
	for _, when := range []string{"scanned", "detailed"} {
		s := screen(m)
		for _, id := range []string{"3ba86ea1-3a4 ", "3ba86ea1-3a0 "} {
			if !strings.Contains(s, id) {
				t.Errorf("%s: the list lacks %q:\n%s", when, id, s)
			}
		}
		if strings.Contains(s, "3ba86ea1  ") {
			t.Errorf("%s: the list shows an ambiguous 3ba86ea1:\n%s", when, s)
		}
		m = open(t, root, 120, 30, Options{})
	}
}
