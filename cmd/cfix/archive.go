package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/repair"
)

type archiveOptions struct {
	planFlags
	dir       string
	olderThan string
	except    []string
	byTrans   bool
	list      bool
}

func newArchiveCmd() *cobra.Command {
	opts := &archiveOptions{}
	cmd := &cobra.Command{
		Use: "archive (SESSION... | --older-than DURATION | --list)",
		Example: `  cfix archive --older-than 90d
  cfix archive 2bc4b42d --apply
  cfix archive --list`,
		Short: "Plan (and with --apply, make) the move of whole sessions out of the store, into archive files",
		Long: `Archive moves sessions out of the store, out of reach of Claude Code's cleanup
(it deletes sessions older than cleanupPeriodDays, 30 by default, when it
starts): each session, with everything it owns (as cfix rm lists it), goes
into one file <archive folder>/<session-id>.tar.zst holding every file with
its path, mode and mtime, and a manifest (title, project, dates, sha256 of
every file). Then the files are removed from the store and the session's
sessions-index.json entries dropped. cfix restore puts them back; cfix undo
undoes the archive (the archive file goes, every file comes back).

The archive folder is --archive-dir, else $CFIX_ARCHIVE_DIR, else
$XDG_DATA_HOME/cfix/archive, else ~/.local/share/cfix/archive. --older-than
(30d, 2w, 36h) picks every session whose last activity (the newest mtime of
its files) lies longer ago (with --by-transcript: whose main transcript's
mtime does, as Claude Code's cleanup ages it); --except ID leaves that session
in the store, and so does a session that holds no message (the plan names the
prune that removes those of metadata only). A project folder left empty goes
too (undo and restore make it again). --list lists the archives: session,
title, project, first and last dates, size.

A dry run reads no file's bytes (but those of transcripts without a message);
--apply compresses the sessions (on every core), then applies the plan. A live
session is refused (skipped by --older-than).

` + plannerExitStatus,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runArchive(opts, args)
		},
		ValidArgsFunction: completeSessions,
	}
	opts.register(cmd, false)
	cmd.Flags().StringVar(&opts.dir, "archive-dir", "", "the archive folder (default $CFIX_ARCHIVE_DIR, else $XDG_DATA_HOME/cfix/archive)")
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "archive every session last active longer ago than this (30d, 2w, 36h)")
	cmd.Flags().StringArrayVar(&opts.except, "except", nil, "with --older-than, leave this session (full id) in the store; repeatable")
	cmd.Flags().BoolVar(&opts.byTrans, "by-transcript", false, "with --older-than, age a session by its main transcript's modification time, as Claude Code's cleanup does (not by its newest file)")
	cmd.Flags().BoolVar(&opts.list, "list", false, "list the archives")
	return cmd
}

func archiveDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	d, err := archive.DefaultDir()
	if err != nil {
		return "", usageError(err)
	}
	return d, nil
}

func runArchive(opts *archiveOptions, args []string) error {
	dir, err := archiveDir(opts.dir)
	if err != nil {
		return err
	}
	if opts.list {
		if len(args) > 0 || opts.olderThan != "" || opts.apply {
			return usageError(fmt.Errorf("--list takes no session, --older-than or --apply"))
		}
		return listArchives(opts, dir)
	}
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	var age time.Duration
	if opts.olderThan != "" {
		if age, err = repair.ParseAge(opts.olderThan); err != nil {
			return usageError(err)
		}
		if age == 0 {
			return usageError(fmt.Errorf("--older-than %s: give a duration above zero", opts.olderThan))
		}
	}
	p, err := archive.Archive(archive.Options{Root: root, Dir: dir, Sessions: args, OlderThan: age, Except: opts.except, ByTranscript: opts.byTrans, Force: opts.force, Build: opts.apply})
	if err != nil {
		return planError(err)
	}
	defer p.Cleanup()
	opts.differ = func(w io.Writer, cs *changeset.ChangeSet, o changeset.DiffOptions) error {
		return archiveDiff(w, cs, p, o)
	}
	return runPlan(&opts.planFlags, p.ChangeSet)
}

