package browse

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
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
		"ctrl+s": {Code: 's', Mod: tea.ModCtrl},
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
	if press(t, m, "q") || m.filter != "q" {
		t.Errorf("q while typing quit instead of filtering")
	}
	if !press(t, m, "esc", "q") {
		t.Error("q among the actions did not quit")
	}
	if !press(t, m, "ctrl+c") || m.Chosen != "" {
		t.Error("ctrl+c did not quit, or chose")
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
