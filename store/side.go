package store

import "regexp"

// sideAgentRE matches the agent ids Claude Code gives the transcripts of
// its own side runs: a<label>-<hex>, as in agent-acompact-8d29248259aa9c0e
// (compaction), agent-aprompt_suggestion-6df527 (prompt suggestions) and
// agent-aside_question-ac9ee4804d56a951 (side questions). Subagents the
// model starts are a<hex> only.
var sideAgentRE = regexp.MustCompile(`^a[a-z][a-z_]*-[0-9a-f]+$`)

// Side reports whether the file is the transcript of one of Claude Code's
// side runs (compaction, prompt suggestion, side question, ...). Nobody
// resumes one: it starts from a pending tool result, or from a parent in
// the main session, by design.
func (f *File) Side() bool {
	return f.Kind != KindSession && sideAgentRE.MatchString(f.Agent)
}

// SideLabel returns the label of a side run's agent id ("acompact",
// "aprompt_suggestion"), or "".
func (f *File) SideLabel() string {
	if !f.Side() {
		return ""
	}
	for i := 0; i < len(f.Agent); i++ {
		if f.Agent[i] == '-' {
			return f.Agent[:i]
		}
	}
	return ""
}
