package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/resume"
	"github.com/cfix-dev/cfix/validate"
)

type resumeOptions struct {
	planFlags
	title           string
	repair, noCheck bool
	checkOnly       bool
	here, copy      bool
	claude          string
}

func newResumeCmd() *cobra.Command {
	o := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume [SESSION] [-- CLAUDE-ARGS...]",
		Short: "Check a session, offer to repair it, then open it in Claude Code from wherever you are",
		Long: `Resume opens a session in Claude Code from any directory: it finds the session
(an id, a unique prefix of one, a .jsonl path or latest; or --title, the words
of the title /resume shows), checks what a resume by the version that wrote it
would send (validate, for this session), and when that resume would be rejected
or lose history, says so and shows the repair plan: on a terminal it asks, with
--repair it repairs without asking (journaled; cfix undo takes it back),
--no-check skips the check, --check-only makes it and stops there (no client is
needed or started; nothing is written). Then it runs claude --resume ID in the session's
working directory, in place of cfix itself (signals and the terminal go to
it); arguments after -- go to claude (-p PROMPT, --fork-session, ...).

A session whose working directory is gone is resumed here with --here: cfix
moves it into this directory's project folder (--copy clones it instead,
under a new id), as cfix move and cfix clone plan it, and resumes it here.

The client is --claude PATH, else $CFIX_CLAUDE, else claude from PATH.

Exit status: that of claude; 1 when the check, a repair or a move fails or is
declined (--check-only: when the check finds what a resume would be rejected
for or lose), 2 for a usage error (no such session, several, no claude).`,
		Example: `  cfix resume 2bc4b42d
  cfix resume --title "flaky test" -- -p "where were we?"
  cfix resume latest --repair
  cfix resume 2bc4b42d --here --copy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.streams(cmd)
			var extra []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				args, extra = args[:at], args[at:]
			}
			return runResume(o, args, extra)
		},
		ValidArgsFunction: completeFirstSession,
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&o.title, "title", "", "find the session by the words of its title instead of its id")
	f.BoolVar(&o.repair, "repair", false, "repair what the check finds without asking")
	f.BoolVar(&o.noCheck, "no-check", false, "start the client without checking the session")
	f.BoolVar(&o.checkOnly, "check-only", false, "check the session and stop: start no client, write nothing")
	f.BoolVar(&o.here, "here", false, "resume in this directory: move the session into its project folder first")
	f.BoolVar(&o.copy, "copy", false, "with --here, clone the session instead of moving it")
	f.BoolVarP(&o.yes, "yes", "y", false, "apply a move, a clone or a repair without asking (needed when stdin is not a terminal)")
	f.StringVar(&o.claude, "claude", "", "the Claude Code program (default $CFIX_CLAUDE, else claude from PATH)")
	return cmd
}

func runResume(o *resumeOptions, args, extra []string) error {
	switch {
	case o.title != "" && len(args) > 0:
		return usageError(errors.New("resume takes a session or --title, not both"))
	case o.title == "" && len(args) != 1:
		return usageError(errors.New("resume needs a session: " + sessionArg + ", or --title TEXT"))
	case o.copy && !o.here:
		return usageError(errors.New("--copy goes with --here: it clones the session into this directory's project folder"))
	case o.checkOnly && (o.noCheck || o.repair || o.here):
		return usageError(errors.New("--check-only checks and stops: it goes with neither --no-check, --repair nor --here"))
	}
	root, err := resolveRoot(o.root)
	if err != nil {
		return err
	}
	if o.checkOnly {
		return o.checkOnlyRun(root, args)
	}
	client, err := claudeProgram(o.claude)
	if err != nil {
		return usageError(err)
	}
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	t, err := resume.Find(root, arg, o.title)
	if err != nil {
		return resumeError(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return usageError(err)
	}
	dir := t.Dir
	switch {
	case o.here && !resume.Here(root, t, wd):
		id, err := o.bringHere(root, t, wd)
		if err != nil {
			return err
		}
		if t, err = resume.Find(root, id, ""); err != nil {
			return resumeError(err)
		}
		dir = wd
	case o.here:
		dir = wd
	case !t.DirExists:
		what := "ran in no directory its entries name"
		if t.Dir != "" {
			what = "ran in " + visible.String(t.Dir) + ", which is not on disk any more"
		}
		return &exitError{code: exitFound, err: fmt.Errorf("session %s %s: resume it in this directory with --here (cfix moves it into this directory's project folder; --copy clones it)", t.Session, what)}
	}
	if !o.noCheck {
		if err := o.check(root, t); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.errOut, "cfix: resuming %s (%s) in %s\n", t.Session, visible.String(t.Title), visible.String(dir))
	// --resume=ID: every pinned client takes what follows the "=" as the
	// session, where --resume ID takes an ID starting with "-" for an
	// option, and none honours "--" there (e2e's TestResumeArgs).
	return execClient(client, dir, append([]string{"--resume=" + t.Session}, extra...))
}

// bringHere moves (or clones) the session into the project folder of dir,
// as cfix move and cfix clone plan it, and returns its id there.
func (o *resumeOptions) bringHere(root string, t *resume.Target, dir string) (string, error) {
	opts := clone.Options{Root: root, Session: t.Path, To: dir}
	plan := clone.Move
	if o.copy {
		plan = clone.Clone
	}
	p, err := plan(opts)
	if err != nil {
		return "", planError(err)
	}
	f := o.planFlags
	f.apply, f.out, f.asked = true, o.errOut, "--here (it moves the session into this directory's project folder)"
	if o.copy {
		f.asked = "--here --copy (it clones the session into this directory's project folder)"
	}
	if err := runPlan(&f, p.ChangeSet); err != nil {
		return "", err
	}
	return p.SessionID, nil
}

// check runs the check of a resume: what validate finds of severity error
// in the session, and the repair that fixes it, applied with --repair, or
// on a terminal when the user says so.
func (o *resumeOptions) check(root string, t *resume.Target) error {
	found, err := checkResume(root, t)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	if len(found) == 0 {
		return nil
	}
	w := o.errOut
	fmt.Fprintf(w, "cfix: a resume of session %s by claude %s would be rejected or lose history:\n", t.Session, t.Version)
	for _, f := range found {
		fmt.Fprintf(w, "  line %d: %s: %s\n", f.Line, f.Code, visible.String(f.Message))
	}
	cs, err := repair.Plan(repair.Options{Root: root, Targets: []string{t.Path}})
	if err != nil {
		return planError(err)
	}
	if cs.Empty() {
		fmt.Fprintf(w, "cfix: repair has no safe fix for it (cfix explain CODE says more); resuming as it is\n")
		return nil
	}
	f := o.planFlags
	f.out = w
	if !o.repair {
		if !stdinTerminal(&f) {
			fmt.Fprintf(w, "cfix: resuming as it is; cfix resume --repair repairs it first (cfix repair %s shows the plan)\n", shell.Quote(t.Session))
			return nil
		}
		if err := runPlan(&f, cs); err != nil { // the plan, as a dry run
			return err
		}
		fmt.Fprintf(w, "repair before resuming? [y/N] ")
		line, _ := bufio.NewReader(f.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintf(w, "cfix: resuming as it is\n")
			return nil
		}
	}
	f.apply, f.yes = true, true
	return runPlan(&f, cs)
}

// checkOnlyRun is resume --check-only: the session found and checked as
// resume checks it, what the check finds said, and nothing started.
func (o *resumeOptions) checkOnlyRun(root string, args []string) error {
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	if os.Getenv("GOGC") == "" { // as checkResume
		defer debug.SetGCPercent(debug.SetGCPercent(200))
	}
	t, found, err := resume.FindChecked(root, arg, o.title)
	if err != nil {
		var ie *resume.InputError
		if errors.As(err, &ie) || userError(err) {
			return usageError(err)
		}
		return &exitError{code: exitFound, err: err}
	}
	w := o.errOut
	if !t.DirExists {
		fmt.Fprintf(w, "cfix: session %s ran in %s, which is not on disk: resume it with --here\n", t.Session, visible.String(t.Dir))
	}
	if len(found) == 0 {
		fmt.Fprintf(w, "cfix: a resume of session %s (%s) by claude %s loads it whole\n", t.Session, visible.String(t.Title), t.Version)
		return nil
	}
	fmt.Fprintf(w, "cfix: a resume of session %s by claude %s would be rejected or lose history:\n", t.Session, t.Version)
	for _, f := range found {
		fmt.Fprintf(w, "  line %d: %s: %s\n", f.Line, f.Code, visible.String(f.Message))
	}
	return &exitError{code: exitFound, err: fmt.Errorf("session %s: %s (cfix resume --repair repairs it first)", t.Session, plural.Count(validate.Total(found), "finding"))}
}

// checkResume is resume.Check with the collector set as validate sets it
// (see runValidate): the check is validate's, and as fast.
func checkResume(root string, t *resume.Target) ([]validate.Finding, error) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(200))
	}
	return resume.Check(root, t)
}

// claudeProgram finds the Claude Code program: given, else $CFIX_CLAUDE,
// else claude from PATH.
func claudeProgram(given string) (string, error) {
	if given == "" {
		given = os.Getenv("CFIX_CLAUDE")
	}
	if given != "" {
		p, err := exec.LookPath(given)
		if err != nil {
			return "", fmt.Errorf("--claude %s: %w", given, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("claude")
	if err != nil {
		return "", errors.New("claude is not in PATH: name the program with --claude PATH or $CFIX_CLAUDE")
	}
	return p, nil
}

// resumeError maps what Find says to an exit status: a name that names no
// session, or several, is a usage error.
func resumeError(err error) error {
	var ie *resume.InputError
	if errors.As(err, &ie) || userError(err) {
		return usageError(err)
	}
	return &exitError{code: exitFound, err: err}
}
