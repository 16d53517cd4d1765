package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/guard"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/store"
)

type guardOptions struct {
	planFlags
	project    bool
	bin        string
	statusLine bool
	secrets    bool
}

func newGuardCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "guard (install | uninstall | status)",
		Example: `  cfix guard install
  cfix guard install --apply
  cfix guard status
  cfix guard uninstall --apply`,
		Short: "Install (or remove) cfix's hooks in Claude Code's settings.json, or say what they did",
		Long: `Guard sets cfix up to run by itself from Claude Code's hooks: install adds
to the store's settings.json (~/.claude/settings.json, or
$CLAUDE_CONFIG_DIR/settings.json) a SessionStart and a SessionEnd hook that
run cfix hook EVENT with this cfix binary (see cfix hook --help); uninstall
removes them; status says what is installed, what it protects and when each
hook last ran. --project: the .claude/settings.json of the current directory.`,
	}
	cmd.AddCommand(newGuardChangeCmd(true), newGuardChangeCmd(false), newGuardStatusCmd())
	return cmd
}

func newGuardChangeCmd(install bool) *cobra.Command {
	opts := &guardOptions{}
	cmd := &cobra.Command{
		Use: "install",
		Example: `  cfix guard install
  cfix guard install --apply --yes
  cfix guard install --cfix /usr/local/bin/cfix`,
		Short: "Plan (and with --apply, make) the addition of cfix's hooks to settings.json",
		Long: `Install adds cfix's SessionStart and SessionEnd hooks to the store's
settings.json, as a plan like every change cfix makes (a dry run unless
--apply; cfix undo takes it back). The file's text is edited, not rewritten:
every byte of the rest is kept, and what is added is indented as the file
is (one line in a file of one line). A missing or empty file is written
with two-space indentation. An event that already has cfix's hook gets
this binary in its command line. A file cfix's hooks would not run from is
refused, saying why: not valid JSON, a hooks field that is not an object
or an event of cfix's that is not a list (Claude Code ignores them), an
entry that makes Claude Code reject the whole file (a null group or hook,
a hook without its command: fix it first).

The hooks run this cfix binary (--cfix names another) and act on this
store only (--root STORE in their command line; a project's name none and
act on the store of the Claude Code that runs them).

--statusline also sets Claude Code's status line (the statusLine setting)
to cfix statusline: one line with the session's cost so far, today's, the
current 5-hour block's and its time left, and the session's health. A
status line of your own is left as it is, and the install refused: remove
it first. Uninstall removes cfix's status line with the hooks.

--project changes the .claude/settings.json of the current directory (the
project's settings) instead: that file and nothing else (a .claude or a
settings.json that is a symbolic link is refused); the folder is made when
missing. cfix undo --apply JOURNAL takes it back.

--secrets also has the SessionEnd hook scan the session that ended for
secrets (as cfix secrets does), and the next SessionStart say which sessions
hold some and the cfix redact command that takes them out. It is kept in
cfix's state folder; cfix guard uninstall --apply turns it off.

` + plannerExitStatus,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runGuardChange(opts, install)
		},
	}
	if !install {
		cmd.Use = "uninstall"
		cmd.Example = `  cfix guard uninstall
  cfix guard uninstall --apply --yes`
		cmd.Short = "Plan (and with --apply, make) the removal of cfix's hooks from settings.json"
		cmd.Long = `Uninstall removes from the store's settings.json exactly what cfix guard
install added: cfix's entries, and an event's list or a hooks field that
install made and they leave empty. After an install, it gives back the
file byte for byte (a file install made goes again), from what the install
found, which cfix keeps in its state folder; what was added since stays. A
dry run unless --apply; cfix undo takes it back. --project: the
.claude/settings.json of the current directory.

` + plannerExitStatus
	}
	opts.register(cmd, false)
	cmd.Flags().BoolVar(&opts.project, "project", false, "the .claude/settings.json of the current directory (the project's settings), not the store's")
	if install {
		cmd.Flags().StringVar(&opts.bin, "cfix", "", "the cfix binary the hooks run (default: this one)")
		cmd.Flags().BoolVar(&opts.statusLine, "statusline", false, "also set Claude Code's status line to cfix statusline (the session's cost, today's, the 5-hour block's, its health)")
		cmd.Flags().BoolVar(&opts.secrets, "secrets", false, "also scan each session that ends for secrets, and say at the next start which hold some")
	}
	return cmd
}

