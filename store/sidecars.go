package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// The sidecars below live beside projects/ in the store. Each layout was
// read off what Claude Code 2.1.330 wrote in a scenario made for it (see
// the tests of validate and repair, which say what each version wrote):
//
//   - tasks/<session-id>/<n>.json and .lock: the task list of the Task
//     tools (TaskCreate, TaskUpdate); the list is named by the session id.
//   - plans/<slug>.md (and <slug>-agent-<agent-id>.md): plan mode's plan
//     file; the slug is the "slug" field of the session's entries.
//   - usage-data/session-meta/<session-id>.json: /insights' summary of a
//     session, with "session_id" and "project_path".
//   - usage-data/facets/<session-id>.json: /insights' facets of a
//     session, with "session_id".
//   - paste-cache/<hash>.txt: a pasted text, named by the first 16 hex
//     digits of its SHA-256, which history.jsonl names in
//     pastedContents.<n>.contentHash.
//   - shell-snapshots/snapshot-<shell>-<ms>-<random>.sh: the shell
//     snapshot one Claude Code process makes and sources before each Bash
//     command; it names no session.
//
// stats-cache.json (the /stats cache) and agents/ (the user's agent
// definitions) belong to no session: nothing here lists them.

// Sidecar is one sidecar file or folder of a session, or of no session.
type Sidecar struct {
	Path    string
	Dir     bool
	Session string    // the session id it belongs to, when its name says
	Slug    string    // plans: the slug named by the file name (without .md)
	Hash    string    // paste-cache: the content hash of its name
	Created time.Time // shell snapshots: when the process made it
	ModTime time.Time
}

// TaskLists lists tasks/<session-id>/ folders. Folders of other names (a
// list named by CLAUDE_CODE_TASK_LIST_ID or a team) are no session's.
func TaskLists(root string) ([]Sidecar, error) {
	return listSidecars(filepath.Join(root, "tasks"), func(e fs.DirEntry, s *Sidecar) bool {
		if !e.IsDir() || !IsUUID(e.Name()) {
			return false
		}
		s.Dir, s.Session = true, e.Name()
		return true
	})
}

// Plans lists plans/*.md.
func Plans(root string) ([]Sidecar, error) {
	return listSidecars(filepath.Join(root, "plans"), func(e fs.DirEntry, s *Sidecar) bool {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
			return false
		}
		s.Slug = strings.TrimSuffix(e.Name(), ".md")
		return true
	})
}

// PlanNamedBy reports whether the plan file named name (<slug>.md or
// <slug>-agent-<id>.md) belongs to one of the slugs.
func PlanNamedBy(name string, slugs map[string]bool) bool {
	stem := strings.TrimSuffix(name, ".md")
	if slugs[stem] {
		return true
	}
	for i := 0; ; {
		j := strings.Index(stem[i:], "-agent-")
		if j < 0 {
			return false
		}
		if slugs[stem[:i+j]] {
			return true
		}
		i += j + 1
	}
}

// SessionMetas lists usage-data/session-meta/<session-id>.json.
func SessionMetas(root string) ([]Sidecar, error) {
	return usageData(root, "session-meta")
}

// Facets lists usage-data/facets/<session-id>.json.
func Facets(root string) ([]Sidecar, error) {
	return usageData(root, "facets")
}

func usageData(root, sub string) ([]Sidecar, error) {
	return listSidecars(filepath.Join(root, "usage-data", sub), func(e fs.DirEntry, s *Sidecar) bool {
		id := strings.TrimSuffix(e.Name(), ".json")
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || !IsUUID(id) {
			return false
		}
		s.Session = id
		return true
	})
}

// Pastes lists paste-cache/<hash>.txt.
func Pastes(root string) ([]Sidecar, error) {
	return listSidecars(filepath.Join(root, "paste-cache"), func(e fs.DirEntry, s *Sidecar) bool {
		h := strings.TrimSuffix(e.Name(), ".txt")
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") || !isHexString(h) {
			return false
		}
		s.Hash = h
		return true
	})
}

// ShellSnapshots lists shell-snapshots/snapshot-*.sh with the time their
// name gives (the modification time when it gives none).
func ShellSnapshots(root string) ([]Sidecar, error) {
	return listSidecars(filepath.Join(root, "shell-snapshots"), func(e fs.DirEntry, s *Sidecar) bool {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "snapshot-") || !strings.HasSuffix(name, ".sh") {
			return false
		}
		s.Created = s.ModTime
		for _, part := range strings.Split(strings.TrimSuffix(name, ".sh"), "-") {
			if len(part) >= 12 && len(part) <= 14 && isDigits(part) {
				if ms, err := strconv.ParseInt(part, 10, 64); err == nil {
					s.Created = time.UnixMilli(ms)
				}
				break
			}
		}
		return true
	})
}

