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
	"slices"
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
	"github.com/cfix-dev/cfix/search"
	"github.com/cfix-dev/cfix/trim"
)

// Action names a change an action key plans.
type Action string

// The actions that change the store.
const (
	Repair  Action = "repair"
	Remove  Action = "rm"
	Archive Action = "archive"
	Undo    Action = "undo"
	Fork    Action = "fork"
	Trim    Action = "trim"
	Pull    Action = "pull"
)

// Planned is a plan to show, and what applies it.
type Planned struct {
	ChangeSet *changeset.ChangeSet
	// Apply applies it, under the store's lock and with its journal (as
	// --apply does), and says what it did.
	Apply func() (string, error)
	// Show, when set, shows the plan (else changeset.Show).
	Show func(w io.Writer) error
	// Then, when set, names the main transcript Enter resumes once the
	// plan is applied (or at once when there is nothing to apply): a
	// pull's session where it landed.
	Then func() string
	// Close, when set, releases what the plan holds (a pull's fetched
	// objects) when its dialog closes.
	Close func()
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
	// PlanFork plans a fork of the session at path whose history ends
	// at the entry at (as cfix fork --at).
	PlanFork func(path, at string) (*Planned, error)
	// PlanTrim plans a trim of the session at path into a new session
	// (as cfix trim): its thinking, its tool output, or both.
	PlanTrim func(path string, thinking, toolOutput bool) (*Planned, error)
	// Remote, when set, reads the sessions of a remote (cfix browse
	// --remote): they are listed beside the store's, each marked with
	// its machine; PlanPull plans the pull of one, which Enter shows,
	// applies on y, then resumes.
	Remote   func() ([]Row, error)
	PlanPull func(r Row) (*Planned, error)
}

// Model is the browser.
type Model struct {
	opts          Options
	width, height int

	all     []Row // every session, newest first
	local   []Row // the store's sessions
	remote  []Row // the remote's (Options.Remote)
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
	// doc is the preview's conversation; open says which kinds of its
	// folded parts are shown whole; msg is the message under the
	// preview's cursor (what f forks at, an index in doc.msgs), -1 for
	// none.
	doc  *doc
	rend rendered
	open map[int]bool
	msg  int
	// hit is the search hit the preview of hitPath shows.
	hit     *search.Hit
	hitPath string

	// find is the content search, while it is open.
	find     *finder
	findGen  uint64
	findWant *atomic.Uint64
	byID     map[string]int // a session id → its index in all
	idWidth  int            // the widest short id of all
	choosing Action         // trim: the next key says what goes

	dialog  *dialog
	help    bool
	helpTop int // the first line of the keys shown

	// Chosen is the main transcript of the session Enter chose.
	Chosen string
}

// dialog shows a plan and asks to apply it.
type dialog struct {
	action Action
	path   string
	head   string // the title, when not the action's usual one
	cs     *changeset.ChangeSet
	apply  func() (string, error)
	then   func() string
	close  func()
	view   viewport.Model
	// result is what the apply said (the dialog then only closes).
	result string
	// applying: the apply runs; no key closes the dialog, Ctrl+C quits
	// once it is done.
	applying, quit bool
}

// New returns the browser of opts.Root.
func New(opts Options) *Model {
	m := &Model{opts: opts, typing: true, loading: true, width: 80, height: 24, want: &atomic.Uint64{},
		findWant: &atomic.Uint64{}, open: map[int]bool{}, msg: -1}
	m.preview = viewport.New()
	m.preview.MouseWheelEnabled = true
	m.preview.SoftWrap = true
	m.layout()
	return m
}

// Init starts the scan.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(scanCmd(m.opts.Root), remoteCmd(m.opts.Remote))
}

