package archive

import (
	"fmt"
	"os"

	"github.com/cfix-dev/cfix/session"
)

// emptiness is what an empty session holds.
type emptiness int

const (
	notEmpty     emptiness = iota
	onlyMetadata           // no chain entry at all: what prune's empty-sessions removes
	noMessage              // chain entries (a hook's progress, a local command), no message
)

// emptySession tells whether s holds no message: none of its main
// transcripts has a user or assistant entry, and it has no subagent
// transcript or session folder. Such a session (a client started and
// closed, a queue operation, a hook's progress) is nothing anyone would
// restore.
func emptySession(s *Session) (emptiness, error) { return emptyWith(s, nil) }

// emptyWith is emptySession reading through buf (nil: a new one).
func emptyWith(s *Session, buf []byte) (emptiness, error) {
	if len(s.Mains) == 0 {
		return notEmpty, nil
	}
	for _, p := range s.Parts {
		switch p.What {
		case "main transcript", "session-env", "debug log", "todo list":
		default:
			return notEmpty, nil // subagents, a session folder, backups, tasks
		}
	}
	e := onlyMetadata
	for _, f := range s.Mains {
		chain, message, err := holds(f.Path, buf)
		if err != nil {
			return notEmpty, err
		}
		if message {
			return notEmpty, nil
		}
		if chain {
			e = noMessage
		}
	}
	return e, nil
}

// holds tells what a transcript holds, reading no further than it must
// (through buf, nil: a new one):
// a chain entry, a message (a user or assistant entry). A line that is
// not a JSON entry counts as a message: the file is damaged, not empty.
func holds(path string, buf []byte) (chain, message bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	rd := session.NewReader(f, buf)
	ps := session.NewParser()
	ps.Header = true
	var e session.Entry
	for rd.Next() {
		r := ps.Parse(rd.Line().Raw)
		if r.Err != nil || !session.HeaderOf(r.Value, &e) {
			return true, true, nil
		}
		if e.IsChain() {
			chain = true
		}
		if e.Type == "user" || e.Type == "assistant" {
			return true, true, nil
		}
	}
	return chain, false, rd.Err()
}

// emptyNote says what an archive by age leaves of the sessions that hold
// no message, and what removes them.
func emptyNote(n, metaOnly int) string {
	what := fmt.Sprintf("%d %s no message: not archived, left in the store", n, map[bool]string{true: "session holds", false: "sessions hold"}[n == 1])
	switch {
	case metaOnly == n:
		if n == 1 {
			return what + "; cfix prune --what empty-sessions --apply removes it"
		}
		return what + "; cfix prune --what empty-sessions --apply removes them"
	case metaOnly > 0:
		return what + fmt.Sprintf("; cfix prune --what empty-sessions --apply removes the %d that hold only metadata lines", metaOnly)
	}
	return what + " (cfix archive ID archives one by its id)"
}
