package carry

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/cfix-dev/cfix/changeset"
)

// RemoveEmptied plans, after the other ops of cs, the removal of each of
// the project folders dirs that the plan leaves empty (ls would list it as
// a project of no session); undo makes it again, with its mode and mtime
// (changeset.RemoveEmptied). A sessions-index.json that the plan leaves
// listing no session, alone in such a folder, goes with it: it is derived,
// and a session moved or restored there later is listed without one.
func RemoveEmptied(cs *changeset.ChangeSet, dirs ...string) error {
	for _, d := range dirs {
		if err := dropEmptyIndex(cs, d); err != nil {
			return err
		}
	}
	return cs.RemoveEmptied("the project folder is left empty", dirs...)
}

// dropEmptyIndex removes the sessions-index.json of dir when the plan
// leaves nothing else in dir and the index lists no session (as the plan
// rewrites it, or as it is).
func dropEmptyIndex(cs *changeset.ChangeSet, dir string) error {
	left, err := cs.LeftIn(dir)
	if err != nil || len(left) != 1 || left[0] != "sessions-index.json" {
		return err
	}
	path := filepath.Join(dir, left[0])
	for i := range cs.Ops {
		op := &cs.Ops[i]
		if op.Path != path {
			continue
		}
		if op.Action == changeset.Rewrite && op.Expect.Link == "" && (op.HasData || op.Data != nil) && indexEmpty(op.Data) {
			op.Action, op.Data, op.HasData = changeset.Delete, nil, false
			op.Reason = "remove the folder's sessions-index.json: without the sessions of this plan it lists none"
		}
		return nil
	}
	fp, err := changeset.FingerprintOf(path)
	if err != nil || !fp.Exists || fp.Dir || fp.Link != "" {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil || !indexEmpty(b) {
		return err
	}
	cs.Add(changeset.Op{Action: changeset.Delete, Path: path, Expect: fp, Reason: "remove the folder's sessions-index.json: it lists no session"})
	return nil
}

// indexEmpty reports whether a sessions-index.json lists no session.
func indexEmpty(raw []byte) bool {
	var doc struct {
		Entries []json.RawMessage `json:"entries"`
	}
	return json.Unmarshal(raw, &doc) == nil && len(doc.Entries) == 0
}
