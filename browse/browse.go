// Package browse is cfix browse: a full-screen browser of every session
// of a store, newest first, filtered as the user types, with a preview of
// the selected conversation (as cfix export writes it) and actions on it.
// It is a Bubble Tea model: Update never blocks, View only renders; the
// scan, the glances, the previews, the plans and their applies run in
// commands. What changes the store goes through the functions the caller
// gives (the command line's own plan and journal).
package browse

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/visible"
)

// Action names a change an action key plans.
type Action string

// The actions that change the store.
const (
	Repair  Action = "repair"
	Remove  Action = "rm"
	Archive Action = "archive"
	Undo    Action = "undo"
)

// Planned is a plan to show, and what applies it.
type Planned struct {
	ChangeSet *changeset.ChangeSet
	// Apply applies it, under the store's lock and with its journal (as
	// --apply does), and says what it did.
	Apply func() (string, error)
	// Show, when set, shows the plan (else changeset.Show).
	Show func(w io.Writer) error
}

// Options are what a browse needs.
type Options struct {
	Root string
	// Here is the project folder of the directory browse runs in: Tab
	// shows its sessions only.
	Here string
	// Plan plans action a on the session whose main transcript is path
	// (for Undo, of the store's last change: path is "").
	Plan func(a Action, path string) (*Planned, error)
}

// Model is the browser.
type Model struct {
	opts          Options
	width, height int

	all     []Row // every session, newest first
	shown   []int // indexes into all that pass the filter and the scope
	cursor  int   // into shown
	top     int   // first row of shown on screen
	filter  string
	here    bool // the scope is this directory's project
	typing  bool // keys go to the filter (else they are actions)
	loading bool
	status  string
	err     error

	preview     viewport.Model
	previewPath string
	previewGen  uint64
	want        *atomic.Uint64

	dialog *dialog
	help   bool

	// Chosen is the main transcript of the session Enter chose.
	Chosen string
}

// dialog shows a plan and asks to apply it.
type dialog struct {
	action Action
	path   string
	cs     *changeset.ChangeSet
	apply  func() (string, error)
	view   viewport.Model
	// result is what the apply said (the dialog then only closes).
	result string
	// applying: the apply runs; no key closes the dialog, Ctrl+C quits
	// once it is done.
	applying, quit bool
}

// New returns the browser of opts.Root.
func New(opts Options) *Model {
	m := &Model{opts: opts, typing: true, loading: true, width: 80, height: 24, want: &atomic.Uint64{}}
	m.preview = viewport.New()
	m.preview.MouseWheelEnabled = true
	m.preview.SoftWrap = true
	m.layout()
	return m
}

// Init starts the scan.
func (m *Model) Init() tea.Cmd { return scanCmd(m.opts.Root) }

type planMsg struct {
	action Action
	path   string
	plan   *Planned
	err    error
}

