package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/store"
)

// The keys sessions and projects sort by (SortSessions, SortProjects).
var (
	SessionSorts = []string{"last", "started", "size", "messages", "title", "id"}
	ProjectSorts = []string{"last", "path", "size", "sessions"}
)

// SortProjects sorts projects by key (one of ProjectSorts), then by
// folder.
func SortProjects(ps []store.ProjectInfo, key string) error {
	var less func(a, b *store.ProjectInfo) bool
	switch key {
	case "last":
		less = func(a, b *store.ProjectInfo) bool { return a.LastActive.After(b.LastActive) }
	case "path":
		less = func(a, b *store.ProjectInfo) bool { return PathWords(*a) < PathWords(*b) }
	case "size":
		less = func(a, b *store.ProjectInfo) bool { return a.Size > b.Size }
	case "sessions":
		less = func(a, b *store.ProjectInfo) bool { return a.Sessions > b.Sessions }
	default:
		return fmt.Errorf("--sort %s: projects sort by %s", key, strings.Join(ProjectSorts, ", "))
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if less(&ps[i], &ps[j]) {
			return true
		}
		if less(&ps[j], &ps[i]) {
			return false
		}
		return ps[i].Folder < ps[j].Folder
	})
	return nil
}

// SortSessions sorts sessions by key (one of SessionSorts), then by
// path; the stubs (metadata lines and no conversation: nothing to read or
// resume) come after every other session, as in every listing.
func SortSessions(ss []store.SessionInfo, key string) error {
	var less func(a, b *store.SessionInfo) bool
	switch key {
	case "last":
		less = func(a, b *store.SessionInfo) bool { return a.LastActive.After(b.LastActive) }
	case "started":
		less = func(a, b *store.SessionInfo) bool { return a.Started.After(b.Started) }
	case "size":
		less = func(a, b *store.SessionInfo) bool { return a.Size+a.SubagentBytes > b.Size+b.SubagentBytes }
	case "messages":
		less = func(a, b *store.SessionInfo) bool { return a.Messages > b.Messages }
	case "title":
		less = func(a, b *store.SessionInfo) bool { return strings.ToLower(a.Title) < strings.ToLower(b.Title) }
	case "id":
		less = func(a, b *store.SessionInfo) bool { return a.Session < b.Session }
	default:
		return fmt.Errorf("--sort %s: sessions sort by %s", key, strings.Join(SessionSorts, ", "))
	}
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].MetaOnly != ss[j].MetaOnly {
			return ss[j].MetaOnly
		}
		if less(&ss[i], &ss[j]) {
			return true
		}
		if less(&ss[j], &ss[i]) {
			return false
		}
		return ss[i].Path < ss[j].Path
	})
	return nil
}

// SortNewest sorts xs as the listings of sessions do: newest first, then
// by path, the stubs after every other session (see SortSessions), by
// what key says of each (whether it is a stub, its last activity and its
// path, which no two share); each element is moved once, however big (an
// index is sorted, then xs permuted).
func SortNewest[T any](xs []T, key func(x *T) (stub bool, last time.Time, path string)) {
	type k struct {
		stub bool
		last time.Time
		path string
		i    int
	}
	ks := make([]k, len(xs))
	for i := range xs {
		ks[i].stub, ks[i].last, ks[i].path = key(&xs[i])
		ks[i].i = i
	}
	slices.SortFunc(ks, func(a, b k) int {
		if a.stub != b.stub {
			if a.stub {
				return 1
			}
			return -1
		}
		if c := b.last.Compare(a.last); c != 0 {
			return c
		}
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return a.i - b.i
	})
	out := make([]T, len(xs))
	for j, x := range ks {
		out[j] = xs[x.i]
	}
	copy(xs, out)
}

// StoreView is what the listing of the store shows (View).
type StoreView struct {
	// Listed are the projects listed (Shown: those within the limit),
	// sorted.
	Listed, Shown []store.ProjectInfo
	// Size and Sessions sum every folder up; Sessions counts the empty and
	// Warmup sessions (Hidden) only when all are asked for.
	Size             int64
	Sessions, Hidden int
	// MemoryOnly counts the folders that hold only memory/, Empty those
	// that hold nothing (see store.ProjectInfo), not listed unless all are
	// asked for.
	MemoryOnly, Empty int
}

// View is what the listing of the store shows, its projects sorted by
// key (see SortProjects), all of them (all) or those with a session
// listed, not only memory/ and not empty, at most limit (0: no limit).
func (s *Store) View(key string, all bool, limit int) (*StoreView, error) {
	ps := append([]store.ProjectInfo(nil), s.Projects...)
	if err := SortProjects(ps, key); err != nil {
		return nil, err
	}
	v := &StoreView{}
	// The totals are of every folder, those of empty and Warmup sessions
	// only included.
	for _, p := range ps {
		v.Size += p.Size
		v.Sessions += p.Sessions
		v.Hidden += p.Hidden
	}
	if all {
		v.Sessions += v.Hidden
	} else {
		keep := ps[:0]
		for _, p := range ps {
			if p.MemoryOnly {
				v.MemoryOnly++
			} else if p.Empty {
				v.Empty++
			} else if p.Sessions > 0 || p.Hidden == 0 {
				keep = append(keep, p)
			}
		}
		ps = keep
	}
	v.Listed, v.Shown = ps, ps
	if limit > 0 && len(ps) > limit {
		v.Shown = ps[:limit]
	}
	return v, nil
}

// ProjectView is what the listing of a project shows (View).
type ProjectView struct {
	Shown []store.SessionInfo
	// Hidden counts the empty and Warmup sessions left out, More those
	// past the limit.
	Hidden, More int
}

// View is what the listing of the project shows: its sessions sorted by
// key (see SortSessions), all of them (all) or all but the empty and
// Warmup ones, at most limit (0: no limit).
func (p *Project) View(key string, all bool, limit int) (*ProjectView, error) {
	if err := SortSessions(p.Sessions, key); err != nil {
		return nil, err
	}
	v := &ProjectView{}
	for _, s := range p.Sessions {
		if s.Hidden() && !all {
			v.Hidden++
			continue
		}
		v.Shown = append(v.Shown, s)
	}
	if limit > 0 && len(v.Shown) > limit {
		v.More = len(v.Shown) - limit
		v.Shown = v.Shown[:limit]
	}
	return v, nil
}
