package changeset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/session"
)

// Context is the number of unchanged lines shown around a change.
const Context = 3

// MaxShownLine is the display width past which a line is shortened (the
// file keeps every byte).
const MaxShownLine = 240

// maxListed bounds the lines shown of a created or deleted file, and the
// size of a region diffed line by line.
const (
	maxListed = 40
	maxRegion = 20000
)

// Stats counts what an op touches, for the summary.
type Stats struct {
	Files          int
	LinesRemoved   int
	LinesAdded     int
	BytesRemoved   int64
	BytesAdded     int64
	EntriesRemoved int
	EntriesAdded   int
}

// OpStats returns what op changes, without reading large files.
func OpStats(op *Op) Stats {
	s := Stats{Files: 1, EntriesRemoved: op.EntriesRemoved, EntriesAdded: op.EntriesAdded}
	switch op.Action {
	case Rewrite, Create:
		if op.HasData || op.Data != nil {
			s.BytesAdded = int64(len(op.Data))
			s.BytesRemoved = op.Expect.Size
			s.LinesAdded = bytes.Count(op.Data, []byte("\n"))
			return s
		}
		if op.From != "" && len(op.Edits) == 0 && op.FromExpect != nil {
			s.BytesAdded = op.FromExpect.Size
			s.BytesRemoved = op.Expect.Size
			if op.Transform != nil {
				s.BytesAdded += int64(len(op.Transform.Append)) - op.Transform.Saved
				s.LinesAdded += bytes.Count(op.Transform.Append, []byte("\n"))
			}
			return s
		}
		if op.Transform != nil && op.From == "" {
			s.BytesRemoved = op.Transform.Saved
			return s
		}
		for _, e := range op.Edits {
			s.LinesRemoved += e.Count
			s.LinesAdded += bytes.Count(e.New, []byte("\n"))
			s.BytesRemoved += e.Length
			s.BytesAdded += int64(len(e.New))
		}
	case Delete, DeleteDir:
		s.BytesRemoved = op.Expect.Size
	}
	return s
}

// Summary writes what a plan does: its headline first (how many
// sessions, changes, entries and bytes), what an apply keeps in its
// journal and the planner's notes, then one line per operation.
func Summary(w io.Writer, cs *ChangeSet) {
	if cs.Empty() {
		fmt.Fprintf(w, "cfix %s: nothing to do\n", cs.Command)
		for _, n := range cs.Notes {
			fmt.Fprintf(w, "note: %s\n", visible.String(n))
		}
		return
	}
	fmt.Fprintln(w, Headline(cs))
	if kept := JournalBytes(cs); kept > 0 {
		fmt.Fprintf(w, "journal: an apply keeps %s of backups outside the store so that cfix undo can put them back (cfix journal prune frees them)\n", Size(kept))
	}
	for _, n := range cs.Notes {
		fmt.Fprintf(w, "note: %s\n", visible.String(n))
	}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		s := OpStats(op)
		detail := ""
		switch op.Action {
		case Rewrite:
			detail = fmt.Sprintf("%s, %s → %s", entries(s), Size(op.Expect.Size), Size(op.Expect.Size-s.BytesRemoved+s.BytesAdded))
			if op.From != "" && len(op.Edits) == 0 {
				detail = fmt.Sprintf("%s → %s", Size(op.Expect.Size), Size(s.BytesAdded))
			}
		case Create:
			detail = Size(s.BytesAdded)
			if s.EntriesAdded > 0 {
				detail = fmt.Sprintf("%s, %s", plural.Count(s.EntriesAdded, "entry"), detail)
			}
		case Delete, DeleteDir:
			detail = Size(op.Expect.Size)
		case Rename:
			detail = "→ " + op.To
		case CreateDir:
			detail = "from " + op.From
			if cs.owns(op.From) {
				// A folder the planner made for the copy (restore's
				// extraction): what it holds says more than its name.
				detail = "new folder"
				if files, size, err := treeSize(op.From); err == nil {
					detail = fmt.Sprintf("new folder: %s, %s", plural.Count(files, "file"), Size(size))
				}
			}
		case RemoveEmptyDir:
			detail = "if empty"
		case DeleteEmptyDir:
			detail = "left empty"
		case RestoreDir:
			detail = fmt.Sprintf("mode %04o, modified %s", uint32(op.Mode), op.ModTime.Local().Format("2006-01-02 15:04:05"))
		}
		fmt.Fprintf(w, "  %-10s %s (%s): %s\n", op.Action, visible.String(op.Path), visible.String(detail), visible.String(op.Reason))
	}
}

// verbs say what a planner does to the sessions it touches, for the
// headline; a command not listed says how many sessions its changes touch.
var verbs = map[string]string{
	"archive": "archives", "restore": "restores", "rm": "removes", "clone": "copies", "move": "moves",
	"move-project": "moves", "trim": "trims", "fork": "forks", "repair": "repairs",
}