type appliedMsg struct {
	out string
	err error
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case scannedMsg:
		if msg.err != nil {
			m.err, m.loading = msg.err, false
			return m, nil
		}
		m.setRows(msg.rows)
		return m, tea.Batch(detailsCmd(msg.layout), m.selected())
	case detailsMsg:
		m.loading = false
		if msg.err != nil {
			m.err = msg.err
			return m, nil
		}
		m.setRows(msg.rows)
		return m, m.selected()
	case previewMsg:
		if msg.gen != m.previewGen {
			return m, nil
		}
		text := msg.text
		if msg.err != nil {
			text = "cannot show it: " + visible.String(msg.err.Error())
		} else if msg.cut {
			text = fmt.Sprintf("[the last %s of the conversation]\n", changeset.Size(PreviewCap)) + text
		}
		m.preview.SetContent(text)
		m.preview.GotoBottom()
		return m, nil
	case planMsg:
		if msg.err != nil {
			m.status = visible.String(msg.err.Error())
			return m, nil
		}
		d := &dialog{action: msg.action, path: msg.path, cs: msg.plan.ChangeSet, apply: msg.plan.Apply, view: viewport.New()}
		d.view.MouseWheelEnabled = true
		d.view.SoftWrap = true
		var b bytes.Buffer
		show := func(w io.Writer) error { return changeset.Show(w, d.cs) }
		if msg.plan.Show != nil {
			show = msg.plan.Show
		}
		if err := show(&b); err != nil {
			fmt.Fprintf(&b, "%v\n", err)
		}
		d.view.SetContent(sanitize(b.String()))
		m.dialog = d
		m.status = ""
		m.layout()
		return m, nil
	case appliedMsg:
		if m.dialog == nil {
			return m, nil
		}
		m.dialog.applying = false
		if m.dialog.quit {
			return m, tea.Quit
		}
		if msg.err != nil {
			m.dialog.result = "not applied: " + visible.String(msg.err.Error())
		} else {
			m.dialog.result = sanitize(lastLines(msg.out))
		}
		m.layout()
		return m, nil
	case exportedMsg:
		if msg.err != nil {
			m.status = "export: " + visible.String(msg.err.Error())
			return m, nil
		}
		return m, pagerCmd(msg.file)
	case pagedMsg:
		m.status = "exported to " + visible.String(msg.file)
		if msg.err != nil {
			m.status += " (the pager: " + visible.String(msg.err.Error()) + ")"
		}
		return m, nil
	case tea.MouseWheelMsg:
		if m.dialog != nil {
			var cmd tea.Cmd
			m.dialog.view, cmd = m.dialog.view.Update(msg)
			return m, cmd
		}
		if msg.Y <= m.listHeight() {
			if msg.Button == tea.MouseWheelUp {
				return m, m.move(-1)
			}
			return m, m.move(1)
		}
		var cmd tea.Cmd
		m.preview, cmd = m.preview.Update(msg)
		return m, cmd
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	m.status = ""
	if m.dialog != nil && m.dialog.applying {
		// An apply is not cut short: Ctrl+C quits when it is done.
		m.dialog.quit = m.dialog.quit || s == "ctrl+c"
		return nil
	}
	if s == "ctrl+c" {
		return tea.Quit
	}
	if m.help {
		m.help = false
		return nil
	}
	if m.dialog != nil {
		return m.dialogKey(s)
	}
	switch s {
	case "up", "ctrl+p":
		return m.move(-1)
	case "down", "ctrl+n":
		return m.move(1)
	case "pgup":
		return m.move(-m.listHeight())
	case "pgdown":
		return m.move(m.listHeight())
	case "home":
		return m.move(-len(m.shown))
	case "end":
		return m.move(len(m.shown))
	case "shift+up", "alt+up":
		m.preview.ScrollUp(3)
		return nil
	case "shift+down", "alt+down":
		m.preview.ScrollDown(3)
		return nil
	case "tab":
		m.here = !m.here
		m.refilter()
		return m.selected()
	case "enter":
		if r := m.current(); r != nil {
			m.Chosen = r.Path
			return tea.Quit
		}
		return nil
	case "esc":
		// From the filter to the actions; there, Esc clears the filter.
		if m.typing {
			m.typing = false
			return nil
		}
		if m.filter != "" {
			m.filter = ""
			m.refilter()
			return m.selected()
		}
		return nil
	case "backspace":
		if m.filter != "" {
			_, n := lastRune(m.filter)
			m.filter = m.filter[:len(m.filter)-n]
			m.typing = true
			m.refilter()
			return m.selected()
		}
		return nil
	case "?":
		m.help = true
		return nil
	}
	if !m.typing {
		switch s {
		case "q":
			return tea.Quit
		case "k":
			return m.move(-1)
		case "j":
			return m.move(1)
		case "r":
			return m.plan(Repair)
		case "d":
			return m.plan(Remove)
		case "a":
			return m.plan(Archive)
		case "e":
			if r := m.current(); r != nil {
				m.status = "exporting " + short(r.Session) + "…"
				return exportCmd(m.opts.Root, r.Path, r.Session)
			}
			return nil
		case "u":
			return m.plan(Undo)
		case "/":
			m.typing = true
			return nil
		}
	}
	if t := k.Text; t != "" && printable(t) {
		m.typing = true
		m.filter += t
		m.refilter()
		return m.selected()
	}
	return nil
}