type planMsg struct {
	action Action
	path   string
	head   string
	note   string // said above the plan
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
		return m, tea.Batch(m.selected(), countCmd(msg.layout))
	case remoteMsg:
		if msg.err != nil {
			m.status = "the remote: " + visible.String(msg.err.Error())
			return m, nil
		}
		m.remote = msg.rows
		m.setRows(m.local)
		return m, m.selected()
	case countedMsg:
		for _, rows := range [][]Row{m.all, m.local} {
			for i := range rows {
				if n, ok := msg.counts[rows[i].Path]; ok {
					rows[i].Messages, rows[i].MessagesKnown = n, true
				}
			}
		}
		return m, nil
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
		m.doc = parseDoc(text)
		m.msg = len(m.doc.msgs) - 1
		if m.hit != nil && m.hitPath == msg.path {
			m.showHit()
			return m, nil
		}
		m.showDoc()
		m.preview.GotoBottom()
		return m, nil
	case searchedMsg:
		f := m.find
		if f == nil || msg.gen != f.gen {
			return m, nil
		}
		f.running, f.err, f.more, f.hits = false, msg.err, msg.more, f.hits[:0]
		for _, h := range msg.hits {
			if _, ok := m.byID[h.Session]; ok {
				f.hits = append(f.hits, h)
			}
		}
		f.cursor, f.top = 0, 0
		if len(f.hits) > 0 {
			return m, m.jump(&f.hits[0])
		}
		return m, nil
	case planMsg:
		if msg.err != nil {
			m.status = visible.String(msg.err.Error())
			return m, nil
		}
		d := &dialog{action: msg.action, path: msg.path, head: msg.head, cs: msg.plan.ChangeSet, apply: msg.plan.Apply,
			then: msg.plan.Then, close: msg.plan.Close, view: viewport.New()}
		d.view.MouseWheelEnabled = true
		d.view.SoftWrap = true
		var b bytes.Buffer
		if msg.note != "" {
			b.WriteString(msg.note + "\n\n")
		}
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
		if msg.err == nil && m.dialog.then != nil {
			// Applied: the session is resumed where it is now.
			m.Chosen = m.dialog.then()
			m.closeDialog()
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
			n := 1
			if msg.Button == tea.MouseWheelUp {
				n = -1
			}
			if m.results() {
				return m, m.moveHit(n)
			}
			return m, m.move(n)
		}
		var cmd tea.Cmd
		m.preview, cmd = m.preview.Update(msg)
		m.followScroll()
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
		// The arrows scroll the keys when they do not fit; any other
		// key closes them.
		switch s {
		case "down", "j", "pgdown", "space":
			m.helpTop++
		case "up", "k", "pgup":
			m.helpTop = max(0, m.helpTop-1)
		default:
			m.help = false
		}
		return nil
	}
	if m.dialog != nil {
		return m.dialogKey(s)
	}
	if m.choosing != "" {
		return m.chooseKey(s)
	}
	// At the start, and whenever the filter is empty, / and q are keys
	// (no filter starts with them), as ? always is.
	keys := !m.typing || m.filter == ""
	if s == "ctrl+s" || s == "/" && keys && m.find == nil {
		return m.openFind()
	}
	if m.find != nil {
		return m.findKey(k)
	}
	if s == "q" && keys {
		return tea.Quit
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
		m.followScroll()
		return nil
	case "shift+down", "alt+down":
		m.preview.ScrollDown(3)
		m.followScroll()
		return nil
	case "tab":
		m.here = !m.here
		m.refilter()
		return m.selected()
	case "enter":
		if r := m.current(); r != nil && r.Machine != "" {
			return m.pull(r)
		}
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
	case "ctrl+f":
		m.typing = true
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
		m.help, m.helpTop = true, 0
		return nil
	}
	if r := m.current(); !m.typing && r != nil && r.Machine != "" && slices.Contains([]string{"r", "d", "a", "e", "f", "t", "[", "]"}, s) {
		m.status = "session " + visible.String(r.Short) + " is on the remote (machine " + visible.String(r.Machine) + "): enter pulls it here first"
		return nil
	}
	if !m.typing {
		switch s {
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
				m.status = "exporting " + visible.String(r.Short) + "…"
				return exportCmd(m.opts.Root, r.Path, r.Session)
			}
			return nil
		case "u":
			return m.plan(Undo)
		case "f":
			return m.fork()
		case "t":
			if m.current() != nil && m.opts.PlanTrim != nil {
				m.choosing = Trim
			}
			return nil
		case "[":
			m.stepMsg(-1)
			return nil
		case "]":
			m.stepMsg(1)
			return nil
		case "v":
			m.toggle(foldThinking)
			return nil
		case "o":
			m.toggle(foldTools)
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

// chooseKey takes the key that says what a trim takes out.
func (m *Model) chooseKey(s string) tea.Cmd {
	m.choosing = ""
	r := m.current()
	if r == nil {
		return nil
	}
	var thinking, tools bool
	switch s {
	case "t", "1":
		thinking = true
	case "o", "2":
		tools = true
	case "b", "3", "enter":
		thinking, tools = true, true
	default:
		return nil
	}
	var what []string
	if thinking {
		what = append(what, "--thinking")
	}
	if tools {
		what = append(what, "--tool-output")
	}
	path, plan := r.Path, m.opts.PlanTrim
	head := fmt.Sprintf("cfix trim %s %s: the plan", visible.String(r.Short), strings.Join(what, " "))
	note := "A new session without them (the last " + strconv.Itoa(trim.DefaultKeepTurns) + " turns kept as they are); this one stays as it is."
	m.status = "planning the trim of " + visible.String(r.Short) + "…"
	return func() tea.Msg {
		p, err := plan(path, thinking, tools)
		return planMsg{action: Trim, path: path, head: head, note: note, plan: p, err: err}
	}
}

// fork plans the fork of the selected session at the message under the
// preview's cursor: cfix fork --at the entry its end mark names.
func (m *Model) fork() tea.Cmd {
	r := m.current()
	switch {
	case r == nil || m.opts.PlanFork == nil:
		return nil
	case m.doc == nil || m.previewPath != r.Path:
		m.status = "the preview is not read yet"
		return nil
	case m.msg < 0 || m.msg >= len(m.doc.msgs):
		m.status = "no message in the preview to fork at"
		return nil
	}
	msg := m.doc.msgs[m.msg]
	path, at, plan := r.Path, msg.at, m.opts.PlanFork
	head := fmt.Sprintf("cfix fork %s --at %s: the plan", visible.String(r.Short), short(at))
	what := msg.head
	switch {
	case msg.turn > 0 && msg.last:
		what += fmt.Sprintf(", the last of turn %d: the same fork as cfix fork --turn %d", msg.turn, msg.turn)
	case msg.turn > 0:
		what += fmt.Sprintf(", in turn %d", msg.turn)
	}
	note := fmt.Sprintf("A new session whose history ends with the message marked (%s), at entry %s; this one stays as it is.", what, at)
	m.status = fmt.Sprintf("planning the fork of %s at %s…", visible.String(r.Short), short(at))
	return func() tea.Msg {
		p, err := plan(path, at)
		return planMsg{action: Fork, path: path, head: head, note: note, plan: p, err: err}
	}
}

// stepMsg moves the preview's cursor n messages, and the preview to it.
func (m *Model) stepMsg(n int) {
	if m.doc == nil || len(m.doc.msgs) == 0 {
		m.status = "no message in the preview to fork at"
		return
	}
	m.msg = max(0, min(len(m.doc.msgs)-1, m.msg+n))
	m.showDoc()
	m.scrollTo(m.rend.msg[m.msg])
}

// followScroll keeps the preview's cursor in view once the preview
// scrolled: when the heading of its message left the view, the cursor
// goes to the last message whose heading is in view or above it (else
// the first).
func (m *Model) followScroll() {
	if m.doc == nil || len(m.doc.msgs) == 0 {
		return
	}
	w, y := m.preview.Width(), m.preview.YOffset()
	top, bottom := m.rend.lineAt(y, w), m.rend.lineAt(y+m.preview.Height()-1, w)
	if m.msg >= 0 && m.msg < len(m.rend.msg) {
		if at := m.rend.msg[m.msg]; at >= top && at <= bottom {
			return
		}
	}
	if k := m.msgAt(bottom); k != m.msg {
		m.msg = k
		m.showDoc()
	}
}

// msgAt is the message line i of the preview is part of: the last whose
// heading is at or above it (else the first).
func (m *Model) msgAt(i int) int {
	k := 0
	for j, at := range m.rend.msg {
		if at <= i {
			k = j
		}
	}
	return k
}

// toggle shows the folded parts of kind whole, or folds them again,
// keeping the turn under the cursor in view.
func (m *Model) toggle(kind int) {
	m.open[kind] = !m.open[kind]
	if m.doc == nil {
		return
	}
	m.showDoc()
	if m.hit != nil && m.hitPath == m.previewPath {
		m.showHit()
	} else if m.msg >= 0 && m.msg < len(m.rend.msg) {
		m.scrollTo(m.rend.msg[m.msg])
	}
}

// showDoc lays the preview's conversation out again; it returns the line
// of the hit shown, or -1.
func (m *Model) showDoc() int {
	if m.doc == nil {
		return -1
	}
	m.rend = m.doc.render(m.open, m.msg)
	at := -1
	lines := m.rend.lines
	if h := m.hit; h != nil && m.hitPath == m.previewPath {
		if at = m.rend.find(h.Match, around(h)); at >= 0 {
			lines = slices.Clone(lines)
			lines[at] = selStyle.Render(ansi.Strip(lines[at]))
		}
	}
	m.preview.SetContentLines(lines)
	return at
}

// showHit shows the preview at the search hit, the cursor on its
// message.
func (m *Model) showHit() {
	at := m.showDoc()
	if at < 0 {
		m.status = "the hit is not in the preview (it holds the conversation's last " + changeset.Size(PreviewCap) + ")"
		m.preview.GotoBottom()
		return
	}
	if len(m.rend.msg) == 0 {
		m.scrollTo(max(0, at-2))
		return
	}
	if k := m.msgAt(at); k != m.msg {
		m.msg = k
		at = m.showDoc()
	}
	// The heading of the hit's message in view too, when both fit.
	w, head := m.preview.Width(), m.rend.msg[m.msg]
	if head <= at && m.rend.offset(at, w)-m.rend.offset(head, w) < m.preview.Height()-1 {
		m.scrollTo(head)
		return
	}
	m.scrollTo(max(0, at-2))
}

// scrollTo puts the preview's line i at its top.
func (m *Model) scrollTo(i int) {
	m.preview.SetYOffset(m.rend.offset(i, m.preview.Width()))
}

// results reports whether the list shows the hits of a search.
func (m *Model) results() bool { return m.find != nil && !m.find.typing }

// openFind opens the content search, its query to be typed.
func (m *Model) openFind() tea.Cmd {
	if m.find != nil {
		m.find.typing = true
		return nil
	}
	m.find = &finder{typing: true}
	return nil
}

// findKey handles a key of the content search.
func (m *Model) findKey(k tea.KeyPressMsg) tea.Cmd {
	f, s := m.find, k.String()
	if f.typing {
		switch s {
		case "enter":
			if strings.TrimSpace(f.query) == "" {
				return nil
			}
			m.findGen++
			m.findWant.Store(m.findGen)
			f.typing, f.running, f.gen, f.hits, f.err, f.more = false, true, m.findGen, nil, nil, false
			return searchCmd(m.opts.Root, f.query, f.gen, m.findWant)
		case "esc":
			m.closeFind()
		case "backspace":
			if f.query != "" {
				_, n := lastRune(f.query)
				f.query = f.query[:len(f.query)-n]
			}
		default:
			if t := k.Text; t != "" && printable(t) {
				f.query += t
			}
		}
		return nil
	}
	switch s {
	case "up", "k", "ctrl+p":
		return m.moveHit(-1)
	case "down", "j", "ctrl+n":
		return m.moveHit(1)
	case "pgup":
		return m.moveHit(-m.listHeight())
	case "pgdown":
		return m.moveHit(m.listHeight())
	case "shift+up", "alt+up":
		m.preview.ScrollUp(3)
		m.followScroll()
	case "shift+down", "alt+down":
		m.preview.ScrollDown(3)
		m.followScroll()
	case "enter":
		// The session of the hit stays selected, the hit in view.
		m.closeFind()
		m.typing = false
	case "esc", "q":
		m.closeFind()
	case "/":
		f.typing = true
	case "?":
		m.help, m.helpTop = true, 0
	case "v":
		m.toggle(foldThinking)
	case "o":
		m.toggle(foldTools)
	}
	return nil
}

// closeFind closes the content search; a search still running stops.
func (m *Model) closeFind() {
	m.find = nil
	m.findWant.Store(0)
}

// moveHit moves the cursor of the hits by n, and the preview to the hit.
func (m *Model) moveHit(n int) tea.Cmd {
	f := m.find
	if len(f.hits) == 0 {
		return nil
	}
	f.cursor = max(0, min(len(f.hits)-1, f.cursor+n))
	h := m.listHeight()
	f.top = max(min(f.top, f.cursor), f.cursor-h+1)
	return m.jump(&f.hits[f.cursor])
}

// jump selects the session of hit h (the filter cleared and every
// project in scope when it is not shown) and shows the hit in the
// preview, folded parts of its kind open.
func (m *Model) jump(h *search.Hit) tea.Cmd {
	i, ok := m.byID[h.Session]
	if !ok {
		m.status = "session " + h.Session + " is not in the list"
		return nil
	}
	pos := slices.Index(m.shown, i)
	if pos < 0 {
		m.filter, m.here = "", false
		m.refilter()
		pos = slices.Index(m.shown, i)
	}
	m.cursor = pos
	m.scroll()
	hit := *h
	m.hit, m.hitPath = &hit, m.all[i].Path
	if kind := foldOf(h); kind != 0 {
		m.open[kind] = true
	}
	if cmd := m.selected(); cmd != nil {
		return cmd
	}
	m.showHit()
	return nil
}

func (m *Model) dialogKey(s string) tea.Cmd {
	d := m.dialog
	switch s {
	case "y", "enter":
		if d.result == "" && d.cs.Empty() && d.then != nil {
			// Nothing to apply: the session here is resumed.
			m.Chosen = d.then()
			m.closeDialog()
			return tea.Quit
		}
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
	if m.dialog.close != nil {
		m.dialog.close()
	}
	m.dialog = nil
	m.layout()
	if applied {
		m.loading = true
		m.previewPath = ""
		return scanCmd(m.opts.Root)
	}
	return nil
}

// pull plans the pull of the remote session of r, in a command.
func (m *Model) pull(r *Row) tea.Cmd {
	if m.opts.PlanPull == nil {
		return nil
	}
	row, plan := *r, m.opts.PlanPull
	head := fmt.Sprintf("cfix pull %s --machine %s: the plan", visible.String(r.Short), visible.String(r.Machine))
	note := fmt.Sprintf("Session %s of machine %s, from the remote: y brings it here, then resumes it.", r.Session, r.Machine)
	m.status = "fetching " + visible.String(r.Short) + " from the remote…"
	return func() tea.Msg {
		p, err := plan(row)
		if err == nil && p.ChangeSet.Empty() {
			note = fmt.Sprintf("Session %s of machine %s is here already: enter resumes it.", row.Session, row.Machine)
		}
		return planMsg{action: Pull, path: row.Path, head: head, note: note, plan: p, err: err}
	}
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
		m.status = "session " + visible.String(r.Session) + " is live (a running Claude Code has it open): cfix changes no live session"
		return nil
	case m.opts.Plan == nil:
		return nil
	}
	path, plan := r.Path, m.opts.Plan
	m.status = "planning " + string(a) + " of " + visible.String(r.Short) + "…"
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
	m.local = rows
	if len(m.remote) > 0 {
		rows = append(append([]Row(nil), rows...), m.remote...)
		sortRows(rows)
	}
	m.all = rows
	m.byID = make(map[string]int, len(rows))
	m.idWidth = 8
	for i := range rows {
		if rows[i].Machine == "" {
			m.byID[rows[i].Session] = i // (what the search finds)
		}
		m.idWidth = max(m.idWidth, len(rows[i].Short))
	}
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
		m.previewPath, m.doc, m.msg = "", nil, -1
		m.preview.SetContent("")
		return nil
	}
	if r.Path == m.previewPath {
		return nil
	}
	if r.Path != m.hitPath {
		m.hit, m.hitPath = nil, ""
	}
	m.previewPath = r.Path
	m.doc, m.msg = nil, -1
	if r.Machine != "" {
		m.previewGen++
		m.want.Store(m.previewGen)
		m.preview.SetContent(sanitize(remoteText(r)))
		return nil
	}
	m.previewGen++
	m.want.Store(m.previewGen)
	m.preview.SetContent("loading…")
	return previewCmd(m.opts.Root, r.Path, m.previewGen, m.want)
}