// Headline is the first line of a plan's summary: the sessions it
// touches first (the distinct sessions its operations name), then its
// changes, entries and bytes. "cfix archive: archives 56 sessions (464
// changes, 3.1 MB removed, 0 B added)".
func Headline(cs *ChangeSet) string {
	var total Stats
	for i := range cs.Ops {
		s := OpStats(&cs.Ops[i])
		total.EntriesRemoved += s.EntriesRemoved
		total.EntriesAdded += s.EntriesAdded
		total.BytesRemoved += s.BytesRemoved
		total.BytesAdded += s.BytesAdded
	}
	n := Sessions(cs)
	figures := fmt.Sprintf("%d %s", len(cs.Ops), plural.Of(len(cs.Ops), "change"))
	if total.EntriesRemoved+total.EntriesAdded > 0 {
		figures += fmt.Sprintf(", %d %s removed, %d added", total.EntriesRemoved, plural.Of(total.EntriesRemoved, "entry"), total.EntriesAdded)
	}
	figures += fmt.Sprintf(", %s removed, %s added", Size(total.BytesRemoved), Size(total.BytesAdded))
	switch verb, ok := verbs[cs.Command]; {
	case n == 0:
		return fmt.Sprintf("cfix %s: %s", cs.Command, figures)
	case ok:
		return fmt.Sprintf("cfix %s: %s %d %s (%s)", cs.Command, verb, n, plural.Of(n, "session"), figures)
	default:
		return fmt.Sprintf("cfix %s: %d %s (%s)", cs.Command, n, plural.Of(n, "session"), figures)
	}
}

// Sessions is the number of distinct sessions the operations of cs name.
func Sessions(cs *ChangeSet) int {
	seen := map[string]bool{}
	for i := range cs.Ops {
		if id := cs.Ops[i].Session; id != "" {
			seen[id] = true
		}
	}
	return len(seen)
}

// JournalBytes is what an apply of cs keeps in its journal: the old bytes
// of each file it replaces (only those cut off, for a cut in place) and
// of each file and folder it removes.
func JournalBytes(cs *ChangeSet) int64 {
	var n int64
	for i := range cs.Ops {
		op := &cs.Ops[i]
		switch op.Action {
		case Rewrite:
			if keep, ok := op.cutAt(); ok {
				n += op.Expect.Size - keep
			} else {
				n += op.Expect.Size
			}
		case Delete, DeleteDir:
			n += op.Expect.Size
		}
	}
	return n
}

func entries(s Stats) string {
	return fmt.Sprintf("-%d +%d %s", s.EntriesRemoved, s.EntriesAdded, plural.Of(s.EntriesAdded+s.EntriesRemoved, "entry"))
}

// Size renders a byte count: 512 B, 1.5 KB, 2.0 MB, 1.25 GB.
func Size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}

// DiffOptions say how much a diff shows of the files a plan copies or
// removes.
type DiffOptions struct {
	// Full lists the lines of each file a plan copies (a clone's, a
	// move's, an archive's members) or removes, up to 40 of each; without
	// it, such a file is one line: how many lines or entries it holds, and
	// its size.
	Full bool
}

// Diff writes a unified diff of the change set, each file it copies or
// removes as one line (see DiffOptions). Rewrites by edits read the file
// once and diff only the edited regions.
func Diff(w io.Writer, cs *ChangeSet) error { return DiffWith(w, cs, DiffOptions{}) }