func (m *Model) dialogKey(s string) tea.Cmd {
	d := m.dialog
	switch s {
	case "y", "enter":
		if d.result != "" || d.cs.Empty() {
			return m.closeDialog()
		}
		if s == "y" {
			d.result, d.applying = "applying…", true
			apply := d.apply
			return func() tea.Msg {
				out, err := apply()
				return appliedMsg{out: out, err: err}
			}
		}
	case "n", "esc", "q":
		return m.closeDialog()
	case "up", "k":
		d.view.ScrollUp(1)
	case "down", "j":
		d.view.ScrollDown(1)
	case "pgup":
		d.view.PageUp()
	case "pgdown", "space":
		d.view.PageDown()
	}
	return nil
}

// closeDialog closes the dialog; after an apply the list is read again.
func (m *Model) closeDialog() tea.Cmd {
	applied := m.dialog.result != ""
	m.dialog = nil
	m.layout()
	if applied {
		m.loading = true
		m.previewPath = ""
		return scanCmd(m.opts.Root)
	}
	return nil
}

// plan plans a on the selected session, in a command.
func (m *Model) plan(a Action) tea.Cmd {
	r := m.current()
	if a == Undo && m.opts.Plan != nil {
		plan := m.opts.Plan
		m.status = "planning the undo of the last change…"
		return func() tea.Msg {
			p, err := plan(a, "")
			return planMsg{action: a, plan: p, err: err}
		}
	}
	switch {
	case r == nil:
		return nil
	case r.Live:
		m.status = "session " + r.Session + " is live (a running Claude Code has it open): cfix changes no live session"
		return nil
	case m.opts.Plan == nil:
		return nil
	}
	path, plan := r.Path, m.opts.Plan
	m.status = "planning " + string(a) + " of " + short(r.Session) + "…"
	return func() tea.Msg {
		p, err := plan(a, path)
		return planMsg{action: a, path: path, plan: p, err: err}
	}
}

func (m *Model) current() *Row {
	if m.cursor < 0 || m.cursor >= len(m.shown) {
		return nil
	}
	return &m.all[m.shown[m.cursor]]
}

// setRows replaces the list, keeping the selected session selected.
func (m *Model) setRows(rows []Row) {
	keep := ""
	if r := m.current(); r != nil && m.cursor > 0 {
		keep = r.Path
	}
	m.all = rows
	m.refilter()
	for i, j := range m.shown {
		if m.all[j].Path == keep {
			m.cursor = i
			m.scroll()
			break
		}
	}
}

// refilter computes the rows shown: the scope's, matching the filter;
// those where every word is found as typed first, then those that match
// fuzzily, newest first in each.
func (m *Model) refilter() {
	words := strings.Fields(strings.ToLower(m.filter))
	m.shown = m.shown[:0]
	var fuzzy []int
	for i := range m.all {
		r := &m.all[i]
		if m.here && r.Project != m.opts.Here {
			continue
		}
		switch match(r.hay, words) {
		case exact:
			m.shown = append(m.shown, i)
		case fuzzily:
			fuzzy = append(fuzzy, i)
		}
	}
	m.shown = append(m.shown, fuzzy...)
	m.cursor, m.top = 0, 0
}

const (
	none = iota
	fuzzily
	exact
)

// match says whether every word is found in hay as it is (exact), or
// some only fuzzily: their letters in order (fuzzily).
func match(hay string, words []string) int {
	how := exact
	for _, w := range words {
		if strings.Contains(hay, w) {
			continue
		}
		if !subsequence(hay, w) {
			return none
		}
		how = fuzzily
	}
	return how
}

// subsequence reports whether the letters of w are found in order in one
// of the fields of hay.
func subsequence(hay, w string) bool {
	for f := range strings.SplitSeq(hay, "\x00") {
		if inOrder(f, w) {
			return true
		}
	}
	return false
}

func inOrder(hay, w string) bool {
	for _, r := range w {
		i := strings.IndexRune(hay, r)
		if i < 0 {
			return false
		}
		hay = hay[i+len(string(r)):]
	}
	return true
}

