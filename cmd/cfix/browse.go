package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/browse"
	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
)

func newBrowseCmd() *cobra.Command {
	o := &resumeOptions{}
	var ro browseRemote
	cmd := &cobra.Command{
		Use:   "browse [-- CLAUDE-ARGS...]",
		Short: "Browse every session of the store, preview it, repair or remove it, and resume it",
		Long: `Browse is a full-screen browser of every session of every project, newest
first, with what cfix ls shows of each (last activity, messages, size,
subagents, health, and the marks live, stub and swept: Claude Code's next
cleanup deletes it). Typing filters the list (the words are found in the
title, the first prompt, the project path or the id, as they are or with
letters between); Tab switches between this directory's project and the
whole store. Below the list, the selected conversation as cfix export writes
it, its last messages in view, thinking and tool calls folded; ▶ marks the
message under its cursor.

Enter resumes the selected session as cfix resume does (the check, the
repair it offers, then claude --resume in the session's directory;
arguments after -- go to claude). Esc leaves the filter for the action keys
(Ctrl+F goes back to it): [ and ] move the preview's cursor from message to
message (scrolling the preview moves it too), f forks the session there (cfix
fork --at the last entry before the next message: the history up to that
message, its tool results with it; at a turn's last message, the fork cfix
fork --turn N makes), t trims it into a new session (thinking, tool output
or both), v and o show the thinking and the tool calls whole or fold them; /
(Ctrl+S anywhere) searches the text of every session as cfix search -i does
and goes to a hit, its session selected and the preview at it. e exports
the session as Markdown into the temporary folder and opens it in
$CFIX_PAGER, else $PAGER, else less; r repairs, d removes, a archives the
session, u undoes the store's last change. Each
change shows its plan and applies it only on y, as the command does with
--apply (the lock, the journal: cfix undo takes it back). A live session is
not repaired, removed or archived. ? lists the keys; q or Ctrl+C quits.

With --remote URL (as cfix pull takes it), the sessions other machines
pushed there are listed beside the store's, each marked @MACHINE; Enter on
one fetches it and shows the plan of its pull (where it lands, as cfix pull
says), y applies it (the lock, the journal), then it is resumed where it
landed. An encrypted remote is opened with --identity FILE, or with its
passphrase, asked on the terminal before the browser starts as cfix pull
asks it ($CFIX_PASSPHRASE where it is set).

Exit status: that of claude after Enter; 0 when quit; 2 when stdin or
stdout is not a terminal.`,
		Example: `  cfix browse
  cfix browse --root /backup/.claude
  cfix browse -- --fork-session
  cfix browse --remote s3://team-sessions/claude`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.streams(cmd)
			var extra []string
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				args, extra = args[:at], args[at:]
			}
			if len(args) > 0 {
				return usageError(fmt.Errorf("browse takes no session (%s): cfix resume SESSION opens one", args[0]))
			}
			return runBrowse(o, &ro, extra)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&o.claude, "claude", "", "the Claude Code program Enter starts (default $CFIX_CLAUDE, else claude from PATH)")
	f.StringVar(&ro.url, "remote", "", "list the sessions other machines pushed to this remote too (s3://BUCKET/PREFIX, file:///DIR); enter pulls one")
	f.StringArrayVar(&ro.identities, "identity", nil, "with --remote: an age identity file that opens encrypted objects (repeatable)")
	f.StringVar(&ro.self, "self", "", "with --remote: this machine's name there, whose sessions are not listed (default: its host name)")
	return cmd
}

// browseRemote are the flags of browse --remote.
type browseRemote struct {
	url, self  string
	identities []string
}

