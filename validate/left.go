package validate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/store"
)

// leftRef is a finding about a session whose conversation is gone: the
// message is completed with what is left once the store is read.
type leftRef struct {
	finding int // index in s.findings
	session string
}

// agentsOf counts the subagent transcripts of session id in every
// project folder (side runs, such as compactions, left out).
func (s *storeCheck) agentsOf(id string) int {
	n := 0
	for k, c := range s.agentCountsOf() {
		if strings.HasSuffix(k, "/"+id) {
			n += c
		}
	}
	return n
}

// agentsIn counts the subagent transcripts of session id in project
// folder folder: under its session folder, or flat beside it (2.0.x)
// with its sessionId.
func (s *storeCheck) agentsIn(folder, id string) int {
	return s.agentCountsOf()[store.FolderSession(folder, id)]
}

func (s *storeCheck) agentCountsOf() map[string]int {
	if s.agentCounts == nil {
		s.agentCounts = store.Subagents(s.all())
	}
	return s.agentCounts
}

// lost reports a metadata-only main transcript whose subagent transcripts
// survive: the conversation was written, then lost (rewritten to a stub
// at resume, anthropics/claude-code#79298). Prune leaves it: its
// subagents would be left an agent-orphan.
func (s *storeCheck) lost(r *fileResult) {
	_, types := MetaTitle(r.file.Path)
	s.add(TranscriptLost, r.file.Path, 0, "the conversation of session %s is lost: its transcript holds %s (%s) and no message, while its subagents ran; /resume opens it empty",
		r.file.Session, plural.Count(r.lines, "metadata line"), strings.Join(types, ", "))
	s.leftRefs = append(s.leftRefs, leftRef{len(s.findings) - 1, r.file.Session})
}

// describeLeft adds to each finding of leftRefs what is left of its
// session (reading history.jsonl once) and the commands that read and
// remove it.
func (s *storeCheck) describeLeft() {
	if len(s.leftRefs) == 0 {
		return
	}
	ids := map[string]bool{}
	for _, l := range s.leftRefs {
		ids[l.session] = true
	}
	prompts, err := store.SessionPrompts(s.root, ids)
	if err != nil {
		s.add(ReadFailed, filepath.Join(s.root, "history.jsonl"), 0, "%v", err)
	}
	for _, l := range s.leftRefs {
		f := &s.findings[l.finding]
		f.Message += fmt.Sprintf("; left: %s: cfix export writes them, cfix rm removes the session",
			store.Left(s.agentsOf(l.session), store.FileHistoryBackups(s.root, l.session), len(prompts[l.session])))
		if strings.HasPrefix(l.session, "-") {
			continue // cfix would take the name for an option
		}
		id := shell.Quote(l.session)
		f.Hint = fmt.Sprintf("cfix export %s -o %s && cfix rm %s --apply", id, shell.Quote(l.session+".md"), id)
	}
}
