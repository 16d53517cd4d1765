package store

import (
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// sideAgentRE matches the agent ids a<label>-<hex>, as in
// agent-acompact-8d29248259aa9c0e (compaction), agent-aprompt_suggestion-6df527
// (prompt suggestions) and agent-aside_question-ac9ee4804d56a951 (side
// questions): Claude Code's own side runs. Subagents the model starts are
// a<hex> only, or a<name>-<hex> when the model names them (the Agent tool's
// name: the client reads every id as a, an optional label and 16 hex
// digits, and writes the name in the subagent's .meta.json).
var sideAgentRE = regexp.MustCompile(`^a[a-z][a-z_]*-[0-9a-f]+$`)

// sideLabels are the labels of Claude Code's side runs seen in stores.
var sideLabels = map[string]bool{"acompact": true, "aprompt_suggestion": true, "aside_question": true}

// Side reports whether the file is the transcript of one of Claude Code's
// side runs (compaction, prompt suggestion, side question, ...). Nobody
// resumes one: it starts from a pending tool result, or from a parent in
// the main session, by design. A subagent the model named (its .meta.json
// gives the name of its label) is no side run, whatever its name.
func (f *File) Side() bool {
	if f.Kind == KindSession || !sideAgentRE.MatchString(f.Agent) {
		return false
	}
	label := f.Agent[:strings.IndexByte(f.Agent, '-')]
	return sideLabels[label] || !namedAgent(f.Path, label[1:])
}

// namedAgent reports whether the .meta.json beside the subagent transcript
// at path names the subagent name.
func namedAgent(path, name string) bool {
	fh, err := rfile.Open(strings.TrimSuffix(path, filepath.Ext(path)) + ".meta.json")
	if err != nil {
		return false
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, 64<<10))
	if err != nil {
		return false
	}
	var meta struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(b, &meta) == nil && meta.Name == name
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
