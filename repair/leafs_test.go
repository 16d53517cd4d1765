package repair_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// TestLeafOverRemoved: every repair that removes an entry points the
// leafUuids naming it (a last-prompt's: the entry 2.1.120 and later resume
// from; a summary's) at its nearest ancestor that stays, the entry its
// children are linked to. Claude Code ignores a leafUuid that names no
// entry and resumes from the message written last (measured with 2.1.205
// and 2.1.332, -r and -c): after a rewind, another branch. After the
// repair no leaf-missing is left and the leafUuid names the removed
// entry's parent.
func TestLeafOverRemoved(t *testing.T) {
	v20 := func(root string) string {
		return filepath.Join(root, "projects", "-home-dev-work-alpha", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7.jsonl")
	}
	v332 := func(root string) string {
		return filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c.jsonl")
	}
	lastEntry := func(t *testing.T, p string) int {
		return damage.FindLast(t, p, func(m map[string]any) bool { return m["uuid"] != nil })
	}
	cases := []struct {
		name, version, leaf string
		file                func(root string) string
		code                validate.Code
		aggressive          bool
		// pick prepares the file and returns the line of the entry the
		// repair removes; damage (after the leaf is named, the entry one
		// line further down) makes the repair remove it.
		pick   func(t *testing.T, p string) int
		damage func(t *testing.T, p string, n int)
	}{
		{"blank reply, 2.0.x", "2.0.77", "summary", v20, validate.TextBlank, false,
			func(t *testing.T, p string) int { return damage.FindLast(t, p, damage.IsType("assistant")) },
			func(t *testing.T, p string, n int) {
				damage.EditLine(t, p, n, func(m map[string]any) {
					m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": ""}}
				})
			}},
		{"tool result answering nothing, 2.0.x", "2.0.77", "summary", v20, validate.ToolUseMiss, false,
			func(t *testing.T, p string) int { return damage.FindLast(t, p, damage.HasBlock("tool_result")) },
			func(t *testing.T, p string, n int) {
				damage.EditLine(t, p, n, func(m map[string]any) {
					for _, b := range damage.Blocks(m) {
						b.(map[string]any)["tool_use_id"] = "toolu_nobody"
					}
				})
			}},
		{"unsigned thinking alone", damage.V88, "last-prompt", damage.MainFile, validate.ThinkingUnsigned, false,
			func(t *testing.T, p string) int { return damage.FindLast(t, p, damage.IsType("assistant")) },
			func(t *testing.T, p string, n int) {
				damage.EditLine(t, p, n, func(m map[string]any) {
					m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "thinking", "thinking": "hm", "signature": ""}}
				})
			}},
		{"malformed attachment", "2.1.332", "last-prompt", v332, validate.AttachMalformed, false,
			func(t *testing.T, p string) int { return damage.FindLast(t, p, damage.IsType("attachment")) },
			func(t *testing.T, p string, n int) {
				damage.EditLine(t, p, n, func(m map[string]any) { m["attachment"] = "x" })
			}},
		{"progress entry, --aggressive", damage.V88, "last-prompt", damage.MainFile, "", true,
			func(t *testing.T, p string) int {
				return damage.ProgressBefore(t, p, damage.FindLast(t, p, damage.IsType("assistant")))
			}, nil},
		{"torn last line", damage.V88, "last-prompt", damage.MainFile, validate.LineTorn, false,
			func(t *testing.T, p string) int {
				// The file as it stood while its last entry was written.
				n := lastEntry(t, p)
				damage.WriteLines(t, p, damage.Lines(t, p)[:n], true)
				return n
			},
			func(t *testing.T, p string, n int) { damage.TearAfterUUID(t, p, n) }},
		{"torn line whose child is re-linked, 1.0.x", damage.V51, "summary", damage.V51File, validate.JSONInvalid, false,
			func(t *testing.T, p string) int {
				// The line TearTaskCall tears, found on a copy.
				cp := filepath.Join(t.TempDir(), "copy.jsonl")
				damage.WriteLines(t, cp, damage.Lines(t, p), true)
				n, _ := damage.TearTaskCall(t, cp)
				return n
			},
			func(t *testing.T, p string, n int) {
				if got, _ := damage.TearTaskCall(t, p); got != n {
					t.Fatalf("TearTaskCall tore line %d, want %d", got, n)
				}
			}},
		{"torn record glued to the next", damage.V88, "last-prompt", damage.MainFile, validate.JSONInvalid, false,
			func(t *testing.T, p string) int { return damage.FindLast(t, p, damage.IsType("assistant")) },
			func(t *testing.T, p string, n int) {
				damage.TearAfterUUID(t, p, n)
				ls := damage.Lines(t, p)
				ls[n-1] = append(ls[n-1], ls[n]...)
				damage.WriteLines(t, p, append(ls[:n], ls[n+1:]...), true)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := damage.CopyStore(t, c.version)
			p := c.file(root)
			n := c.pick(t, p)
			uuid, parent := damage.NameAsLeaf(t, p, n, c.leaf)
			if parent == "" {
				t.Fatalf("%s:%d: the entry is a root", p, n)
			}
			if c.damage != nil {
				c.damage(t, p, n+1)
			}
			age(t, root)
			if c.code != "" && !has(findings(t, root), c.code, p, 0) {
				t.Fatalf("validate does not report %s", c.code)
			}
			cs, err := repair.Plan(repair.Options{Root: root, Aggressive: c.aggressive})
			if err != nil {
				t.Fatal(err)
			}
			for _, note := range cs.Notes {
				if bytes.Contains([]byte(note), []byte(validate.LeafMissing)) {
					t.Errorf("plan note: %s", note)
				}
			}
			apply(t, cs, t.TempDir())
			for _, f := range findings(t, root).Findings {
				if f.Path == p && f.Code == validate.LeafMissing {
					t.Errorf("after repair: line %d %s %s", f.Line, f.Code, f.Message)
				}
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte(`"uuid":"`+uuid+`"`)) {
				t.Fatalf("the entry %s is still in the file: the repair did not remove it", uuid)
			}
			// The record NameAsLeaf wrote (the repair may add lines
			// before it).
			var m map[string]any
			for _, l := range damage.Lines(t, p) {
				var r map[string]any
				if json.Unmarshal(l, &r) == nil && r["type"] == c.leaf && (r["summary"] == damage.LeafText(uuid) || r["lastPrompt"] == damage.LeafText(uuid)) {
					m = r
				}
			}
			if m == nil {
				t.Fatalf("the %s naming %s is gone", c.leaf, uuid)
			}
			if m["leafUuid"] != parent {
				t.Errorf("leafUuid %v, want %s, the removed entry's parent", m["leafUuid"], parent)
			}
			if !bytes.Contains(raw, []byte(`"uuid":"`+parent+`"`)) {
				t.Errorf("the parent %s is not in the file", parent)
			}
		})
	}
}