// The screen: a header line, the list, a line naming the selected
// session, the preview, and the help bar (two lines).
func (m *Model) listHeight() int {
	return max(1, (m.height-4)*2/5)
}

func (m *Model) layout() {
	ph := m.height - 5 - m.listHeight()
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
	b.WriteString(fit(m.header(), w) + "\n")
	if m.dialog != nil {
		b.WriteString(m.renderDialog())
		return b.String()
	}
	if m.help {
		lines := strings.Split(ansi.Wrap(helpText, max(10, w), " "), "\n")
		h := max(1, m.height-1)
		m.helpTop = max(0, min(m.helpTop, len(lines)-h))
		lines = lines[m.helpTop:]
		if len(lines) > h {
			lines = append(lines[:h-1:h-1], dimStyle.Render("  ↓ more"))
		}
		b.WriteString(strings.Join(lines, "\n"))
		return b.String()
	}
	// The list, or the hits of a search.
	h := m.listHeight()
	if m.results() {
		m.renderHits(&b, h)
	} else {
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
	}
	if m.err != nil {
		b.WriteString(errStyle.Render(fit(visible.String(m.err.Error()), w)) + "\n")
	} else if r := m.current(); r != nil {
		b.WriteString(boldStyle.Render(fit("── "+visible.String(r.Session)+" · "+visible.String(r.ProjectPath)+" ", w)) + "\n")
	} else if len(m.all) > 0 || !m.loading {
		b.WriteString(fit("── no session matches", w) + "\n")
	} else {
		b.WriteString("\n")
	}
	b.WriteString(m.preview.View() + "\n")
	bar := m.helpBar()
	if m.status != "" {
		bar = [2]string{m.status, bar[1]}
	}
	b.WriteString(dimStyle.Render(fit(bar[0], w)) + "\n" + dimStyle.Render(fit(bar[1], w)))
	return b.String()
}

