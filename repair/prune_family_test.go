package repair_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/store"
)

// pairs is the set of code|file of a store's findings, the file relative
// to the store.
func pairs(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range findings(t, root).Findings {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil {
			rel = f.Path
		}
		out[string(f.Code)+"|"+rel] = true
	}
	return out
}

// TestPruneKeepsSubagentFamilies: a 0-byte transcript of 2.0.77 whose flat
// agent-*.jsonl subagents (its sessionId) survive stays, as a
// metadata-only one whose subagents survive does: removing it would leave
// the subagents agent-orphan. A metadata-only transcript with flat
// subagents stays too. A 0-byte transcript with no subagent still goes,
// and prune leaves no finding the store did not have.
func TestPruneKeepsSubagentFamilies(t *testing.T) {
	root := damage.CopyStore(t, "2.0.77")
	alpha := filepath.Join(root, "projects", "-home-dev-work-alpha")
	// 4907eee7 ran three Warmup subagents and wrote nothing else; give
	// 474f2210 a title line only.
	empty := filepath.Join(alpha, "4907eee7-f245-4460-92dc-df7ce48398fb.jsonl")
	titled := filepath.Join(alpha, "474f2210-8ad3-4608-8737-36b72ba20378.jsonl")
	if err := os.WriteFile(titled, []byte(`{"type":"custom-title","customTitle":"kept","sessionId":"474f2210-8ad3-4608-8737-36b72ba20378"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(root, "projects", "-home-dev-work-delta", "8a6b6493-151e-4f50-87ee-141e4629e4fd.jsonl")
	age(t, root)
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(store.Family(l, "4907eee7-f245-4460-92dc-df7ce48398fb").Files); n != 4 {
		t.Fatalf("session 4907eee7 has %d files, want its transcript and 3 flat subagents", n)
	}
	before := pairs(t, root)

	cs := prune(t, repair.PruneOptions{Root: root})
	ops := planned(cs)
	for _, p := range []string{empty, titled} {
		if _, ok := ops[p]; ok {
			t.Errorf("planned %s, whose flat subagents survive", p)
		}
	}
	if _, ok := ops[alone]; !ok {
		t.Errorf("not planned: %s, empty and without subagents", alone)
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	var added []string
	for p := range pairs(t, root) {
		if !before[p] {
			added = append(added, p)
		}
	}
	sort.Strings(added)
	for _, p := range added {
		t.Errorf("after prune, a finding the store did not have: %s", p)
	}
}

// TestPruneDropsIndexEntries: the sessions prune --older-than removes
// leave no entry in their folder's sessions-index.json (the wild 2.1.205
// store's index lists its one session: index-missing-file after prune).
func TestPruneDropsIndexEntries(t *testing.T) {
	root := wild.Copy(t, "2.1.205")
	age(t, root)
	before := pairs(t, root)
	cs := prune(t, repair.PruneOptions{Root: root, OlderThan: 30 * 24 * time.Hour})
	idx := filepath.Join(root, "projects", "-home-unmatched-0", "sessions-index.json")
	if _, ok := planned(cs)[idx]; !ok {
		t.Errorf("not planned: the rewrite of %s", idx)
	}
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for p := range pairs(t, root) {
		if !before[p] {
			t.Errorf("after prune --older-than, a finding the store did not have: %s", p)
		}
	}
}
