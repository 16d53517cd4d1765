package browse

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
)

// Row is a session of the list.
type Row struct {
	store.SessionInfo
	// ProjectPath is the real path of its project (the folder's name
	// when none is known).
	ProjectPath string
	// Short is its short id (catalog.ShortIDs).
	Short string
	// Detailed is false while only the scan (no glance) is known.
	Detailed bool
	// Machine, for a session of a remote (Options.Remote), is the
	// machine that pushed it: it is not in the store, its Path names it
	// only (RemotePath), and Enter pulls it before it is resumed.
	Machine string
	// hay is what the filter matches: title, first prompt, project path
	// and id, lowercased.
	hay string
}

// RemotePath is the Path of the row of session id of machine on a
// remote: no file of the store.
func RemotePath(machine, id string) string { return "remote:" + machine + "/" + id }

// remoteMsg holds the rows of the remote's sessions.
type remoteMsg struct {
	rows []Row
	err  error
}

// remoteCmd reads the remote's sessions with load.
func remoteCmd(load func() ([]Row, error)) tea.Cmd {
	if load == nil {
		return nil
	}
	return func() tea.Msg {
		rows, err := load()
		for i := range rows {
			rows[i].index()
		}
		return remoteMsg{rows: rows, err: err}
	}
}

func (r *Row) index() {
	r.hay = strings.ToLower(r.Title + "\x00" + r.FirstPrompt + "\x00" + r.ProjectPath + "\x00" + r.Session + "\x00" + r.Machine)
}

// scannedMsg is the list as the scan of projects/ has it: ids, sizes and
// modification times, before any transcript is read; or the whole list,
// when the catalog's cache holds every session as it is.
type scannedMsg struct {
	layout *loading
	rows   []Row
	err    error
}

// loading is a load of the list under way: the catalog it reads, and
// the rows it has read (done).
type loading struct {
	cat  *catalog.Catalog
	rows []Row
	done bool
}

// detailsMsg is the list with what the glance at each transcript says.
type detailsMsg struct {
	layout *loading
	rows   []Row
	err    error
}

// countedMsg holds the messages of the sessions a glance did not count
// (transcripts it did not read whole), by path.
type countedMsg struct {
	counts map[string]int
}

// scanCmd scans the store. When the cache of its catalog holds every
// session as it is, the list is whole at once; else its rows hold what
// the scan says, and detailsCmd reads the rest.
func scanCmd(root string) tea.Cmd {
	return func() tea.Msg {
		defer catalog.Loading()()
		cat := catalog.Open(root)
		l, err := cat.Layout()
		if err != nil {
			return scannedMsg{err: err}
		}
		if cat.Cached(l) {
			rows, err := listRows(cat)
			if err != nil {
				return scannedMsg{err: err}
			}
			return scannedMsg{layout: &loading{cat: cat, rows: rows, done: true}, rows: rows}
		}
		ids, err := cat.ShortIDs()
		if err != nil {
			return scannedMsg{err: err}
		}
		var rows []Row
		for _, f := range l.Files {
			if f.Kind != store.KindSession || f.Size == 0 {
				continue
			}
			r := Row{ProjectPath: f.Project, Short: ids.Of(f.Session)}
			r.File = f
			r.LastActive = f.ModTime
			r.Title = f.Session
			r.index()
			rows = append(rows, r)
		}
		sortRows(rows)
		return scannedMsg{layout: &loading{cat: cat}, rows: rows}
	}
}

// detailsCmd glances at every session of the store (head and tail of
// each transcript only, through the catalog's cache), as cfix ls does.
func detailsCmd(ld *loading) tea.Cmd {
	if ld == nil {
		return nil
	}
	return func() tea.Msg {
		if ld.done {
			return detailsMsg{layout: ld, rows: ld.rows}
		}
		defer catalog.Loading()()
		rows, err := listRows(ld.cat)
		// A cache that cannot be written costs only the next start.
		ld.cat.Close()
		ld.rows, ld.done = rows, true
		return detailsMsg{layout: ld, rows: rows, err: err}
	}
}

// countCmd counts the messages of the sessions of a finished load that
// the glance did not read whole (as cfix ls counts them: through the
// catalog's cache, which then holds them), after the list is painted.
func countCmd(ld *loading) tea.Cmd {
	if ld == nil || ld.cat == nil {
		return nil
	}
	var ss []store.SessionInfo
	for _, r := range ld.rows {
		if !r.Whole && r.Err == nil {
			ss = append(ss, r.SessionInfo)
		}
	}
	if len(ss) == 0 {
		ld.cat.Close()
		return nil
	}
	return func() tea.Msg {
		defer catalog.Loading()()
		ld.cat.Count(ss)
		ld.cat.Close()
		counts := make(map[string]int, len(ss))
		for _, s := range ss {
			if s.MessagesKnown {
				counts[s.Path] = s.Messages
			}
		}
		return countedMsg{counts: counts}
	}
}

