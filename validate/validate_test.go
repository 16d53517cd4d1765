package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/store"
)

var versions = []string{"1.0.51", "1.0.128", "2.0.14", "2.0.77", "2.1.30", "2.1.88", "2.1.205", "2.1.330"}

// copyStore copies the .claude folder of a corpus version into a temp dir.
func copyStore(t testing.TB, version string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), ".claude")
	src := filepath.Join("..", "testdata", "corpus", version, ".claude")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return dst
}

func run(t testing.TB, root string, targets ...string) *Report {
	t.Helper()
	rep, err := Run(Options{Root: root, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCorpusHasNoErrors checks every corpus store: no error, and only the
// warnings and notices listed here, each of them defended.
func TestCorpusHasNoErrors(t *testing.T) {
	// Warnings a healthy store written by these versions gives, by code.
	allowed := map[Code]string{
		OrphanTodos:  "todos/<id>-agent-<id>.json of runs whose session was never written (e.g. -p /compact, failed resumes)",
		OrphanDebug:  "debug/<id>.txt of the same runs",
		SessionStub:  "2.0.14 and 1.0.128 leave summary-only stubs when resuming",
		SessionEmpty: "2.0.77 leaves 0-byte session files",
		CWDMismatch:  "2.1.330 appends to the original file with the new cwd when resuming from another folder (a notice)",
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			rep := run(t, filepath.Join("..", "testdata", "corpus", v, ".claude"))
			if rep.FilesChecked == 0 {
				t.Fatal("no files checked")
			}
			for _, f := range rep.Findings {
				if f.Severity == Error {
					t.Errorf("error: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
				} else if _, ok := allowed[f.Code]; !ok {
					t.Errorf("unexpected %s: %s:%d: %s: %s", f.Severity, f.Path, f.Line, f.Code, f.Message)
				}
			}
		})
	}
}

// lines reads a file as lines without their terminators.
func lines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.Split(b, []byte("\n"))
}

func writeLines(t testing.TB, path string, ls [][]byte, final bool) {
	t.Helper()
	b := bytes.Join(ls, []byte("\n"))
	if final {
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// findLine returns the 1-based number of the first line for which match
// returns true on the decoded entry.
func findLine(t testing.TB, path string, match func(m map[string]any) bool) int {
	t.Helper()
	for i, l := range lines(t, path) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && match(m) {
			return i + 1
		}
	}
	t.Fatalf("%s: no matching line", path)
	return 0
}

// findLast returns the 1-based number of the last matching line.
func findLast(t testing.TB, path string, match func(m map[string]any) bool) int {
	t.Helper()
	ls := lines(t, path)
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
	p := mainFile(root)
	n := findLast(t, p, isType("assistant"))
	editLine(t, p, n, func(m map[string]any) {
		msg := m["message"].(map[string]any)
		msg["content"] = append([]any{map[string]any{"type": "thinking", "thinking": thinking, "signature": sig}}, blocks(m)...)
	})
	return p, n
}

// editLine decodes line n, lets edit change it, and writes it back.
func editLine(t testing.TB, path string, n int, edit func(m map[string]any)) {
	t.Helper()
	ls := lines(t, path)
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
	writeLines(t, path, ls, true)
}

func blocks(m map[string]any) []any {
	msg, _ := m["message"].(map[string]any)
	c, _ := msg["content"].([]any)
	return c
}

func hasBlock(typ string) func(m map[string]any) bool {
	return func(m map[string]any) bool {
		for _, b := range blocks(m) {
			if bm, _ := b.(map[string]any); bm["type"] == typ {
				return true
			}
		}
		return false
	}
}

func isType(typ string) func(m map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// The 2.1.88 store: hierarchical subagents, .meta.json, a compaction agent.
const (
	v88        = "2.1.88"
	v88Project = "-home-dev-work-alpha"
	v88Session = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
)

func mainFile(root string) string {
	return filepath.Join(root, "projects", v88Project, v88Session+".jsonl")
}

type damageCase struct {
	name     string
	version  string
	code     Code
	severity Severity
	// damage changes the store and returns the path and line the finding
	// must name.
	damage func(t *testing.T, root string) (string, int)
}

var damageCases = []damageCase{
	{"invalid json", v88, JSONInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls[4] = []byte(`{"type":"user","uuid":oops}`)
		writeLines(t, p, ls, true)
		return p, 5
	}},
	{"torn last line", v88, LineTorn, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		last := ls[len(ls)-1]
		ls[len(ls)-1] = last[:len(last)/2]
		writeLines(t, p, ls, false)
		return p, len(ls)
	}},
	{"no final newline", v88, NoFinalNewline, Warning, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		writeLines(t, p, ls, false)
		return p, len(ls)
	}},
	{"glued records", v88, LineGlued, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		glued := append(append([]byte{}, ls[9]...), ls[10]...)
		ls = append(append(ls[:9:9], glued), ls[11:]...)
		writeLines(t, p, ls, true)
		return p, 10
	}},
	{"NUL bytes", v88, NULBytes, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls[6] = append(bytes.Repeat([]byte{0}, 64), ls[6]...)
		writeLines(t, p, ls, true)
		return p, 7
	}},
	{"NUL run alone", v88, NULBytes, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls = append(ls, bytes.Repeat([]byte{0}, 4096))
		writeLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"invalid utf-8", v88, UTF8Invalid, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("user"))
		ls := lines(t, p)
		ls[n-1] = bytes.Replace(ls[n-1], []byte(`"type":"user"`), []byte("\"type\":\"user\",\"x\":\"\xc3\x28\""), 1)
		writeLines(t, p, ls, true)
		return p, n
	}},
	{"lone surrogate", v88, SurrogateLone, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		ls := lines(t, p)
		ls[n-1] = bytes.Replace(ls[n-1], []byte(`"type":"assistant"`), []byte(`"type":"assistant","x":"cut \ud83d"`), 1)
		writeLines(t, p, ls, true)
		return p, n
	}},
	{"empty line", v88, LineEmpty, Warning, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls = append(ls[:3:3], append([][]byte{{}}, ls[3:]...)...)
		writeLines(t, p, ls, true)
		return p, 4
	}},
	{"wrong field type", v88, SchemaInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("user"))
		editLine(t, p, n, func(m map[string]any) { m["isSidechain"] = "no" })
		return p, n
	}},
	{"missing required field", v88, SchemaInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		editLine(t, p, n, func(m map[string]any) { delete(m, "sessionId") })
		return p, n
	}},
	{"bad content block", v88, SchemaInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, hasBlock("tool_use"))
		editLine(t, p, n, func(m map[string]any) {
			for _, b := range blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_use" {
					delete(bm, "name")
				}
			}
		})
		return p, n
	}},
	{"unknown type", v88, TypeUnknown, Notice, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls = append(ls, []byte(`{"type":"future-thing","sessionId":"`+v88Session+`"}`))
		writeLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"not an object", v88, EntryNotObject, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		ls := lines(t, p)
		ls = append(ls, []byte(`[1,2,3]`))
		writeLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"duplicate identical", v88, UUIDDuplicate, Warning, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		ls := lines(t, p)
		ls = append(ls, ls[n-1])
		writeLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"duplicate differing", v88, UUIDConflict, Warning, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		ls := lines(t, p)
		other := bytes.Replace(ls[n-1], []byte(`"type":"assistant"`), []byte(`"type":"assistant","edited":true`), 1)
		ls = append(ls, other)
		writeLines(t, p, ls, true)
		return p, len(ls)
	}},
	{"parent missing", v88, ParentMissing, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, hasBlock("tool_result"))
		editLine(t, p, n, func(m map[string]any) { m["parentUuid"] = "00000000-0000-4000-8000-000000000000" })
		return p, n
	}},
	{"self parent", v88, ParentSelf, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		editLine(t, p, n, func(m map[string]any) { m["parentUuid"] = m["uuid"] })
		return p, n
	}},
	{"cycle", v88, ChainCycle, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		a := findLine(t, p, isType("assistant"))
		var aUUID string
		editLine(t, p, a, func(m map[string]any) { aUUID = m["uuid"].(string) })
		// The entry after a points to a; make a point to it.
		ls := lines(t, p)
		var child string
		for _, l := range ls[a:] {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil && m["parentUuid"] == aUUID {
				child = m["uuid"].(string)
				break
			}
		}
		editLine(t, p, a, func(m map[string]any) { m["parentUuid"] = child })
		return p, a
	}},
	{"leafUuid nowhere", "2.1.330", LeafMissing, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-delta", "fb63f81e-6720-45fb-a12f-9f5cf3f5a117.jsonl")
		n := findLine(t, p, isType("last-prompt"))
		editLine(t, p, n, func(m map[string]any) { m["leafUuid"] = "11111111-1111-4111-8111-111111111111" })
		return p, n
	}},
	{"forks off the resumed chain", v88, ChainForks, Notice, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		n := findLine(t, p, isType("assistant"))
		ls := lines(t, p)
		// A retry: a copy of an assistant entry with a new uuid and an
		// older timestamp, on the same parent.
		fork := bytes.Replace(ls[n-1], []byte(`"uuid":"`), []byte(`"uuid":"f0`), 1)
		fork = bytes.Replace(fork, []byte(`"timestamp":"2`), []byte(`"timestamp":"1`), 1)
		ls = append(ls, fork)
		writeLines(t, p, ls, true)
		// The notice sits on the resumed leaf.
		return p, 0
	}},
	{"tool_use without result", v88, ToolResultMiss, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		use := findLast(t, p, hasBlock("tool_use"))
		res := findLast(t, p, hasBlock("tool_result"))
		// Drop the result's block, keeping the entry (as a text turn).
		editLine(t, p, res, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "gone"}}
		})
		return p, use
	}},
	{"tool_result without use", v88, ToolUseMiss, Error, func(t *testing.T, root string) (string, int) {
		p := mainFile(root)
		res := findLast(t, p, hasBlock("tool_result"))
		editLine(t, p, res, func(m map[string]any) {
			for _, b := range blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_result" {
					bm["tool_use_id"] = "toolu_nobody"
				}
			}
		})
		return p, res
	}},
	{"duplicate tool_use id", v88, ToolUseDuplicate, Error, func(t *testing.T, root string) (string, int) {
		// A second assistant entry on the resumed chain repeats the last
		// tool_use block.
		p := mainFile(root)
		n := findLast(t, p, hasBlock("tool_use"))
		var use any
		editLine(t, p, n, func(m map[string]any) {
			for _, b := range blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "tool_use" {
					use = bm
				}
			}
		})
		last := findLast(t, p, isType("assistant"))
		editLine(t, p, last, func(m map[string]any) {
			m["message"].(map[string]any)["content"] = append(blocks(m), use)
		})
		return p, last
	}},
	{"unsigned thinking", v88, ThinkingUnsigned, Error, func(t *testing.T, root string) (string, int) {
		return addThinking(t, root, "let me think", "")
	}},
	{"empty thinking", v88, ThinkingEmpty, Error, func(t *testing.T, root string) (string, int) {
		return addThinking(t, root, "", "c2lnbmF0dXJl")
	}},
	{"thinking before compaction is not sent", v88, ThinkingUnsigned, Error, func(t *testing.T, root string) (string, int) {
		// Damage before the compact boundary is off the resumed chain: the
		// finding must not appear (line -1 matches nothing; see below).
		p := mainFile(root)
		n := findLine(t, p, hasBlock("thinking"))
		editLine(t, p, n, func(m map[string]any) {
			for _, b := range blocks(m) {
				if bm := b.(map[string]any); bm["type"] == "thinking" {
					bm["signature"] = ""
				}
			}
		})
		return p, -n
	}},
	{"name not a uuid", v88, SessionName, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
		np := filepath.Join(filepath.Dir(p), "my session.jsonl")
		if err := os.Rename(p, np); err != nil {
			t.Fatal(err)
		}
		return np, 0
	}},
	{"0-byte session", v88, SessionEmpty, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", v88Project, "0b0b0b0b-0000-4000-8000-000000000000.jsonl")
		writeLines(t, p, nil, false)
		return p, 0
	}},
	{"stub", v88, SessionStub, Warning, func(t *testing.T, root string) (string, int) {
		// What older versions leave when resuming from elsewhere: a file
		// holding only a summary whose leafUuid lives in another session.
		var leaf any
		editLine(t, mainFile(root), findLast(t, mainFile(root), isType("assistant")), func(m map[string]any) { leaf = m["uuid"] })
		p := filepath.Join(root, "projects", v88Project, "55555555-5555-4555-8555-555555555555.jsonl")
		b, _ := json.Marshal(map[string]any{"type": "summary", "summary": "a title", "leafUuid": leaf})
		writeLines(t, p, [][]byte{b}, true)
		return p, 0
	}},
	{"session in two folders", v88, SessionIDDup, Warning, func(t *testing.T, root string) (string, int) {
		dir := filepath.Join(root, "projects", "-home-dev-work-elsewhere")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, v88Session+".jsonl")
		b, _ := os.ReadFile(mainFile(root))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, 0
	}},
	{"cwd of another folder", v88, CWDMismatch, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
		b, _ := os.ReadFile(p)
		b = bytes.ReplaceAll(b, []byte(`"cwd":"/home/dev/work/beta.dir/sub"`), []byte(`"cwd":"/home/dev/work/other"`))
		os.WriteFile(p, b, 0o600)
		return p, findLine(t, p, func(m map[string]any) bool { return m["cwd"] != nil })
	}},
	{"agentId mismatch", v88, AgentIDMismatch, Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", v88Project, v88Session, "subagents", "agent-a0822258224265608.jsonl")
		editLine(t, p, 2, func(m map[string]any) { m["agentId"] = "abad" })
		return p, 2
	}},
	{"subagent sessionId mismatch", v88, AgentSessionDiff, Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", v88Project, v88Session, "subagents", "agent-a0822258224265608.jsonl")
		editLine(t, p, 1, func(m map[string]any) { m["sessionId"] = "22222222-2222-4222-8222-222222222222" })
		return p, 1
	}},
	{"meta.json unparsable", v88, MetaInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "projects", v88Project, v88Session, "subagents", "agent-a0822258224265608.meta.json")
		os.WriteFile(p, []byte(`{"agentType":`), 0o600)
		return p, 0
	}},
	{"subagents of a missing session", v88, AgentOrphan, Warning, func(t *testing.T, root string) (string, int) {
		dir := filepath.Join(root, "projects", "-home-dev-work-delta", "b1182327-ed4f-40fc-b86c-e5b8a1b7374b")
		os.Remove(dir + ".jsonl")
		return dir, 0
	}},
	{"index lists a missing file", v88, IndexMissingFile, Warning, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, "33333333-3333-4333-8333-333333333333", ""), 0
	}},
	{"index misses a session", v88, IndexUnindexed, Warning, func(t *testing.T, root string) (string, int) {
		writeIndex(t, root, "", "")
		return mainFile(root), 0
	}},
	{"index path wrong", v88, IndexPath, Warning, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, v88Session, "/elsewhere/x.jsonl"), 0
	}},
	{"index drift", v88, IndexDrift, Notice, func(t *testing.T, root string) (string, int) {
		return writeIndex(t, root, v88Session, "-"), 0
	}},
	{"history line broken", v88, JSONInvalid, Error, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "history.jsonl")
		os.WriteFile(p, []byte("{\"display\":\"hi\",\"timestamp\":1,\"project\":\"/x\"}\n{\"display\":\n"), 0o600)
		return p, 2
	}},
	{"history entry fields", v88, HistoryInvalid, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "history.jsonl")
		os.WriteFile(p, []byte("{\"display\":\"hi\",\"timestamp\":1,\"project\":\"/x\"}\n{\"display\":5,\"timestamp\":1,\"project\":\"/x\"}\n"), 0o600)
		return p, 2
	}},
	{"empty session-env", v88, SessionEnvEmpty, Notice, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "session-env", v88Session)
		os.MkdirAll(p, 0o700)
		return p, 0
	}},
	{"orphan session-env", v88, OrphanSessionEnv, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "session-env", "44444444-4444-4444-8444-444444444444")
		os.MkdirAll(p, 0o700)
		return p, 0
	}},
	{"orphan file-history", v88, OrphanFileHist, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "file-history", "44444444-4444-4444-8444-444444444444")
		os.MkdirAll(p, 0o700)
		os.WriteFile(filepath.Join(p, "abc@v1"), []byte("x"), 0o600)
		return p, 0
	}},
	{"orphan todos", v88, OrphanTodos, Warning, func(t *testing.T, root string) (string, int) {
		id := "44444444-4444-4444-8444-444444444444"
		p := filepath.Join(root, "todos", id+"-agent-"+id+".json")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("[]"), 0o600)
		return p, 0
	}},
	{"orphan debug", v88, OrphanDebug, Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "debug", "44444444-4444-4444-8444-444444444444.txt")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("log\n"), 0o600)
		os.Symlink(p, filepath.Join(root, "debug", "latest"))
		return p, 0
	}},
	{"live session", v88, SessionLive, Notice, func(t *testing.T, root string) (string, int) {
		os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
		pid := os.Getpid()
		b := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/dev/work/alpha"}`, pid, v88Session)
		os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", pid)), []byte(b), 0o600)
		return mainFile(root), 0
	}},
}

