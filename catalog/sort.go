package catalog

import (
	"fmt"
	"sort"
	"strings"

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