// move moves the cursor by n rows.
func (m *Model) move(n int) tea.Cmd {
	if len(m.shown) == 0 {
		return nil
	}
	m.cursor = max(0, min(len(m.shown)-1, m.cursor+n))
	m.scroll()
	return m.selected()
}

func (m *Model) scroll() {
	h := m.listHeight()
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+h {
		m.top = m.cursor - h + 1
	}
}

// selected starts the preview of the selected session when it changed.
func (m *Model) selected() tea.Cmd {
	r := m.current()
	if r == nil {
		m.previewPath = ""
		m.preview.SetContent("")
		return nil
	}
	if r.Path == m.previewPath {
		return nil
	}
	m.previewPath = r.Path
	m.previewGen++
	m.want.Store(m.previewGen)
	m.preview.SetContent("loading…")
	return previewCmd(m.opts.Root, r.Path, m.previewGen, m.want)
}

// The screen: a header line, the list, a line naming the selected
// session, the preview, and the help bar.
func (m *Model) listHeight() int {
	return max(1, (m.height-4)*2/5)
}

func (m *Model) layout() {
	ph := m.height - 4 - m.listHeight()
	m.preview.SetWidth(m.width)
	m.preview.SetHeight(max(1, ph))
	if d := m.dialog; d != nil {
		d.view.SetWidth(max(10, m.width-4))
		// The header, the box's borders, its title and its foot.
		d.view.SetHeight(max(1, m.height-4-lipgloss.Height(d.foot(m.width-4))))
	}
	m.scroll()
}

var (
	selStyle   = lipgloss.NewStyle().Reverse(true)
	dimStyle   = lipgloss.NewStyle().Faint(true)
	boldStyle  = lipgloss.NewStyle().Bold(true)
	errStyle   = lipgloss.NewStyle().Foreground(lipgloss.Red)
	boxStyle   = lipgloss.NewStyle().Border(lipgloss.NormalBorder()).Padding(0, 1)
	titleStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan)
)

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

func (m *Model) render() string {
	var b strings.Builder
	w := m.width
	// Header.
	scope := "all projects"
	if m.here {
		scope = "this project"
	}
	head := fmt.Sprintf("cfix browse · %s · %d/%d", scope, len(m.shown), m.countScope())
	if m.loading {
		head += " · loading…"
	}
	cursor := ""
	if m.typing {
		cursor = "▏"
	}
	b.WriteString(fit(titleStyle.Render(head)+"  filter: "+visible.String(m.filter)+cursor, w) + "\n")
	if m.dialog != nil {
		b.WriteString(m.renderDialog())
		return b.String()
	}
	if m.help {
		lines := strings.Split(ansi.Wrap(helpText, max(10, w), " "), "\n")
		b.WriteString(strings.Join(lines[:min(len(lines), max(1, m.height-1))], "\n"))
		return b.String()
	}
	// The list.
	h := m.listHeight()
	for i := m.top; i < m.top+h; i++ {
		if i >= len(m.shown) {
			b.WriteString("\n")
			continue
		}
		line := m.row(&m.all[m.shown[i]], w-2, i == m.cursor)
		if i == m.cursor {
			b.WriteString(selStyle.Render(fit("> "+line, w)) + "\n")
		} else {
			b.WriteString(fit("  "+line, w) + "\n")
		}
	}
	if m.err != nil {
		b.WriteString(errStyle.Render(fit(visible.String(m.err.Error()), w)) + "\n")
	} else if r := m.current(); r != nil {
		b.WriteString(boldStyle.Render(fit("── "+r.Session+" · "+visible.String(r.ProjectPath)+" ", w)) + "\n")
	} else if len(m.all) > 0 || !m.loading {
		b.WriteString(fit("── no session matches", w) + "\n")
	} else {
		b.WriteString("\n")
	}
	b.WriteString(m.preview.View() + "\n")
	status := m.helpBar()
	if m.status != "" {
		status = m.status
	}
	b.WriteString(dimStyle.Render(fit(status, w)))
	return b.String()
}

