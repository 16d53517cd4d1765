// Package damage damages copies of the corpus stores in every way cfix
// validate detects. The validate and repair tests share it: each case says
// which finding it causes, at which file and line.
package damage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/validate"
)

// Corpus is the folder of the corpus stores.
func Corpus() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
}

// CorpusVersions lists the versions that have a corpus store, oldest
// first, so that a test looping over them takes a new store as it comes.
func CorpusVersions(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(Corpus())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no corpus store in %s", Corpus())
	}
	sort.Slice(out, func(i, j int) bool { return session.VersionLess(out[i], out[j]) })
	return out
}

// CopyStore copies the .claude folder of a corpus version into a temp dir.
func CopyStore(t testing.TB, version string) string {
	t.Helper()
	return CopyStoreTo(t, version, t.TempDir())
}

// CopyStoreTo copies the .claude folder of a corpus version into dir.
func CopyStoreTo(t testing.TB, version, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, ".claude")
	src := filepath.Join(Corpus(), version, ".claude")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return dst
}

// Lines reads a file as lines without their terminators.
func Lines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.Split(b, []byte("\n"))
}

// WriteLines writes lines joined by newlines, with a final one if final.
func WriteLines(t testing.TB, path string, ls [][]byte, final bool) {
	t.Helper()
	b := bytes.Join(ls, []byte("\n"))
	if final {
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// FindLine returns the 1-based number of the first line for which match
// returns true on the decoded entry.
func FindLine(t testing.TB, path string, match func(m map[string]any) bool) int {
	t.Helper()
	for i, l := range Lines(t, path) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && match(m) {
			return i + 1
		}
	}
	t.Fatalf("%s: no matching line", path)
	return 0
}

// StripAttachment deletes field of the last attachment entry of type typ
// in path (as a tool that slims transcripts by dropping file contents
// does) and returns path and its line.
func StripAttachment(t testing.TB, path, typ, field string) (string, int) {
	t.Helper()
	n := FindLast(t, path, attachmentOf(typ))
	EditLine(t, path, n, func(m map[string]any) { delete(m["attachment"].(map[string]any), field) })
	return path, n
}

// attachmentOf matches an attachment entry whose attachment is of type typ.
func attachmentOf(typ string) func(m map[string]any) bool {
	return func(m map[string]any) bool {
		a, _ := m["attachment"].(map[string]any)
		return m["type"] == "attachment" && a != nil && a["type"] == typ
	}
}

// FindLast returns the 1-based number of the last matching line.
func FindLast(t testing.TB, path string, match func(m map[string]any) bool) int {
	t.Helper()
	ls := Lines(t, path)
	for i := len(ls) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal(ls[i], &m) == nil && match(m) {
			return i + 1
		}
	}
	t.Fatalf("%s: no matching line", path)
	return 0
}

// addThinking puts a thinking block first in the last assistant entry,
// which is on the chain a resume loads.
func addThinking(t *testing.T, root, thinking, sig string) (string, int) {
	p := MainFile(root)
	n := FindLast(t, p, IsType("assistant"))
	EditLine(t, p, n, func(m map[string]any) {
		msg := m["message"].(map[string]any)
		msg["content"] = append([]any{map[string]any{"type": "thinking", "thinking": thinking, "signature": sig}}, Blocks(m)...)
	})
	return p, n
}

// orphanLastResult makes the last tool result of the file at p answer a
// tool_use that is nowhere, and returns p and its line.
func orphanLastResult(t *testing.T, p string) (string, int) {
	res := FindLast(t, p, HasBlock("tool_result"))
	EditLine(t, p, res, func(m map[string]any) {
		for _, b := range Blocks(m) {
			if bm := b.(map[string]any); bm["type"] == "tool_result" {
				bm["tool_use_id"] = "toolu_nobody"
			}
		}
	})
	return p, res
}

// The 1.0.x corpus stores: 1.0.128's main session (compacted, a Task
// call with its sidechain inline before the compaction) and 1.0.51's
// session whose chain a resume loads holds a Task call with its sidechain
// inline, between the call and its result.
const (
	V128        = "1.0.128"
	V128Session = "e08a945a-5a3e-434e-8f69-9e8721080cda"
	V51         = "1.0.51"
	V51Session  = "2082941e-3c50-4cab-b968-290519d6ca6b"
)

// V128File returns the main transcript of the 1.0.128 store at root.
func V128File(root string) string {
	return filepath.Join(root, "projects", "-home-dev-work-alpha", V128Session+".jsonl")
}

// V51File returns the 1.0.51 transcript with a Task call on its chain.
func V51File(root string) string {
	return filepath.Join(root, "projects", "-home-dev-work-alpha", V51Session+".jsonl")
}

// Cycle points the entry on line n of path at its first child (the first
// entry written after it that names it as parent): a parentUuid cycle of
// two whose wrong link is line n's. It returns n.
func Cycle(t testing.TB, path string, n int) int {
	t.Helper()
	var uuid string
	EditLine(t, path, n, func(m map[string]any) { uuid, _ = m["uuid"].(string) })
	var child string
	for _, l := range Lines(t, path)[n:] {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["parentUuid"] == uuid && uuid != "" {
			child, _ = m["uuid"].(string)
			break
		}
	}
	if child == "" {
		t.Fatalf("%s:%d: no child written after the entry", path, n)
	}
	EditLine(t, path, n, func(m map[string]any) { m["parentUuid"] = child })
	return n
}

