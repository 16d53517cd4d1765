package archive

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cfix-dev/cfix/internal/visible"
)

// What an archive may hold: a manifest is read from a file anyone could
// have written, so every path it names, and every index key, is checked
// to name the session's own files before anything is planned (see
// owner.sessions for what a session owns).

// maxManifest is the largest manifest cfix reads: a manifest lists a
// session's files, about 250 bytes each, so 16 MB is some 60,000 files. A
// bigger one is refused before it is read.
const maxManifest = 16 << 20

// maxObjects and maxValues bound what a manifest's JSON holds: a real one
// has one object and about 12 values (commas and colons) for each file,
// so 16 MB of real entries stay well below both; decoding a manifest of
// millions of empty entries ({},{},...) would take a hundred bytes of
// memory for each of its three bytes.
const (
	maxObjects = 1 << 17
	maxValues  = 1 << 20
)

// parseManifest decodes a manifest of at most maxManifest bytes, its
// objects and values counted first.
func parseManifest(b []byte) (*Manifest, error) {
	if len(b) > maxManifest {
		return nil, fmt.Errorf("%s, over the %s a manifest may have", sizeWords(int64(len(b))), sizeWords(maxManifest))
	}
	if objects, values := shape(b); objects > maxObjects || values > maxValues {
		return nil, fmt.Errorf("%d objects and %d values, more than a manifest holds (%d and %d at most)", objects, values, maxObjects, maxValues)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// shape counts the objects of the JSON text b and its values (by their
// commas and colons), outside strings, without decoding it.
func shape(b []byte) (objects, values int) {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if in {
			if c == '\\' {
				i++
			} else if c == '"' {
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{':
			objects++
		case ',', ':':
			values++
		}
	}
	return objects, values
}

// sizeWords is a byte count for a message: 16 MB, 200.0 MB.
func sizeWords(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// NotOwnedError is a manifest that names a path, or an index key, that is
// not its session's own: the archive is refused whole.
type NotOwnedError struct {
	Path    string // the archive file
	Session string
	Name    string // the path or key named
	Why     string // when the manifest itself is malformed
}

func (e *NotOwnedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("archive %s: manifest %s: refusing it", visible.String(e.Path), e.Why)
	}
	return fmt.Sprintf("archive %s: manifest names %s, which is not session %s's: refusing it",
		visible.String(e.Path), visible.String(e.Name), visible.String(e.Session))
}

// validName reports whether s can be one component of a path in the
// store: not empty, no separator, no NUL, not . or ..
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.ContainsAny(s, "/\\\x00")
}

// checkOwned refuses a manifest (of the archive at file) whose session id
// is not a plain name, or that names anything but that session's own
// files and folders: its main transcripts and flat subagents in its
// project folders, its session folders and what is under them, and its
// sidecars (file-history/<id>/, session-env/<id>/, tasks/<id>/,
// todos/<id>-agent-*.json, debug/<id>.txt,
// usage-data/session-meta/<id>.json, usage-data/facets/<id>.json); whose
// index keys are not its project folders or whose index entries are not
// its own; or that names a path twice.
func checkOwned(file string, m *Manifest) error {
	s := m.Session
	bad := func(name string) error { return &NotOwnedError{Path: file, Session: s, Name: name} }
	malformed := func(format string, args ...any) error {
		return &NotOwnedError{Path: file, Session: s, Why: fmt.Sprintf(format, args...)}
	}
	// "memory" is a project's memory folder, an agent- name a flat subagent:
	// neither is a session.
	if !validName(s) || s == "memory" || strings.HasPrefix(s, "agent-") {
		return malformed("has session id %q: not a session id", s)
	}
	projects := map[string]bool{}
	for _, p := range m.Projects {
		if !validName(p) {
			return bad("projects/" + p)
		}
		projects[p] = true
	}
	for key := range m.Folders {
		if !projects[key] {
			return bad("projects/" + key)
		}
	}
	for key, entry := range m.Index {
		if !projects[key] {
			return bad("the index of project folder " + key)
		}
		var e struct {
			SessionID *string `json:"sessionId"`
		}
		if json.Unmarshal(entry, &e) != nil || e.SessionID == nil || *e.SessionID != s {
			return bad("an index entry in " + key + " that is not session " + s + "'s")
		}
	}
	// Parts: each a file or folder the session owns, each once.
	dirs := map[string]bool{}
	parts := map[string]bool{}
	for _, p := range m.Parts {
		dir, ok := ownedPart(s, projects, p.Path)
		if !ok || dir != p.Dir {
			return bad(p.Path)
		}
		if parts[p.Path] {
			return malformed("names %s twice", visible.String(p.Path))
		}
		parts[p.Path] = true
		if dir {
			dirs[p.Path] = true
		}
	}
	// Files: each a part (of the same kind) or under a folder part, each
	// once, every part among them.
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		if seen[f.Path] {
			return malformed("names %s twice", visible.String(f.Path))
		}
		seen[f.Path] = true
		if parts[f.Path] {
			if f.Dir != dirs[f.Path] {
				return malformed("names %s as a file and as a folder", visible.String(f.Path))
			}
		} else if !underDir(dirs, f.Path) {
			return bad(f.Path)
		}
		if f.Size < 0 || f.Size > 1<<50 || f.Dir && f.Size != 0 {
			return malformed("gives %s a size of %d bytes", visible.String(f.Path), f.Size)
		}
	}
	for p := range parts {
		if !seen[p] {
			return malformed("lists %s as removed but holds no such member", visible.String(p))
		}
	}
	return nil
}

// underDir reports whether p lies under one of dirs (paths with forward
// slashes).
func underDir(dirs map[string]bool, p string) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

// ownedPart reports whether p (a clean relative path, see safePath) is a
// part session s may own, and whether that part is a folder.
func ownedPart(s string, projects map[string]bool, p string) (dir, ok bool) {
	c := strings.Split(p, "/")
	switch {
	case len(c) == 3 && c[0] == "projects":
		switch {
		case c[2] == s:
			// A session folder: named by the session in any project folder.
			return true, validName(c[1])
		case c[2] == s+".jsonl", strings.HasPrefix(c[2], "agent-") && strings.HasSuffix(c[2], ".jsonl") && len(c[2]) > len("agent-.jsonl"):
			return false, projects[c[1]]
		}
	case len(c) == 2 && (c[0] == "file-history" || c[0] == "session-env" || c[0] == "tasks"):
		return true, c[1] == s
	case len(c) == 2 && c[0] == "todos":
		return false, strings.HasPrefix(c[1], s+"-agent-") && strings.HasSuffix(c[1], ".json")
	case len(c) == 2 && c[0] == "debug":
		return false, c[1] == s+".txt"
	case len(c) == 3 && c[0] == "usage-data" && (c[1] == "session-meta" || c[1] == "facets"):
		return false, c[2] == s+".json"
	}
	return false, false
}

// safeMode is the mode a restored member gets: its archived permission
// bits, without those no file of the store needs and that would let
// others change it or run it: a file keeps read and write bits for its
// owner and group and the read bit for others (0664 at most), a folder
// the same with search bits (0775 at most) and always its owner's read,
// write and search bits (Claude Code writes into it, and undo must be
// able to take back what the restore put there). Claude Code writes
// 0600 files and 0700 folders (0644 and 0755, or 0664 and 0775, under a
// looser umask), so an archive cfix made keeps its modes; one that asks
// for more (0777, an executable transcript) is restored without the
// extra bits, and the plan says so. Set-id and sticky bits are never
// kept (an archive's mode is its permission bits only).
func safeMode(f FileInfo) fs.FileMode {
	if f.Dir {
		return f.Mode.Perm()&0o775 | 0o700
	}
	return f.Mode.Perm() & 0o664
}
