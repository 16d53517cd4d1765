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
// path.
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

// SortNewest sorts xs newest first, then by path, by what key says of
// each (its last activity and its path, which no two share); each element
// is moved once, however big (an index is sorted, then xs permuted).
func SortNewest[T any](xs []T, key func(x *T) (last time.Time, path string)) {
	type k struct {
		last time.Time
		path string
		i    int
	}
	ks := make([]k, len(xs))
	for i := range xs {
		ks[i].last, ks[i].path = key(&xs[i])
		ks[i].i = i
	}
	slices.SortFunc(ks, func(a, b k) int {
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
