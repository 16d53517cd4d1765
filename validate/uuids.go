package validate

import (
	"bytes"
	"sync"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// entryHolds reports whether a line holds an entry whose own (top-level)
// uuid is u: a uuid nested in an entry's data (2.1.x agent_progress
// entries embed whole messages) does not count.
func entryHolds(p *session.Parser, raw []byte, u string) bool {
	if !bytes.Contains(raw, []byte(u)) {
		return false
	}
	r := p.Parse(bytes.ReplaceAll(raw, []byte{0}, nil))
	if r.Err != nil {
		return false
	}
	var e session.Entry
	for _, v := range append([]any{r.Value}, r.More...) {
		if session.HeaderOf(v, &e) && e.UUID == u {
			return true
		}
	}
	return false
}

// FindEntries looks in the transcripts of a store, but the files skip
// names, for entries with the given uuids, and returns the file holding
// each one found. It reads raw bytes and parses only the lines that hold a
// wanted uuid.
func FindEntries(root string, skip map[string]bool, uuids []string) map[string]string {
	found := map[string]string{}
	if len(uuids) == 0 {
		return found
	}
	all, err := store.Scan(root)
	if err != nil {
		return found
	}
	want := map[string]bool{}
	for _, u := range uuids {
		want[u] = true
	}
	p := session.NewParser()
	p.Header = true
	var buf []byte
	for _, f := range all.Files {
		if skip[f.Path] || len(want) == 0 {
			continue
		}
		fh, err := rfile.Open(f.Path)
		if err != nil {
			continue
		}
		rd := session.NewReader(fh, buf)
		for rd.Next() && len(want) > 0 {
			raw := rd.Line().Raw
			if bytes.IndexByte(raw, '"') < 0 {
				continue
			}
			for u := range want {
				if entryHolds(p, raw, u) {
					found[u] = f.Path
					delete(want, u)
				}
			}
		}
		buf = rd.Buffer()
		fh.Close()
	}
	return found
}

// Elsewhere answers, for one file of a store, whether a uuid is the uuid
// of an entry in another transcript of the store. It looks once per uuid,
// and is safe for concurrent use.
type Elsewhere struct {
	root string
	mu   sync.Mutex
	seen map[string]string // uuid → file holding it ("" for none)
}

// NewElsewhere returns an Elsewhere for the store at root.
func NewElsewhere(root string) *Elsewhere {
	return &Elsewhere{root: root, seen: map[string]string{}}
}

// In returns the transcript other than path that holds an entry with uuid
// u, or "".
func (x *Elsewhere) In(path, u string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	where, ok := x.seen[u]
	if !ok {
		where = FindEntries(x.root, nil, []string{u})[u]
		x.seen[u] = where
	}
	if where == path {
		return "" // the file itself: not elsewhere
	}
	return where
}