// listRows are the rows of the sessions the catalog lists.
func listRows(cat *catalog.Catalog) ([]Row, error) {
	ss, err := cat.List(false)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(ss))
	for i, s := range ss {
		rows[i] = Row{SessionInfo: s.SessionInfo, ProjectPath: s.ProjectPath, Short: s.Short, Detailed: true}
		rows[i].index()
	}
	return rows, nil
}

// sortRows sorts as the catalog lists: newest first, the stubs last.
func sortRows(rows []Row) {
	catalog.SortNewest(rows, func(r *Row) (bool, time.Time, string) { return r.MetaOnly, r.LastActive, r.Path })
}

// PreviewCap bounds what a preview holds of a conversation: its last
// PreviewCap bytes as cfix export writes it.
const PreviewCap = 256 << 10

// previewMsg is the preview of the session at path.
type previewMsg struct {
	gen  uint64
	path string
	text string
	cut  bool
	err  error
}

var errStale = errors.New("preview no longer wanted")

// tail keeps the last n bytes written to it; it stops the writer once
// its generation is no longer the wanted one.
type tail struct {
	buf  []byte
	n    int
	cut  bool
	gen  uint64
	want *atomic.Uint64
}

func (t *tail) Write(p []byte) (int, error) {
	if t.want != nil && t.want.Load() != t.gen {
		return 0, errStale
	}
	if len(p) >= t.n {
		// Only its end can be kept: never copy all of a long write.
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		t.cut = true
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) text() string {
	b := t.buf
	if len(b) > t.n {
		b, t.cut = b[len(b)-t.n:], true
	}
	if t.cut {
		// Start at a whole line.
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// previewCmd exports the session at path as Markdown into a bounded
// buffer: a session of any size is read as a stream, and only the last
// PreviewCap bytes of its export are kept.
func previewCmd(root, path string, gen uint64, want *atomic.Uint64) tea.Cmd {
	return func() tea.Msg {
		msg := previewMsg{gen: gen, path: path}
		fam, err := show.Resolve(root, path)
		if err != nil {
			msg.err = err
			return msg
		}
		t := &tail{n: PreviewCap, gen: gen, want: want}
		if err := export.Write(t, fam, export.Options{Format: "md", Anchors: true}); err != nil {
			msg.err = err
			return msg
		}
		msg.text = sanitize(t.text())
		msg.cut = t.cut
		return msg
	}
}

// sanitize writes the control characters of text (but tabs and
// newlines) as escapes, so nothing of a transcript reaches the terminal
// as an escape sequence.
func sanitize(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\t", "    "), "\n")
	for i, l := range lines {
		lines[i] = visible.String(l)
	}
	return strings.Join(lines, "\n")
}

var _ io.Writer = (*tail)(nil)

// exportedMsg says where the export of a session was written.
type exportedMsg struct {
	file string
	err  error
}

// pagedMsg: the pager showing file ended.
type pagedMsg struct {
	file string
	err  error
}

// exportCmd writes the session at path as Markdown (as cfix export
// writes it) into a new file of the temporary folder, outside the store,
// for the pager to show on the terminal: through internal/visible, so
// that no escape sequence the store holds reaches it, whatever the pager.
func exportCmd(root, path, id string) tea.Cmd {
	return func() tea.Msg {
		fam, err := show.Resolve(root, path)
		if err != nil {
			return exportedMsg{err: err}
		}
		f, err := os.CreateTemp("", "cfix-"+id+"-*.md")
		if err != nil {
			return exportedMsg{err: err}
		}
		v := visible.NewWriter(f)
		err = export.Write(v, fam, export.Options{Format: "md"})
		if ferr := v.Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return exportedMsg{err: err}
		}
		return exportedMsg{file: f.Name()}
	}
}

// pagerCmd shows file in $CFIX_PAGER, else $PAGER, else less, with the
// terminal handed to it (the browser comes back when it ends).
func pagerCmd(file string) tea.Cmd {
	pager := os.Getenv("CFIX_PAGER")
	if pager == "" {
		pager = os.Getenv("PAGER")
	}
	if pager == "" {
		pager = "less"
	}
	c := exec.Command("sh", "-c", pager+` "$1"`, "sh", file)
	return tea.ExecProcess(c, func(err error) tea.Msg { return pagedMsg{file: file, err: err} })
}
