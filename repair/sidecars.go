package repair

import (
	"fmt"
	"io/fs"

	"path/filepath"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/store"
)

// sidecars plans session folders left without a transcript (husks) and
// the sidecars of sessions that no longer exist (or that this plan
// removes): task lists, plans no remaining transcript names, /insights
// data, pasted texts no prompt names, shell snapshots of processes that
// are gone. What each holds, and which client wrote it, is in
// store/sidecars.go.
func (p *pruner) sidecars(what map[string]bool, now time.Time) error {
	gone := func(id string) bool { return !p.live[id] && (p.gone[id] || !p.exists(id)) }
	if what[PruneHusks] || p.gone != nil {
		for _, d := range p.layout.SessionDirs {
			if !store.IsUUID(d.Session) || p.planned[d.Path] || !gone(d.Session) {
				continue
			}
			if !p.gone[d.Session] && !what[PruneHusks] {
				continue
			}
			if holdsTranscript(d.Path) {
				continue // subagents hold messages: agent-orphan, never pruned
			}
			if err := p.remove(d.Path, d.Session, fmt.Sprintf("session folder of %s, which has no transcript left: used by nothing", d.Session)); err != nil {
				return err
			}
		}
	}
	byID := func(kind string, list func(string) ([]store.Sidecar, error), reason string) error {
		if !what[kind] && p.gone == nil {
			return nil
		}
		ss, err := list(p.root)
		if err != nil {
			return err
		}
		for _, s := range ss {
			if !gone(s.Session) || (!what[kind] && !p.gone[s.Session]) {
				continue
			}
			if err := p.remove(s.Path, s.Session, fmt.Sprintf(reason, s.Session)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := byID(PruneTasks, store.TaskLists, "task list of session %s, which no longer exists"); err != nil {
		return err
	}
	if err := byID(PruneUsageData, store.SessionMetas, "/insights summary of session %s, which no longer exists"); err != nil {
		return err
	}
	if err := byID(PruneUsageData, store.Facets, "/insights facets of session %s, which no longer exists"); err != nil {
		return err
	}
	if what[PrunePlans] {
		if err := p.plans(now); err != nil {
			return err
		}
	}
	if what[PrunePastes] {
		pastes, err := store.Pastes(p.root)
		if err != nil {
			return err
		}
		if len(pastes) > 0 {
			refs, err := store.PasteRefs(p.root)
			if err != nil {
				return err
			}
			for _, s := range pastes {
				if refs[s.Hash] || !store.Settled(s, now) {
					continue
				}
				if err := p.remove(s.Path, "", fmt.Sprintf("pasted text %s: no prompt of history.jsonl names it", s.Hash)); err != nil {
					return err
				}
			}
		}
	}
	if what[PruneShellSnaps] {
		snaps, err := store.ShellSnapshots(p.root)
		if err != nil {
			return err
		}
		for _, s := range snaps {
			if store.ShellSnapshotInUse(s, p.liveList, now) {
				continue
			}
			if err := p.remove(s.Path, "", fmt.Sprintf("shell snapshot made %s, before every running Claude Code process started: its process is gone", s.Created.Local().Format("2006-01-02 15:04"))); err != nil {
				return err
			}
		}
	}
	return nil
}

// plans plans the plan files whose slug no transcript this plan keeps
// names.
func (p *pruner) plans(now time.Time) error {
	plans, err := store.Plans(p.root)
	if err != nil || len(plans) == 0 {
		return err
	}
	slugs := map[string]bool{}
	for _, f := range p.layout.Files {
		if p.planned[f.Path] || p.gone[f.Session] || p.planned[filepath.Join(store.ProjectsDir(p.root), f.Project, f.Session)] {
			continue
		}
		ss, err := store.FileSlugs(f.Path)
		if err != nil {
			return err
		}
		for _, s := range ss {
			slugs[s] = true
		}
	}
	for _, s := range plans {
		if store.PlanNamedBy(filepath.Base(s.Path), slugs) || !store.Settled(s, now) {
			continue
		}
		if err := p.remove(s.Path, "", fmt.Sprintf("plan %s: no transcript names its slug", filepath.Base(s.Path))); err != nil {
			return err
		}
	}
	return nil
}

// holdsTranscript reports whether a folder holds a .jsonl file.
func holdsTranscript(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