// DiffWith writes a unified diff of the change set as o says. It stops at
// the first write that fails.
func DiffWith(w io.Writer, cs *ChangeSet, o DiffOptions) error {
	bw := bufio.NewWriter(w)
	if cs.Masked {
		for i := range cs.Ops {
			maskedOp(bw, &cs.Ops[i])
		}
		return bw.Flush()
	}
	for i := range cs.Ops {
		if err := diffOp(bw, &cs.Ops[i], o); err != nil {
			return fmt.Errorf("%s: %w", cs.Ops[i].Path, err)
		}
		// A writer that takes no more (a screen's worth) stops the diff
		// here, before the next op's files are read.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Show writes the summary, then the diff (as much as View without a
// screen shows).
func Show(w io.Writer, cs *ChangeSet) error {
	_, err := View{}.Write(w, cs)
	return err
}

// View says how much of a plan Write shows.
type View struct {
	// Lines is the height of the screen the plan is shown on; 0 means no
	// limit. A plan whose summary and diff fit in Lines is shown whole;
	// of a longer one Write shows the summary alone and reports the diff
	// cut.
	Lines int
	// Stat shows the summary alone; Full the summary and the diff with
	// DiffOptions.Full, whatever their length.
	Stat, Full bool
	// Diff, when set, writes the diff instead of DiffWith (archive and
	// restore show what goes into and comes out of an archive).
	Diff func(w io.Writer, cs *ChangeSet, o DiffOptions) error
}

// errScreenFull stops a diff that does not fit on the screen.
var errScreenFull = errors.New("the diff does not fit on the screen")

// Write writes the plan as v says: the summary, then a blank line and the
// diff when it is shown. It reports whether it left the diff out for its
// length (the caller says how to see it). The diff is made once: into a
// buffer that takes a screen's worth of lines at most, written out when
// the plan fits.
func (v View) Write(w io.Writer, cs *ChangeSet) (cut bool, err error) {
	var sum bytes.Buffer
	Summary(&sum, cs)
	if _, err := w.Write(sum.Bytes()); err != nil {
		return false, err
	}
	if cs.Empty() || v.Stat {
		return false, nil
	}
	diff := v.Diff
	if diff == nil {
		diff = DiffWith
	}
	o := DiffOptions{Full: v.Full}
	if v.Lines <= 0 || v.Full {
		if _, err := fmt.Fprintln(w); err != nil {
			return false, err
		}
		return false, diff(w, cs, o)
	}
	room := v.Lines - bytes.Count(sum.Bytes(), nl) - 1
	if room <= 0 {
		return true, nil
	}
	buf := &screenBuffer{room: room}
	if err := diff(buf, cs, o); err != nil {
		if errors.Is(err, errScreenFull) {
			return true, nil
		}
		return false, err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return false, err
	}
	_, err = w.Write(buf.b.Bytes())
	return false, err
}

// screenBuffer keeps what is written to it while it holds room lines or
// fewer, and refuses the write that goes past them.
type screenBuffer struct {
	b    bytes.Buffer
	room int
}

func (s *screenBuffer) Write(p []byte) (int, error) {
	if s.room -= bytes.Count(p, nl); s.room < 0 {
		return 0, errScreenFull
	}
	return s.b.Write(p)
}

// maskedOp shows where op changes a file and why, not the lines (see
// ChangeSet.Masked).
func maskedOp(w *bufio.Writer, op *Op) {
	switch op.Action {
	case Rewrite, Create:
		fmt.Fprintf(w, "--- %s\n+++ %s\n", visible.String(op.Path), visible.String(op.Path))
		if len(op.Edits) == 0 {
			fmt.Fprintf(w, "@@ the whole file @@ %s (its lines are not shown: they may hold secrets)\n", visible.String(op.Reason))
			return
		}
		delta := 0
		for _, e := range op.Edits {
			added := bytes.Count(e.New, nl)
			if len(e.New) > 0 && e.New[len(e.New)-1] != '\n' {
				added++
			}
			fmt.Fprintf(w, "@@ -%s +%s @@ %s (the lines are not shown: they hold secrets)\n", hunkRange(e.Line, e.Count), hunkRange(e.Line+delta, added), visible.String(e.Reason))
			delta += added - e.Count
		}
	default:
		fmt.Fprintf(w, "%s %s: %s\n", op.Action, visible.String(op.Path), visible.String(op.Reason))
	}
}

func diffOp(w *bufio.Writer, op *Op, o DiffOptions) error {
	switch op.Action {
	case Rename:
		fmt.Fprintf(w, "rename from %s\nrename to %s\n", visible.String(op.Path), visible.String(op.To))
		return nil
	case RemoveEmptyDir, DeleteEmptyDir, RestoreDir:
		return nil // the summary's line says it all
	case DeleteDir:
		fmt.Fprintf(w, "--- %s/\n+++ /dev/null\n", visible.String(op.Path))
		if !o.Full {
			return countTree(w, op.Path, "-", "removed folder", op.Reason)
		}
		return listTree(w, op.Path, "-")
	case CreateDir:
		fmt.Fprintf(w, "--- /dev/null\n+++ %s/\n", visible.String(op.Path))
		if !o.Full {
			return countTree(w, op.From, "+", "new folder", op.Reason)
		}
		return listTree(w, op.From, "+")
	case Delete:
		fmt.Fprintf(w, "--- %s\n+++ /dev/null\n", visible.String(op.Path))
		if fi, err := os.Lstat(op.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return listLink(w, op.Path, "-", op.Reason)
		}
		if !o.Full {
			f, err := os.Open(op.Path)
			if err != nil {
				return err
			}
			defer f.Close()
			head := make([]byte, 512)
			n, _ := io.ReadFull(f, head)
			if binary(head[:n]) {
				fmt.Fprintf(w, "@@ binary file (%s) @@ %s\n", Size(op.Expect.Size), visible.String(op.Reason))
				return nil
			}
			return countLines(w, io.MultiReader(bytes.NewReader(head[:n]), f), "-", "removed file", op.Expect.Size, 0, op.Reason)
		}
		return listFile(w, op.Path, "-", op.Reason)
	case Create:
		if op.makesLink() {
			fmt.Fprintf(w, "--- /dev/null\n+++ %s\n", visible.String(op.Path))
			fmt.Fprintf(w, "@@ symbolic link to %s @@ %s\n", visible.String(op.FromExpect.Link), visible.String(op.Reason))
			return nil
		}
		if op.Transform != nil && (len(op.Transform.Trim) > 0 || len(op.Transform.Append) > 0) && op.From != "" {
			fmt.Fprintf(w, "--- %s\n+++ %s\n", visible.String(op.From), visible.String(op.Path))
			return diffTrim(w, op)
		}
		fmt.Fprintf(w, "--- /dev/null\n+++ %s\n", visible.String(op.Path))
		if !o.Full && op.From != "" {
			// A copy (a clone's, a move's): its size and line count, not
			// its lines.
			if op.EntriesAdded > 0 {
				return countLines(w, nil, "+", "new file", OpStats(op).BytesAdded, op.EntriesAdded, op.Reason)
			}
			r, err := op.content()
			if err != nil {
				return err
			}
			defer r.Close()
			head := make([]byte, 512)
			n, _ := io.ReadFull(r, head)
			if binary(head[:n]) {
				fmt.Fprintf(w, "@@ binary file (%s) @@ %s\n", Size(OpStats(op).BytesAdded), visible.String(op.Reason))
				return nil
			}
			return countLines(w, io.MultiReader(bytes.NewReader(head[:n]), r), "+", "new file", OpStats(op).BytesAdded, 0, op.Reason)
		}
		if (op.HasData || op.Data != nil) || op.From == "" || len(op.Edits) > 0 || op.Transform != nil {
			r, err := op.content()
			if err != nil {
				return err
			}
			defer r.Close()
			return listLines(w, r, "+", op.Reason)
		}
		return listFile(w, op.From, "+", op.Reason)
	case Rewrite:
		fmt.Fprintf(w, "--- %s\n+++ %s\n", visible.String(op.Path), visible.String(op.Path))
		if op.Transform != nil && len(op.Transform.Trim) > 0 {
			return diffTrim(w, op)
		}
		if len(op.Edits) > 0 && !op.HasData && op.Data == nil && op.From == "" {
			return diffEdits(w, op)
		}
		oldF, err := rfile.Open(op.Path)
		if err != nil {
			return err
		}
		defer oldF.Close()
		newR, err := op.content()
		if err != nil {
			return err
		}
		defer newR.Close()
		return diffStreams(w, oldF, newR, op.Reason)
	}
	return nil
}

// shorten cuts a line for display, saying how long it is. What a
// terminal would not show as it is (a damaged line's NUL bytes or escape
// sequences) is written as Go escapes (visible.String).
func shorten(line []byte) string { return shortenSized(line, len(line)) }

// shortenSized is shorten of a line of size bytes that starts with head
// (all of it, or at least MaxShownLine bytes).
func shortenSized(head []byte, size int) string {
	if size <= MaxShownLine {
		return visible.String(string(head))
	}
	cut := MaxShownLine - 40
	for cut > 0 && !utf8.RuneStart(head[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d bytes]", visible.String(string(head[:cut])), size)
}

// countLines writes, for a file copied or removed whole, one hunk: how
// many lines r holds (or, when r is nil, that it holds entries) and its
// size.
func countLines(w *bufio.Writer, r io.Reader, sign, what string, size int64, entries int, reason string) error {
	n, unit := entries, "entry"
	if r != nil {
		var err error
		if n, err = lineCount(r); err != nil {
			return err
		}
		unit = "line"
	}
	switch {
	case n == 0:
		fmt.Fprintf(w, "@@ empty file @@ %s\n", visible.String(reason))
		return nil
	case sign == "-":
		fmt.Fprintf(w, "@@ -1,%d +0,0 @@ %s\n", n, visible.String(reason))
	default:
		fmt.Fprintf(w, "@@ -0,0 +1,%d @@ %s\n", n, visible.String(reason))
	}
	fmt.Fprintf(w, "%s %s: %d %s, %s\n", sign, what, n, plural.Of(n, unit), Size(size))
	return nil
}

// lineCount counts the lines of r (a last line without a newline too).
func lineCount(r io.Reader) (int, error) {
	buf := make([]byte, 256<<10)
	lines, last := 0, byte('\n')
	for {
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], nl)
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, nil
}

// countTree writes, for a folder copied or removed whole, how many files
// it holds and their size; a symbolic link in it is listed (what it leads
// to stays where it is).
func countTree(w *bufio.Writer, root, sign, what, reason string) error {
	files, size := 0, int64(0)
	var links []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(root, p)
			target, _ := os.Readlink(p)
			if len(links) < maxListed {
				links = append(links, fmt.Sprintf("%s%s -> %s (symbolic link)", sign, visible.String(rel), visible.String(target)))
			}
			return nil
		}
		files++
		if info, err := d.Info(); err == nil && d.Type().IsRegular() {
			size += info.Size()
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "@@ %s @@\n%s %s: %d %s, %s\n", visible.String(reason), sign, what, files, plural.Of(files, "file"), Size(size))
	for _, l := range links {
		fmt.Fprintln(w, l)
	}
	return nil
}

func listTree(w *bufio.Writer, root, sign string) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(root, p)
		if n <= maxListed {
			info, _ := d.Info()
			sz := int64(0)
			if info != nil {
				sz = info.Size()
			}
			if d.Type()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				fmt.Fprintf(w, "%s%s -> %s (symbolic link)\n", sign, visible.String(rel), visible.String(target))
			} else {
				fmt.Fprintf(w, "%s%s (%s)\n", sign, visible.String(rel), Size(sz))
			}
		} else if n == maxListed+1 {
			fmt.Fprintf(w, "%s…\n", sign)
		}
		return nil
	})
}

