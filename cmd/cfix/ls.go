package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/guard"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
)

type lsOptions struct {
	root  string
	json  bool
	sort  string
	limit int
	all   bool
	up    bool
	arg   string
	out   io.Writer
	// width is the terminal's width (0: not a terminal, nothing is cut).
	width int
	// remote, machine and identities: ls --remote (lsremote.go).
	remote     string
	machine    string
	identities []string
}

func newLsCmd() *cobra.Command {
	opts := &lsOptions{}
	cmd := &cobra.Command{
		Use: "ls [DIR|PROJECT]",
		Example: `  cfix ls
  cfix ls .
  cfix ls --sort size --limit 10 ~/work/project
  cfix ls -- -home-dev-work-project`,
		Short: "List the projects of a store, or the sessions of one project",
		Long: `Ls lists what a Claude Code store holds, reading what the /resume picker
reads: the first and last 64 KB of each transcript and its size, never a
whole transcript.

Without an argument: one line per project folder, with its real path (the
cwd its entries name, else the originalPath of its sessions-index.json, never
decoded from the folder's name; a folder holding several lists them all),
sessions, subagents, size, last activity and health (an empty folder, or one
holding only memory/, is counted and listed with --all); then the transcripts
Claude Code keeps outside projects/ and never resumes (transcripts/ and
pre-compact-session-histories/; cfix ls transcripts lists them).

With a directory (resolved as Claude Code does: its own project folder) or a
project folder: that project's sessions, newest first, with short id, title
(the custom title, else the AI title, else the summary, else the first
prompt), start, last activity, messages, size, subagents, version, health,
and marks: live, stub, empty, warmup, swept (Claude Code's next start
deletes it: its transcript is older than cleanupPeriodDays), guard (cfix
guard archives it at the next start, before the sweep). Empty files and Warmup probes are
left out unless --all. --up walks up from a directory with no sessions to
the nearest ancestor that has some.

Health is a quick check of what was read (a torn or unterminated last line,
lines that are not JSON in the head or tail, NUL bytes, metadata-only and
empty files, entries of another session): errors and warnings, with the
codes of cfix validate, which is the full check.

Exit status: 0, or 2 for a usage or I/O error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.arg = args[0]
			}
			opts.out = cmd.OutOrStdout()
			opts.width = termWidth(opts.out)
			if opts.remote != "" {
				return runLsRemote(opts)
			}
			return runLs(opts)
		},
		ValidArgsFunction: completeDirs,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&opts.sort, "sort", "last", "sort by: sessions "+strings.Join(catalog.SessionSorts, ", ")+"; projects "+strings.Join(catalog.ProjectSorts, ", "))
	cmd.Flags().IntVar(&opts.limit, "limit", 0, "list at most N rows (0: all)")
	cmd.Flags().BoolVarP(&opts.all, "all", "a", false, "also list empty sessions, Warmup probes and empty project folders")
	cmd.Flags().StringVar(&opts.remote, "remote", "", "list what a remote (s3://BUCKET/PREFIX, file:///DIR) holds, by machine (cfix push)")
	cmd.Flags().StringVar(&opts.machine, "machine", "", "with --remote, that machine's sessions only")
	cmd.Flags().StringArrayVar(&opts.identities, "identity", nil, "with --remote, an age identity file that opens an encrypted index's titles")
	cmd.Flags().BoolVar(&opts.up, "up", false, "walk up from DIR to the nearest directory that has sessions")
	return cmd
}

// termWidth returns $COLUMNS, else the width of the terminal w is, else 0.
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := visible.Unwrap(w).(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

func runLs(opts *lsOptions) error {
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	if opts.limit < 0 {
		return usageError(fmt.Errorf("--limit %d: not a number of rows", opts.limit))
	}
	defer catalog.Loading()()
	cat := catalog.Open(root)
	// A cache that cannot be written costs only the next listing's time.
	defer cat.Close()
	if opts.arg == "" {
		return lsStore(opts, cat)
	}
	if k, ok := extrasDir(root, opts.arg); ok {
		return lsExtras(opts, cat, k)
	}
	r := store.NewResolver(root, nil)
	t, err := r.Resolve(opts.arg)
	var te *store.TargetError
	// Only a working directory walks up: a name that is none (a mistyped
	// id or folder) is an error, not the listing of the current
	// directory's project.
	if errors.As(err, &te) && isWorkDir(root, opts.arg) {
		if opts.up {
			t, err = resolveUp(cat, r, opts.arg)
		} else {
			err = fmt.Errorf("%w (--up walks up to the nearest directory that has sessions)", err)
		}
	}
	if err != nil {
		return usageError(err)
	}
	switch t.Kind {
	case store.TargetStore:
		return lsStore(opts, cat)
	case store.TargetProject:
		// A working directory whose folder holds no session yet.
		if opts.up && !cat.HasSessions(t.Layout) && isWorkDir(root, opts.arg) {
			if t2, err := resolveUp(cat, r, filepath.Dir(absDir(opts.arg))); err == nil {
				t = t2
			}
		}
		return lsProject(opts, cat, t)
	}
	return usageError(fmt.Errorf("%s names a %s: ls takes a directory or a project folder (cfix show SESSION shows a session)", opts.arg, t.Kind))
}

// isWorkDir reports whether arg is a directory outside the store's
// projects folder: a working directory, not a project folder.
func isWorkDir(root, arg string) bool {
	abs := absDir(arg)
	fi, err := os.Stat(abs)
	return err == nil && fi.IsDir() && !store.Within(store.RealPath(store.ProjectsDir(root)), store.RealPath(abs))
}

// absDir returns the absolute path of a directory argument.
func absDir(arg string) string {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return arg
	}
	return abs
}

// resolveUp resolves the nearest ancestor of dir (dir included) whose
// project folder holds a session.
func resolveUp(cat *catalog.Catalog, r *store.Resolver, dir string) (*store.Target, error) {
	abs, root := absDir(dir), cat.Root
	for d := abs; ; d = filepath.Dir(d) {
		if t, err := r.Resolve(d); err == nil && t.Kind == store.TargetProject && cat.HasSessions(t.Layout) {
			return t, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil, &store.TargetError{Target: dir, Reason: fmt.Sprintf("neither it nor a directory above it has sessions in store %s", root)}
}

// extrasDir tells whether arg names a folder of extras: by its name in the
// store or by its path.
func extrasDir(root, arg string) (store.ExtraKind, bool) {
	for _, k := range []store.ExtraKind{store.ExtraExport, store.ExtraPreCompact} {
		dir := filepath.Join(root, k.Dir())
		if arg == k.Dir() {
			// Also when the store has no such folder: it holds none.
			if fi, err := os.Stat(dir); err != nil || fi.IsDir() {
				return k, true
			}
		}
		if abs, err := filepath.Abs(arg); err == nil && (abs == dir || store.RealPath(abs) == store.RealPath(dir)) {
			return k, true
		}
	}
	return 0, false
}

// --- the store ---------------------------------------------------------------

func lsStore(opts *lsOptions, cat *catalog.Catalog) error {
	root := cat.Root
	st, err := cat.Store()
	if err != nil {
		return usageError(err)
	}
	sweep, swept, sweptBytes := st.Sweep, st.Swept, st.SweptBytes
	prot := guard.ProtectionOf(root, time.Now())
	guarded, guardedBytes := guard.Mark(st.Sessions, prot)
	v, err := st.View(opts.sort, opts.all, opts.limit)
	if err != nil {
		return usageError(err)
	}
	ps, shown, total, sessions, hidden, memory, empty := v.Listed, v.Shown, v.Size, v.Sessions, v.Hidden, v.MemoryOnly, v.Empty
	// The extras are glanced at for --json only.
	extras, glances, err := cat.Extras(opts.json)
	if err != nil {
		return usageError(err)
	}
	if opts.json {
		doc := struct {
			Root     string               `json:"root"`
			Projects []catalog.ProjectDoc `json:"projects"`
			Extras   []catalog.ExtraDoc   `json:"extras"`
			Sweep    catalog.SweepDoc     `json:"sweep"`
		}{Root: root, Projects: []catalog.ProjectDoc{}, Extras: []catalog.ExtraDoc{}, Sweep: catalog.SweepDocOf(sweep, swept, sweptBytes)}
		for _, p := range shown {
			doc.Projects = append(doc.Projects, catalog.ProjectDocOf(p))
		}
		for i, x := range extras {
			doc.Extras = append(doc.Extras, catalog.ExtraDocOf(x, &glances[i]))
		}
		return jsonOut(opts.out, doc)
	}
	w := opts.out
	if len(shown) > 0 {
		fmt.Fprintf(w, "%-16s  %8s  %9s  %9s  %-12s  %s\n", "LAST ACTIVE", "SESSIONS", "SUBAGENTS", "SIZE", "HEALTH", "PATH")
	}
	for _, p := range shown {
		count := p.Sessions
		if opts.all {
			count += p.Hidden
		}
		n := strconv.Itoa(count)
		if p.Live > 0 {
			n = fmt.Sprintf("%d (%d live)", count, p.Live)
		}
		fmt.Fprintf(w, "%-16s  %8s  %9d  %9s  %-12s  %s\n", stamp(p.LastActive), n, p.Subagents, changeset.Size(p.Size),
			health(p.Errors, p.Warnings), catalog.PathWords(p))
	}
	if len(extras) > 0 {
		fmt.Fprintf(w, "\nNot resumable (Claude Code keeps these outside projects/; cfix ls FOLDER lists them):\n")
		for _, k := range []store.ExtraKind{store.ExtraExport, store.ExtraPreCompact} {
			n, size, last := 0, int64(0), time.Time{}
			for _, x := range extras {
				if x.Kind == k {
					n++
					size += x.Size
					if x.ModTime.After(last) {
						last = x.ModTime
					}
				}
			}
			if n > 0 {
				fmt.Fprintf(w, "%-16s  %8d  %9s  %9s  %-12s  %s\n", stamp(last), n, "", changeset.Size(size), "", filepath.Join(root, k.Dir())+"/ ("+extraCount(n, k)+")")
			}
		}
	}
	fmt.Fprintf(w, "\n%s, %s, %s in projects/", plural.Count(len(ps), "project"), plural.Count(sessions, "session"), changeset.Size(total))
	if len(shown) < len(ps) {
		fmt.Fprintf(w, " (%d listed)", len(shown))
	}
	if hidden > 0 && !opts.all {
		fmt.Fprintf(w, "; %s not counted (--all counts them)", plural.Count(hidden, "empty or Warmup session"))
	}
	if memory > 0 {
		verb := "hold"
		if memory == 1 {
			verb = "holds"
		}
		fmt.Fprintf(w, "; %s %s only Claude Code's memory/ and no session, not listed (--all lists them; prune keeps them)", plural.Count(memory, "folder"), verb)
	}
	if empty > 0 {
		fmt.Fprintf(w, "; %s, not listed (--all lists them)", plural.Count(empty, "empty folder"))
	}
	fmt.Fprintln(w)
	if swept > 0 {
		fmt.Fprintln(w, sweepLine(sweep, swept, sweptBytes, st.Sessions))
	}
	if l := prot.Footer(guarded, guardedBytes, sweptKept(st.Sessions)); l != "" {
		fmt.Fprintln(w, l)
	}
	return nil
}

// extraCount is n extras of kind k, in words.
func extraCount(n int, k store.ExtraKind) string { return plural.Count(n, k.String()) }

// --- one project -------------------------------------------------------------

func lsProject(opts *lsOptions, cat *catalog.Catalog, t *store.Target) error {
	root := cat.Root
	pl, err := cat.Project(t.Layout, t.Project)
	if err != nil {
		return usageError(err)
	}
	p := pl.Info
	sweep, swept, sweptBytes := pl.Sweep, pl.Swept, pl.SweptBytes
	prot := guard.ProtectionOf(root, time.Now())
	guarded, guardedBytes := guard.Mark(pl.Sessions, prot)
	v, err := pl.View(opts.sort, opts.all, opts.limit)
	if err != nil {
		return usageError(err)
	}
	shown, hidden, more := v.Shown, v.Hidden, v.More
	if opts.json {
		doc := struct {
			Root      string               `json:"root"`
			Folder    string               `json:"folder"`
			Paths     []string             `json:"paths"`
			PathsFrom string               `json:"paths_from"`
			Sessions  []catalog.SessionDoc `json:"sessions"`
			Hidden    int                  `json:"hidden"`
			Sweep     catalog.SweepDoc     `json:"sweep"`
		}{Root: root, Folder: t.Project, Paths: p.Paths, PathsFrom: p.PathsFrom, Sessions: []catalog.SessionDoc{}, Hidden: hidden,
			Sweep: catalog.SweepDocOf(sweep, swept, sweptBytes)}
		if doc.Paths == nil {
			doc.Paths = []string{}
		}
		for i := range shown {
			doc.Sessions = append(doc.Sessions, catalog.SessionDocOf(&shown[i]))
		}
		return jsonOut(opts.out, doc)
	}
	w := opts.out
	fmt.Fprintf(w, "%s  (%s)\n", catalog.PathWords(p), visible.String(filepath.Join(store.ProjectsDir(root), t.Project)))
	if len(shown) > 0 {
		ids, err := cat.ShortIDs()
		if err != nil {
			return usageError(err)
		}
		printSessions(w, shown, ids, opts.width)
	}
	fmt.Fprintf(w, "\n%s", plural.Count(len(shown), "session"))
	if more > 0 {
		fmt.Fprintf(w, " listed, %d more (--limit)", more)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "; %s not listed (--all lists them)", plural.Count(hidden, "empty or Warmup session"))
	}
	fmt.Fprintln(w)
	if swept > 0 {
		fmt.Fprintln(w, sweepLine(sweep, swept, sweptBytes, pl.Sessions))
	}
	if l := prot.Footer(guarded, guardedBytes, sweptKept(pl.Sessions)); l != "" {
		fmt.Fprintln(w, l)
	}
	return nil
}

// sweepLine says how many sessions (of how many bytes) Claude Code's next
// sweep deletes, and how to keep them.
func sweepLine(sw store.Sweep, n int, bytes int64, ss []store.SessionInfo) string {
	when := "next start"
	if !sw.NotBefore.IsZero() {
		when = "first start from " + stamp(sw.NotBefore) + " (.last-cleanup)"
	}
	be := "sessions"
	if n == 1 {
		be = "session"
	}
	line := fmt.Sprintf("%d %s (%s) will be deleted by Claude Code's %s (cleanupPeriodDays %d)", n, be, changeset.Size(bytes), when, sw.PeriodDays)
	// Archive keeps those that hold a message, and leaves the others.
	kept := sweptKept(ss)
	switch {
	case kept == 0 && n == 1:
		return line + "; it holds no message"
	case kept == 0:
		return line + "; none holds a message"
	case kept == 1 && n == 1:
		return line + fmt.Sprintf(": cfix archive --older-than %dd --by-transcript keeps it", sw.PeriodDays)
	case kept == n:
		return line + fmt.Sprintf(": cfix archive --older-than %dd --by-transcript keeps them", sw.PeriodDays)
	case kept == 1:
		return line + fmt.Sprintf(": cfix archive --older-than %dd --by-transcript keeps the one that holds a message", sw.PeriodDays)
	}
	return line + fmt.Sprintf(": cfix archive --older-than %dd --by-transcript keeps the %d that hold a message", sw.PeriodDays, kept)
}

// sweptKept counts the sessions of ss marked swept that archive keeps:
// those that hold a message.
func sweptKept(ss []store.SessionInfo) int {
	n := 0
	for i := range ss {
		if ss[i].Swept && !ss[i].NoMessage() {
			n++
		}
	}
	return n
}

// printSessions prints the session table. A terminal narrower than 110
// columns leaves out STARTED, VERSION and SUB, and shows the marks before
// the title; the title takes the rest of the width.
func printSessions(w io.Writer, ss []store.SessionInfo, ids store.ShortIDs, width int) {
	wide := width == 0 || width >= 110
	idw := store.ShortLen
	for i := range ss {
		idw = max(idw, len(ids.Of(ss[i].Session)))
	}
	head := fmt.Sprintf("%-*s  ", idw, "ID")
	if wide {
		head += fmt.Sprintf("%-16s  ", "STARTED")
	}
	head += fmt.Sprintf("%-16s  %5s  %8s  ", "LAST ACTIVE", "MSGS", "SIZE")
	if wide {
		head += fmt.Sprintf("%3s  %-9s  ", "SUB", "VERSION")
	}
	head += fmt.Sprintf("%-10s  ", "HEALTH")
	if wide {
		head += fmt.Sprintf("%-6s  ", "MARK")
	}
	fmt.Fprintln(w, head+"TITLE")
	for i := range ss {
		s := &ss[i]
		line := fmt.Sprintf("%-*s  ", idw, visible.String(ids.Of(s.Session)))
		if wide {
			line += fmt.Sprintf("%-16s  ", stamp(s.Started))
		}
		msgs := "-"
		if s.MessagesKnown {
			msgs = strconv.Itoa(s.Messages)
		}
		line += fmt.Sprintf("%-16s  %5s  %8s  ", stamp(s.LastActive), msgs, changeset.Size(s.Size+s.SubagentBytes))
		if wide {
			line += fmt.Sprintf("%3d  %-9s  ", s.Subagents, cut(textCell(s.Version), 9))
		}
		line += fmt.Sprintf("%-10s  ", health(s.Errors(), s.Warnings()))
		title := textCell(s.Title)
		if wide {
			line += fmt.Sprintf("%-6s  ", marks(s))
		} else if m := marks(s); m != "" {
			title = "[" + m + "] " + title
		}
		if width > 0 {
			room := width - cells(line)
			if room < 12 {
				room = 12
			}
			title = cut(title, room)
		}
		fmt.Fprintln(w, strings.TrimRight(line+title, " "))
	}
}

// --- extras ------------------------------------------------------------------

func lsExtras(opts *lsOptions, cat *catalog.Catalog, k store.ExtraKind) error {
	root := cat.Root
	all, glances, err := cat.Extras(true)
	if err != nil {
		return usageError(err)
	}
	var xs []store.Extra
	var gs []store.Glance
	for i, x := range all {
		if x.Kind == k {
			xs, gs = append(xs, x), append(gs, glances[i])
		}
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return gs[idx[a]].LastActive.After(gs[idx[b]].LastActive) })
	if opts.limit > 0 && len(idx) > opts.limit {
		idx = idx[:opts.limit]
	}
	if opts.json {
		doc := struct {
			Root   string             `json:"root"`
			Kind   string             `json:"kind"`
			Extras []catalog.ExtraDoc `json:"extras"`
		}{Root: root, Kind: k.Dir(), Extras: []catalog.ExtraDoc{}}
		for _, i := range idx {
			doc.Extras = append(doc.Extras, catalog.ExtraDocOf(xs[i], &gs[i]))
		}
		return jsonOut(opts.out, doc)
	}
	w := opts.out
	dir := filepath.Join(root, k.Dir())
	fmt.Fprintf(w, "%s (%s: listed, never resumed)\n", dir, plural.Of(2, k.String()))
	if len(idx) > 0 {
		fmt.Fprintf(w, "%-16s  %5s  %8s  %-10s  %s\n", "LAST ACTIVE", "MSGS", "SIZE", "HEALTH", "NAME  FIRST PROMPT")
	}
	for _, i := range idx {
		g := &gs[i]
		msgs := "-"
		if g.MessagesKnown {
			msgs = strconv.Itoa(g.Messages)
		}
		line := fmt.Sprintf("%-16s  %5s  %8s  %-10s  %s  ", stamp(g.LastActive), msgs, changeset.Size(g.Size), health(g.Errors(), g.Warnings()), visible.String(xs[i].Name))
		title := textCell(g.FirstPrompt)
		if opts.width > 0 {
			room := opts.width - cells(line)
			if room < 16 {
				room = 16
			}
			title = cut(title, room)
		}
		fmt.Fprintln(w, strings.TrimRight(line+title, " "))
	}
	fmt.Fprintf(w, "\n%s", extraCount(len(xs), k))
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, " (the store has no %s/ folder)", k.Dir())
	}
	fmt.Fprintln(w)
	return nil
}

// --- formatting --------------------------------------------------------------

func jsonOut(w io.Writer, v any) error {
	if err := printJSON(w, v); err != nil {
		return usageError(err)
	}
	return nil
}

// stamp formats a time in local time to the minute; "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// health is the HEALTH column: "ok", or the errors and warnings.
func health(errs, warns int) string {
	switch {
	case errs == 0 && warns == 0:
		return "ok"
	case warns == 0:
		return plural.Count(errs, "error")
	case errs == 0:
		return plural.Count(warns, "warning")
	}
	return fmt.Sprintf("%dE %dW", errs, warns)
}

// marks is the MARK column of a session.
func marks(s *store.SessionInfo) string {
	var m []string
	if s.Live {
		m = append(m, "live")
	}
	if s.Empty {
		m = append(m, "empty")
	}
	if s.MetaOnly {
		m = append(m, "stub")
	}
	if s.Warmup {
		m = append(m, "warmup")
	}
	if s.Swept {
		m = append(m, "swept")
	}
	if s.Guarded {
		m = append(m, "guard")
	}
	return strings.Join(m, ",")
}

// oneLine folds a title's whitespace (newlines included) into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// textCell is text a transcript holds (a title, a prompt, a version) as a
// cell of a listing: its whitespace folded (oneLine) and its other control
// characters written as Go escapes (visible.String), so that it neither
// breaks the line nor reaches the terminal as an escape sequence.
func textCell(s string) string { return visible.String(oneLine(s)) }

// cut shortens s to n columns of a terminal, ending in "…" when cut: a
// wide character (CJK, emoji) takes two columns, a combining mark none and
// stays with the character it marks.
func cut(s string, n int) string {
	if cells(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	w := 0
	for i, r := range s {
		c := runeCells(r)
		if w+c > n-1 {
			return s[:i] + "…"
		}
		w += c
	}
	return s
}

// cells is how many columns of a terminal s takes.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

// runeCells is how many columns of a terminal r takes: 0 for a combining
// mark or a format character, 2 for an East Asian wide or fullwidth
// character or an emoji (the ranges of wcwidth), else 1.
func runeCells(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe10 && r <= 0xfe19, r >= 0xfe30 && r <= 0xfe6f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x2fffd, r >= 0x30000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