// archiveDiff writes the diff of an archive plan: what goes into each
// archive file (its members, not its compressed bytes: with Full, each
// member; else their count and size), then the other changes (index
// rewrites). The files removed are in their archive, listed by the
// summary: their lines are not lost, and not shown.
func archiveDiff(w io.Writer, cs *changeset.ChangeSet, p *archive.Plan, o changeset.DiffOptions) error {
	byPath := map[string]archive.Archived{}
	for _, a := range p.Archives {
		byPath[a.Path] = a
	}
	rest := *cs
	rest.Ops = nil
	bw := bufio.NewWriter(w)
	for _, op := range cs.Ops {
		if op.Action == changeset.Delete || op.Action == changeset.DeleteDir {
			continue
		}
		a, ok := byPath[op.Path]
		if !ok || op.Action != changeset.Create {
			rest.Ops = append(rest.Ops, op)
			continue
		}
		fmt.Fprintf(bw, "--- /dev/null\n+++ %s\n@@ %s @@\n", visible.String(op.Path), visible.String(op.Reason))
		if !o.Full {
			fmt.Fprintf(bw, "+ new archive: %d %s, %s\n", a.Files, plural.Of(a.Files, "file"), changeset.Size(a.Bytes))
		} else {
			n := 0
			for _, f := range a.Manifest.Files {
				if f.Dir {
					continue
				}
				if n++; n > 40 {
					fmt.Fprintf(bw, "+… %d more files\n", a.Files-40)
					break
				}
				fmt.Fprintf(bw, "+%s (%s, %s)\n", visible.String(f.Path), changeset.Size(f.Size), f.ModTime.Local().Format("2006-01-02 15:04:05"))
			}
		}
		// What does not fit on the screen stops here.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return changeset.DiffWith(w, &rest, o)
}

// archiveJSON is one archive in --list --json.
type archiveJSON struct {
	Path         string    `json:"path"`
	Session      string    `json:"session"`
	Title        string    `json:"title"`
	Projects     []string  `json:"projects"`
	CWD          string    `json:"cwd"`
	First        string    `json:"first"`
	Last         string    `json:"last"`
	LastActivity time.Time `json:"last_activity"`
	Archived     time.Time `json:"archived"`
	Files        int       `json:"files"`
	Bytes        int64     `json:"bytes"`
	Size         int64     `json:"size"`
}

func listArchives(opts *archiveOptions, dir string) error {
	list, bad, err := archive.List(dir)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("archive folder %s: %w", dir, err)}
	}
	var out []archiveJSON
	for _, l := range list {
		m := l.Manifest
		files := 0
		for _, f := range m.Files {
			if !f.Dir {
				files++
			}
		}
		out = append(out, archiveJSON{Path: l.Path, Session: m.Session, Title: m.Title, Projects: m.Projects, CWD: m.CWD,
			First: m.First, Last: m.Last, LastActivity: m.LastActivity, Archived: m.Archived, Files: files, Bytes: m.Bytes, Size: l.Size})
	}
	badPaths := make([]string, 0, len(bad))
	for p := range bad {
		badPaths = append(badPaths, p)
	}
	sort.Strings(badPaths)
	if opts.json {
		doc := struct {
			Dir      string            `json:"dir"`
			Archives []archiveJSON     `json:"archives"`
			Damaged  map[string]string `json:"damaged"`
		}{Dir: dir, Archives: out, Damaged: map[string]string{}}
		if doc.Archives == nil {
			doc.Archives = []archiveJSON{}
		}
		for _, p := range badPaths {
			doc.Damaged[p] = bad[p].Error()
		}
		if err := printJSON(opts.out, doc); err != nil {
			return err
		}
	} else {
		if len(out) == 0 {
			fmt.Fprintf(opts.out, "no archive in %s\n", dir)
		}
		for _, a := range out {
			title := textCell(a.Title)
			if title == "" {
				title = "(no title)"
			}
			project := visible.String(a.CWD)
			if project == "" {
				project = visible.String(strings.Join(a.Projects, ", "))
			}
			fmt.Fprintf(opts.out, "%s  %s\n  %s\n  %s to %s, %d %s, %s (%s compressed)\n", visible.String(a.Session), title, project,
				visible.String(day(a.First)), visible.String(day(a.Last)), a.Files, plural.Of(a.Files, "file"), changeset.Size(a.Bytes), changeset.Size(a.Size))
		}
		for _, p := range badPaths {
			fmt.Fprintf(opts.errOut, "cfix: %v\n", bad[p])
		}
	}
	if len(bad) > 0 {
		return &exitError{code: exitFound}
	}
	return nil
}

// day formats an entry timestamp as its local date and time.
func day(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		if ts == "" {
			return "?"
		}
		return ts
	}
	return t.Local().Format("2006-01-02 15:04")
}