// listLink shows the symbolic link at path (removed or made) as what it
// says, never as the bytes of what it leads to.
func listLink(w *bufio.Writer, path, sign, reason string) error {
	target, err := os.Readlink(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "@@ %ssymbolic link to %s @@ %s\n", sign, visible.String(target), visible.String(reason))
	return nil
}

func listFile(w *bufio.Writer, path, sign, reason string) error {
	f, err := rfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if binary(head[:n]) {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "@@ binary file (%s) @@ %s\n", Size(fi.Size()), visible.String(reason))
		return nil
	}
	return listLines(w, io.MultiReader(bytes.NewReader(head[:n]), f), sign, reason)
}

// binary reports whether the start of a file holds a NUL byte or bytes
// that are not UTF-8 (an archive, not lines of text).
func binary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// A character cut at the end of head is not an error.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.RuneStart(head[len(head)-1]); i++ {
		head = head[:len(head)-1]
	}
	if len(head) > 0 && head[len(head)-1] >= utf8.RuneSelf {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// listLines shows the lines of a created or deleted file, up to maxListed.
func listLines(w *bufio.Writer, r io.Reader, sign, reason string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var shown []string
	n := 0
	var head []byte // the start of a long line, as much as shorten shows
	for {
		line, err := br.ReadSlice('\n')
		size := len(line)
		if err == bufio.ErrBufferFull {
			// A long line: keep its start, count the rest.
			head = append(head[:0], line[:min(len(line), MaxShownLine+1)]...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				size += len(line)
				if len(head) <= MaxShownLine {
					head = append(head, line[:min(len(line), MaxShownLine+1-len(head))]...)
				}
			}
			line = head
		}
		if size > 0 {
			n++
			if err == nil {
				size-- // the newline
			}
			if n <= maxListed {
				shown = append(shown, sign+shortenSized(bytes.TrimSuffix(line, []byte("\n")), size))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if n == 0 {
		fmt.Fprintf(w, "@@ empty file @@ %s\n", visible.String(reason))
		return nil
	}
	if sign == "-" {
		fmt.Fprintf(w, "@@ -1,%d +0,0 @@ %s\n", n, visible.String(reason))
	} else {
		fmt.Fprintf(w, "@@ -0,0 +1,%d @@ %s\n", n, visible.String(reason))
	}
	for _, s := range shown {
		fmt.Fprintln(w, s)
	}
	if n > maxListed {
		fmt.Fprintf(w, "%s… %d more %s\n", sign, n-maxListed, plural.Of(n-maxListed, "line"))
	}
	return nil
}

// diffEdits shows the edits of a rewrite: one pass over the file keeps only
// the lines around them.
func diffEdits(w *bufio.Writer, op *Op) error {
	type span struct{ from, to int } // 1-based lines, [from, to)
	var spans []span
	for _, e := range op.Edits {
		s := span{e.Line - Context, e.Line + e.Count + Context}
		if s.from < 1 {
			s.from = 1
		}
		if n := len(spans); n > 0 && s.from <= spans[n-1].to {
			if s.to > spans[n-1].to {
				spans[n-1].to = s.to
			}
			continue
		}
		spans = append(spans, s)
	}
	keep := map[int][]byte{}
	f, err := rfile.Open(op.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Read from the first line shown on: the first edit says where its
	// line starts, and the context lines before it are found backwards.
	first, start := 1, int64(0)
	if e := op.Edits[0]; spans[0].from > 1 {
		if start, err = linesBack(f, e.Offset, e.Line-spans[0].from); err != nil {
			return err
		}
		first = spans[0].from
	}
	rd := session.NewReader(io.NewSectionReader(f, start, 1<<62), nil)
	si, ki := 0, 0
	for si < len(spans) && rd.Next() {
		l := rd.Line()
		l.N += first - 1
		for si < len(spans) && l.N >= spans[si].to {
			si++
		}
		// Of a run of lines an edit removes, only the first are shown.
		for ki < len(op.Edits) && op.Edits[ki].Line+op.Edits[ki].Count <= l.N {
			ki++
		}
		if ki < len(op.Edits) && longRun(op.Edits[ki]) && l.N >= op.Edits[ki].Line+maxTrimRun {
			continue
		}
		if si < len(spans) && l.N >= spans[si].from {
			keep[l.N] = append([]byte(nil), l.Raw...)
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	// Hunks: one per span, each edit inside diffed with go-diff.
	delta := 0 // new line number minus old, before the current span
	ei := 0
	for _, s := range spans {
		var body []string
		oldN, newN := 0, 0
		startNew := s.from + delta
		ln := s.from
		for ln < s.to {
			if ei < len(op.Edits) && op.Edits[ei].Line == ln && longRun(op.Edits[ei]) {
				// A run of lines removed: its first lines, and how many.
				e := op.Edits[ei]
				for k := 0; k < maxTrimRun; k++ {
					body = append(body, "-"+shorten(keep[ln+k]))
				}
				body = append(body, fmt.Sprintf("-… %d more %s", e.Count-maxTrimRun, plural.Of(e.Count-maxTrimRun, "line")))
				oldN += e.Count
				delta -= e.Count
				ln += e.Count
				ei++
				continue
			}
			if ei < len(op.Edits) && op.Edits[ei].Line == ln {
				e := op.Edits[ei]
				var old []string
				for k := 0; k < e.Count; k++ {
					old = append(old, string(keep[ln+k]))
				}
				added := splitLines(e.New)
				body = append(body, regionDiff(old, added)...)
				oldN += e.Count
				newN += len(added)
				delta += len(added) - e.Count
				ln += e.Count
				ei++
				continue
			}
			l, ok := keep[ln]
			if !ok {
				break // past the end of the file
			}
			body = append(body, " "+shorten(l))
			oldN++
			newN++
			ln++
		}
		// Edits past the last line (appends).
		for ei < len(op.Edits) && op.Edits[ei].Line >= ln && op.Edits[ei].Line < s.to {
			added := splitLines(op.Edits[ei].New)
			for _, a := range added {
				body = append(body, "+"+shorten([]byte(a)))
			}
			newN += len(added)
			delta += len(added)
			ei++
		}
		reason := ""
		for _, e := range op.Edits {
			if e.Line >= s.from && e.Line < s.to && e.Reason != "" {
				reason = e.Reason
				break
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@ %s\n", hunkRange(s.from, oldN), hunkRange(startNew, newN), visible.String(reason))
		for _, b := range body {
			fmt.Fprintln(w, b)
		}
	}
	return nil
}

// longRun reports whether an edit removes a run of more lines than a
// diff shows of it.
func longRun(e Edit) bool { return len(e.New) == 0 && e.Count > maxTrimRun+1 }

// linesBack returns where the line n lines before the one starting at off
// starts (0 when the file has fewer lines before off).
func linesBack(f io.ReaderAt, off int64, n int) (int64, error) {
	buf := make([]byte, 64<<10)
	// An append after a last line with no newline: that line is the
	// first one before off, and no newline ends it.
	if off > 0 {
		if _, err := f.ReadAt(buf[:1], off-1); err != nil {
			return 0, err
		}
		if buf[0] != '\n' {
			if n == 0 {
				return off, nil
			}
			n--
		}
	}
	seen := 0 // newlines found; the first ends the line before off
	for end := off; end > 0; {
		from := max(end-int64(len(buf)), 0)
		b := buf[:end-from]
		if _, err := f.ReadAt(b, from); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' {
				if seen == n {
					return from + int64(i) + 1, nil
				}
				seen++
			}
		}
		end = from
	}
	return 0, nil
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// regionDiff diffs old against new lines with go-diff and renders them.
func regionDiff(old, new []string) []string {
	dmp := diffmatchpatch.New()
	a := strings.Join(old, "\n")
	b := strings.Join(new, "\n")
	if len(old) > 0 {
		a += "\n"
	}
	if len(new) > 0 {
		b += "\n"
	}
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out []string
	for i := 0; i < len(diffs); i++ {
		d := diffs[i]
		// A line replaced by one line: show both around where they differ.
		if d.Type == diffmatchpatch.DiffDelete && i+1 < len(diffs) && diffs[i+1].Type == diffmatchpatch.DiffInsert {
			del, ins := splitLines([]byte(d.Text)), splitLines([]byte(diffs[i+1].Text))
			if len(del) == 1 && len(ins) == 1 {
				a, b := changedPair(del[0], ins[0])
				out = append(out, "-"+a, "+"+b)
				i++
				continue
			}
		}
		sign := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			sign = "-"
		case diffmatchpatch.DiffInsert:
			sign = "+"
		}
		for _, l := range splitLines([]byte(d.Text)) {
			out = append(out, sign+shorten([]byte(l)))
		}
	}
	return out
}

// maxKept is how many bytes of each stream diffStreams keeps to show: the
// lines that fit from the start; a longer one (a pasted file of 200 MB) is
// shown by its length and hash.
const maxKept = 16 << 20

// diffStreams diffs two whole streams: common head and tail are skipped by
// line hashes, the middle is diffed with go-diff when it is small enough.
// The streams are read side by side, once: what is kept of each is its
// last diffRing line hashes (a middle longer than that is too long to
// show anyway) and its first maxKept bytes, so a diff of ten million lines
// costs what one of a hundred thousand does.
func diffStreams(w *bufio.Writer, oldR, newR io.Reader, reason string) error {
	seed := maphash.MakeSeed()
	a, b := newDiffSide(oldR, seed), newDiffSide(newR, seed)
	p := -1 // the lines both start with
	for i := 0; ; i++ {
		ha, oka := a.next()
		hb, okb := b.next()
		if p < 0 && (!oka || !okb || ha != hb) {
			p = i
		}
		if !oka && !okb {
			break
		}
	}
	if err := errors.Join(a.rd.Err(), b.rd.Err()); err != nil {
		return err
	}
	na, nb := a.n, b.n
	if p == na && p == nb {
		fmt.Fprintf(w, "@@ no change in lines @@ %s\n", visible.String(reason))
		return nil
	}
	s := 0           // the lines both end with
	bounded := false // s is only the lines the rings hold
	for s < na-p && s < nb-p {
		ia, ib := na-1-s, nb-1-s
		if !a.has(ia) || !b.has(ib) {
			bounded = true
			break
		}
		if a.ref(ia).h != b.ref(ib).h {
			break
		}
		s++
	}
	from := max(p-Context, 0)
	aTo, bTo := min(na-s+Context, na), min(nb-s+Context, nb)
	if bounded || (aTo-from)+(bTo-from) > maxRegion || !a.has(from) || !b.has(from) {
		fmt.Fprintf(w, "@@ -%s +%s @@ %s\n", hunkRange(p+1, na-s-p), hunkRange(p+1, nb-s-p), visible.String(reason))
		if bounded {
			fmt.Fprintf(w, " … lines differ from line %d on (too many to show) …\n", p+1)
		} else {
			fmt.Fprintf(w, " … %s differ (too many to show) …\n", plural.Count((na-s-p)+(nb-s-p), "line"))
		}
		return nil
	}
	var old, nw []string
	for i := from; i < aTo; i++ {
		old = append(old, string(a.text(i)))
	}
	for i := from; i < bTo; i++ {
		nw = append(nw, string(b.text(i)))
	}
	fmt.Fprintf(w, "@@ -%s +%s @@ %s\n", hunkRange(from+1, aTo-from), hunkRange(from+1, bTo-from), visible.String(reason))
	for _, l := range regionDiff(old, nw) {
		fmt.Fprintln(w, l)
	}
	return nil
}

// diffRing is how many line hashes diffStreams keeps of each stream.
const diffRing = 1 << 18

// diffSide is one stream of diffStreams.
type diffSide struct {
	rd   *session.Reader
	seed maphash.Seed
	ring []lineRef // line i is ring[i%diffRing]
	n    int       // lines read
	keep bytes.Buffer
	done bool
}

// lineRef is a line of a stream: its hash, offset and length.
type lineRef struct {
	h   uint64
	off int64
	n   int64
}

func newDiffSide(r io.Reader, seed maphash.Seed) *diffSide {
	return &diffSide{rd: session.NewReader(r, nil), seed: seed}
}

// next reads a line and returns its hash; false at the end.
func (d *diffSide) next() (uint64, bool) {
	if d.done || !d.rd.Next() {
		d.done = true
		return 0, false
	}
	l := d.rd.Line()
	r := lineRef{maphash.Bytes(d.seed, l.Raw), l.Offset, l.Len()}
	// Lines are kept in file order while all of them fit, so a line's
	// bytes sit at its offset (not a line over session.MaxLine: its Raw
	// is not its bytes).
	if l.Long == nil && d.keep.Len() == int(l.Offset) && d.keep.Len()+len(l.Raw) < maxKept {
		d.keep.Write(l.Raw)
		d.keep.WriteByte('\n')
	}
	if len(d.ring) < diffRing {
		d.ring = append(d.ring, r)
	} else {
		d.ring[d.n%diffRing] = r
	}
	d.n++
	return r.h, true
}

// has reports whether the ring holds line i.
func (d *diffSide) has(i int) bool { return i >= 0 && i < d.n && i >= d.n-diffRing }

func (d *diffSide) ref(i int) lineRef { return d.ring[i%diffRing] }

// text is line i as kept, or its length and hash, so that two different
// lines never show as one.
func (d *diffSide) text(i int) []byte {
	r := d.ref(i)
	if r.off+r.n <= int64(d.keep.Len()) {
		return d.keep.Bytes()[r.off : r.off+r.n]
	}
	return []byte(fmt.Sprintf("[%d bytes, not shown: hash %016x]", r.n, r.h))
}

// maxTrimHunks bounds the hunks a trim's diff shows, and maxTrimRun the
// lines shown of a run of dropped lines.
const (
	maxTrimHunks = 200
	maxTrimRun   = 3
)

// diffTrim shows the lines a Transform's Trim changes, reading the source
// once: a changed line as a hunk of its own (old line, new line), a run of
// dropped lines as one hunk. The rest of the transform (a new session id,
// a new cwd) is said in the op's reason and left out of the lines shown,
// so the diff shows what the trim changes.
func diffTrim(w *bufio.Writer, op *Op) error {
	base := op.From
	if base == "" {
		base = op.Path
	}
	f, err := rfile.Open(base)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(w, "@@ %s @@\n", visible.String(op.Reason))
	trims := op.Transform.Trim
	rd := session.NewReader(f, nil)
	ti, dropped, hunks, unshown := 0, 0, 0, 0
	// The run of dropped lines being gathered.
	var run []string
	runFrom, runN := 0, 0
	flush := func() {
		if runN == 0 {
			return
		}
		if hunks++; hunks > maxTrimHunks {
			unshown += runN
		} else {
			what := "drop the entry"
			if runN > 1 {
				what = "drop " + plural.Count(runN, "line")
			}
			fmt.Fprintf(w, "@@ -%s +%d,0 @@ %s\n", hunkRange(runFrom, runN), runFrom-dropped-1, visible.String(what))
			for _, l := range run {
				fmt.Fprintln(w, "-"+l)
			}
			if runN > len(run) {
				fmt.Fprintf(w, "-… %d more %s\n", runN-len(run), plural.Of(runN-len(run), "line"))
			}
		}
		dropped += runN
		run, runN = run[:0], 0
	}
	for ti < len(trims) && hunks <= maxTrimHunks && rd.Next() {
		l := rd.Line()
		if l.N < trims[ti].Line {
			continue
		}
		lt := &trims[ti]
		if l.N >= lt.Last() {
			ti++
		}
		if lt.Drop {
			if runN > 0 && runFrom+runN != l.N {
				flush()
			}
			if runN == 0 {
				runFrom = l.N
			}
			if runN < maxTrimRun {
				run = append(run, shorten(l.Raw))
			}
			runN++
			continue
		}
		flush()
		nb, err := lt.apply(l.Raw)
		if err != nil {
			return fmt.Errorf("line %d: %w", l.N, err)
		}
		if hunks++; hunks > maxTrimHunks {
			unshown++
			continue
		}
		fmt.Fprintf(w, "@@ -%d +%d @@ %s\n", l.N, l.N-dropped, lt.Describe())
		for _, s := range regionDiff([]string{string(l.Raw)}, []string{string(nb)}) {
			fmt.Fprintln(w, s)
		}
	}
	flush()
	if err := rd.Err(); err != nil {
		return err
	}
	// The rest is not read: the trims say how many lines change.
	more := unshown
	for _, lt := range trims[ti:] {
		more += lt.Last() - lt.Line + 1
	}
	if more > 0 {
		fmt.Fprintf(w, "… %d more %s changed\n", more, plural.Of(more, "line"))
	}
	if a := op.Transform.Append; len(a) > 0 {
		lines := bytes.SplitAfter(bytes.TrimSuffix(a, nl), nl)
		fmt.Fprintf(w, "@@ end of file @@ append %d %s\n", len(lines), plural.Of(len(lines), "line"))
		for _, l := range lines {
			fmt.Fprintln(w, "+"+shorten(bytes.TrimSuffix(l, nl)))
		}
	}
	return nil
}

// treeSize counts the files below root and the bytes of the regular ones.
func treeSize(root string) (files int, size int64, err error) {
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if info, err := d.Info(); err == nil && d.Type().IsRegular() {
			size += info.Size()
		}
		return nil
	})
	return files, size, err
}