// remoteRows reads the sessions of every machine of st but self.
func remoteRows(st remote.Store, self string, keys pack.Keys) ([]browse.Row, error) {
	ctx := context.Background()
	machines, err := carryremote.Machines(ctx, st)
	if err != nil {
		return nil, err
	}
	var rows []browse.Row
	for _, m := range machines {
		if m == self {
			continue
		}
		ix, err := carryremote.ReadIndex(ctx, st, m, keys)
		if err != nil {
			return nil, err
		}
		if ix == nil {
			continue
		}
		for _, e := range ix.Sessions {
			r := browse.Row{Machine: m, Short: e.ID}
			if len(r.Short) > 8 {
				r.Short = r.Short[:8]
			}
			r.Session, r.Path, r.Size, r.Title = e.ID, browse.RemotePath(m, e.ID), e.Bytes, e.ID
			if t, err := time.Parse(time.RFC3339Nano, e.Last); err == nil {
				r.LastActive = t
			} else {
				r.LastActive = e.Pushed
			}
			if e.Meta != nil {
				if e.Meta.Title != "" {
					r.Title = e.Meta.Title
				}
				r.ProjectPath = e.Meta.CWD
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// browsePull plans the pull of the remote session of r as cfix pull
// SESSION --machine MACHINE plans it, applied as its --apply --yes
// applies it; its Then is the session where it landed.
func browsePull(root string, st remote.Store, keys pack.Keys, r browse.Row) (*browse.Planned, error) {
	home, _ := os.UserHomeDir()
	p, err := carryremote.PlanPull(context.Background(), carryremote.PullOptions{Root: root, Remote: st, Machine: r.Machine,
		Sessions: []string{r.Session}, Keys: keys, Home: home})
	if err != nil {
		return nil, err
	}
	if len(p.Sessions) != 1 {
		p.Cleanup()
		return nil, fmt.Errorf("machine %s's session %s: %d sessions planned", r.Machine, r.Session, len(p.Sessions))
	}
	l := p.Sessions[0]
	return &browse.Planned{ChangeSet: p.ChangeSet,
		Show: func(w io.Writer) error {
			printPull(w, st.String(), p)
			return changeset.Show(w, p.ChangeSet)
		},
		Apply: func() (string, error) {
			f := applyFlags(root)
			err := runPlan(&f, p.ChangeSet)
			return f.out.(*bytes.Buffer).String(), err
		},
		Then:  func() string { return filepath.Join(l.Folder, l.ID+".jsonl") },
		Close: p.Cleanup,
	}, nil
}

func runBrowse(o *resumeOptions, ro *browseRemote, extra []string) error {
	root, err := resolveRoot(o.root)
	if err != nil {
		return err
	}
	var st remote.Store
	var keys pack.Keys
	if ro.url != "" {
		if st, err = remote.Open(ro.url); err != nil {
			return usageError(err)
		}
		if keys, err = identityKeys(ro.identities); err != nil {
			return err
		}
	} else if len(ro.identities) > 0 || ro.self != "" {
		return usageError(errors.New("--identity and --self go with --remote URL"))
	}
	self := ro.self
	if self == "" {
		self = carryremote.DefaultMachine()
	}
	if os.Getenv("CFIX_BROWSE_FIRST_FRAME") != "" {
		return browseFirstFrame(root, o.out)
	}
	in, iok := o.in.(*os.File)
	out, ook := visible.Unwrap(o.out).(*os.File) // the browser draws itself
	if !iok || !ook || !isTerminal(in) || !isTerminal(out) {
		return usageError(errors.New("browse needs a terminal (cfix ls lists the sessions)"))
	}
	here := ""
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		here = store.FolderFor(root, wd)
	}
	bo := browse.Options{
		Root:     root,
		Here:     here,
		Plan:     func(a browse.Action, path string) (*browse.Planned, error) { return browsePlan(root, a, path) },
		PlanFork: func(path, at string) (*browse.Planned, error) { return browseFork(root, path, at) },
		PlanTrim: func(path string, thinking, toolOutput bool) (*browse.Planned, error) {
			p, err := trim.Trim(trim.Options{Root: root, Session: path, Thinking: thinking, ToolOutput: toolOutput, KeepTurns: trim.DefaultKeepTurns})
			if err != nil {
				return nil, err
			}
			// A trim a resume would not feel is not offered.
			if why := p.Figures.NoGain(); why != "" && p.Figures.Bytes > 0 {
				return nil, fmt.Errorf("no trim: the transcript would lose %s, but %s", changeset.Size(p.Figures.Bytes), why)
			}
			return sessionPlanned(root, p.Plan), nil
		},
	}
	if st != nil {
		// The remote is read once before the browser takes the terminal:
		// a passphrase it is encrypted with is asked then, as cfix pull
		// asks it ($CFIX_PASSPHRASE where it is set), and kept for the
		// pulls; one never asked before is not asked in the browser.
		pass := &browsePassphrase{ask: keys.Passphrase}
		keys.Passphrase = pass.get
		rows, rerr := remoteRows(st, self, keys)
		pass.browsing = true
		first := true
		bo.Remote = func() ([]browse.Row, error) {
			if first {
				first = false
				return rows, rerr
			}
			return remoteRows(st, self, keys)
		}
		bo.PlanPull = func(r browse.Row) (*browse.Planned, error) { return browsePull(root, st, keys, r) }
	}
	m := browse.New(bo)
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out))
	if _, err := p.Run(); err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("browse: %w", err)}
	}
	if m.Chosen == "" {
		return nil
	}
	o.root = root
	return runResume(o, []string{m.Chosen}, extra)
}

// browseFirstFrame writes the first frame of browse that has the list in
// it, as the browser draws it at 120×40, and returns: the measure of make
// bench (CFIX_BROWSE_FIRST_FRAME=1), from the process's start to that
// frame, without a terminal (Bubble Tea's setup of one is not in it).
func browseFirstFrame(root string, w io.Writer) error {
	m := browse.New(browse.Options{Root: root})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(m.Init()())
	_, err := io.WriteString(w, m.View().Content+"\n")
	return err
}