// writeIndex writes a sessions-index.json for the alpha folder listing
// every session there except skip... It lists the session `id` with
// fullPath (""=correct, "-"=correct path but stale mtime), or all sessions
// correctly when id is "".
func writeIndex(t *testing.T, root, id, fullPath string) string {
	t.Helper()
	dir := filepath.Join(root, "projects", v88Project)
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

// TestDamageFound damages copies of corpus sessions in each way validate
// knows and checks each damage is found at the right file and line.
func TestDamageFound(t *testing.T) {
	for _, c := range damageCases {
		t.Run(c.name, func(t *testing.T) {
			root := copyStore(t, c.version)
			before := run(t, root)
			path, line := c.damage(t, root)
			rep := run(t, root)
			if line < 0 {
				// The damage must not be reported at -line.
				if hasFinding(rep, c.code, path, -line) {
					t.Fatalf("%s reported at %s:%d", c.code, path, -line)
				}
				return
			}
			found := false
			for _, f := range rep.Findings {
				if f.Code != c.code {
					continue
				}
				if f.Path == path && (line == 0 || f.Line == line) {
					found = true
					if f.Severity != c.severity {
						t.Errorf("severity %s, want %s", f.Severity, c.severity)
					}
					if !filepath.IsAbs(f.Path) {
						t.Errorf("path %s is not absolute", f.Path)
					}
				}
			}
			if !found {
				var got []string
				for _, f := range rep.Findings {
					got = append(got, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Code))
				}
				t.Fatalf("no %s at %s:%d; got:\n%s", c.code, path, line, strings.Join(got, "\n"))
			}
			for _, f := range before.Findings {
				if f.Code == c.code && f.Path == path && (line == 0 || f.Line == line) {
					t.Errorf("the undamaged store already had %s at %s:%d", c.code, path, line)
				}
			}
		})
	}
}

