package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// plannerRun is one planner applied to a copy of a store: its command
// lines (the store's --root, --apply and --yes are added), and how the
// paths of what it makes map back to the paths of what it was made from
// (a clone's id and folder to its source's), so that a finding a copy
// carries from its source is not taken for a new one.
type plannerRun struct {
	name string
	cmds [][]string
	// newID and newFolder, when set, are the id and project folder the
	// copy gets; the finding of a path holding them is compared as the
	// source's.
	newID, newFolder string
	// oldFolder is the folder newFolder stands for, when not the sample
	// session's (move-project: the encoding of the old directory).
	oldFolder string
}

// plannerSample is the session of a store the session planners run on:
// the one with the most files in its family (subagents, sidecars), then
// the biggest, then the first by id; with its project folder and the
// working directory that folder stands for.
type plannerSample struct {
	id, folder, dir string
	turns           int
}

// expectedNew lists the findings a planner is meant to create, by planner
// and code, with the reason.
var expectedNew = map[string]map[validate.Code]string{
	"repair":              stubLeftovers,
	"repair --aggressive": stubLeftovers,
	"rm":                  otherSummaries,
	"archive":             otherSummaries,
}

var (
	// Repair moves a stub's lines into the transcript it names and removes
	// it (session-stub); the todo list and debug log its run left under
	// the stub's id then name no session. They hold no conversation:
	// prune removes them, as validate's hint says (1.0.128, 2.0.14).
	stubLeftovers = map[validate.Code]string{
		validate.OrphanTodos: "the todo list of a stub repair removed",
		validate.OrphanDebug: "the debug log of a stub repair removed",
	}
	// 1.0.51 writes, into the transcript of a resume, summary lines naming
	// entries of the session it resumed: removed (or archived), that
	// session leaves them naming nothing. The other session keeps all of
	// its own history; restore makes them resolve again.
	otherSummaries = map[validate.Code]string{
		validate.LeafMissing: "another session's summary names an entry of the session removed",
	}
)

// TestPlannersLeaveNoNewFindings: every planner, applied to a copy of
// every store of testdata/corpus and testdata/wild, leaves no finding
// (code and file) that the store did not have before, but those
// expectedNew lists. A copy (clone, fork, trim) may carry its source's
// findings: a path of the copy is compared as its source's.
func TestPlannersLeaveNoNewFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	tmp := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(tmp, "data"))
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(tmp, "journal"))
	for _, src := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(filepath.Dir(src))) + "/" + filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			pristine := copyStore(t, src, filepath.Join(tmp, "pristine"))
			damage.Age(t, pristine)
			before := findingPairs(t, pristine, "", "", "")
			s, ok := sampleSession(t, pristine)
			for _, run := range plannerRuns(s, ok, tmp) {
				root := copyStore(t, pristine, filepath.Join(tmp, "run"))
				adir := filepath.Join(tmp, "archive")
				os.RemoveAll(adir)
				for _, cmd := range run.cmds {
					args := append(append([]string(nil), cmd...), "--root", root, "--apply", "--yes")
					if cmd[0] == "archive" || cmd[0] == "restore" {
						args = append(args, "--archive-dir", adir)
					}
					if cmd[0] == "restore" && len(cmd) == 1 {
						args = append(args, archivedIDs(t, adir)...)
					}
					out, errOut, code := cliErr(args...)
					if code != exitOK {
						t.Fatalf("%s: cfix %s: exit %d\n%s\n%s", run.name, strings.Join(args, " "), code, out, errOut)
					}
				}
				oldFolder := ""
				if run.newFolder != "" {
					oldFolder = s.folder
					if run.oldFolder != "" {
						oldFolder = run.oldFolder
					}
				}
				after := findingPairs(t, root, run.newID, s.id, run.newFolder+"\x00"+oldFolder)
				var added []string
				for p := range after {
					code := validate.Code(strings.SplitN(p, "|", 2)[0])
					if !before[p] && expectedNew[run.name][code] == "" {
						added = append(added, p)
					}
				}
				sort.Strings(added)
				t.Logf("%s: %d findings before, %d after, %d new", run.name, len(before), len(after), len(added))
				for _, p := range added {
					t.Errorf("%s: a new finding: %s", run.name, p)
				}
				os.RemoveAll(root)
			}
			os.RemoveAll(pristine)
		})
	}
}