// TearTaskCall cuts in half the line of the last Task tool_use of path
// (of the main chain) whose sidechain entries (isSidechain, the Task's
// subagent, as 1.0.x writes them inline) sit between it and its result,
// keeping the line's newline: a line that is not JSON in mid-file. It
// returns the call's line and its result's.
func TearTaskCall(t testing.TB, path string) (call, result int) {
	t.Helper()
	ls := Lines(t, path)
	for n := len(ls); n >= 1; n-- {
		var m map[string]any
		if json.Unmarshal(ls[n-1], &m) != nil || m["isSidechain"] == true {
			continue
		}
		var id string
		for _, b := range Blocks(m) {
			if bm, _ := b.(map[string]any); bm["type"] == "tool_use" && bm["name"] == "Task" {
				id, _ = bm["id"].(string)
			}
		}
		if id == "" || n >= len(ls) {
			continue
		}
		var next map[string]any
		if json.Unmarshal(ls[n], &next) != nil || next["isSidechain"] != true {
			continue
		}
		for k := n + 1; k < len(ls); k++ {
			var r map[string]any
			if json.Unmarshal(ls[k], &r) != nil {
				continue
			}
			for _, b := range Blocks(r) {
				if bm, _ := b.(map[string]any); bm["type"] == "tool_result" && bm["tool_use_id"] == id {
					result = k + 1
				}
			}
			if result > 0 {
				break
			}
		}
		if result == 0 {
			continue
		}
		ls[n-1] = ls[n-1][:len(ls[n-1])/2]
		WriteLines(t, path, ls, true)
		return n, result
	}
	t.Fatalf("%s: no Task call with its sidechain written before its result", path)
	return 0, 0
}

