package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestForkRef: a fork-context-ref entry (as 2.1.220 wrote one in a forked
// subagent's transcript) names the parent's last entry of context; the
// context is the walk back from it in the parent's graph, root first,
// sidechain entries aside; a parent that does not hold it gives none.
func TestForkRef(t *testing.T) {
	raw := `{"type":"fork-context-ref","agentId":"ausrbinsnmpwalk-v2c-c-da0830f979acd02a","parentSessionId":"719f12f0-d8aa-4d12-9ac6-a5bd544bb57c","parentLastUuid":"a3","contextLength":1038}`
	for _, number := range []bool{false, true} {
		var v any
		d := json.NewDecoder(strings.NewReader(raw))
		if number {
			d.UseNumber()
		}
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got, ok := ForkRefOf(Light(v), 1)
		want := ForkRef{ParentSession: "719f12f0-d8aa-4d12-9ac6-a5bd544bb57c", ParentLast: "a3", Length: 1038, Line: 1}
		if !ok || got != want {
			t.Errorf("ForkRefOf = %+v, %v; want %+v", got, ok, want)
		}
	}
	if _, ok := ForkRefOf(map[string]any{"type": "frame-link", "parentSessionId": "s", "parentLastUuid": "u"}, 1); ok {
		t.Error("a frame-link read as a fork-context-ref")
	}
	g := graphOf(
		tnode{"u1", "", "user", "T01", "", nil},
		tnode{"a1", "u1", "assistant", "T02", "m1", nil},
		tnode{"s1", "a1", "user", "T03", "", nil},
		tnode{"a3", "s1", "assistant", "T04", "m2", nil},
		tnode{"a4", "a3", "assistant", "T05", "m3", nil},
	)
	g.Nodes[2].Sidechain = true
	nodes, ok := g.ForkContext(ForkRef{ParentLast: "a3"})
	if got := uuids(g, nodes); !ok || !reflect.DeepEqual(got, []string{"u1", "a1", "a3"}) {
		t.Errorf("context %v, %v; want [u1 a1 a3]", got, ok)
	}
	if nodes, ok := g.ForkContext(ForkRef{ParentLast: "gone"}); ok || len(nodes) > 0 {
		t.Errorf("a parent without the entry gives %v, %v", nodes, ok)
	}
}
