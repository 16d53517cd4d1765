package show

import (
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// Left is what is left of a session whose conversation is gone while its
// subagents survive: its main transcript is missing (validate's
// agent-orphan) or holds only metadata lines (transcript-lost).
type Left struct {
	// Why: "missing" or "stub".
	Why       string         `json:"why"`
	Subagents int            `json:"subagents"`
	Backups   int            `json:"file_history_backups"`
	Prompts   []store.Prompt `json:"history_prompts"`
}

// leftOf returns what is left of the family's session, or nil when it has
// a conversation (or no subagent).
func leftOf(fam *Family) (*Left, error) {
	if fam.Loose != "" || fam.Layout == nil {
		return nil, nil
	}
	mains, agents := 0, 0
	stub := ""
	for _, f := range fam.Layout.Files {
		switch {
		case f.Kind == store.KindSession:
			mains++
			stub = f.Path
		case !f.Side():
			agents++
		}
	}
	if agents == 0 || mains > 1 {
		return nil, nil
	}
	l := &Left{Why: "missing", Subagents: agents, Backups: store.FileHistoryBackups(fam.Root, fam.Session), Prompts: []store.Prompt{}}
	if mains == 1 {
		if validate.HasConversation(stub) {
			return nil, nil
		}
		l.Why = "stub"
	}
	ps, err := store.SessionPrompts(fam.Root, map[string]bool{fam.Session: true})
	if err != nil {
		return nil, err
	}
	if p := ps[fam.Session]; p != nil {
		l.Prompts = p
	}
	return l, nil
}
