package session

import (
	"reflect"
	"testing"
)

// node is a compact way to write an entry for the loader tests.
type tnode struct {
	uuid, parent, typ, time, msgID string
	blocks                         []Block
}

func graphOf(ns ...tnode) *Graph {
	g := NewGraph()
	for i, n := range ns {
		g.Add(&Entry{UUID: n.uuid, Parent: n.parent, HasParent: true, Type: n.typ, Timestamp: n.time, MessageID: n.msgID, Blocks: n.blocks}, i+1)
	}
	return g
}

func uuids(g *Graph, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, g.Nodes[i].UUID)
	}
	return out
}

func use(id string) []Block    { return []Block{{Type: "tool_use", ID: id}} }
func result(id string) []Block { return []Block{{Type: "tool_result", ToolUseID: id}} }

var newest = Loader{Name: "test", WalkProgress: true, RecoverParallel: true, DropsUnanswered: true}

// TestLoadParallelWithProgress: two parallel calls streamed as two
// assistant entries of one message.id, progress under each, results
// beside the chain (as 2.1.2x writes them). The walk from the latest entry
// misses the first call's result; recovery puts it back after the chain's
// last entry of that message, sorted by time.
func TestLoadParallelWithProgress(t *testing.T) {
	g := graphOf(
		tnode{"u1", "", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T02", "m1", use("t1")},
		tnode{"p1", "a1", "progress", "T03", "", nil},
		tnode{"a2", "p1", "assistant", "T04", "m1", use("t2")},
		tnode{"p2", "a2", "progress", "T05", "", nil},
		tnode{"r1", "a1", "user", "T06", "", result("t1")},
		tnode{"r2", "a2", "user", "T07", "", result("t2")},
		tnode{"a3", "r2", "assistant", "T08", "m2", nil},
	)
	ld := g.Load(newest, false)
	want := []string{"u1", "a1", "a2", "r1", "r2", "a3"}
	if got := uuids(g, ld.Chain); !reflect.DeepEqual(got, want) {
		t.Errorf("chain %v, want %v", got, want)
	}
	if !ld.Recovered[g.Lookup("r1")] || ld.Cut != -1 {
		t.Errorf("recovered %v, cut %d", ld.Recovered, ld.Cut)
	}
	// Without recovery and bridging (older loaders) the first result
	// stays off the chain and progress is walked through.
	old := g.Load(Loader{Name: "old", WalkProgress: true, LeafProgress: true}, false)
	want = []string{"u1", "a1", "p1", "a2", "r2", "a3"}
	if got := uuids(g, old.Chain); !reflect.DeepEqual(got, want) {
		t.Errorf("old chain %v, want %v", got, want)
	}
}

// TestLoadLeaf: the resume starts from the latest message (the first of
// equal timestamps), sidechain entries and entries without a timestamp
// aside; a parent written nowhere cuts the walk there.
func TestLoadLeaf(t *testing.T) {
	g := graphOf(
		tnode{"u1", "gone", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T05", "", nil},
		tnode{"b1", "u1", "assistant", "T05", "", nil},
		tnode{"s1", "a1", "system", "", "", nil},
	)
	ld := g.Load(newest, false)
	if got := uuids(g, ld.Chain); !reflect.DeepEqual(got, []string{"u1", "a1"}) {
		t.Errorf("chain %v, want [u1 a1]", got)
	}
	if ld.Cut != g.Lookup("u1") {
		t.Errorf("cut at %d, want u1", ld.Cut)
	}
}

// TestLoaderFor: versions pick their model; unknown ones get the newest.
func TestLoaderFor(t *testing.T) {
	if LoaderFor("").Name != Loaders[len(Loaders)-1].Loader.Name {
		t.Error("an unknown version does not get the newest model")
	}
	if !VersionLess("2.1.9", "2.1.10") || VersionLess("2.1.10", "2.1.9") || VersionLess("1.0.0", "1.0.0") {
		t.Error("VersionLess orders wrong")
	}
}

// TestLoadNewerRules: 2.1.101 and later resume from the message written
// last (not the latest timestamp) and link a message whose parent the file
// lacks to the one written right before it when that one is less than 5 s
// older (from 2.1.91); 2.1.120 and later resume from the last
// last-prompt's leafUuid.
func TestLoadNewerRules(t *testing.T) {
	g := graphOf(
		tnode{"u0", "", "user", "2026-01-01T00:00:01.000Z", "", nil},
		tnode{"uP", "a0", "user", "2026-01-01T00:00:10.000Z", "", nil},
		tnode{"a0", "u0", "assistant", "2026-01-01T00:00:02.000Z", "", nil},
		tnode{"uQ", "gone", "user", "2026-01-01T00:00:05.000Z", "", nil},
	)
	lw := LoaderFor("2.1.111")
	if got := uuids(g, g.Load(lw, false).Chain); !reflect.DeepEqual(got, []string{"u0", "a0", "uQ"}) {
		t.Errorf("2.1.111: chain %v, want the last-written uQ linked to a0 (3 s older)", got)
	}
	old := LoaderFor("2.1.87")
	if got := uuids(g, g.Load(old, false).Chain); !reflect.DeepEqual(got, []string{"u0", "a0", "uP"}) {
		t.Errorf("2.1.87: chain %v, want the latest uP", got)
	}
	// Too old to link: the walk is cut.
	g.Nodes[3].Time = "2026-01-01T00:00:07.500Z"
	if ld := g.Load(lw, false); ld.Cut != 3 {
		t.Errorf("a predecessor 5.5 s older: cut at %d, want 3", ld.Cut)
	}
	// A trailing last-prompt (no message after its line) names the leaf;
	// one with messages written after it does not.
	g.LastPrompt, g.LastPromptLine = "a0", 5
	if got := uuids(g, g.Load(LoaderFor("2.1.136"), false).Chain); !reflect.DeepEqual(got, []string{"u0", "a0"}) {
		t.Errorf("2.1.136, trailing last-prompt: chain %v, want the last-prompt's a0", got)
	}
	g.LastPromptLine = 3
	if ld := g.Load(LoaderFor("2.1.136"), false); ld.Leaf != 3 {
		t.Errorf("2.1.136, a message after the last-prompt: leaf %d, want the last written (3)", ld.Leaf)
	}
}

// TestLoadSiblingResults: three calls in one assistant entry (as some
// non-Anthropic endpoints stream them), each result written as a child of
// that entry, the next answer under the last one written. Measured with
// the real clients (a crafted transcript, the requests the fake API got):
// 2.1.29 sends only the walked result and drops the other two calls;
// 2.1.30 to 2.1.79 send all three results, the recovered ones first in
// the order of the calls; 2.1.80 on put them back by message.id.
func TestLoadSiblingResults(t *testing.T) {
	calls := []Block{{Type: "tool_use", ID: "t1"}, {Type: "tool_use", ID: "t2"}, {Type: "tool_use", ID: "t3"}}
	g := graphOf(
		tnode{"u1", "", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T02", "m1", calls},
		tnode{"r3", "a1", "user", "T03", "", result("t3")},
		tnode{"r1", "a1", "user", "T04", "", result("t1")},
		tnode{"r2", "a1", "user", "T05", "", result("t2")},
		tnode{"a2", "r2", "assistant", "T06", "m2", nil},
	)
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"2.1.29", []string{"u1", "a1", "r2", "a2"}},
		{"2.1.30", []string{"u1", "a1", "r1", "r3", "r2", "a2"}},
		{"2.1.68", []string{"u1", "a1", "r1", "r3", "r2", "a2"}},
		{"2.1.79", []string{"u1", "a1", "r1", "r3", "r2", "a2"}},
		{"2.1.100", []string{"u1", "a1", "r3", "r1", "r2", "a2"}},
	} {
		ld := g.Load(LoaderFor(c.version), false)
		if got := uuids(g, ld.Chain); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s (%s): chain %v, want %v", c.version, LoaderFor(c.version).Name, got, c.want)
		}
	}
	// A recovered result may have a branch of its own (measured with
	// 2.1.68): the result comes back, the branch does not.
	g = graphOf(
		tnode{"u1", "", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T02", "m1", calls},
		tnode{"r1", "a1", "user", "T03", "", result("t1")},
		tnode{"r2", "a1", "user", "T04", "", result("t2")},
		tnode{"r3", "a1", "user", "T05", "", result("t3")},
		tnode{"b1", "r1", "assistant", "T06", "m3", nil},
		tnode{"a2", "r3", "assistant", "T07", "m2", nil},
	)
	if got, want := uuids(g, g.Load(LoaderFor("2.1.68"), false).Chain), []string{"u1", "a1", "r1", "r2", "r3", "a2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a result with a branch: chain %v, want %v", got, want)
	}
	// A walked child of the calls' entry that is not a tool result (the
	// next call's entry, progress) brings back no sibling.
	g = graphOf(
		tnode{"u1", "", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T02", "m1", use("t1")},
		tnode{"a2", "a1", "assistant", "T03", "m1", use("t2")},
		tnode{"r1", "a1", "user", "T04", "", result("t1")},
		tnode{"r2", "a2", "user", "T05", "", result("t2")},
		tnode{"a3", "r2", "assistant", "T06", "m2", nil},
	)
	ld := g.Load(LoaderFor("2.1.68"), false)
	if got, want := uuids(g, ld.Chain), []string{"u1", "a1", "a2", "r2", "a3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("split calls: chain %v, want %v", got, want)
	}
}
