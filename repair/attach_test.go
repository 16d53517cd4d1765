package repair_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/validate"
)

// TestAttachmentLeaf: a malformed attachment written last, which the last
// last-prompt entry names as the leaf a resume starts from (2.1.120 and
// later), is removed and the last-prompt entry pointed at its parent: no
// leaf-missing is left, and the resume loads the same messages as before
// the damage.
func TestAttachmentLeaf(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	p := filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c.jsonl")
	ls := damage.Lines(t, p)
	msgs := func() []string {
		g := session.NewGraph()
		for i, l := range damage.Lines(t, p) {
			var e session.Entry
			var m map[string]any
			if json.Unmarshal(l, &m) != nil || !session.HeaderOf(m, &e) {
				continue
			}
			if e.IsChain() {
				g.Add(&e, i+1)
			} else {
				g.Meta(&e, i+1)
			}
		}
		ld := g.Load(session.LoaderFor("2.1.332"), false)
		var out []string
		for _, i := range ld.Chain {
			if n := g.Nodes[i]; n.Type == "user" || n.Type == "assistant" {
				out = append(out, n.UUID)
			}
		}
		return out
	}
	want := msgs()
	// The last last-prompt's leaf gets a child: a hook's output stored as
	// an object, written last; the last-prompt names it.
	lp := 0
	var leaf string
	for i, l := range ls {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "last-prompt" {
			lp, leaf = i, m["leafUuid"].(string)
		}
	}
	var lm map[string]any
	json.Unmarshal(ls[lp], &lm)
	const bad = "a77ac400-0000-4000-8000-0000000000aa"
	lm["leafUuid"] = bad
	ls[lp], _ = json.Marshal(lm)
	att, _ := json.Marshal(map[string]any{"type": "attachment", "uuid": bad, "parentUuid": leaf, "isSidechain": false,
		"sessionId": "bc1c66c0-560d-4a6f-b0d4-796e1f92068c", "version": "2.1.332", "timestamp": "2026-11-20T10:00:00.000Z",
		"attachment": map[string]any{"type": "hook_success", "hookEvent": "Stop", "stdout": 5}})
	ls = append(ls, att)
	damage.WriteLines(t, p, ls, true)
	age(t, root)
	if !has(findings(t, root), validate.AttachMalformed, p, len(ls)) {
		t.Fatalf("validate does not report %s at line %d", validate.AttachMalformed, len(ls))
	}
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	after := findings(t, root)
	for _, f := range after.Findings {
		if f.Path == p && (f.Code == validate.AttachMalformed || f.Code == validate.LeafMissing) {
			t.Errorf("after repair: line %d %s %s", f.Line, f.Code, f.Message)
		}
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), bad) {
		t.Errorf("the malformed attachment, or a leafUuid naming it, is still in the file")
	}
	if got := msgs(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after repair the resume loads messages %v, before the damage %v", got, want)
	}
}

// TestAttachmentNamedByLastPrompt: 2.1.205 writes last-prompt entries
// that name an attachment entry (the corpus store has one); removing that
// attachment points them at its parent, so no leaf-missing is left.
func TestAttachmentNamedByLastPrompt(t *testing.T) {
	root := damage.CopyStore(t, "2.1.205")
	p := filepath.Join(root, "projects", "-home-dev-work-alpha", "b203baf4-cb67-4029-b6e2-337cb8159aff.jsonl")
	named := map[string]bool{}
	for _, l := range damage.Lines(t, p) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "last-prompt" {
			named[m["leafUuid"].(string)] = true
		}
	}
	n := damage.FindLast(t, p, func(m map[string]any) bool { return m["type"] == "attachment" && named[m["uuid"].(string)] })
	damage.EditLine(t, p, n, func(m map[string]any) { m["attachment"] = "x" })
	age(t, root)
	if !has(findings(t, root), validate.AttachMalformed, p, n) {
		t.Fatalf("validate does not report %s at line %d", validate.AttachMalformed, n)
	}
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	for _, f := range findings(t, root).Findings {
		if f.Path == p && (f.Code == validate.AttachMalformed || f.Code == validate.LeafMissing) {
			t.Errorf("after repair: line %d %s %s", f.Line, f.Code, f.Message)
		}
	}
}
