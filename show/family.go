// Package show describes one session of a Claude Code store: its family of
// files as a tree (the main transcript, subagents, side files, sidecars),
// what its transcripts hold, what a resume loads, and validate's findings.
package show

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
)

// Family is the files of one session, as the resolver named it.
type Family struct {
	Root    string
	Arg     string // the name as given
	Session string // the session id ("" for a file outside the store)
	// Layout holds the session's transcripts (main, subagents in both
	// layouts, side files), their .meta.json files and session folders.
	Layout *store.Layout
	// Loose is set when the name is a .jsonl file that is no session of
	// the store (transcripts/ses_*.jsonl, pre-compact-session-histories/,
	// a file outside projects/): it is shown, never resumed.
	Loose string
	// Why says why a Loose file is not resumable.
	Why string
	// DesktopDir is Claude Desktop's index of its sessions (see
	// desktop.Dir), read for the titles Desktop shows the session under
	// and for validate's findings on them; "" reads none.
	DesktopDir string
	// Named is the transcript the name is the path of, when it is one of
	// the family's (a subagent's, say); "" for a session id.
	Named string
}

// InputError reports a name that names no session.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Resolve resolves what the user named (store.Resolver: a session id, a
// unique prefix of one, a .jsonl path, a session folder, latest) to the
// family of one session. A path to a subagent transcript names its
// session. A .jsonl file that is no session of the store is a Loose
// family.
func Resolve(root, arg string) (*Family, error) {
	all, err := store.Scan(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	return ResolveWith(root, store.NewResolver(root, all), arg)
}

// ResolveWith is Resolve with the resolver r of the store at root (one
// made by InStore resolves names in the store only).
func ResolveWith(root string, r *store.Resolver, arg string) (*Family, error) {
	all, err := r.Layout()
	if err != nil {
		return nil, err
	}
	t, err := r.Resolve(arg)
	if err != nil {
		return nil, err
	}
	fam := &Family{Root: root, Arg: arg}
	switch t.Kind {
	case store.TargetSession:
		fam.Session, fam.Layout = t.Session, t.Layout
		return fam, nil
	case store.TargetFile:
	default:
		return nil, &InputError{Msg: fmt.Sprintf("%s names a %s, not a session: name a session id, a prefix of one, its .jsonl transcript or latest", arg, t.Kind)}
	}
	f := t.Layout.Files[0]
	if !t.InStore || !strings.HasSuffix(f.Path, ".jsonl") {
		fam.Loose, fam.Why = f.Path, looseWhy(root, f.Path)
		return fam, nil
	}
	id := f.Session
	if f.Kind == store.KindAgentFlat {
		id = store.FlatAgentSession(f.Path)
	}
	if f.Kind == store.KindSession && !store.IsUUID(id) || id == "" {
		fam.Loose, fam.Why = f.Path, "its name is not a session id: /resume does not list it"
		return fam, nil
	}
	fam.Session, fam.Named = id, f.Path
	fam.Layout = store.Family(all, id).In(f.Project)
	if len(fam.Layout.Files) == 0 {
		fam.Layout.Files = []store.File{f}
	}
	return fam, nil
}

// looseWhy says why a .jsonl file outside projects/ is not a session.
func looseWhy(root, path string) string {
	if x, ok := store.ExtraAt(root, path); ok {
		return fmt.Sprintf("a %s (%s/): Claude Code never resumes it", x.Kind, x.Kind.Dir())
	}
	rel, err := filepath.Rel(root, path)
	if err == nil && !strings.HasPrefix(rel, "..") {
		return "it lies outside projects/, where Claude Code looks for sessions"
	}
	return "it lies outside the store " + root
}

// Meta is what a subagent's .meta.json says.
type Meta struct {
	AgentType   string `json:"agentType,omitempty"`
	Description string `json:"description,omitempty"`
	ToolUseID   string `json:"toolUseId,omitempty"`
}

// MetaOf reads the .meta.json beside a nested subagent transcript; a
// missing or empty one gives the zero Meta.
func MetaOf(transcript string) (Meta, error) {
	var m Meta
	b, err := rfile.ReadFile(strings.TrimSuffix(transcript, ".jsonl") + ".meta.json")
	if errors.Is(err, os.ErrNotExist) || len(b) == 0 {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if json.Unmarshal(b, &m) != nil {
		return Meta{}, nil // meta-invalid: validate says so
	}
	return m, nil
}

// Workflow returns the workflow id of a subagent transcript that a
// workflow started (<id>/subagents/workflows/<wf>/agent-*.jsonl), or "".
func Workflow(f store.File) string {
	if f.Kind != store.KindAgent {
		return ""
	}
	parent := filepath.Dir(f.Path)
	if filepath.Base(filepath.Dir(parent)) == "workflows" {
		return filepath.Base(parent)
	}
	return ""
}