// header is the first line: the scope, the counts, the filter or the
// search.
func (m *Model) header() string {
	scope := "all projects"
	if m.here {
		scope = "this project"
	}
	head := fmt.Sprintf("cfix browse · %s · %d/%d", scope, len(m.shown), m.countScope())
	if m.loading {
		head += " · loading…"
	}
	if f := m.find; f != nil {
		q := visible.String(f.query)
		switch {
		case f.typing:
			return titleStyle.Render(head) + "  search: " + q + "▏"
		case f.running:
			return titleStyle.Render(head) + "  search: " + q + " · searching…"
		}
		n := fmt.Sprintf("%d hits", len(f.hits))
		if len(f.hits) == 1 {
			n = "1 hit"
		}
		if f.more {
			n = fmt.Sprintf("the first %d hits", len(f.hits))
		}
		return titleStyle.Render(head) + "  search: " + q + " · " + n
	}
	cursor := ""
	if m.typing {
		cursor = "▏"
	}
	return titleStyle.Render(head) + "  filter: " + visible.String(m.filter) + cursor
}

// renderHits writes h lines of the hits of the search: each its
// session's id and title, and the text around the match.
func (m *Model) renderHits(b *strings.Builder, h int) {
	f, w := m.find, m.width
	lines := 0
	line := func(s string) {
		if lines < h {
			b.WriteString(s + "\n")
			lines++
		}
	}
	switch {
	case f.running:
		line(fit("  searching the text of every transcript for "+visible.String(f.query)+"…", w))
	case f.err != nil:
		line(errStyle.Render(fit("  "+visible.String(f.err.Error()), w)))
	case len(f.hits) == 0:
		line(fit("  no session holds "+visible.String(f.query), w))
	}
	for i := f.top; i < len(f.hits) && lines < h; i++ {
		hit := &f.hits[i]
		title := hit.Session
		if j, ok := m.byID[hit.Session]; ok {
			title = strings.Join(strings.Fields(m.all[j].Title), " ")
		}
		title = ansi.Truncate(visible.String(title), max(10, (w-12)/3), "…")
		text := m.short(hit.Session) + "  " + title + " · " + visible.String(snippet(hit))
		if i == f.cursor {
			line(selStyle.Render(fit("> "+text, w)))
		} else {
			line(fit("  "+text, w))
		}
	}
	for lines < h {
		line("")
	}
}