// hookBinary is the absolute path of the cfix binary the hooks (and the
// MCP server's entry) run: flag's, else this one's, links resolved.
func hookBinary(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, nil
}

// guardTarget is the settings file guard changes, the change set that
// changes it, and the store its hooks record: the store's settings (and the
// store), or with --project the one in the .claude folder of the current
// directory (a change set of that file alone; no store recorded: a
// project's settings are read by a Claude Code of any store).
func guardTarget(opts *guardOptions, command string) (path string, cs *changeset.ChangeSet, store string, err error) {
	if opts.project {
		if opts.root != "" {
			return "", nil, "", usageError(fmt.Errorf("--project and --root: name one settings file"))
		}
		dir, ok, err := guard.ProjectDir()
		if err != nil {
			return "", nil, "", usageError(err)
		}
		if ok {
			cs = changeset.NewProjectSettings(dir, command)
			return filepath.Join(cs.Root, "settings.json"), cs, "", nil
		}
		// The current directory's .claude is the store: its settings.
	}
	root, err := resolveRoot(opts.root)
	if err != nil {
		return "", nil, "", err
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Join(root, "settings.json"), changeset.New(root, command), root, nil
}

func runGuardChange(opts *guardOptions, install bool) error {
	bin, err := hookBinary(opts.bin)
	if err != nil {
		return usageError(fmt.Errorf("cfix binary: %v", err))
	}
	path, cs, storeRoot, err := guardTarget(opts, "guard "+map[bool]string{true: "install", false: "uninstall"}[install])
	if err != nil {
		return err
	}
	raw, exists, err := guard.ReadSettings(path)
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	// What an install found is kept in cfix's state folder once it is
	// applied: its uninstall gives the file back byte for byte.
	stateDir, serr := guard.StateDir()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	var out []byte
	var gone bool
	reason := "add cfix's hooks, run by " + shell.Quote(bin) + " (hook EVENT)"
	if install {
		var before *guard.Before
		out, before, err = guard.Install(path, raw, bin, storeRoot)
		if err == nil && serr == nil {
			before.Missing = !exists
			if len(guard.List(raw)) > 0 {
				// cfix's hooks are there already (another binary, an
				// earlier cfix): what the first install found stays,
				// or is not known.
				before = guard.LoadBefore(stateDir, path)
			}
			opts.kept = func() error { return guard.SaveBefore(stateDir, path, before) }
		}
	} else {
		var before *guard.Before
		if serr == nil {
			before = guard.LoadBefore(stateDir, path)
			opts.kept = func() error { return guard.SaveBefore(stateDir, path, nil) }
		}
		// The status line first (install added it last): then the
		// hooks' uninstall sees what install made of the file.
		out, reason = raw, "remove cfix's hooks"
		if guard.StatusLineOf(raw) != "" {
			out, err = guard.UninstallStatusLine(path, raw)
			reason += " and cfix's status line"
		}
		if err == nil {
			out, gone, err = guard.Uninstall(path, out, before)
		}
		if gone {
			reason += ": the file, which cfix guard install made"
		}
	}
	if err == nil && install && opts.statusLine {
		out, err = guard.InstallStatusLine(path, out, bin)
		reason += " and cfix's status line (" + guard.StatusLineCommand(bin) + ")"
	}
	if err != nil {
		return usageError(err)
	}
	if string(out) != string(raw) || (install && !exists) || gone {
		fp, err := changeset.FingerprintOf(path)
		if err != nil {
			return &exitError{code: exitFound, err: err}
		}
		op := changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: out, HasData: true, Reason: reason}
		switch {
		case gone:
			op = changeset.Op{Action: changeset.Delete, Path: path, Expect: fp, Reason: reason}
		case !exists:
			op.Action = changeset.Create
		}
		cs.Add(op)
	} else if !opts.json {
		if install {
			fmt.Fprintf(opts.out, "%s: cfix's hooks are installed already\n", path)
		} else {
			fmt.Fprintf(opts.out, "%s: holds no hook of cfix\n", path)
		}
	}
	if err := runPlan(&opts.planFlags, cs); err != nil {
		return err
	}
	return guardSecrets(opts, install)
}

