package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/store"
)

// planFlags are the flags every planner takes.
type planFlags struct {
	root     string
	apply    bool
	yes      bool
	json     bool
	exitCode bool
	force    bool
	stat     bool
	diff     bool
	planOut  string
	// desktopDir is --desktop-dir: Claude Desktop's index, whose entries
	// the plan notes when it removes or moves their transcripts.
	desktopDir string
	// trim, fork and unpack, when set, go into the --json document as
	// such.
	trim, fork, unpack any
	in                 io.Reader
	out                io.Writer
	errOut             io.Writer
	// before, when set, writes what comes before the plan (unpack: where
	// each session lands).
	before func(io.Writer)
	// differ, when set, writes the plan's diff instead of
	// changeset.DiffWith (archive and restore).
	differ func(io.Writer, *changeset.ChangeSet, changeset.DiffOptions) error
	// lock, when set, is the store's lock, which the command took before
	// it planned (undo); runPlan takes it otherwise.
	lock *changeset.Lock
	// kept, when set, runs once the plan is applied (what a command
	// keeps of its own, outside the store); its error is a warning.
	kept func() error
	// asked is what asked for the apply, as the user typed it ("":
	// --apply): the words of the message that asks for --yes.
	asked string

	// redact and pull, when set, go into the --json document as such.
	redact, pull any
	// applied, when set, is called after a successful apply with its
	// journal: it may remove the journal (cfix redact --no-backup), and
	// returns what to say instead of the undo line ("" says it).
	applied func(journal string) (say string, removed bool, err error)
}

// needsYes is the error of an apply asked for off a terminal without --yes.
func (f *planFlags) needsYes() error {
	asked := f.asked
	if asked == "" {
		asked = "--apply"
	}
	return usageError(fmt.Errorf("%s needs --yes when stdin is not a terminal; nothing was written", asked))
}

func (f *planFlags) register(cmd *cobra.Command, withPlanOut bool) {
	cmd.Flags().StringVar(&f.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&f.apply, "apply", false, "write the changes (the default is a dry run that prints the plan)")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "apply without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the plan and the result as JSON")
	cmd.Flags().BoolVar(&f.exitCode, "exit-code", false, "exit with status 3 when a dry run finds changes to make")
	cmd.Flags().BoolVar(&f.force, "force", false, "also change files of live sessions")
	cmd.Flags().BoolVar(&f.stat, "stat", false, "print the summary of the plan (each change, bytes added and removed) without its diff")
	cmd.Flags().BoolVar(&f.diff, "diff", false, "print the whole diff of the plan, however long, through the pager on a terminal (the default shows it when the plan fits on a screen), with the lines of each file copied or removed")
	addDesktopFlag(cmd, &f.desktopDir)
	if withPlanOut {
		cmd.Flags().StringVar(&f.planOut, "plan-out", "", "save the plan to FILE (apply it later with cfix apply FILE)")
	}
}

func (f *planFlags) streams(cmd *cobra.Command) {
	f.in, f.out, f.errOut = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
}

const plannerExitStatus = `Exit status:
  0  nothing to do, or the changes were applied
  1  an error (nothing is left half-applied)
  2  usage error
  3  with --exit-code, a dry run found changes to make`

// planJSON is the --json view of a plan and its result.
type planJSON struct {
	Command  string       `json:"command"`
	Root     string       `json:"root"`
	Sessions int          `json:"sessions"`
	Changes  []changeJSON `json:"changes"`
	Notes    []string     `json:"notes"`
	Applied  bool         `json:"applied"`
	Journal  string       `json:"journal,omitempty"`
	Error    string       `json:"error,omitempty"`
	Trim     any          `json:"trim,omitempty"`
	Fork     any          `json:"fork,omitempty"`
	Unpack   any          `json:"unpack,omitempty"`
	Redact   any          `json:"redact,omitempty"`
	Pull     any          `json:"pull,omitempty"`
	// JournalRemoved says the journal was removed after the apply
	// (cfix redact --no-backup): nothing can undo it.
	JournalRemoved bool `json:"journal_removed,omitempty"`
}

type changeJSON struct {
	Action         string     `json:"action"`
	Path           string     `json:"path"`
	To             string     `json:"to,omitempty"`
	Reason         string     `json:"reason"`
	EntriesRemoved int        `json:"entries_removed"`
	EntriesAdded   int        `json:"entries_added"`
	BytesRemoved   int64      `json:"bytes_removed"`
	BytesAdded     int64      `json:"bytes_added"`
	Edits          []editJSON `json:"edits,omitempty"`
}

type editJSON struct {
	Line   int    `json:"line"`
	Count  int    `json:"count"`
	Added  int    `json:"lines_added"`
	Reason string `json:"reason"`
}

