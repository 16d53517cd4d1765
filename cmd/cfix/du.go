package main

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
)

type duOptions struct {
	root      string
	json      bool
	olderThan string
	limit     int
	arg       string
	out       io.Writer
}

func newDuCmd() *cobra.Command {
	opts := &duOptions{}
	cmd := &cobra.Command{
		Use: "du [DIR|PROJECT]",
		Example: `  cfix du
  cfix du --older-than 30d
  cfix du ~/work/project`,
		Short: "Show where the bytes of a store are, and what cfix prune would reclaim",
		Long: `Du adds up the sizes of a store's files (it reads none of them) by kind:
transcripts, subagents, tool-results, session folders and project files
under projects/, and each folder outside it by name (file-history/, debug/,
todos/, session-env/, shell-snapshots/, paste-cache/, plans/, ...); then by
project folder. The RECLAIM column is what cfix prune would remove, from
prune's own plan (with --older-than, as cfix prune --older-than plans it).

With a directory (its project folder, as Claude Code finds it) or a project
folder: that folder only, by kind, and what prune would reclaim in it.

Exit status: 0, or 2 for a usage or I/O error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.arg = args[0]
			}
			opts.out = cmd.OutOrStdout()
			return runDu(opts)
		},
		ValidArgsFunction: completeDirs,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "count what prune --older-than DURATION would reclaim (30d, 2w, 36h)")
	cmd.Flags().IntVar(&opts.limit, "limit", 20, "list at most N project folders (0: all)")
	return cmd
}

type duKindJSON struct {
	Kind        string `json:"kind"`
	Files       int    `json:"files"`
	Size        int64  `json:"size"`
	Reclaimable int64  `json:"reclaimable"`
}

type duProjectJSON struct {
	Folder      string           `json:"folder"`
	Paths       []string         `json:"paths"`
	Files       int              `json:"files"`
	Size        int64            `json:"size"`
	ByKind      map[string]int64 `json:"by_kind"`
	Reclaimable int64            `json:"reclaimable"`
}

func runDu(opts *duOptions) error {
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	if opts.limit < 0 {
		return usageError(fmt.Errorf("--limit %d: not a number of rows", opts.limit))
	}
	var age time.Duration
	if opts.olderThan != "" {
		if age, err = repair.ParseAge(opts.olderThan); err != nil {
			return usageError(err)
		}
	}
	var folders []string
	project := ""
	var l *store.Layout
	if opts.arg != "" {
		t, err := store.NewResolver(root, nil).Resolve(opts.arg)
		if err != nil {
			return usageError(err)
		}
		switch t.Kind {
		case store.TargetStore:
		case store.TargetProject:
			project, folders, l = t.Project, []string{t.Project}, t.Layout
		default:
			return usageError(fmt.Errorf("%s names a %s: du takes a directory or a project folder", opts.arg, t.Kind))
		}
	}
	u, err := store.Usage(root, folders)
	if err != nil {
		return usageError(fmt.Errorf("store %s: %w", root, err))
	}
	cs, err := repair.Prune(repair.PruneOptions{Root: root, OlderThan: age})
	if err != nil {
		return planError(err)
	}
	reclaim := map[string]int64{}  // by kind
	reclaimP := map[string]int64{} // by project folder
	var reclaimTotal int64
	ops := 0
	for _, op := range cs.Ops {
		if op.Action != changeset.Delete && op.Action != changeset.DeleteDir {
			continue
		}
		counted := false
		for _, b := range duBytesOf(root, op) {
			if project != "" && b.folder != project {
				continue
			}
			counted = true
			reclaim[b.kind] += b.size
			reclaimTotal += b.size
			if b.folder != "" {
				reclaimP[b.folder] += b.size
			}
		}
		if counted {
			ops++
		}
	}
	// Project paths, as ls finds them (the head and tail of transcripts).
	if l == nil {
		if l, err = store.Scan(root); err != nil {
			return usageError(fmt.Errorf("store %s: %w", root, err))
		}
	}
	paths := map[string][]string{}
	live, err := liveSessions(root)
	if err != nil {
		return usageError(err)
	}
	ss := store.SessionsOf(l, live)
	memory := map[string]bool{}
	for _, p := range store.ProjectsOf(l, ss) {
		paths[p.Folder], memory[p.Folder] = p.Paths, p.MemoryOnly
	}
	// What Claude Code's next retention sweep deletes (of the folder).
	if project != "" {
		keep := ss[:0]
		for _, s := range ss {
			if s.Project == project {
				keep = append(keep, s)
			}
		}
		ss = keep
	}
	sweep := store.SweepOf(root, time.Now())
	swept, sweptBytes := store.MarkSwept(ss, sweep)
	jn := duJournals(root)
	if opts.json {
		doc := struct {
			Root        string           `json:"root"`
			Folder      string           `json:"folder,omitempty"`
			Files       int              `json:"files"`
			Size        int64            `json:"size"`
			Reclaimable int64            `json:"reclaimable"`
			PruneOps    int              `json:"prune_ops"`
			Kinds       []duKindJSON     `json:"kinds"`
			Projects    []duProjectJSON  `json:"projects"`
			Journals    *duJournalJSON   `json:"journals,omitempty"`
			Sweep       catalog.SweepDoc `json:"sweep"`
		}{Root: root, Folder: project, Files: u.Files, Size: u.Total, Reclaimable: reclaimTotal, PruneOps: ops,
			Kinds: []duKindJSON{}, Projects: []duProjectJSON{}, Sweep: catalog.SweepDocOf(sweep, swept, sweptBytes)}
		if project == "" {
			doc.Journals = &jn
		}
		for _, k := range duKinds(u, reclaim) {
			doc.Kinds = append(doc.Kinds, duKindJSON{Kind: k.Name, Files: k.Files, Size: k.Size, Reclaimable: reclaim[k.Name]})
		}
		for _, p := range u.Projects {
			ps := paths[p.Name]
			if ps == nil {
				ps = []string{}
			}
			doc.Projects = append(doc.Projects, duProjectJSON{Folder: p.Name, Paths: ps, Files: p.Files, Size: p.Size, ByKind: p.ByKind, Reclaimable: reclaimP[p.Name]})
		}
		return jsonOut(opts.out, doc)
	}
	w := opts.out
	if project != "" {
		fmt.Fprintf(w, "%s (%s)\n\n", visible.String(filepath.Join(store.ProjectsDir(root), project)), visible.String(strings.Join(paths[project], ", ")))
	}
	fmt.Fprintf(w, "%-30s  %7s  %9s  %9s\n", "KIND", "FILES", "SIZE", "RECLAIM")
	for _, k := range duKinds(u, reclaim) {
		fmt.Fprintf(w, "%-30s  %7d  %9s  %9s\n", visible.String(k.Name), k.Files, changeset.Size(k.Size), reclaimCell(reclaim[k.Name]))
	}
	fmt.Fprintf(w, "%-30s  %7d  %9s  %9s\n", "total", u.Files, changeset.Size(u.Total), reclaimCell(reclaimTotal))
	if project == "" && jn.Journals > 0 {
		// Outside the store: the bytes applies took out of it, kept so
		// that undo can put them back.
		fmt.Fprintf(w, "%-30s  %7d  %9s  %9s\n", fmt.Sprintf("journals (%d, outside)", jn.Journals), jn.Files, changeset.Size(jn.Size), reclaimCell(jn.Reclaimable))
	}
	if project == "" && len(u.Projects) > 0 {
		fmt.Fprintf(w, "\n%9s  %9s  %9s  %9s  %9s  %s\n", "SIZE", "TRANSCR", "SUBAGENTS", "TOOL-RES", "RECLAIM", "PROJECT")
		shown := u.Projects
		if opts.limit > 0 && len(shown) > opts.limit {
			shown = shown[:opts.limit]
		}
		for _, p := range shown {
			name := visible.String(strings.Join(paths[p.Name], ", "))
			switch {
			case memory[p.Name]:
				name = "memory only, no session (folder " + visible.String(p.Name) + ")"
			case name == "":
				name = "? (folder " + visible.String(p.Name) + ")"
			}
			fmt.Fprintf(w, "%9s  %9s  %9s  %9s  %9s  %s\n", changeset.Size(p.Size), changeset.Size(p.ByKind[store.UsageTranscripts]),
				changeset.Size(p.ByKind[store.UsageSubagents]), changeset.Size(p.ByKind[store.UsageToolResults]), reclaimCell(reclaimP[p.Name]), name)
		}
		if len(shown) < len(u.Projects) {
			fmt.Fprintf(w, "... %d more project folders (--limit 0 lists all)\n", len(u.Projects)-len(shown))
		}
	}
	fmt.Fprintln(w)
	if swept > 0 {
		fmt.Fprintln(w, sweepLine(sweep, swept, sweptBytes, ss)+".")
	}
	if project == "" && jn.Reclaimable > 0 {
		fmt.Fprintf(w, "cfix journal prune would free %s of the journals in %s (those applies could no longer be undone).\n", changeset.Size(jn.Reclaimable), visible.String(jn.Dir))
	}
	if ops == 0 {
		fmt.Fprintln(w, "cfix prune would reclaim nothing.")
		return nil
	}
	cmd := "cfix prune"
	if opts.olderThan != "" {
		cmd += " --older-than " + opts.olderThan
	}
	fmt.Fprintf(w, "%s would reclaim %s (%s); it shows its plan and writes only with --apply.\n", cmd, changeset.Size(reclaimTotal), plural.Count(ops, "removal"))
	return nil
}

// duKinds returns the kinds of u, with a row for each kind prune would
// reclaim bytes of that u has no file of (none in practice).
func duKinds(u *store.DiskUsage, reclaim map[string]int64) []store.UsageRow {
	rows := append([]store.UsageRow(nil), u.Kinds...)
	for k := range reclaim {
		found := false
		for _, r := range rows {
			found = found || r.Name == k
		}
		if !found {
			rows = append(rows, store.UsageRow{Name: k})
		}
	}
	return rows
}

func reclaimCell(n int64) string {
	if n == 0 {
		return "-"
	}
	return changeset.Size(n)
}

type duBytes struct {
	kind, folder string
	size         int64
}

// duBytesOf splits what a removal of prune's plan frees by kind: a folder
// under projects/ (a session folder left without its transcript) by the
// kinds of its files, anything else as one.
func duBytesOf(root string, op changeset.Op) []duBytes {
	dir := op.Action == changeset.DeleteDir
	kind, folder := duKindOf(root, op.Path)
	if !dir || folder == "" {
		return []duBytes{{kind, folder, op.Expect.Size}}
	}
	fdir := filepath.Join(store.ProjectsDir(root), folder)
	var out []duBytes
	filepath.WalkDir(op.Path, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(fdir, path)
		out = append(out, duBytes{store.ProjectKind(rel), folder, fi.Size()})
		return nil
	})
	if out == nil {
		out = []duBytes{{store.UsageSessionDirs, folder, 0}}
	}
	return out
}

// duKindOf returns the kind (as store.Usage names it) and the project
// folder of a path prune removes.
func duKindOf(root, path string) (kind, folder string) {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return store.UsageOtherFiles, ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if parts[0] != "projects" || len(parts) < 3 {
		if len(parts) == 1 {
			if parts[0] == "history.jsonl" {
				return store.UsageHistory, ""
			}
			return store.UsageOtherFiles, ""
		}
		return parts[0] + "/", ""
	}
	folder = parts[1]
	return store.ProjectKind(strings.Join(parts[2:], "/")), folder
}

// duJournalJSON is what the journals of a store hold (outside it).
type duJournalJSON struct {
	Dir         string `json:"dir"`
	Journals    int    `json:"journals"`
	Files       int    `json:"files"`
	Size        int64  `json:"size"`
	Frees       int64  `json:"frees"`
	Reclaimable int64  `json:"reclaimable"` // what journal prune frees, by default
}

// duJournals adds up the journals of the store at root, and what cfix
// journal prune would free of them with the default retention.
func duJournals(root string) duJournalJSON {
	var out duJournalJSON
	base, err := changeset.DefaultJournalDir()
	if err != nil {
		return out
	}
	out.Dir = base
	js, _ := changeset.ListJournals(base, root)
	for _, j := range js {
		s := changeset.SizeOf(j.Dir)
		out.Journals++
		out.Files += s.Files
		out.Size += s.Bytes
		out.Frees += s.Frees
	}
	old, _ := changeset.PruneJournals(base, root, changeset.DefaultRetention, time.Now())
	for _, j := range old {
		out.Reclaimable += changeset.SizeOf(j.Dir).Frees
	}
	return out
}