// helpBar is the keys of the moment, on two lines, in the width there is.
func (m *Model) helpBar() [2]string {
	wide := m.width >= 100
	switch {
	case m.choosing == Trim:
		return [2]string{"trim into a new session: t thinking · o tool output", "b both (enter) · any other key: no trim"}
	case m.find != nil && m.find.typing:
		return [2]string{"type words to find in every transcript · enter: search", "esc: back to the list · ctrl+c: quit"}
	case m.find != nil:
		return [2]string{"↑/↓ the hits · enter: go to it · esc: back · / search again", "v thinking · o tools · shift+↑/↓ scroll · ? keys"}
	case m.typing && m.filter == "" && wide:
		return [2]string{"type to filter · enter: resume · /: search every session · ?: all keys · q: quit",
			"esc: the action keys (f fork · t trim · e export · r repair · d rm …) · tab: scope"}
	case m.typing && m.filter == "":
		return [2]string{"type to filter · enter resume · / search · ? keys · q quit", "esc actions (f fork, t trim …) · tab scope"}
	case m.typing && wide:
		return [2]string{"esc: actions · tab: scope · enter: resume · ?: all keys · ctrl+c: quit",
			"typing filters the list · ctrl+s: search the text of every session"}
	case m.typing:
		return [2]string{"esc actions · tab scope · enter resume · ? keys", "ctrl+s search the text of every session"}
	case wide:
		return [2]string{"enter resume · f fork · t trim · e export · r repair · d rm · a archive · u undo · q quit",
			"[ ] message · v thinking · o tools · / search · ctrl+f filter · tab scope · ? all keys"}
	}
	return [2]string{"enter resume · f fork · t trim · / search · ? keys · q quit",
		"[ ] msg · v thinking · o tools · r repair · d rm · u undo"}
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
	fmt.Fprintf(&b, "%-*s  %s  ", m.idWidth, visible.String(r.Short), stamp(r.LastActive))
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
	head := fmt.Sprintf("cfix %s session %s: the plan", d.action, m.short(sessionOf(d.path)))
	if d.head != "" {
		head = d.head
	} else if d.path == "" {
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

// short is the short id of the session id: its row's, else its first 8
// characters.
func (m *Model) short(id string) string {
	if i, ok := m.byID[id]; ok && m.all[i].Short != "" {
		return visible.String(m.all[i].Short)
	}
	return visible.String(short(id))
}

// short is the first 8 characters of an id.
func short(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	return visible.String(id)
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

// remoteText is the preview of a session of the remote.
func remoteText(r *Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s, on the remote: pushed by machine %s.\n\n", r.Session, r.Machine)
	if r.Title != "" && r.Title != r.Session {
		fmt.Fprintf(&b, "  title        %s\n", strings.Join(strings.Fields(r.Title), " "))
	}
	if r.ProjectPath != "" {
		fmt.Fprintf(&b, "  ran in       %s\n", r.ProjectPath)
	}
	if !r.LastActive.IsZero() {
		fmt.Fprintf(&b, "  last active  %s\n", r.LastActive.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(&b, "  size         %s\n\n", changeset.Size(r.Size))
	b.WriteString("Enter pulls it into this store (its plan first, applied on y: cfix pull), then resumes it.\n")
	return b.String()
}

func marks(r *Row) string {
	var m []string
	if r.Machine != "" {
		m = append(m, "@"+r.Machine)
	}
	if r.Live {
		m = append(m, "live")
	}
	if r.MetaOnly {
		m = append(m, "stub")
	}
	if r.Swept {
		m = append(m, "swept")
	}
	return strings.Join(m, ",")
}

const helpText = `Keys
  typing     filters: title, first prompt, project, id
             (with the filter empty, / searches and q
             quits; ? always lists the keys)
  backspace  removes a letter of the filter
  esc        from the filter to the action keys;
             there, clears the filter
  ctrl+f     back to the filter
  up/down    move (pgup/pgdown, home/end; j/k)
  shift+up/down, the wheel: scroll the preview
  tab        this directory's project / every project
  enter      resume it (as cfix resume: check, repair)
  [ ]        the message before / after in the preview
             (▶, the scroll moves it too)
  f          fork: a new session whose history ends with
             the message marked (cfix fork --at)
  t          trim into a new session: thinking, tool
             output or both
  v          thinking in the preview: shown / folded
  o          tool calls and notes: shown / folded
  / ctrl+s   search the text of every session; enter
             on a hit goes to it
  r          repair: the plan, applied on y (journaled)
  d          rm: the plan, applied on y (journaled)
  a          archive: the plan, applied on y
  e          export as Markdown, open it in $PAGER
  u          undo the store's last change: its plan, on y
  q, ctrl+c  quit

marks: live (a client has it open), stub (no
conversation: listed after every other session),
swept (Claude Code's next cleanup deletes it), @MACHINE
(with --remote: a session of the remote, pushed by that
machine; enter pulls it, then resumes it). Any
key closes this help; cfix undo takes a change back
`