// helpBar is the keys of the moment, in the width there is.
func (m *Model) helpBar() string {
	switch {
	case m.typing && m.width >= 80:
		return "esc: actions · tab: scope · enter: resume · ?: all keys · ctrl+c: quit"
	case m.typing:
		return "esc actions · tab scope · enter resume · ? keys"
	case m.width >= 104:
		return "enter resume · e export · r repair · d rm · a archive · u undo · / filter · tab · ? keys · q quit"
	}
	return "enter resume · r repair · d rm · a archive · ? keys · q quit"
}

func (m *Model) countScope() int {
	if !m.here {
		return len(m.all)
	}
	n := 0
	for i := range m.all {
		if m.all[i].Project == m.opts.Here {
			n++
		}
	}
	return n
}

// row is a session's line of the list, w columns at most; the selected
// one is left unstyled (the line is shown reversed).
func (m *Model) row(r *Row, w int, selected bool) string {
	var b strings.Builder
	b.WriteString(short(r.Session) + "  " + stamp(r.LastActive) + "  ")
	if w >= 90 {
		msgs := "-"
		if r.MessagesKnown {
			msgs = strconv.Itoa(r.Messages)
		}
		fmt.Fprintf(&b, "%5s %8s %3d  ", msgs, changeset.Size(r.Size+r.SubagentBytes), r.Subagents)
	}
	if r.Detailed {
		fmt.Fprintf(&b, "%-8s ", health(r.Errors(), r.Warnings()))
	}
	if mk := marks(r); mk != "" {
		b.WriteString("[" + mk + "] ")
	}
	title := visible.String(strings.Join(strings.Fields(r.Title), " "))
	if w >= 90 {
		path := "  " + visible.String(r.ProjectPath)
		if !selected {
			path = dimStyle.Render(path)
		}
		title += path
	}
	b.WriteString(title)
	return ansi.Truncate(b.String(), w, "…")
}

func (m *Model) renderDialog() string {
	d := m.dialog
	head := fmt.Sprintf("cfix %s session %s: the plan", d.action, short(sessionOf(d.path)))
	if d.path == "" {
		head = fmt.Sprintf("cfix %s of the last change: the plan", d.action)
	}
	body := boldStyle.Render(fit(head, m.width-4)) + "\n" + d.view.View() + "\n" + d.foot(m.width-4)
	return boxStyle.Width(max(20, m.width)).Render(body)
}

// foot is the dialog's last lines, wrapped to w columns.
func (d *dialog) foot(w int) string {
	var foot string
	switch {
	case d.result != "":
		foot = d.result + "\n[enter] close"
	case d.cs.Empty():
		foot = "nothing to do · [enter] close"
	default:
		foot = "apply these changes? [y] yes · [n] no (↑/↓ scroll)"
	}
	return ansi.Wrap(foot, max(10, w), " ")
}

func sessionOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ".jsonl") }

// fit cuts s to w columns.
func fit(s string, w int) string { return ansi.Truncate(s, max(0, w), "…") }

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, "\n")
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xc0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 0
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-          "
	}
	return t.Local().Format("01-02 15:04")
}

func health(errs, warns int) string {
	switch {
	case errs == 0 && warns == 0:
		return "ok"
	case warns == 0:
		return strconv.Itoa(errs) + "E"
	case errs == 0:
		return strconv.Itoa(warns) + "W"
	}
	return fmt.Sprintf("%dE %dW", errs, warns)
}

func marks(r *Row) string {
	var m []string
	if r.Live {
		m = append(m, "live")
	}
	if r.MetaOnly {
		m = append(m, "stub")
	}
	return strings.Join(m, ",")
}

const helpText = `Keys
  typing     filters: title, first prompt, project, id
  backspace  removes a letter of the filter
  esc        from the filter to the action keys;
             there, clears the filter
  up/down    move (pgup/pgdown, home/end; j/k)
  shift+up/down, the wheel: scroll the preview
  tab        this directory's project / every project
  enter      resume it (as cfix resume: check, repair)
  r          repair: the plan, applied on y (journaled)
  d          rm: the plan, applied on y (journaled)
  a          archive: the plan, applied on y
  e          export as Markdown, open it in $PAGER
  u          undo the store's last change: its plan, on y
  /          back to the filter
  q, ctrl+c  quit

any key closes this help; cfix undo takes a change back
`