func toJSON(cs *changeset.ChangeSet) planJSON {
	pj := planJSON{Command: cs.Command, Root: cs.Root, Sessions: changeset.Sessions(cs), Changes: []changeJSON{}, Notes: cs.Notes}
	if pj.Notes == nil {
		pj.Notes = []string{}
	}
	for i := range cs.Ops {
		op := &cs.Ops[i]
		s := changeset.OpStats(op)
		c := changeJSON{Action: string(op.Action), Path: op.Path, To: op.To, Reason: op.Reason,
			EntriesRemoved: s.EntriesRemoved, EntriesAdded: s.EntriesAdded, BytesRemoved: s.BytesRemoved, BytesAdded: s.BytesAdded}
		for _, e := range op.Edits {
			c.Edits = append(c.Edits, editJSON{Line: e.Line, Count: e.Count, Added: strings.Count(string(e.New), "\n"), Reason: e.Reason})
		}
		pj.Changes = append(pj.Changes, c)
	}
	return pj
}

// runPlan shows a change set and, with --apply, applies it.
func runPlan(f *planFlags, cs *changeset.ChangeSet) error {
	if f.stat && f.diff {
		return usageError(errors.New("--stat prints the summary alone, --diff the whole diff: give one of them"))
	}
	// Desktop's entries of the sessions the plan removes or moves: said,
	// never written (Desktop's index is outside the store).
	for _, n := range desktopNotes(f.desktopDir, cs) {
		if !slices.Contains(cs.Notes, n) {
			cs.Notes = append(cs.Notes, n)
		}
	}
	if f.planOut != "" {
		if err := cs.Save(f.planOut); err != nil {
			return &exitError{code: exitFound, err: fmt.Errorf("plan %s: %w", f.planOut, err)}
		}
	}
	pj := toJSON(cs)
	pj.Trim, pj.Fork, pj.Unpack, pj.Redact, pj.Pull = f.trim, f.fork, f.unpack, f.redact, f.pull
	// What would refuse the apply is said before the plan, in a dry run
	// too: a plan whose apply cannot start is not worth reading first.
	if f.apply && !cs.Empty() && !f.yes && !stdinTerminal(f) {
		return f.needsYes()
	}
	if !cs.Empty() {
		lv, err := liveSessions(cs.Root)
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		refused := changeset.LiveRefusals(cs, changeset.ApplyOptions{Force: f.force, LiveSessions: lv})
		if len(refused) > 0 && !f.json {
			for _, r := range refused {
				fmt.Fprintf(f.errOut, "cfix: %s: %s\n", visible.String(r.Path), r.Reason)
			}
			fmt.Fprintf(f.errOut, "cfix: --apply refuses this plan while that holds (--force applies it anyway); the plan follows\n\n")
		}
	}
	if !f.json {
		v := changeset.View{Lines: screenLines(f.out), Stat: f.stat, Full: f.diff, Diff: f.differ}
		// The whole diff the user asked for (--diff) goes through the
		// pager; the plan shown by default is made to fit on a screen,
		// what is said before it (where sessions land) counted, and is
		// printed: a dry run never waits for a key unless asked.
		out, done := f.out, func() {}
		if f.diff {
			out, done = pager(f.out)
		}
		if f.before != nil {
			var head bytes.Buffer
			f.before(&head)
			out.Write(head.Bytes())
			if v.Lines > 0 {
				v.Lines = max(1, v.Lines-bytes.Count(head.Bytes(), []byte("\n")))
			}
		}
		cut, err := v.Write(out, cs)
		if cut {
			fmt.Fprintf(out, "\n(the diff is longer than a screen: --diff prints it)\n")
		}
		done()
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		if f.planOut != "" {
			fmt.Fprintf(f.out, "plan saved to %s; apply it with: cfix apply %s%s\n", f.planOut, shell.Quote(f.planOut), rootArg(cs))
		}
	}
	if !f.apply || cs.Empty() {
		if f.json {
			return printJSON(f.out, pj)
		}
		if !cs.Empty() {
			fmt.Fprintf(f.out, "\ndry run: nothing was written; run again with --apply to write these changes\n")
			if f.exitCode {
				return &exitError{code: exitChanges}
			}
		}
		return nil
	}
	if err := confirm(f, len(cs.Ops)); err != nil {
		return err
	}
	live, err := liveSessions(cs.Root)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	jdir, err := changeset.DefaultJournalDir()
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	opts := changeset.ApplyOptions{Force: f.force, JournalDir: jdir, LiveSessions: live, Lock: f.lock}
	if opts.Lock == nil && heldLock.Holds(cs.Root) {
		opts.Lock = heldLock
	}
	if opts.Lock == nil {
		// A plan not made under the lock (cfix apply FILE) is checked
		// against the store as the last writer left it.
		l, err := changeset.LockStore(jdir, cs.Root)
		if err != nil {
			return planFailed(f, pj, err)
		}
		defer l.Unlock()
		opts.Lock = l
		if err := recoverStore(f.errOut, opts); err != nil {
			return planFailed(f, pj, err)
		}
	}
	res, err := changeset.Apply(cs, opts)
	if res != nil {
		pj.Journal = res.Journal
	}
	if err != nil {
		return planFailed(f, pj, err)
	}
	pj.Applied = true
	if f.kept != nil {
		if err := f.kept(); err != nil {
			fmt.Fprintf(f.errOut, "cfix: warning: %v\n", err)
		}
	}
	say := ""
	if f.applied != nil {
		s, removed, err := f.applied(res.Journal)
		if removed {
			pj.Journal, pj.JournalRemoved = "", true
		}
		if err != nil {
			return planFailed(f, pj, err)
		}
		say = s
	}
	if f.json {
		return printJSON(f.out, pj)
	}
	for _, p := range res.Appended {
		fmt.Fprintf(f.out, "%s: Claude Code appended to it while cfix replaced it; the appended lines were carried over\n", p)
	}
	if say != "" {
		fmt.Fprintf(f.out, "\napplied %d %s; %s\n", res.Applied, plural.Of(res.Applied, "change"), say)
		return nil
	}
	fmt.Fprintf(f.out, "\napplied %d %s; backup journal: %s\nundo with: cfix undo --apply %s%s\n", res.Applied, plural.Of(res.Applied, "change"), res.Journal, shell.Quote(res.Journal), rootArg(cs))
	return nil
}

