package damage

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cfix-dev/cfix/validate"
)

// The damage of issue 20 seen in the field: sessions/<pid>.json files
// left by processes that are gone; a transcript rewritten to a stub while
// its subagents survive.
func init() { Cases = append(Cases, FieldCases...) }

// NotOnDisk is the id of the session the stale pid files name: no store
// holds it.
const NotOnDisk = "5a5a5a5a-5a5a-4a5a-8a5a-5a5a5a5a5a5a"

// PIDFile writes sessions/<pid>.json as 2.1.330 writes it at start, naming
// session id, and returns its path.
func PIDFile(t testing.TB, root string, pid int, id string) string {
	t.Helper()
	p := filepath.Join(root, "sessions", fmt.Sprintf("%d.json", pid))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	b := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/dev/work/alpha","startedAt":%d,"kind":"interactive","entrypoint":"cli"}`, pid, id, OldTime.UnixMilli())
	if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// GonePID returns the pid of a process that ran and exited.
func GonePID(t testing.TB) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// Running starts program (a copy of sleep named name, so that its command
// line reads as that program's) and returns its pid; the process is
// killed when the test ends.
func Running(t testing.TB, name string) int {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	prog := filepath.Join(t.TempDir(), name)
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o700); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(prog, "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

// StubTranscript rewrites the 2.1.88 session's main transcript as
// anthropics/claude-code#79298 shows it after a resume of 2.1.21x: the
// metadata lines alone (queue operations, last-prompt, custom-title,
// agent-name, permission-mode), no message; its subagents stay. It writes
// what Claude Code keeps beside it: two prompts in history.jsonl (and one
// of another session) and a file-history backup. It returns the main
// transcript.
func StubTranscript(t *testing.T, root string) string {
	t.Helper()
	p := MainFile(root)
	var keep [][]byte
	for _, l := range Lines(t, p) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "queue-operation" {
			keep = append(keep, l)
		}
	}
	id := V88Session
	keep = append(keep,
		[]byte(`{"type":"last-prompt","lastPrompt":"hello, first session","leafUuid":"0e3f54a1-6d7c-4b8e-9a51-2f1c7d9e8b40","sessionId":"`+id+`"}`),
		TitleLine("the first session", id),
		[]byte(`{"type":"agent-name","agentName":"the first session","sessionId":"`+id+`"}`),
		[]byte(`{"type":"permission-mode","permissionMode":"default","sessionId":"`+id+`"}`))
	WriteLines(t, p, keep, true)
	hist := fmt.Sprintf(`{"display":"hello, first session","pastedContents":{},"timestamp":%d,"project":"/home/dev/work/alpha","sessionId":%q}
{"display":"a prompt of another session","pastedContents":{},"timestamp":%d,"project":"/home/dev/work/beta","sessionId":"d835ba00-c046-4bde-985a-3c5515a11cc7"}
{"display":"now spawn a subagent","pastedContents":{},"timestamp":%d,"project":"/home/dev/work/alpha","sessionId":%q}
`, OldTime.UnixMilli(), id, OldTime.UnixMilli()+1000, OldTime.UnixMilli()+2000, id)
	writeFile(t, filepath.Join(root, "history.jsonl"), []byte(hist))
	writeFile(t, filepath.Join(root, "file-history", id, "3f2a9c1d0b7e4a55@v1"), []byte("package main\n"))
	return p
}

// KeepOtherBranch makes the 2.1.88 session's last prompt a fork, as
// anthropics/claude-code#88597 shows a resume leave one: its parent gets a
// second child (a prompt and its reply, written after every other line),
// which a resume now loads, while the replies already delivered on the
// first branch sit on a branch a resume leaves out. It returns the main
// transcript, the line of the new leaf and the uuid of the old branch's
// last message.
func KeepOtherBranch(t testing.TB, root string) (string, int, string) {
	t.Helper()
	p := MainFile(root)
	prompt := FindLast(t, p, func(m map[string]any) bool {
		msg, _ := m["message"].(map[string]any)
		_, text := msg["content"].(string)
		return m["type"] == "user" && text && m["parentUuid"] != nil && m["isMeta"] == nil
	})
	oldLeaf := FindLast(t, p, func(m map[string]any) bool { return m["type"] == "assistant" })
	ls := Lines(t, p)
	var pm, leaf map[string]any
	json.Unmarshal(ls[prompt-1], &pm)
	json.Unmarshal(ls[oldLeaf-1], &leaf)
	later := func(ms int) string { return earlier(t, leaf["timestamp"], -ms) }
	u := map[string]any{}
	for k, v := range pm {
		u[k] = v
	}
	u["uuid"], u["timestamp"] = "b8859700-0000-4000-8000-000000000001", later(60000)
	u["message"] = map[string]any{"role": "user", "content": "ask it another way"}
	delete(u, "promptId")
	a := entryLike(leaf, "b8859700-0000-4000-8000-000000000002", u["uuid"], "msg_b88597", map[string]any{"type": "text", "text": "the other answer"})
	a["timestamp"] = later(61000)
	ls = append(ls, marshal(t, u), marshal(t, a))
	WriteLines(t, p, ls, true)
	return p, len(ls), leaf["uuid"].(string)
}

// FieldCases are the cases of this file.
var FieldCases = []Case{
	{"a resume keeps the other child", V88, validate.ChainForks, validate.Notice, func(t *testing.T, root string) (string, int) {
		p, n, _ := KeepOtherBranch(t, root)
		return p, n
	}},
	{"transcript rewritten to a stub, subagents left", V88, validate.TranscriptLost, validate.Warning, func(t *testing.T, root string) (string, int) {
		return StubTranscript(t, root), 0
	}},
	{"pid file of a gone process", V88, validate.SessionPIDStale, validate.Warning, func(t *testing.T, root string) (string, int) {
		// A Claude Code killed before its first prompt leaves its
		// sessions/<pid>.json, naming a session it never wrote.
		return PIDFile(t, root, GonePID(t), NotOnDisk), 0
	}},
	{"pid file of a reused pid", V88, validate.SessionPIDStale, validate.Warning, func(t *testing.T, root string) (string, int) {
		// The pid of that file now runs another program.
		if runtime.GOOS != "linux" {
			t.Skip("a reused pid is told from /proc/<pid>/cmdline")
		}
		return PIDFile(t, root, Running(t, "vim"), NotOnDisk), 0
	}},
}