// TestFlatSubagents checks the flat layout of 2.0.77: agents whose
// sessionId names no session in their folder are orphans.
func TestFlatSubagents(t *testing.T) {
	root := copyStore(t, "2.0.77")
	dir := filepath.Join(root, "projects", "-home-dev-work-alpha")
	p := filepath.Join(dir, "agent-a310640.jsonl")
	parent := store.FlatAgentSession(p)
	if parent == "" {
		t.Fatal("no parent session")
	}
	if rep := run(t, root); rep.Has(Warning) && hasCode(rep, AgentOrphan) {
		t.Fatal("orphan reported in the undamaged store")
	}
	// Move the parent away: its agents become orphans.
	for _, f := range []string{parent + ".jsonl"} {
		os.Rename(filepath.Join(dir, f), filepath.Join(t.TempDir(), f))
	}
	if rep := run(t, root); !hasFinding(rep, AgentOrphan, p, 0) {
		t.Error("no agent-orphan for", p)
	}
}

func hasCode(rep *Report, c Code) bool {
	for _, f := range rep.Findings {
		if f.Code == c {
			return true
		}
	}
	return false
}

func hasFinding(rep *Report, c Code, path string, line int) bool {
	for _, f := range rep.Findings {
		if f.Code == c && f.Path == path && (line == 0 || f.Line == line) {
			return true
		}
	}
	return false
}

