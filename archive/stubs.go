package archive

import (
	"fmt"
	"os"
	"sort"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// maxStub is the size past which a transcript is not read as a stub.
const maxStub = 1 << 20

// stubsOf finds the stubs of the sessions ids: main transcripts of other
// sessions that hold metadata lines only (summaries, titles), every
// leafUuid of which names an entry of a transcript of one of ids. 1.0.x
// and 2.0.x write them at a resume: the title an older /resume picker
// shows for the session. Removed without them, a session would leave each
// stub naming nothing (validate's leaf-missing, session-unwritten). It
// returns each stub's id with the session it belongs to, and the ids in
// order.
func stubsOf(l *store.Layout, ids []string, except map[string]bool) (map[string]string, []string, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	leafs := map[string][]string{} // stub id → its leafUuids
	needles := map[string]string{} // leafUuid → the session holding it
	for _, f := range l.Files {
		if f.Kind != store.KindSession || want[f.Session] || except[f.Session] || f.Size == 0 || f.Size > maxStub {
			continue
		}
		ls, ok, err := stubLeafs(f.Path)
		if err != nil {
			return nil, nil, err
		}
		if !ok || len(ls) == 0 {
			continue
		}
		leafs[f.Session] = append(leafs[f.Session], ls...)
		for _, u := range ls {
			needles[u] = ""
		}
	}
	if len(leafs) == 0 {
		return nil, nil, nil
	}
	for _, f := range l.Files {
		if f.Kind != store.KindSession || !want[f.Session] {
			continue
		}
		if err := findUUIDs(f.Path, f.Session, needles); err != nil {
			return nil, nil, err
		}
	}
	out := map[string]string{}
	var order []string
	for id, ls := range leafs {
		owner := ""
		for _, u := range ls {
			if needles[u] == "" || (owner != "" && needles[u] != owner) {
				owner = ""
				break
			}
			owner = needles[u]
		}
		if owner != "" {
			out[id] = owner
			order = append(order, id)
		}
	}
	sort.Strings(order)
	return out, order, nil
}

// stubLeafs reads a transcript: ok when every line is a metadata entry
// (no chain entry, nothing unreadable), with the leafUuids they name.
func stubLeafs(path string) (leafs []string, ok bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	ps := session.NewParser()
	ps.Header = true
	var e session.Entry
	for rd.Next() {
		r := ps.Parse(rd.Line().Raw)
		if r.Err != nil || !session.HeaderOf(r.Value, &e) || e.IsChain() {
			return nil, false, nil
		}
		if e.LeafUUID != "" {
			leafs = append(leafs, e.LeafUUID)
		}
	}
	return leafs, rd.Err() == nil, rd.Err()
}

// findUUIDs records, for each uuid of needles that an entry of the
// transcript at path carries, the session id.
func findUUIDs(path, id string, needles map[string]string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := session.NewReader(fh, nil)
	for rd.Next() {
		raw := rd.Line().Raw
		if a, b, ok := session.Find(raw, "uuid"); ok {
			if u, ok := changeset.DecodeJSONString(raw[a:b]); ok {
				if cur, ok := needles[u]; ok && cur == "" {
					needles[u] = id
				}
			}
		}
	}
	return rd.Err()
}

// stubNote says that stub goes with the session it belongs to.
func stubNote(stub, of, verb string) string {
	return fmt.Sprintf("session %s holds only metadata naming entries of session %s (a stub written at a resume: its title in older /resume pickers): %s with it", stub, of, verb)
}
