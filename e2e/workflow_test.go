package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkflowJournal: the Workflow tool of the newest pinned client, run
// offline (-p with the fake API calling Workflow with a script of one
// agent() call), writes the run's journal at
// <session>/subagents/workflows/<run id>/journal.jsonl beside the agent's
// transcript: a started and a result line keyed "v2:<sha256>" naming that
// agent. cfix validate finds nothing to report in the store. With the
// journal's last line torn, Workflow with resumeFromRunId skips the line
// it cannot parse and runs the agent again (a request with its prompt):
// what the client does with a torn journal is to redo the work, never to
// fail the resume. (Resumed with the journal whole, the agent's result
// comes from the journal: no request.)
func TestWorkflowJournal(t *testing.T) {
	version := newestPinned(t)
	env := NewEnv(t, version, "")
	const script = "export const meta = { name: \"probe\", description: \"probe run\", phases: [{title: \"one\"}] }\n" +
		"const r = await agent(\"say hi\", {label: \"hi\"})\nreturn r"
	input := func(v map[string]any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	saidHi := func(r Result) int {
		n := 0
		for _, q := range r.MessageRequests() {
			// The agent's own requests: its prompt, not the session's
			// Workflow call that holds the script.
			if txt := q.Text(); strings.Contains(txt, "say hi") && !strings.Contains(txt, "MCP: Workflow") {
				n++
			}
		}
		return n
	}
	res := env.Run("w", "-p", "MCP: Workflow "+input(map[string]any{"script": script}), "--allowedTools", "Workflow", "--output-format", "json")
	if res.ExitCode != 0 || saidHi(res) != 1 {
		t.Fatalf("the workflow's agent did not run once:\n%s", res)
	}
	out, err := res.Output()
	if err != nil {
		t.Fatal(err)
	}
	sdir := filepath.Join(env.ClaudeDir(), "projects", ProjectDirName(env.Dir("w")), out.SessionID)
	journals, _ := filepath.Glob(filepath.Join(sdir, "subagents", "workflows", "wf_*", "journal.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals: %q", journals)
	}
	journal := journals[0]
	run := filepath.Base(filepath.Dir(journal))
	type line struct {
		Type, Key, AgentID string
		Result             any
	}
	read := func() (lines []line, torn int) {
		raw, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				torn++
				continue
			}
			lines = append(lines, l)
		}
		return lines, torn
	}
	lines, _ := read()
	var result *line
	for i, l := range lines {
		if l.Type == "result" {
			result = &lines[i]
		}
	}
	if result == nil || !strings.HasPrefix(result.Key, "v2:") || result.AgentID == "" {
		t.Fatalf("journal %s: %+v", journal, lines)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(journal), "agent-"+result.AgentID+".jsonl")); err != nil {
		t.Errorf("the journal's agent has no transcript beside it: %v", err)
	}
	for _, f := range ValidateStore(t, env.ClaudeDir()).Findings {
		if f.Severity != "notice" {
			t.Errorf("%s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
		}
	}

	// Resumed as it is, the run's agent comes from the journal.
	scripts, _ := filepath.Glob(filepath.Join(sdir, "workflows", "scripts", "*.js"))
	if len(scripts) != 1 {
		t.Fatalf("scripts: %q", scripts)
	}
	again := input(map[string]any{"scriptPath": scripts[0], "resumeFromRunId": run})
	res = env.Run("w", "-r", out.SessionID, "-p", "MCP: Workflow "+again, "--allowedTools", "Workflow")
	if res.ExitCode != 0 || saidHi(res) != 0 {
		t.Fatalf("resumed with its journal whole, the agent ran again (%d):\n%s", saidHi(res), res)
	}

	// Torn: the result line loses its end.
	raw, _ := os.ReadFile(journal)
	i := bytes.LastIndex(bytes.TrimRight(raw, "\n"), []byte("\n"))
	for j := i + 1; j < len(raw); j++ {
		if bytes.HasPrefix(raw[j:], []byte(`"type":"result"`)) {
			raw = raw[:j+20]
			break
		}
	}
	if err := os.WriteFile(journal, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, torn := read(); torn != 1 {
		t.Fatalf("journal not torn: %q", raw)
	}
	for _, f := range ValidateStore(t, env.ClaudeDir()).Findings {
		if f.Severity != "notice" {
			t.Errorf("torn journal: %s:%d: %s %s: %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
		}
	}
	res = env.Run("w", "-r", out.SessionID, "-p", "MCP: Workflow "+again, "--allowedTools", "Workflow")
	if res.ExitCode != 0 || saidHi(res) != 1 {
		t.Fatalf("resumed with its journal torn, the agent did not run again once (%d):\n%s", saidHi(res), res)
	}
	t.Logf("%s: journal %s, torn result line skipped, the agent ran again", version, journal)
}
