package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// TestFlatSubagentsLeft: the flat agent-*.jsonl subagents of 2.0.x belong
// to the session their sessionId names, as hierarchical ones do. A 0-byte
// transcript whose flat subagents survive is session-empty saying what is
// left, with the hint that removes the session once exported, never
// prune's (prune leaves it: the subagents would be left agent-orphan); a
// metadata-only one is transcript-lost, not session-unwritten. An empty
// transcript without subagents keeps prune's hint.
func TestFlatSubagentsLeft(t *testing.T) {
	root := damage.CopyStore(t, "2.0.77")
	alpha := filepath.Join(root, "projects", "-home-dev-work-alpha")
	empty := filepath.Join(alpha, "4907eee7-f245-4460-92dc-df7ce48398fb.jsonl")
	titled := filepath.Join(alpha, "474f2210-8ad3-4608-8737-36b72ba20378.jsonl")
	if err := os.WriteFile(titled, []byte(`{"type":"custom-title","customTitle":"kept","sessionId":"474f2210-8ad3-4608-8737-36b72ba20378"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(root, "projects", "-home-dev-work-delta", "8a6b6493-151e-4f50-87ee-141e4629e4fd.jsonl")
	damage.Age(t, root)
	for _, whole := range []bool{true, false} {
		opts := validate.Options{Root: root}
		if !whole {
			opts.Targets = []string{empty, titled, alone}
		}
		rep, err := validate.Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]validate.Finding{}
		for _, f := range rep.Findings {
			switch f.Code {
			case validate.SessionEmpty, validate.SessionUnwritten, validate.TranscriptLost:
				by[f.Path] = f
			}
		}
		f := by[empty]
		if f.Code != validate.SessionEmpty || !strings.Contains(f.Message, "left: 3 subagent transcripts") || !strings.Contains(f.Hint, "cfix rm 4907eee7-f245-4460-92dc-df7ce48398fb") {
			t.Errorf("whole %v: the empty transcript with flat subagents: %s %q hint %q", whole, f.Code, f.Message, f.Hint)
		}
		if f := by[titled]; f.Code != validate.TranscriptLost || !strings.Contains(f.Message, "left: 3 subagent transcripts") {
			t.Errorf("whole %v: the titled transcript with flat subagents: %s %q hint %q", whole, f.Code, f.Message, f.Hint)
		}
		if f := by[alone]; f.Code != validate.SessionEmpty || f.Hint != "cfix prune --what empty-sessions --apply" {
			t.Errorf("whole %v: the empty transcript without subagents: %s %q hint %q", whole, f.Code, f.Message, f.Hint)
		}
	}
}