// TestLeafOverTwice: when the repair removes an entry named as a leaf and
// its parent too, in either order, the leafUuid ends on the nearest
// ancestor that stays; a removed root has none, and its leaf-missing is
// listed under the plan.
func TestLeafOverTwice(t *testing.T) {
	const sid = "5e55a0de-0000-4000-8000-000000000002"
	u := func(n int) string { return "11111111-0000-4000-8000-00000000000" + string(rune('0'+n)) }
	entry := func(version, typ, uuid, parent string, content any) []byte {
		m := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/p", "sessionId": sid,
			"version": version, "type": typ, "uuid": uuid, "timestamp": "2026-11-20T10:00:0" + uuid[len(uuid)-1:] + ".000Z"}
		if parent != "" {
			m["parentUuid"] = parent
		}
		if typ == "user" {
			m["message"] = map[string]any{"role": "user", "content": content}
		} else {
			m["message"] = map[string]any{"id": "msg_" + uuid[len(uuid)-1:], "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content": content, "stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
		}
		b, _ := json.Marshal(m)
		return b
	}
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	cases := []struct {
		name, version, leaf string
		prompt, reply       any    // content of u(3) and u(4)
		named               string // the entry the leafUuid names
		want                string // where it ends ("" : left, listed under the plan)
	}{
		{"prompt removed first, 2.0.x", "2.0.77", "summary", "  ", text(""), u(4), u(2)},
		{"reply removed first", "2.1.88", "last-prompt", "  ", []any{map[string]any{"type": "thinking", "thinking": "hm", "signature": ""}}, u(4), u(2)},
		{"root removed", "2.1.88", "last-prompt", "next", text("answer"), u(1), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			p := filepath.Join(root, "projects", "-p", sid+".jsonl")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			first := "first prompt"
			if c.want == "" {
				first = " "
			}
			ls := [][]byte{
				entry(c.version, "user", u(1), "", first),
				entry(c.version, "assistant", u(2), u(1), text("first answer")),
				entry(c.version, "user", u(3), u(2), c.prompt),
				entry(c.version, "assistant", u(4), u(3), c.reply),
			}
			meta, _ := json.Marshal(map[string]any{"type": c.leaf, "leafUuid": c.named, "summary": "s", "lastPrompt": "p", "sessionId": sid})
			damage.WriteLines(t, p, append(ls, meta), true)
			age(t, root)
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			noted := false
			for _, note := range cs.Notes {
				noted = noted || bytes.Contains([]byte(note), []byte("1 "+validate.LeafMissing))
			}
			if noted != (c.want == "") {
				t.Errorf("plan notes %q: leaf-missing listed %v, want %v", cs.Notes, noted, c.want == "")
			}
			apply(t, cs, t.TempDir())
			out := damage.Lines(t, p)
			var m map[string]any
			if err := json.Unmarshal(out[len(out)-1], &m); err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want = c.named
			}
			if m["leafUuid"] != want {
				t.Errorf("leafUuid %v, want %s", m["leafUuid"], want)
			}
			if c.want != "" && has(findings(t, root), validate.LeafMissing, p, 0) {
				t.Errorf("leaf-missing after the repair")
			}
		})
	}
}
