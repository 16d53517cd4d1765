package carry

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/store"
)

// Exported forms of the byte-preserving sessions-index.json edits, for the
// planners of other packages (rm, archive, restore).

// ReadIndex reads a folder's sessions-index.json: nil and no error when
// there is none, an error when it cannot be parsed.
func ReadIndex(path string) ([]byte, error) { return readIndex(path) }

// IndexEntry returns the raw bytes of the entry of session id, or nil.
func IndexEntry(raw []byte, id string) []byte { return indexEntry(raw, id) }

// IndexRemove removes the entry of session id; it reports whether there
// was one.
func IndexRemove(raw []byte, id string) ([]byte, bool, error) { return indexRemove(raw, id) }

// IndexAppend adds entries (JSON objects) at the end of the entries array.
func IndexAppend(raw []byte, add [][]byte) ([]byte, error) { return indexAppend(raw, add) }

// IndexIDs returns the sessionId of each entry of an index, in order.
func IndexIDs(raw []byte) ([]string, error) {
	elems, _, err := indexEntries(raw)
	if err != nil {
		return nil, err
	}
	return indexIDs(raw, elems), nil
}

// RetargetIndex rewrites a whole index for a moved folder: each entry's
// fullPath into newFolder (when it pointed into oldFolder), projectPath
// and the top-level originalPath mapped from oldDir to newDir.
func RetargetIndex(raw []byte, oldFolder, newFolder, oldDir, newDir string) ([]byte, error) {
	return retargetIndex(raw, oldFolder, newFolder, oldDir, newDir)
}

// RetargetEntry rewrites an index entry for its new place: sessionId,
// fullPath and fileMtime, and projectPath mapped from oldDir to newDir.
func RetargetEntry(obj []byte, id, fullPath string, mtimeMS int64, oldDir, newDir string) []byte {
	return retargetEntry(obj, id, fullPath, mtimeMS, oldDir, newDir)
}

// NewEntry builds an index entry from a summary, fields in the order
// Claude Code writes them.
func NewEntry(id, fullPath string, mtimeMS int64, s *store.SessionSummary, projectPath string) []byte {
	return newEntry(id, fullPath, mtimeMS, s, projectPath)
}

// DropFromIndexes adds to cs the rewrite of the sessions-index.json of each
// project folder of byFolder (folder name → session ids) without the
// entries of those sessions: a plan that removes their transcripts leaves
// no entry naming a missing file. An index that cannot be parsed is left
// as it is, with a note.
func DropFromIndexes(cs *changeset.ChangeSet, root string, byFolder map[string][]string) error {
	for _, folder := range slices.Sorted(maps.Keys(byFolder)) {
		path := filepath.Join(store.ProjectsDir(root), folder, "sessions-index.json")
		raw, err := readIndex(path)
		if err != nil {
			cs.Notes = append(cs.Notes, fmt.Sprintf("%v: not updated (cfix repair rebuilds it)", err))
			continue
		}
		if raw == nil {
			continue
		}
		var dropped []string
		for _, id := range byFolder[folder] {
			nb, ok, err := indexRemove(raw, id)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if ok {
				raw = nb
				dropped = append(dropped, id)
			}
		}
		if len(dropped) == 0 {
			continue
		}
		fp, err := changeset.FingerprintOf(path)
		if err != nil {
			return err
		}
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: path, Expect: fp, Data: raw, HasData: true, EntriesRemoved: len(dropped),
			Reason: fmt.Sprintf("drop %s from the folder's sessions-index.json", SessionWords(dropped))})
	}
	return nil
}

// SessionWords names a few sessions by id, or counts many.
func SessionWords(ids []string) string {
	if len(ids) == 1 {
		return "session " + ids[0]
	}
	if len(ids) <= 3 {
		return "sessions " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%d sessions", len(ids))
}