// listSidecars lists the entries of dir that keep says are sidecars; a
// missing dir holds none.
func listSidecars(dir string, keep func(e fs.DirEntry, s *Sidecar) bool) ([]Sidecar, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Sidecar
	for _, e := range ents {
		s := Sidecar{Path: filepath.Join(dir, e.Name())}
		if fi, err := e.Info(); err == nil {
			s.ModTime = fi.ModTime()
		}
		if keep(e, &s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// PasteRefs returns the content hashes history.jsonl names
// (pastedContents.<n>.contentHash): the pasted texts its prompts hold.
func PasteRefs(root string) (map[string]bool, error) {
	refs := map[string]bool{}
	f, err := rfile.Open(filepath.Join(root, "history.jsonl"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return refs, nil
		}
		return nil, err
	}
	defer f.Close()
	rd := session.NewReader(f, nil)
	for rd.Next() {
		raw := rd.Line().Raw
		if !bytes.Contains(raw, []byte(`"contentHash"`)) {
			continue
		}
		var v struct {
			Pasted map[string]struct {
				ContentHash string `json:"contentHash"`
			} `json:"pastedContents"`
		}
		if json.Unmarshal(raw, &v) != nil {
			// A damaged line may still name a paste: keep what it names.
			for _, h := range rawValues(raw, `"contentHash":"`) {
				refs[h] = true
			}
			continue
		}
		for _, p := range v.Pasted {
			if p.ContentHash != "" {
				refs[p.ContentHash] = true
			}
		}
	}
	return refs, rd.Err()
}

// SlugKey is how a transcript entry names its plan's slug.
var SlugKey = []byte(`"slug":"`)

// SlugsIn returns the slugs a transcript line names.
func SlugsIn(raw []byte) []string { return rawValues(raw, string(SlugKey)) }

// FileSlugs returns the slugs the entries of a transcript name.
func FileSlugs(path string) ([]string, error) {
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	rd := session.NewReader(f, nil)
	for rd.Next() {
		for _, s := range SlugsIn(rd.Line().Raw) {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return out, nil
}

// rawValues returns the plain string values (no escapes) that follow key
// in raw.
func rawValues(raw []byte, key string) []string {
	var out []string
	for {
		i := bytes.Index(raw, []byte(key))
		if i < 0 {
			return out
		}
		raw = raw[i+len(key):]
		j := bytes.IndexByte(raw, '"')
		if j <= 0 {
			continue
		}
		if v := raw[:j]; bytes.IndexByte(v, '\\') < 0 {
			out = append(out, string(v))
		}
		raw = raw[j:]
	}
}

func isHexString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// SidecarSettle is how long a sidecar that nothing names yet is left
// alone: a live session may be about to name it (a pasted text reaches
// history.jsonl as the prompt is sent, a plan's slug reaches the
// transcript with the next entry).
const SidecarSettle = time.Hour

// ShellSnapshotAge is how old a shell snapshot must be before it counts
// as left behind. Clients before 2.1.x register no process in sessions/,
// so only its age tells that the process that made it is gone; every
// measured version makes a new snapshot when its own is missing (1.0.128:
// "Snapshot file missing, recreating"; 2.1.205 and 2.1.330 fall back to a
// login shell).
const ShellSnapshotAge = 24 * time.Hour

// Settled reports whether a sidecar was last written SidecarSettle ago.
func Settled(s Sidecar, now time.Time) bool { return now.Sub(s.ModTime) >= SidecarSettle }

// ShellSnapshotInUse reports whether a shell snapshot may belong to a
// running Claude Code process: it is younger than ShellSnapshotAge, or a
// running process (sessions/<pid>.json) started before it was made, or
// one whose start is unknown runs.
func ShellSnapshotInUse(s Sidecar, live []LiveSession, now time.Time) bool {
	if now.Sub(s.Created) < ShellSnapshotAge {
		return true
	}
	for _, l := range live {
		if l.Running && (l.StartedAt.IsZero() || !l.StartedAt.After(s.Created)) {
			return true
		}
	}
	return false
}
