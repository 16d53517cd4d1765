package repair_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// loaded returns the uuids of the entries a resume of path loads, as cfix
// models it.
func loaded(t *testing.T, path string) []string {
	t.Helper()
	l, err := validate.LoadedChain(path)
	if err != nil {
		t.Fatal(err)
	}
	return l.UUIDs
}

// uuidAt returns the uuid of the entry on line n of path.
func uuidAt(t *testing.T, path string, n int) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(damage.Lines(t, path)[n-1], &m); err != nil {
		t.Fatalf("%s:%d: %v", path, n, err)
	}
	u, _ := m["uuid"].(string)
	return u
}

// repairAll plans and applies the default repair of the store at root, and
// fails on any error finding left.
func repairAll(t *testing.T, root string) string {
	t.Helper()
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, op := range cs.Ops {
		for _, e := range op.Edits {
			reasons = append(reasons, e.Reason)
		}
	}
	apply(t, cs, t.TempDir())
	for _, f := range findings(t, root).Findings {
		if f.Severity == validate.Error {
			t.Errorf("after repair: %s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	settled(t, root, "")
	return strings.Join(reasons, "\n")
}

// TestCycleKeepsHistory: a parentUuid cycle on the chain a resume loads is
// broken by linking the entry whose parent comes later in the file to the
// entry written before it (not one of its descendants): the resume loads
// every entry it loaded before the damage. Made a root, the entry cut off
// the entries before it, and a tool_result at the root answered nothing
// (1.0.x sends it: 400).
func TestCycleKeepsHistory(t *testing.T) {
	for _, c := range []struct {
		name, version string
		file          func(string) string
		line          func(t *testing.T, p string) int
		self          bool
	}{
		{"1.0.128 tool result", damage.V128, damage.V128File, func(t *testing.T, p string) int {
			return damage.FindLast(t, p, damage.HasBlock("tool_result"))
		}, false},
		{"1.0.51 tool result", damage.V51, damage.V51File, func(t *testing.T, p string) int {
			return damage.FindLast(t, p, damage.HasBlock("tool_result"))
		}, false},
		{"2.1.88 tool result", damage.V88, damage.MainFile, func(t *testing.T, p string) int {
			return damage.FindLast(t, p, damage.HasBlock("tool_result"))
		}, false},
		{"1.0.128 self parent", damage.V128, damage.V128File, func(t *testing.T, p string) int {
			return damage.FindLast(t, p, damage.IsType("assistant"))
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := damage.CopyStore(t, c.version)
			p := c.file(root)
			want := loaded(t, p)
			n := c.line(t, p)
			if c.self {
				damage.EditLine(t, p, n, func(m map[string]any) { m["parentUuid"] = m["uuid"] })
			} else {
				damage.Cycle(t, p, n)
			}
			code := validate.ChainCycle
			if c.self {
				code = validate.ParentSelf
			}
			if !has(findings(t, root), code, p, 0) {
				t.Fatalf("setup: no %s in %s", code, p)
			}
			if !slices.Contains(want, uuidAt(t, p, n)) {
				t.Fatalf("setup: line %d is not on the chain a resume loads", n)
			}
			reasons := repairAll(t, root)
			if got := loaded(t, p); !slices.Equal(got, want) {
				t.Errorf("the resume loads %d entries, before the damage %d:\n got %q\nwant %q\nreasons:\n%s", len(got), len(want), got, want, reasons)
			}
			if !strings.Contains(reasons, "break a parentUuid cycle: link to ") {
				t.Errorf("no reason naming the entry linked to:\n%s", reasons)
			}
		})
	}
}

// TestRelinkOverSidechain: 1.0.x writes a Task's subagent inline
// (isSidechain) between the Task call and its result. When the call's line
// is not JSON, the result's parent is written nowhere and the line right
// before the result is a sidechain entry: the re-link passes over the
// entries of other chains to the removed line, and links the result to
// the entry before the call. The resume loads every entry it loaded before
// the damage but the torn call and its result, which then answers nothing
// (1.0.x would send it: 400) and goes.
func TestRelinkOverSidechain(t *testing.T) {
	for _, c := range []struct {
		version string
		file    func(string) string
	}{
		{damage.V51, damage.V51File},
		{damage.V128, damage.V128File},
	} {
		t.Run(c.version, func(t *testing.T) {
			root := damage.CopyStore(t, c.version)
			p := c.file(root)
			before := loaded(t, p)
			callUUID := ""
			ls := damage.Lines(t, p)
			call, result := damage.TearTaskCall(t, p)
			var m map[string]any
			json.Unmarshal(ls[call-1], &m)
			callUUID = m["uuid"].(string)
			prompt := m["parentUuid"].(string)
			resultUUID := uuidAt(t, p, result)
			if !has(findings(t, root), validate.ParentMissing, p, result) {
				t.Fatalf("setup: no parent-missing on line %d", result)
			}
			var want []string
			for _, u := range before {
				if u != callUUID && u != resultUUID {
					want = append(want, u)
				}
			}
			reasons := repairAll(t, root)
			if got := loaded(t, p); !slices.Equal(got, want) {
				t.Errorf("the resume loads %d entries, want %d (those before the damage but the torn call and its result):\n got %q\nwant %q\nreasons:\n%s", len(got), len(want), got, want, reasons)
			}
			// The result, where it stays (off the chain a resume loads),
			// follows the entry before the call.
			for _, l := range damage.Lines(t, p) {
				var e map[string]any
				if json.Unmarshal(l, &e) == nil && e["uuid"] == resultUUID && e["parentUuid"] != prompt {
					t.Errorf("the result's parentUuid is %v, want %s (the entry before the torn call)", e["parentUuid"], prompt)
				}
			}
			if !strings.Contains(reasons, "entries between are of other chains") {
				t.Errorf("no re-link over the sidechain in the reasons:\n%s", reasons)
			}
		})
	}
}

// TestRelinkOverOtherRoot: entries of another root written between the
// line that is not JSON and the child (another conversation of the file)
// are passed over too, and the child is linked to the entry before the
// removed line; an entry of the child's own chain between them (its root
// written before the removed line) is not, and the missing parent is left
// for --aggressive.
func TestRelinkOverOtherRoot(t *testing.T) {
	const v = "2.1.120"
	for _, c := range []struct {
		name, between, want string
	}{
		{"another root", rvUser(rvSessA, "b0", "", "2026-01-01T00:00:02.500Z", v), "a1"},
		{"own chain", rvAsst(rvSessA, "b1", "a1", "2026-01-01T00:00:02.500Z", v), "ghost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := rvLines(
				rvUser(rvSessA, "a0", "", "2026-01-01T00:00:01.000Z", v),
				rvAsst(rvSessA, "a1", "a0", "2026-01-01T00:00:01.500Z", v),
				`this line is not JSON`, // it held "ghost", a1's child
				c.between,
				rvUser(rvSessA, "c1", "ghost", "2026-01-01T00:00:03.000Z", v),
			)
			root := rvStore(t, map[string]string{rvSessA + ".jsonl": a})
			pa := rvPath(root, rvSessA+".jsonl")
			apply(t, rvPlan(t, repair.Options{Root: root}), t.TempDir())
			if p, _ := rvParentOf(t, pa, "c1"); p != c.want {
				t.Errorf("c1's parentUuid is now %v, want %s", p, c.want)
			}
		})
	}
}