// browsePlan plans an action of browse as its command does; what applies
// it is the command's own --apply --yes path (the lock, the journal).
func browsePlan(root string, a browse.Action, path string) (*browse.Planned, error) {
	switch a {
	case browse.Repair:
		cs, err := repair.Plan(repair.Options{Root: root, Targets: []string{path}})
		return planned(root, cs, err)
	case browse.Remove:
		cs, err := archive.Rm(archive.RmOptions{Root: root, Sessions: []string{path}})
		return planned(root, cs, err)
	case browse.Archive:
		dir, err := archiveDir("")
		if err != nil {
			return nil, err
		}
		p, err := archive.Archive(archive.Options{Root: root, Dir: dir, Sessions: []string{path}})
		if err != nil {
			return nil, err
		}
		p.Cleanup()
		// The archive files are built when it is applied: planned again,
		// as cfix archive --apply plans it.
		return &browse.Planned{ChangeSet: p.ChangeSet, Show: func(w io.Writer) error {
			_, err := changeset.View{Diff: func(w io.Writer, cs *changeset.ChangeSet, o changeset.DiffOptions) error {
				return archiveDiff(w, cs, p, o)
			}}.Write(w, p.ChangeSet)
			return err
		}, Apply: func() (string, error) {
			o := &archiveOptions{planFlags: applyFlags(root)}
			err := runArchive(o, []string{path})
			return o.out.(*bytes.Buffer).String(), err
		}}, nil
	case browse.Undo:
		base, err := changeset.DefaultJournalDir()
		if err != nil {
			return nil, err
		}
		js, err := changeset.ListJournals(base, root)
		if err != nil {
			return nil, err
		}
		dir := ""
		for _, j := range js {
			if j.State != "undone" && j.State != "rolled-back" && j.Command != "undo" {
				dir = j.Dir
				break
			}
		}
		if dir == "" {
			return nil, errors.New("no journal to undo for store " + root)
		}
		cs, err := changeset.Undo(dir)
		if err != nil {
			return nil, fmt.Errorf("journal %s: %w", dir, err)
		}
		// Applied as cfix undo --apply JOURNAL: under the lock, the
		// journal marked undone.
		return &browse.Planned{ChangeSet: cs, Apply: func() (string, error) {
			o := &undoOptions{planFlags: applyFlags(root)}
			err := runUndo(o, []string{dir})
			return o.out.(*bytes.Buffer).String(), err
		}}, nil
	}
	return nil, fmt.Errorf("browse: no action %q", a)
}

// browseFork plans the fork f of browse makes, at the message under the
// preview's cursor: cfix fork PATH --at AT, planned as the command plans
// it and applied as its --apply --yes applies it.
func browseFork(root, path, at string) (*browse.Planned, error) {
	p, err := trim.Fork(trim.ForkOptions{Root: root, Session: path, At: at})
	if err != nil {
		return nil, err
	}
	return sessionPlanned(root, p.Plan), nil
}

// planned is a change set and its apply, as --apply --yes applies it.
func planned(root string, cs *changeset.ChangeSet, err error) (*browse.Planned, error) {
	if err != nil {
		return nil, err
	}
	return &browse.Planned{ChangeSet: cs, Apply: func() (string, error) {
		f := applyFlags(root)
		err := runPlan(&f, cs)
		return f.out.(*bytes.Buffer).String(), err
	}}, nil
}

// sessionPlanned is a plan that makes a session (fork, trim) and its
// apply, as the command's --apply --yes applies it (it says how to
// resume the new session).
func sessionPlanned(root string, p *carry.Plan) *browse.Planned {
	return &browse.Planned{ChangeSet: p.ChangeSet, Apply: func() (string, error) {
		f := applyFlags(root)
		err := runSessionPlan(&f, p)
		return f.out.(*bytes.Buffer).String(), err
	}}
}

// applyFlags are the flags of an apply browse makes: --apply --yes
// --stat, its output kept for the dialog.
func applyFlags(root string) planFlags {
	var b bytes.Buffer
	return planFlags{root: root, apply: true, yes: true, stat: true, out: &b, errOut: &b}
}

// browsePassphrase asks the passphrase of a remote once, before the
// browser has the terminal, and gives it again after.
type browsePassphrase struct {
	ask      func() (string, error)
	browsing bool
	asked    bool
	pass     string
	err      error
}

func (b *browsePassphrase) get() (string, error) {
	if !b.asked {
		if b.browsing || b.ask == nil {
			return "", fmt.Errorf("an object of the remote is encrypted with a passphrase, which browse asks before it starts only when the index is: set %s", passphraseEnv)
		}
		b.pass, b.err = b.ask()
		b.asked = true
	}
	return b.pass, b.err
}