// TestTargets checks a run on a session id, a file and a project folder.
func TestTargets(t *testing.T) {
	root := copyStore(t, v88)
	rep := run(t, root, v88Session)
	if rep.FilesChecked != 3 { // main + two subagents
		t.Errorf("session target checked %d files, want 3", rep.FilesChecked)
	}
	rep = run(t, root, mainFile(root))
	if rep.FilesChecked != 1 {
		t.Errorf("file target checked %d files", rep.FilesChecked)
	}
	rep = run(t, root, filepath.Join(root, "projects", v88Project))
	if rep.FilesChecked != 3 {
		t.Errorf("folder target checked %d files, want 3", rep.FilesChecked)
	}
	if _, err := Run(Options{Root: root, Targets: []string{"nope"}}); err == nil {
		t.Error("unknown target accepted")
	}
	// A stub checked alone still finds its transcript elsewhere in the store.
	root = copyStore(t, "2.0.14")
	stub := filepath.Join(root, "projects", "-home-dev-work-alpha", "5bc7ba4d-ce75-4343-a934-5ad6cd4706b7.jsonl")
	rep = run(t, root, stub)
	if !hasFinding(rep, SessionStub, stub, 0) || hasCode(rep, LeafMissing) {
		t.Errorf("stub alone: %+v", rep.Findings)
	}
}

// TestLongLine reads a 200 MB line: it is checked, not refused.
func TestLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	root := copyStore(t, v88)
	p := mainFile(root)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 200<<20)
	fmt.Fprintf(f, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"content":"%s"}`+"\n", v88Session, big)
	fmt.Fprintf(f, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"content":"%s`, v88Session, big[:1<<20])
	f.Close()
	big = nil
	start := time.Now()
	rep := run(t, root, p)
	t.Logf("checked in %v", time.Since(start))
	n := len(lines(t, p))
	if hasCode(rep, JSONInvalid) || !hasFinding(rep, LineTorn, p, n) {
		t.Errorf("findings: %+v", rep.Findings)
	}
}

// TestCodesDocumented keeps README.md's table of codes in step with Codes.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, c := range Codes {
		row := fmt.Sprintf("| `%s` | %s |", c.Code, c.Severity)
		if !strings.Contains(readme, row) {
			t.Errorf("README.md lacks the row %q", row)
		}
	}
}