// EditLine decodes line n, lets edit change it, and writes it back.
func EditLine(t testing.TB, path string, n int, edit func(m map[string]any)) {
	t.Helper()
	ls := Lines(t, path)
	var m map[string]any
	if err := json.Unmarshal(ls[n-1], &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ls[n-1] = b
	WriteLines(t, path, ls, true)
}

// Blocks returns the content blocks of an entry.
func Blocks(m map[string]any) []any {
	msg, _ := m["message"].(map[string]any)
	c, _ := msg["content"].([]any)
	return c
}

// HasBlock matches entries with a content block of type typ.
func HasBlock(typ string) func(m map[string]any) bool {
	return func(m map[string]any) bool {
		for _, b := range Blocks(m) {
			if bm, _ := b.(map[string]any); bm["type"] == typ {
				return true
			}
		}
		return false
	}
}

// IsType matches entries of type typ.
func IsType(typ string) func(m map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// The 2.1.88 store: hierarchical subagents, .meta.json, a compaction agent.
const (
	V88        = "2.1.88"
	V88Project = "-home-dev-work-alpha"
	V88Session = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
)

// MainFile returns the main transcript of the 2.1.88 store at root.
func MainFile(root string) string {
	return filepath.Join(root, "projects", V88Project, V88Session+".jsonl")
}

// Case is one way to damage a store.
type Case struct {
	Name     string
	Version  string // the corpus store damaged
	Code     validate.Code
	Severity validate.Severity
	// Damage changes the store and returns the path and line the finding
	// must name (line 0: any line; a negative line: the finding must NOT
	// appear at -line).
	Damage func(t *testing.T, root string) (string, int)
}

// Cases are the damages validate must find.
var Cases = []Case{
	{"invalid json", V88, validate.JSONInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls[4] = []byte(`{"type":"user","uuid":oops}`)
		WriteLines(t, p, ls, true)
		return p, 5
	}},
	{"torn last line", V88, validate.LineTorn, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		last := ls[len(ls)-1]
		ls[len(ls)-1] = last[:len(last)/2]
		WriteLines(t, p, ls, false)
		return p, len(ls)
	}},
	{"no final newline", V88, validate.NoFinalNewline, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		WriteLines(t, p, ls, false)
		return p, len(ls)
	}},
	{"glued records", V88, validate.LineGlued, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		glued := append(append([]byte{}, ls[9]...), ls[10]...)
		ls = append(append(ls[:9:9], glued), ls[11:]...)
		WriteLines(t, p, ls, true)
		return p, 10
	}},
	{"NUL bytes", V88, validate.NULBytes, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls[6] = append(bytes.Repeat([]byte{0}, 64), ls[6]...)
		WriteLines(t, p, ls, true)
		return p, 7
	}},
	{"NUL run alone", V88, validate.NULBytes, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls = append(ls, bytes.Repeat([]byte{0}, 4096))
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"invalid utf-8", V88, validate.UTF8Invalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("user"))
		ls := Lines(t, p)
		ls[n-1] = bytes.Replace(ls[n-1], []byte(`"type":"user"`), []byte("\"type\":\"user\",\"x\":\"\xc3\x28\""), 1)
		WriteLines(t, p, ls, true)
		return p, n
	}},
	{"lone surrogate", V88, validate.SurrogateLone, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		ls := Lines(t, p)
		ls[n-1] = bytes.Replace(ls[n-1], []byte(`"type":"assistant"`), []byte(`"type":"assistant","x":"cut \ud83d"`), 1)
		WriteLines(t, p, ls, true)
		return p, n
	}},
	{"empty line", V88, validate.LineEmpty, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls = append(ls[:3:3], append([][]byte{{}}, ls[3:]...)...)
		WriteLines(t, p, ls, true)
		return p, 4
	}},
	{"wrong field type", V88, validate.SchemaInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("user"))
		EditLine(t, p, n, func(m map[string]any) { m["isSidechain"] = "no" })
		return p, n
	}},
	{"missing required field", V88, validate.SchemaInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		EditLine(t, p, n, func(m map[string]any) { delete(m, "sessionId") })
		return p, n
	}},
	{"bad content block", V88, validate.SchemaInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, HasBlock("tool_use"))
		EditLine(t, p, n, func(m map[string]any) {
			for _, b := range Blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_use" {
					delete(bm, "name")
				}
			}
		})
		return p, n
	}},
	{"unknown type", V88, validate.TypeUnknown, validate.Notice, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls = append(ls, []byte(`{"type":"future-thing","sessionId":"`+V88Session+`"}`))
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"not an object", V88, validate.EntryNotObject, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		ls := Lines(t, p)
		ls = append(ls, []byte(`[1,2,3]`))
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"duplicate identical", V88, validate.UUIDDuplicate, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		ls := Lines(t, p)
		ls = append(ls, ls[n-1])
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"duplicate differing", V88, validate.UUIDConflict, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		ls := Lines(t, p)
		other := bytes.Replace(ls[n-1], []byte(`"type":"assistant"`), []byte(`"type":"assistant","edited":true`), 1)
		ls = append(ls, other)
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"parent missing", V88, validate.ParentMissing, validate.Error, func(t *testing.T, root string) (string, int) {
		// The last tool result: on the chain a resume loads (after the
		// last compaction).
		p := MainFile(root)
		n := FindLast(t, p, HasBlock("tool_result"))
		EditLine(t, p, n, func(m map[string]any) { m["parentUuid"] = "00000000-0000-4000-8000-000000000000" })
		return p, n
	}},
	{"self parent", V88, validate.ParentSelf, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		EditLine(t, p, n, func(m map[string]any) { m["parentUuid"] = m["uuid"] })
		return p, n
	}},
	{"cycle", V88, validate.ChainCycle, validate.Error, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		return p, Cycle(t, p, FindLine(t, p, IsType("assistant")))
	}},
	{"cycle, 1.0.x", V128, validate.ChainCycle, validate.Error, func(t *testing.T, root string) (string, int) {
		// On the chain a resume loads: the last tool result points at the
		// answer written after it.
		p := V128File(root)
		return p, Cycle(t, p, FindLast(t, p, HasBlock("tool_result")))
	}},
	{"torn Task call before its sidechain, 1.0.x", V51, validate.JSONInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := V51File(root)
		call, _ := TearTaskCall(t, p)
		return p, call
	}},
	{"leafUuid nowhere", "2.1.330", validate.LeafMissing, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-delta", "fb63f81e-6720-45fb-a12f-9f5cf3f5a117.jsonl")
		n := FindLine(t, p, IsType("last-prompt"))
		EditLine(t, p, n, func(m map[string]any) { m["leafUuid"] = "11111111-1111-4111-8111-111111111111" })
		return p, n
	}},
	{"forks off the resumed chain", V88, validate.ChainForks, validate.Notice, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		ls := Lines(t, p)
		// A retry: a copy of an assistant entry with a new uuid and an
		// older timestamp, on the same parent.
		fork := bytes.Replace(ls[n-1], []byte(`"uuid":"`), []byte(`"uuid":"f0`), 1)
		fork = bytes.Replace(fork, []byte(`"timestamp":"2`), []byte(`"timestamp":"1`), 1)
		ls = append(ls, fork)
		WriteLines(t, p, ls, true)
		// The notice sits on the resumed leaf.
		return p, 0
	}},
	{"tool_use without result", V88, validate.ToolResultMiss, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		use := FindLast(t, p, HasBlock("tool_use"))
		res := FindLast(t, p, HasBlock("tool_result"))
		// Drop the result's block, keeping the entry (as a text turn).
		EditLine(t, p, res, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "gone"}}
		})
		return p, use
	}},
	{"tool_result without use", V88, validate.ToolUseMiss, validate.Warning, func(t *testing.T, root string) (string, int) {
		return orphanLastResult(t, MainFile(root))
	}},
	{"tool_result without use, 2.0.x", "2.0.77", validate.ToolUseMiss, validate.Error, func(t *testing.T, root string) (string, int) {
		// 1.0.x and 2.0.x send an orphan result: the API answers 400.
		return orphanLastResult(t, filepath.Join(root, "projects", "-home-dev-work-alpha", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7.jsonl"))
	}},
	{"duplicate tool_use id", V88, validate.ToolUseDuplicate, validate.Error, func(t *testing.T, root string) (string, int) {
		// A second assistant entry on the resumed chain repeats the last
		// tool_use block.
		p := MainFile(root)
		n := FindLast(t, p, HasBlock("tool_use"))
		var use any
		EditLine(t, p, n, func(m map[string]any) {
			for _, b := range Blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_use" {
					use = bm
				}
			}
		})
		last := FindLast(t, p, IsType("assistant"))
		EditLine(t, p, last, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = append(Blocks(m), use)
		})
		return p, last
	}},
	{"unsigned thinking", V88, validate.ThinkingUnsigned, validate.Error, func(t *testing.T, root string) (string, int) {
		return addThinking(t, root, "let me think", "")
	}},
	{"empty thinking", V88, validate.ThinkingEmpty, validate.Notice, func(t *testing.T, root string) (string, int) {
		return addThinking(t, root, "", "c2lnbmF0dXJl")
	}},
	{"thinking before compaction is not sent", V88, validate.ThinkingUnsigned, validate.Error, func(t *testing.T, root string) (string, int) {
		// Damage before the compact boundary is off the resumed chain: the
		// finding must not appear (line -1 matches nothing; see below).
		p := MainFile(root)
		n := FindLine(t, p, HasBlock("thinking"))
		EditLine(t, p, n, func(m map[string]any) {
			for _, b := range Blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "thinking" {
					bm["signature"] = ""
				}
			}
		})
		return p, -n
	}},
	{"thinking of a third-party model", V88, validate.ThinkingForeign, validate.Notice, func(t *testing.T, root string) (string, int) {
		// Sessions run on qwen or minimax through a compatible endpoint:
		// their thinking is never signed.
		p, n := addThinking(t, root, "let me think", "")
		EditLine(t, p, n, func(m map[string]any) { m["message"].(map[string]any)["model"] = "qwen3-coder-plus" })
		return p, n
	}},
	{"unanswered tool call at the end", V88, validate.ToolResultMiss, validate.Warning, func(t *testing.T, root string) (string, int) {
		// The session stopped mid-tool: the last entry is the call.
		p := MainFile(root)
		last := FindLast(t, p, IsType("assistant"))
		var uuid string
		EditLine(t, p, last, func(m map[string]any) {
			uuid = m["uuid"].(string)
			m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "tool_use", "id": "toolu_stopped", "name": "Bash", "input": map[string]any{"command": "ls"}}}
		})
		ls := Lines(t, p)
		keep := ls[:0]
		for _, l := range ls {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil && m["parentUuid"] == uuid {
				continue // what came after the call goes
			}
			keep = append(keep, l)
		}
		WriteLines(t, p, keep, true)
		return p, last
	}},
	{"parent in a sibling file", V88, validate.ParentElsewhere, validate.Notice, func(t *testing.T, root string) (string, int) {
		// A session continued from another file of the project: its first
		// entry's parent is the last entry there (2.0.x resumes so).
		p := MainFile(root)
		first := FindLine(t, p, IsType("user"))
		var uuid string
		EditLine(t, p, first, func(m map[string]any) {
			m["parentUuid"] = "5ab1e000-0000-4000-8000-000000000001"
			uuid = m["sessionId"].(string)
		})
		sib := filepath.Join(filepath.Dir(p), "5ab1e000-0000-4000-8000-0000000000aa.jsonl")
		line := fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"before"},"uuid":"5ab1e000-0000-4000-8000-000000000001","timestamp":"2025-01-01T00:00:00.000Z","sessionId":%q,"version":"2.1.88","cwd":"/home/dev/work/alpha","userType":"external"}`, "5ab1e000-0000-4000-8000-0000000000aa")
		_ = uuid
		if err := os.WriteFile(sib, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p, first
	}},
	{"not a transcript at all", V88, validate.FileNotJSONL, validate.Warning, func(t *testing.T, root string) (string, int) {
		// Another program's output written over a session file: one
		// finding, not one per line.
		p := MainFile(root)
		var b []byte
		for i := 0; i < 40; i++ {
			b = append(b, fmt.Sprintf("build step %d: ok\n", i)...)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, 1
	}},
	{"whitespace text block", V88, validate.TextBlank, validate.Error, func(t *testing.T, root string) (string, int) {
		// A "\n\n" block before the text of the last reply: 2.1.88 sends
		// it (the API answers 400).
		p := MainFile(root)
		n := FindLast(t, p, IsType("assistant"))
		EditLine(t, p, n, func(m map[string]any) {
			msg := m["message"].(map[string]any)
			msg["content"] = append([]any{map[string]any{"type": "text", "text": "\n\n"}}, Blocks(m)...)
		})
		return p, n
	}},
	{"whitespace-only reply, 2.0.x", "2.0.77", validate.TextBlank, validate.Error, func(t *testing.T, root string) (string, int) {
		// 2.1.31 and older send an assistant entry holding only blank text.
		p := filepath.Join(root, "projects", "-home-dev-work-alpha", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7.jsonl")
		n := FindLast(t, p, IsType("assistant"))
		EditLine(t, p, n, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": ""}}
		})
		return p, n
	}},
	{"whitespace-only reply is not sent", V88, validate.TextBlank, validate.Error, func(t *testing.T, root string) (string, int) {
		// 2.1.32 and later leave such an entry out themselves: no finding.
		p := MainFile(root)
		n := FindLast(t, p, IsType("assistant"))
		EditLine(t, p, n, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "\n\n"}}
		})
		return p, -n
	}},
	{"server tool result split", V88, validate.ServerToolSplit, validate.Error, func(t *testing.T, root string) (string, int) {
		// The last reply starts with a web search whose result a slash
		// command's output (sent as a message of its own by 2.1.63 and
		// later) separates from its call.
		p := MainFile(root)
		n := FindLast(t, p, IsType("assistant"))
		return p, splitServerTool(t, p, n, func(m map[string]any) {
			m["type"], m["subtype"], m["level"] = "system", "local_command", "info"
			m["content"] = "<local-command-stdout>Session renamed</local-command-stdout>"
			delete(m, "message")
		})
	}},
	{"server tool result after a compaction", V88, validate.ServerToolSplit, validate.Error, func(t *testing.T, root string) (string, int) {
		// The call was written before the compact boundary, its result
		// after the summary: the resume loads the result alone.
		p := MainFile(root)
		b := FindLine(t, p, func(m map[string]any) bool { return m["subtype"] == "compact_boundary" })
		ls := Lines(t, p)
		var bm, sm map[string]any
		json.Unmarshal(ls[b-1], &bm)
		json.Unmarshal(ls[b], &sm) // the summary, right after the boundary
		call := entryLike(bm, "5e7e0000-0000-4000-8000-0000000000c1", bm["logicalParentUuid"], "msg_damage_compact",
			map[string]any{"type": "server_tool_use", "id": "srvtoolu_damage_c", "name": "web_search", "input": map[string]any{"query": "q"}})
		res := entryLike(sm, "5e7e0000-0000-4000-8000-0000000000c2", sm["uuid"], "msg_damage_compact",
			map[string]any{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_damage_c", "content": []any{}})
		bm["logicalParentUuid"] = call["uuid"]
		var next map[string]any
		json.Unmarshal(ls[b+1], &next)
		next["parentUuid"] = res["uuid"]
		out := append([][]byte{}, ls[:b-1]...)
		out = append(out, marshal(t, call), marshal(t, bm), ls[b], marshal(t, res), marshal(t, next))
		out = append(out, ls[b+2:]...)
		WriteLines(t, p, out, true)
		return p, b + 3 // the call went in before the boundary
	}},
	{"file attachment without content, 2.1.205", "2.1.205", validate.AttachMalformed, validate.Error, func(t *testing.T, root string) (string, int) {
		// 2.1.100 to 2.1.279 read a file attachment's content unguarded:
		// the resume throws and exits 1 before any request.
		return StripAttachment(t, filepath.Join(root, "projects", "-home-dev-work-alpha", "b203baf4-cb67-4029-b6e2-337cb8159aff.jsonl"), "file", "content")
	}},
	{"file attachment without content, 2.1.332", "2.1.332", validate.AttachMalformed, validate.Warning, func(t *testing.T, root string) (string, int) {
		// 2.1.280 and later leave such an attachment out: a warning.
		return StripAttachment(t, filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c.jsonl"), "file", "content")
	}},
	{"hook output parsed into an object, 2.1.332", "2.1.332", validate.AttachMalformed, validate.Error, func(t *testing.T, root string) (string, int) {
		// Every version from 2.1.100 trims a hook_success's stdout: an
		// object there (a hook's JSON output decoded by some tool) throws.
		p := filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c.jsonl")
		n := FindLast(t, p, attachmentOf("date"))
		EditLine(t, p, n, func(m map[string]any) {
			m["attachment"] = map[string]any{"type": "hook_success", "hookName": "SessionStart:resume", "hookEvent": "SessionStart",
				"toolUseID": "SessionStart", "content": "", "stdout": map[string]any{"continue": true}, "stderr": "", "exitCode": 0}
		})
		return p, n
	}},
	{"attachment null, 2.1.205", "2.1.205", validate.AttachMalformed, validate.Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-alpha", "b203baf4-cb67-4029-b6e2-337cb8159aff.jsonl")
		n := FindLast(t, p, attachmentOf("skill_listing"))
		EditLine(t, p, n, func(m map[string]any) { m["attachment"] = nil })
		return p, n
	}},
	{"escaped NUL in a tool result", V88, validate.NULEscape, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := MainFile(root)
		n := FindLast(t, p, HasBlock("tool_result"))
		EditLine(t, p, n, func(m map[string]any) {
			for _, b := range Blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_result" {
					bm["content"] = "ELF\x00\x01binary" // written as \u0000
				}
			}
		})
		return p, n
	}},
	{"entry replayed by a resume", V88, validate.UUIDReplayed, validate.Warning, func(t *testing.T, root string) (string, int) {
		// The same entry again, with the branch and version of the
		// session that wrote it again.
		p := MainFile(root)
		n := FindLine(t, p, IsType("assistant"))
		ls := Lines(t, p)
		var m map[string]any
		json.Unmarshal(ls[n-1], &m)
		m["gitBranch"], m["version"] = "feature", "2.1.90"
		ls = append(ls, marshal(t, m))
		WriteLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"file-history snapshots naming messages", V88, validate.UUIDConflict, validate.Warning, func(t *testing.T, root string) (string, int) {
		// Not damage (issue 10; #36583, #24304): a file-history-snapshot's
		// messageId is the uuid of the user message it belongs to, and a
		// resume re-records every snapshot at the end of the file. No
		// client loads it as a message; see SnapshotsNamingMessages. The
		// "collision" those issues name must not be reported.
		p, _, run := SnapshotsNamingMessages(t, root)
		return p, -run
	}},
	{"name not a uuid", V88, validate.SessionName, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
		np := filepath.Join(filepath.Dir(p), "my session.jsonl")
		if err := os.Rename(p, np); err != nil {
			t.Fatal(err)
		}
		return np, 0
	}},
	{"0-byte session", V88, validate.SessionEmpty, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", V88Project, "0b0b0b0b-0000-4000-8000-000000000000.jsonl")
		WriteLines(t, p, nil, false)
		return p, 0
	}},
	{"stub", V88, validate.SessionStub, validate.Warning, func(t *testing.T, root string) (string, int) {
		// What older versions leave when resuming from elsewhere: a file
		// holding only a summary whose leafUuid lives in another session.
		var leaf any
		EditLine(t, MainFile(root), FindLast(t, MainFile(root), IsType("assistant")), func(m map[string]any) { leaf = m["uuid"] })
		p := filepath.Join(root, "projects", V88Project, "55555555-5555-4555-8555-555555555555.jsonl")
		b, _ := json.Marshal(map[string]any{"type": "summary", "summary": "a title", "leafUuid": leaf})
		WriteLines(t, p, [][]byte{b}, true)
		return p, 0
	}},
	{"session in two folders", V88, validate.SessionIDDup, validate.Warning, func(t *testing.T, root string) (string, int) {
		dir := filepath.Join(root, "projects", "-home-dev-work-elsewhere")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, V88Session+".jsonl")
		b, _ := os.ReadFile(MainFile(root))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, 0
	}},
	{"cwd of another folder", V88, validate.CWDMismatch, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
		b, _ := os.ReadFile(p)
		b = bytes.ReplaceAll(b, []byte(`"cwd":"/home/dev/work/beta.dir/sub"`), []byte(`"cwd":"/home/dev/work/other"`))
		os.WriteFile(p, b, 0o600)
		return p, FindLine(t, p, func(m map[string]any) bool { return m["cwd"] != nil })
	}},
	{"agentId mismatch", V88, validate.AgentIDMismatch, validate.Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", V88Project, V88Session, "subagents", "agent-a0822258224265608.jsonl")
		EditLine(t, p, 2, func(m map[string]any) { m["agentId"] = "abad" })
		return p, 2
	}},
	{"subagent sessionId mismatch", V88, validate.AgentSessionDiff, validate.Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", V88Project, V88Session, "subagents", "agent-a0822258224265608.jsonl")
		EditLine(t, p, 1, func(m map[string]any) { m["sessionId"] = "22222222-2222-4222-8222-222222222222" })
		return p, 1
	}},
	{"meta.json unparsable", V88, validate.MetaInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", V88Project, V88Session, "subagents", "agent-a0822258224265608.meta.json")
		os.WriteFile(p, []byte(`{"agentType":`), 0o600)
		return p, 0
	}},
	{"subagents of a missing session", V88, validate.AgentOrphan, validate.Warning, func(t *testing.T, root string) (string, int) {
		dir := filepath.Join(root, "projects", "-home-dev-work-delta", "b1182327-ed4f-40fc-b86c-e5b8a1b7374b")
		os.Remove(dir + ".jsonl")
		return dir, 0
	}},
	{"index lists a missing file", V88, validate.IndexMissingFile, validate.Warning, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, "33333333-3333-4333-8333-333333333333", ""), 0
	}},
	{"index misses a session", V88, validate.IndexUnindexed, validate.Warning, func(t *testing.T, root string) (string, int) {
		writeIndex(t, root, "", "")
		return MainFile(root), 0
	}},
	{"index path wrong", V88, validate.IndexPath, validate.Warning, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, V88Session, "/elsewhere/x.jsonl"), 0
	}},
	{"index drift", V88, validate.IndexDrift, validate.Notice, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, V88Session, "-"), 0
	}},
	{"history line broken", V88, validate.JSONInvalid, validate.Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "history.jsonl")
		os.WriteFile(p, []byte("{\"display\":\"hi\",\"timestamp\":1,\"project\":\"/x\"}\n{\"display\":\n"), 0o600)
		return p, 2
	}},
	{"history entry fields", V88, validate.HistoryInvalid, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "history.jsonl")
		os.WriteFile(p, []byte("{\"display\":\"hi\",\"timestamp\":1,\"project\":\"/x\"}\n{\"display\":5,\"timestamp\":1,\"project\":\"/x\"}\n"), 0o600)
		return p, 2
	}},
	{"empty session-env", V88, validate.SessionEnvEmpty, validate.Notice, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "session-env", V88Session)
		os.MkdirAll(p, 0o700)
		return p, 0
	}},
	{"orphan session-env", V88, validate.OrphanSessionEnv, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "session-env", "44444444-4444-4444-8444-444444444444")
		os.MkdirAll(p, 0o700)
		return p, 0
	}},
	{"orphan file-history", V88, validate.OrphanFileHist, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "file-history", "44444444-4444-4444-8444-444444444444")
		os.MkdirAll(p, 0o700)
		os.WriteFile(filepath.Join(p, "abc@v1"), []byte("x"), 0o600)
		return p, 0
	}},
	{"orphan todos", V88, validate.OrphanTodos, validate.Warning, func(t *testing.T, root string) (string, int) {
		id := "44444444-4444-4444-8444-444444444444"
		p := filepath.Join(root, "todos", id+"-agent-"+id+".json")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("[]"), 0o600)
		return p, 0
	}},
	{"orphan debug", V88, validate.OrphanDebug, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "debug", "44444444-4444-4444-8444-444444444444.txt")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("log\n"), 0o600)
		os.Symlink(p, filepath.Join(root, "debug", "latest"))
		return p, 0
	}},
	{"live session", V88, validate.SessionLive, validate.Notice, func(t *testing.T, root string) (string, int) {
		os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
		pid := os.Getpid()
		b := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/dev/work/alpha"}`, pid, V88Session)
		os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", pid)), []byte(b), 0o600)
		return MainFile(root), 0
	}},
}