// planScreen is the height of the screen a plan is shown on when its
// output is not a terminal (a pipe, a file, a tool's output read by
// Claude): a plan longer than that shows its summary, and --diff the
// rest.
const planScreen = 60

// screenLines is the height of the screen a plan printed to w is read on:
// the terminal's, else planScreen.
func screenLines(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		if _, h, err := term.GetSize(int(f.Fd())); err == nil && h > 0 {
			return h
		}
	}
	return planScreen
}

// stdinTerminal reports whether the plan's input is a terminal a question
// can be asked on.
func stdinTerminal(f *planFlags) bool {
	in, ok := f.in.(*os.File)
	return ok && isTerminal(in)
}

// heldLock is the lock of the store that this process took before it
// planned (lockBeforePlan).
var heldLock *changeset.Lock

// lockBeforePlan, run before every command, takes the lock of the store
// (--root) when the command is to apply (--apply), before it reads
// anything: one writer at a time, and the plan is made from the store as
// the last writer left it, after what a killed cfix left is rolled back.
// undo takes the lock itself (the store of the journal named).
func lockBeforePlan(cmd *cobra.Command, _ []string) error {
	apply, rootFlag := cmd.Flags().Lookup("apply"), cmd.Flags().Lookup("root")
	if apply == nil || rootFlag == nil || apply.Value.String() != "true" || cmd.Name() == "undo" {
		return nil
	}
	root, err := store.Resolve(rootFlag.Value.String())
	if err != nil {
		return nil // the command says so
	}
	jdir, err := changeset.DefaultJournalDir()
	if err != nil {
		return nil
	}
	l, err := changeset.LockStore(jdir, root)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	heldLock = l
	opts := changeset.ApplyOptions{JournalDir: jdir, Lock: l}
	if force := cmd.Flags().Lookup("force"); force != nil && force.Value.String() == "true" {
		opts.Force = true
	}
	if opts.LiveSessions, err = liveSessions(root); err != nil {
		return &exitError{code: exitFound, err: err}
	}
	if err := recoverStore(cmd.ErrOrStderr(), opts); err != nil {
		return &exitError{code: exitFound, err: err}
	}
	return nil
}

// releaseLock lets go the lock lockBeforePlan took.
func releaseLock() {
	heldLock.Unlock()
	heldLock = nil
}

// recoverStore rolls back, under the lock, what a killed cfix left in the
// store, saying so on w (changeset.Recover).
func recoverStore(w io.Writer, opts changeset.ApplyOptions) error {
	lines, err := changeset.Recover(opts)
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
	return err
}

// planFailed reports an apply that failed (in the --json document too).
func planFailed(f *planFlags, pj planJSON, err error) error {
	if f.json {
		pj.Error = err.Error()
		printJSON(f.out, pj)
	}
	return &exitError{code: exitFound, err: err}
}

// confirm asks on a terminal; elsewhere --yes is required.
func confirm(f *planFlags, n int) error {
	if f.yes {
		return nil
	}
	in, ok := f.in.(*os.File)
	if !ok || !isTerminal(in) {
		return f.needsYes()
	}
	fmt.Fprintf(f.errOut, "apply %d %s? [y/N] ", n, plural.Of(n, "change"))
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return &exitError{code: exitFound, err: errors.New("not applied")}
	}
	return nil
}

func liveSessions(root string) (map[string]bool, error) {
	ls, err := store.LiveSessions(root)
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, l := range ls {
		if l.Running && l.SessionID != "" {
			m[l.SessionID] = true
		}
	}
	return m, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// resolveRoot resolves --root for a planner (a usage error when missing).
func resolveRoot(root string) (string, error) {
	r, err := store.Resolve(root)
	if err != nil {
		return "", usageError(err)
	}
	return r, nil
}

// rootArg is the --root that a later cfix apply or cfix undo of cs needs
// to be given its store (a plan or journal applies only to the store
// given): none for the default store, or for a project's settings.
func rootArg(cs *changeset.ChangeSet) string {
	if cs.Scope != "" {
		return ""
	}
	if def, err := store.Resolve(""); err == nil && changeset.SameStore(def, cs.Root) {
		return ""
	}
	return " --root " + shell.Quote(cs.Root)
}
