package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamedSubagent: a subagent the model named is written as
// agent-a<name>-<hex> with the name in its .meta.json (the wild
// 2.1.207-2.1.232 store's fork agent a202607291641-1600moxamox-461b702d51a31db6);
// named with letters only, its id has the shape of a side run's
// (agent-acompact-...), but it is no side run. The side runs stay so.
func TestNamedSubagent(t *testing.T) {
	const session = "719f12f0-d8aa-4d12-9ac6-a5bd544bb57c"
	src := filepath.Join("..", "testdata", "wild", "2.1.207-2.1.232", ".claude", "projects", "-home-d1-d8-home-d1-d13-d4-d5", session, "subagents", "agent-a202607291641-1600moxamox-461b702d51a31db6")
	meta, err := os.ReadFile(src + ".meta.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(agent, metaText string) File {
		p := filepath.Join(dir, "agent-"+agent+".jsonl")
		os.WriteFile(p, []byte("{}\n"), 0o600)
		if metaText != "" {
			os.WriteFile(strings.TrimSuffix(p, ".jsonl")+".meta.json", []byte(metaText), 0o600)
		}
		return File{Path: p, Kind: KindAgent, Session: session, Agent: agent}
	}
	named := strings.Replace(string(meta), "202607291641-1600moxamox", "reviewer", 1)
	for _, c := range []struct {
		f    File
		side bool
	}{
		{write("a202607291641-1600moxamox-461b702d51a31db6", string(meta)), false},
		{write("areviewer-461b702d51a31db6", named), false},
		{write("areviewer-561b702d51a31db6", ""), true}, // no meta: taken for a side run
		{write("acompact-8d29248259aa9c0e", `{"name":"compact"}`), true},
		{write("aprompt_suggestion-6df527", ""), true},
		{write("a461b702d51a31db6", ""), false},
	} {
		if got := c.f.Side(); got != c.side {
			t.Errorf("%s: Side() = %v, want %v", c.f.Agent, got, c.side)
		}
	}
}