// guardSecrets turns the SessionEnd scan for secrets on (install
// --secrets) or off (uninstall), once the hooks are applied.
func guardSecrets(opts *guardOptions, install bool) error {
	if install && !opts.secrets {
		return nil
	}
	dir, err := guard.StateDir()
	if err != nil {
		return &exitError{code: exitFound, err: err}
	}
	st, _ := guard.ReadSecrets(dir)
	if !opts.apply {
		if install && !st.On && !opts.json {
			fmt.Fprintf(opts.out, "with --apply, the SessionEnd hook also scans each session that ends for secrets (cfix secrets), and the next start says which hold some\n")
		}
		return nil
	}
	if st.On == install {
		return nil
	}
	if err := guard.SetSecrets(dir, install); err != nil {
		return &exitError{code: exitFound, err: err}
	}
	if opts.json {
		return nil
	}
	if install {
		fmt.Fprintf(opts.out, "the SessionEnd hook scans each session that ends for secrets; the next start says which hold some (%s)\n", dir)
	} else {
		fmt.Fprintf(opts.out, "the SessionEnd scan for secrets is off\n")
	}
	return nil
}

func newGuardStatusCmd() *cobra.Command {
	var root string
	var project bool
	cmd := &cobra.Command{
		Use: "status",
		Example: `  cfix guard status
  cfix guard status --project
  cfix guard status --root /tmp/store/.claude`,
		Short: "Say which of cfix's hooks are installed, with which cfix, what they protect, and when each last ran",
		Long: `Status lists cfix's hooks in the store's settings.json, and in the
.claude/settings.json of the current directory when that holds some (or
with --project); what they protect (the sessions archived before Claude
Code's sweep, and where the archives are); and when each hook last ran.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRoot(root)
			if err != nil {
				return err
			}
			return guardStatus(cmd, r, project)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&project, "project", false, "also the .claude/settings.json of the current directory when it holds no hook of cfix")
	return cmd
}

// listHooks says which of cfix's hooks the settings file at path holds;
// quiet says nothing of a file without any. storeRoot is the store whose
// settings these are ("" for a project's), which each hook should name.
func listHooks(w io.Writer, path, storeRoot string, quiet bool) (int, error) {
	raw, _, err := guard.ReadSettings(path)
	if err != nil {
		return 0, &exitError{code: exitFound, err: err}
	}
	hooks := guard.List(raw)
	switch {
	case len(hooks) == 0 && quiet:
		return 0, nil
	case len(hooks) == 0:
		fmt.Fprintf(w, "%s: no hook of cfix (cfix guard install adds them)\n", path)
	default:
		fmt.Fprintf(w, "%s:\n", path)
	}
	for _, h := range hooks {
		note := ""
		if fi, err := os.Stat(h.Binary); err != nil || fi.IsDir() {
			note = "  (missing: cfix guard install --apply, run by the cfix to use, makes the hooks run it)"
		}
		switch {
		case h.Root == "" && storeRoot != "":
			note += "  (names no store: it acts on $CLAUDE_CONFIG_DIR or ~/.claude; cfix guard install --apply records this one)"
		case h.Root != "" && storeRoot != "" && h.Root != storeRoot:
			note += fmt.Sprintf("  (acts on the store %s, not this one: cfix guard install --apply makes it act on this one)", h.Root)
		}
		fmt.Fprintf(w, "  %-12s %s%s\n", h.Event, h.Command, note)
	}
	return len(hooks), nil
}

func guardStatus(cmd *cobra.Command, root string, project bool) error {
	w := cmd.OutOrStdout()
	abs, _ := filepath.Abs(root)
	n, err := listHooks(w, filepath.Join(root, "settings.json"), abs, false)
	if err != nil {
		return err
	}
	// The current directory's project settings: with --project, or when
	// they hold cfix's hooks.
	if dir, ok, err := guard.ProjectDir(); err != nil && project {
		return usageError(err)
	} else if ok {
		m, err := listHooks(w, filepath.Join(dir, ".claude", "settings.json"), "", !project)
		if err != nil && project {
			return err
		}
		n += m
	}
	if n > 0 {
		guardProtection(w, root)
	}
	dir, err := guard.StateDir()
	if err != nil {
		return nil
	}
	st, err := guard.ReadState(dir)
	if err != nil {
		fmt.Fprintf(w, "state: %v\n", err)
		return nil
	}
	if sec, err := guard.ReadSecrets(dir); err != nil {
		fmt.Fprintf(w, "secrets: %v\n", err)
	} else if sec.On {
		fmt.Fprintf(w, "secrets: the SessionEnd hook scans each session that ends for secrets (cfix guard install --secrets)\n")
		for _, r := range sec.Found {
			told := ""
			if r.Warned {
				told = ", told at a start"
			}
			fmt.Fprintf(w, "  %s  session %s: %d %s (%s%s): cfix redact %s\n", r.At.Local().Format(time.DateTime), r.Session, r.Secrets,
				plural.Of(r.Secrets, "secret"), strings.Join(r.Rules, ", "), told, shell.Quote(r.Session))
		}
	}
	fmt.Fprintf(w, "last runs (%s):\n", dir)
	for _, ev := range guard.Events {
		r, ok := st.Last[ev]
		if !ok {
			fmt.Fprintf(w, "  %-12s never\n", ev)
			continue
		}
		fmt.Fprintf(w, "  %-12s %s  session %s%s\n", ev, r.At.Local().Format(time.DateTime), r.Session, runNote(r))
		if a := st.Archived; ev == "SessionStart" && a != nil {
			fmt.Fprintf(w, "  %-12s last archive started %s (--older-than %s)\n", "", a.At.Local().Format(time.DateTime), a.Archive)
		}
		if p, ok := st.Problems[ev]; ok && !p.At.Equal(r.At) {
			fmt.Fprintf(w, "  %-12s last problem %s  session %s%s\n", "", p.At.Local().Format(time.DateTime), p.Session, runNote(p))
		}
	}
	return nil
}

// guardProtection says what the hooks protect in the store at root: the
// age past which a start archives a session, how many the next start
// archives, and how many archives the archive folder holds.
func guardProtection(w io.Writer, root string) {
	p := guard.ProtectionOf(root, time.Now())
	switch {
	case p.PeriodDays == 0:
		fmt.Fprintf(w, "nothing to protect: Claude Code's sweep is off (cleanupPeriodDays 0)\n")
	case p.OlderThan == 0:
		fmt.Fprintf(w, "not protected: cleanupPeriodDays %d leaves no time to archive before the sweep\n", p.PeriodDays)
	default:
		fmt.Fprintf(w, "protected: at the start of a session (new or resumed), the sessions whose transcript was last written more than %dd ago (cleanupPeriodDays %d less %s) are archived into %s, once a day, before Claude Code's sweep deletes them\n",
			p.OlderThan, p.PeriodDays, plural.Count(guard.Margin, "day"), p.Dir)
		if l, err := store.Scan(root); err == nil {
			live, _ := liveSessions(root)
			ss := store.SessionsOf(l, live)
			if n, bytes := guard.Mark(ss, p); n > 0 {
				them := map[bool]string{true: "it", false: "them"}[n == 1]
				fmt.Fprintf(w, "  the next start archives %d %s (%s; cfix ls marks %s guard)\n", n, plural.Of(n, "session"), changeset.Size(bytes), them)
			} else {
				fmt.Fprintf(w, "  the next start archives no session: none is that old\n")
			}
		}
	}
	if n, err := p.Archived(); err != nil {
		fmt.Fprintf(w, "  archives: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(w, "  %s holds %d session %s (cfix archive --list lists them, cfix restore ID puts one back)\n", p.Dir, n, plural.Of(n, "archive"))
	}
}

func runNote(r guard.Run) string {
	switch {
	case r.Error != "":
		return "  failed: " + r.Error
	case len(r.Problems) > 0:
		return fmt.Sprintf("  %s: %v (cfix repair %s)", plural.Count(len(r.Problems), "problem"), r.Problems, shell.Quote(r.Path))
	}
	return "  ok"
}