// marshal encodes an entry.
func marshal(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entryLike returns an assistant entry with the session fields of like,
// the given uuid, parent, message id and content block.
func entryLike(like map[string]any, uuid string, parent any, msgID string, block map[string]any) map[string]any {
	m := map[string]any{"type": "assistant", "uuid": uuid, "parentUuid": parent,
		"message": map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{block}}}
	for _, k := range []string{"isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "timestamp"} {
		if v, ok := like[k]; ok {
			m[k] = v
		}
	}
	return m
}

// earlier returns the timestamp ts moved back by ms milliseconds.
func earlier(t testing.TB, ts any, ms int) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ts.(string))
	if err != nil {
		t.Fatal(err)
	}
	return at.Add(-time.Duration(ms) * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
}

// splitServerTool puts, before line n of path (an assistant entry), a
// server tool call of the same message, an entry sep makes of a copy of
// it, and the call's result, chained in that order with line n after
// them. It returns the result's line.
func splitServerTool(t testing.TB, path string, n int, sep func(m map[string]any)) int {
	t.Helper()
	ls := Lines(t, path)
	var a map[string]any
	if err := json.Unmarshal(ls[n-1], &a); err != nil {
		t.Fatal(err)
	}
	msgID := a["message"].(map[string]any)["id"].(string)
	call := entryLike(a, "5e7e0000-0000-4000-8000-000000000001", a["parentUuid"], msgID,
		map[string]any{"type": "server_tool_use", "id": "srvtoolu_damage", "name": "web_search", "input": map[string]any{"query": "q"}})
	s := entryLike(a, "5e7e0000-0000-4000-8000-000000000002", call["uuid"], msgID, nil)
	sep(s)
	res := entryLike(a, "5e7e0000-0000-4000-8000-000000000003", s["uuid"], msgID,
		map[string]any{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_damage", "content": []any{}})
	// Written in that order, just before line n.
	for k, m := range []map[string]any{call, s, res} {
		m["timestamp"] = earlier(t, a["timestamp"], 3-k)
	}
	a["parentUuid"] = res["uuid"]
	out := append([][]byte{}, ls[:n-1]...)
	out = append(out, marshal(t, call), marshal(t, s), marshal(t, res), marshal(t, a))
	out = append(out, ls[n:]...)
	WriteLines(t, path, out, true)
	return n + 2
}

// SnapshotsNamingMessages writes file-history-snapshot lines into the main
// transcript of the 2.1.88 store at root as interactive Claude Code writes
// them, each naming a user message by its uuid (messageId): one for each
// prompt, right before the first, third... prompt and right after the
// others, between the prompt and its child (the wild stores hold both); an
// update (isSnapshotUpdate) naming the first assistant entry that calls a
// tool; and at the end of the file the run of snapshots a resume writes
// again, one per prompt, the shape #36583 and #24304 call a collision. It
// returns the path, the numbers of the lines it wrote and the first line of
// the run.
//
// No client loses history because of them. Resumed with -r by 1.0.128,
// 2.0.28, 2.0.77, 2.1.29, 2.1.39, 2.1.73, 2.1.87, 2.1.97, 2.1.111, 2.1.136,
// 2.1.205 and 2.1.330 (e2e TestOracleProbe), crafted transcripts with
// snapshots before and after their messages, updates naming a user or an
// assistant message, the resume's run before a later prompt or at the end of
// the file, a snapshot naming the first message written last, and one of
// 6 MB (the size from which some versions prune dead branches on the bytes,
// also run with 2.1.88 and 2.1.90) each sent every message of the chain and
// nothing else; so did wild 2.1.81-2.1.97's 5fbb940a (36 snapshots a 2.1.97
// resume re-recorded) with 2.1.81, 2.1.87, 2.1.97, 2.1.111, 2.1.205 and
// 2.1.330, and this function's output with 2.1.88 and 2.1.330 (the same
// entries as the store without the snapshots). The loaders keep snapshots in a map of their own, keyed by
// messageId, and never among the messages the chain is walked through.
func SnapshotsNamingMessages(t testing.TB, root string) (string, []int, int) {
	t.Helper()
	p := MainFile(root)
	snap := func(id, inner, ts string, update bool, backups string) []byte {
		return []byte(fmt.Sprintf(`{"type":"file-history-snapshot","messageId":%q,"snapshot":{"messageId":%q,"trackedFileBackups":{%s},"timestamp":%q},"isSnapshotUpdate":%t}`,
			id, inner, backups, ts, update))
	}
	type prompt struct{ uuid, ts string }
	var prompts []prompt
	var out [][]byte
	var wrote []int
	add := func(l []byte, ours bool) {
		out = append(out, l)
		if ours {
			wrote = append(wrote, len(out))
		}
	}
	updated := false
	for _, l := range Lines(t, p) {
		var m map[string]any
		if json.Unmarshal(l, &m) != nil {
			add(l, false)
			continue
		}
		id, _ := m["uuid"].(string)
		ts, _ := m["timestamp"].(string)
		msg, _ := m["message"].(map[string]any)
		_, text := msg["content"].(string)
		isPrompt := m["type"] == "user" && text && m["isMeta"] != true && m["isCompactSummary"] != true
		if !isPrompt {
			add(l, false)
			if !updated && m["type"] == "assistant" && HasBlock("tool_use")(m) && len(prompts) > 0 {
				last := prompts[len(prompts)-1]
				add(snap(id, last.uuid, last.ts, true, fmt.Sprintf(`"k.txt":{"backupFileName":"0123456789abcdef@v1","version":1,"backupTime":%q}`, ts)), true)
				updated = true
			}
			continue
		}
		if len(prompts)%2 == 0 {
			add(snap(id, id, ts, false, ""), true)
			add(l, false)
		} else {
			add(l, false)
			add(snap(id, id, ts, false, ""), true)
		}
		prompts = append(prompts, prompt{id, ts})
	}
	if len(prompts) < 2 || !updated {
		t.Fatalf("%s: %d prompts, tool call found: %v", p, len(prompts), updated)
	}
	run := len(out) + 1
	for _, q := range prompts {
		add(snap(q.uuid, q.uuid, q.ts, false, ""), true)
	}
	WriteLines(t, p, out, true)
	return p, wrote, run
}

// writeIndex writes a sessions-index.json for the alpha folder listing
// every session there except skip... It lists the session `id` with
// fullPath (""=correct, "-"=correct path but stale mtime), or all sessions
// correctly when id is "".
func writeIndex(t *testing.T, root, id, fullPath string) string {
	t.Helper()
	dir := filepath.Join(root, "projects", V88Project)
	p := filepath.Join(dir, "sessions-index.json")
	type entry struct {
		SessionID    string `json:"sessionId"`
		FullPath     string `json:"fullPath"`
		FileMtime    int64  `json:"fileMtime"`
		MessageCount int    `json:"messageCount"`
	}
	var es []entry
	if id != "" {
		e := entry{SessionID: id, FullPath: filepath.Join(dir, id+".jsonl")}
		if fi, err := os.Stat(e.FullPath); err == nil {
			e.FileMtime = fi.ModTime().UnixMilli()
		}
		switch fullPath {
		case "-":
			e.FileMtime -= 60000
		case "":
		default:
			e.FullPath = fullPath
		}
		es = append(es, e)
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "entries": es, "originalPath": "/home/dev/work/alpha"})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if id == "" {
		return dir
	}
	return p
}

// Many damages several files of a 2.1.88 store, so a plan touches
// many files: the main session, both subagents, a sessions-index.json and
// a stub.
func Many(t testing.TB, root string) {
	t.Helper()
	main := MainFile(root)
	ls := Lines(t, main)
	WriteLines(t, main, append(ls, []byte(`{"type":"assistant","torn`)), false)
	subs, _ := filepath.Glob(filepath.Join(root, "projects", V88Project, V88Session, "subagents", "agent-*.jsonl"))
	for _, s := range subs {
		ls := Lines(t, s)
		ls = append(ls[:1:1], append([][]byte{{}}, ls[1:]...)...)
		WriteLines(t, s, ls, true)
	}
	beta := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
	ls = Lines(t, beta)
	WriteLines(t, beta, ls, false)
	idx := filepath.Join(root, "projects", V88Project, "sessions-index.json")
	os.WriteFile(idx, []byte(`{"version":1,"entries":[{"sessionId":"33333333-3333-4333-8333-333333333333","fullPath":"/x.jsonl"}],"originalPath":"/home/dev/work/alpha"}`), 0o600)
	Age(t, root)
}

// Age sets every file's mtime to one fixed time in the past, so nothing
// counts as live and every copy of a store has the same mtimes.
func Age(t testing.TB, root string) {
	t.Helper()
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// NameAsLeaf writes, before line n of path, a metadata record of type typ
// (last-prompt or summary) whose leafUuid names the entry on line n, as
// Claude Code writes a last-prompt before the entry it names (2.1.332
// does) or a summary of the conversation up to it. It returns the entry's
// uuid and parentUuid ("" for null); the entry is on line n+1 afterwards.
func NameAsLeaf(t testing.TB, path string, n int, typ string) (uuid, parent string) {
	t.Helper()
	ls := Lines(t, path)
	var m map[string]any
	if err := json.Unmarshal(ls[n-1], &m); err != nil {
		t.Fatalf("%s:%d: %v", path, n, err)
	}
	uuid, _ = m["uuid"].(string)
	parent, _ = m["parentUuid"].(string)
	if uuid == "" {
		t.Fatalf("%s:%d: not an entry with a uuid", path, n)
	}
	rec := map[string]any{"type": typ, "leafUuid": uuid}
	switch typ {
	case "summary":
		rec["summary"] = LeafText(uuid)
	default:
		rec["lastPrompt"] = LeafText(uuid)
		rec["sessionId"] = m["sessionId"]
	}
	ls = append(ls[:n-1], append([][]byte{marshal(t, rec)}, ls[n-1:]...)...)
	WriteLines(t, path, ls, true)
	return uuid, parent
}

// LeafText is the summary or lastPrompt text of the record NameAsLeaf
// writes for the entry uuid, by which a test finds it again.
func LeafText(uuid string) string { return "up to " + uuid }

// TearAfterUUID cuts line n of path right after the value of its uuid
// field, the way a write stopped mid-line leaves it when the entry's
// uuid made it to disk: the last line loses its newline (a torn last
// line), a line in mid-file keeps it. It returns n.
func TearAfterUUID(t testing.TB, path string, n int) int {
	t.Helper()
	ls := Lines(t, path)
	i := bytes.Index(ls[n-1], []byte(`"uuid":"`))
	if i < 0 {
		t.Fatalf("%s:%d: no uuid field", path, n)
	}
	end := i + len(`"uuid":"`) + bytes.IndexByte(ls[n-1][i+len(`"uuid":"`):], '"') + 1
	ls[n-1] = append(ls[n-1][:end:end], `,"timest`...)
	WriteLines(t, path, ls, n < len(ls))
	return n
}

// ProgressBefore writes a progress entry (a hook's, as 2.1.x writes them
// into the chain) between the entry on line n of path and its parent,
// right before it, and returns the progress entry's line (n).
func ProgressBefore(t testing.TB, path string, n int) int {
	t.Helper()
	ls := Lines(t, path)
	var m map[string]any
	if err := json.Unmarshal(ls[n-1], &m); err != nil {
		t.Fatal(err)
	}
	const uuid = "9a0c0e55-0000-4000-8000-00000000b00c"
	p := map[string]any{"parentUuid": m["parentUuid"], "isSidechain": m["isSidechain"], "userType": "external",
		"cwd": m["cwd"], "sessionId": m["sessionId"], "version": m["version"], "gitBranch": m["gitBranch"],
		"type": "progress", "data": map[string]any{"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash", "command": "true"},
		"parentToolUseID": "toolu_hook", "toolUseID": "toolu_hook", "uuid": uuid, "timestamp": earlier(t, m["timestamp"], 1)}
	m["parentUuid"] = uuid
	ls[n-1] = marshal(t, m)
	ls = append(ls[:n-1], append([][]byte{marshal(t, p)}, ls[n-1:]...)...)
	WriteLines(t, path, ls, true)
	return n
}