// plannerRuns are the planners run on a store whose sample session is s
// (the session planners are left out when it has none).
func plannerRuns(s plannerSample, ok bool, tmp string) []plannerRun {
	runs := []plannerRun{
		{name: "repair", cmds: [][]string{{"repair"}}},
		{name: "repair --aggressive", cmds: [][]string{{"repair", "--aggressive"}}},
		{name: "prune", cmds: [][]string{{"prune"}}},
		{name: "prune --older-than", cmds: [][]string{{"prune", "--older-than", "30d"}}},
		{name: "archive --older-than", cmds: [][]string{{"archive", "--older-than", "30d"}}},
		{name: "restore after archive", cmds: [][]string{{"archive", "--older-than", "30d"}, {"restore"}}},
	}
	if !ok {
		return runs
	}
	elsewhere := filepath.Join(tmp, "elsewhere")
	other := filepath.Join(tmp, "other")
	turn := fmt.Sprint(max(1, s.turns/2))
	runs = append(runs,
		plannerRun{name: "rm", cmds: [][]string{{"rm", s.id}}},
		plannerRun{name: "archive", cmds: [][]string{{"archive", s.id}}},
		plannerRun{name: "clone", cmds: [][]string{{"clone", s.id, "--to", elsewhere, "--id", derived("clone", s.id)}},
			newID: derived("clone", s.id), newFolder: clone.TargetFolder("", elsewhere)},
		plannerRun{name: "move", cmds: [][]string{{"move", s.id, "--to", other}}, newFolder: clone.TargetFolder("", other)},
		plannerRun{name: "trim", cmds: [][]string{{"trim", s.id, "--thinking", "--tool-output", "--images", "--progress", "--keep-turns", "1", "--id", derived("trim", s.id)}},
			newID: derived("trim", s.id)},
		plannerRun{name: "trim --in-place", cmds: [][]string{{"trim", s.id, "--thinking", "--tool-output", "--images", "--progress", "--keep-turns", "1", "--in-place"}}},
	)
	if s.turns > 0 {
		// A history that starts after a compaction may hold no prompt:
		// fork --turn refuses it, rightly.
		runs = append(runs, plannerRun{name: "fork", cmds: [][]string{{"fork", s.id, "--turn", turn, "--id", derived("fork", s.id)}}, newID: derived("fork", s.id)})
	}
	if s.dir != "" {
		moved := filepath.Join(tmp, "moved project")
		runs = append(runs, plannerRun{name: "move-project", cmds: [][]string{{"move-project", s.dir, moved}},
			newFolder: clone.TargetFolder("", moved), oldFolder: clone.TargetFolder("", s.dir)})
	}
	return runs
}

// derived is the id a test gives the copy a planner makes of session id.
func derived(what, id string) string { return clone.DerivedUUID("planners\x00" + what + "\x00" + id) }

// copyStore copies the store at src into a new folder under dir and
// returns the copy's root (its mtimes kept).
func copyStore(t *testing.T, src, dir string) string {
	t.Helper()
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, ".claude")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return dst
}

// findingPairs is the set of code|file of the findings of the store at
// root, the file relative to the store, with newID and the new folder
// (folders: "new\x00old") written as the ones they were copied from.
func findingPairs(t *testing.T, root, newID, oldID, folders string) map[string]bool {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	newFolder, oldFolder, _ := strings.Cut(folders, "\x00")
	out := map[string]bool{}
	for _, f := range rep.Findings {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = f.Path
		}
		if newID != "" {
			rel = strings.ReplaceAll(rel, newID, oldID)
		}
		if newFolder != "" {
			// The folders of subdirectories too (move-project): the
			// encoding maps each character of the path to one or two.
			parts := strings.Split(rel, string(filepath.Separator))
			if len(parts) > 1 && parts[0] == "projects" && strings.HasPrefix(parts[1], newFolder) {
				parts[1] = oldFolder + strings.TrimPrefix(parts[1], newFolder)
			}
			rel = filepath.Join(parts...)
		}
		out[string(f.Code)+"|"+rel] = true
	}
	return out
}

// sampleSession picks the session the session planners run on; ok is
// false when the store has none with a conversation.
func sampleSession(t *testing.T, root string) (plannerSample, bool) {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	type cand struct {
		f     store.File
		files int
	}
	var cs []cand
	for _, f := range l.Files {
		if f.Kind != store.KindSession || f.Size == 0 || !store.IsUUID(f.Session) {
			continue
		}
		if g := store.GlanceAt(f); g.MetaOnly || g.Empty {
			continue
		}
		fam := store.Family(l, f.Session)
		cs = append(cs, cand{f, len(fam.Files) + len(fam.SessionDirs)})
	}
	if len(cs) == 0 {
		return plannerSample{}, false
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.files != b.files {
			return a.files > b.files
		}
		if a.f.Size != b.f.Size {
			return a.f.Size > b.f.Size
		}
		return a.f.Path < b.f.Path
	})
	f := cs[0].f
	s := plannerSample{id: f.Session, folder: f.Project}
	out, _, code := cliErr("ls", "--root", root, "--json")
	if code == exitOK {
		var doc struct {
			Projects []struct {
				Folder string   `json:"folder"`
				Paths  []string `json:"paths"`
			} `json:"projects"`
		}
		if json.Unmarshal([]byte(out), &doc) == nil {
			for _, p := range doc.Projects {
				if p.Folder == f.Project && len(p.Paths) == 1 {
					s.dir = p.Paths[0]
				}
			}
		}
	}
	out, _, _ = cliErr("show", "--root", root, f.Session)
	if m := regexp.MustCompile(`turns\s+(\d+)`).FindStringSubmatch(out); m != nil {
		fmt.Sscan(m[1], &s.turns)
	}
	return s, true
}

// archivedIDs lists the sessions the archive folder holds.
func archivedIDs(t *testing.T, adir string) []string {
	t.Helper()
	out, errOut, code := cliErr("archive", "--list", "--json", "--archive-dir", adir)
	if code != exitOK {
		t.Fatalf("archive --list: exit %d\n%s", code, errOut)
	}
	var doc struct {
		Archives []struct {
			Session string `json:"session"`
		} `json:"archives"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("archive --list --json: %v\n%s", err, out)
	}
	var ids []string
	for _, a := range doc.Archives {
		ids = append(ids, a.Session)
	}
	return ids
}
