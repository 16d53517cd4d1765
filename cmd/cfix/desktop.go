package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/store"
)

// addDesktopFlag registers --desktop-dir.
func addDesktopFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "desktop-dir", "", "Claude Desktop's index of its sessions, the claude-code-sessions folder (default $"+desktop.EnvDir+", else Desktop's app-data folder when the store is ~/.claude)")
}

// desktopNotes returns the notes of a plan on the sessions Claude Desktop
// lists that it removes from the store or moves out of the folder Desktop
// resumes them in; nil when there is no index. An index cfix cannot read
// gives no note (validate reports it).
func desktopNotes(flagDir string, cs *changeset.ChangeSet) []string {
	x, err := desktop.Read(desktop.Dir(flagDir, cs.Root))
	if err != nil || x == nil || len(x.Entries) == 0 {
		return nil
	}
	projects := store.ProjectsDir(cs.Root)
	// A main transcript: projects/<folder>/<uuid>.jsonl.
	sessionOf := func(p string) string {
		rel, err := filepath.Rel(projects, p)
		if err != nil || strings.Count(rel, string(filepath.Separator)) != 1 || !strings.HasSuffix(rel, ".jsonl") {
			return ""
		}
		id := strings.TrimSuffix(filepath.Base(rel), ".jsonl")
		if !store.IsUUID(id) {
			return ""
		}
		return id
	}
	gone := map[string]bool{}
	made := map[string][]string{}
	var order []string
	touch := func(id string) {
		if _, ok := made[id]; !ok {
			made[id] = nil
			order = append(order, id)
		}
	}
	for _, op := range cs.Ops {
		switch op.Action {
		case changeset.Delete:
			if id := sessionOf(op.Path); id != "" {
				gone[op.Path] = true
				touch(id)
			}
		case changeset.Rename:
			if id := sessionOf(op.Path); id != "" {
				gone[op.Path] = true
				touch(id)
			}
			if id := sessionOf(op.To); id != "" {
				touch(id)
				made[id] = append(made[id], op.To)
			}
		case changeset.Create:
			if id := sessionOf(op.Path); id != "" {
				touch(id)
				made[id] = append(made[id], op.Path)
			}
		}
	}
	var changes []desktop.Change
	for _, id := range order {
		if len(x.For(id)) == 0 {
			continue
		}
		before, _ := filepath.Glob(filepath.Join(projects, "*", id+".jsonl"))
		c := desktop.Change{Session: id, Before: before}
		for _, p := range before {
			if !gone[p] {
				c.After = append(c.After, p)
			}
		}
		for _, p := range made[id] {
			if _, err := os.Lstat(p); err != nil || gone[p] {
				c.After = append(c.After, p)
			}
		}
		changes = append(changes, c)
	}
	return x.Notes(changes, store.FolderMatches)
}
