package damage

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/validate"
)

// The store-level cases of issue 10: transcripts never written, session
// folders left without a transcript, titles beyond the /resume picker's
// reach, project folders that are no working directory's, and the
// sidecars of sessions that are gone. Each shape is what a real client
// wrote; the tests of validate and repair (prune_sidecars_test.go,
// sidecars_test.go) say which version, in which scenario.
func init() { Cases = append(Cases, StoreCases...) }

// The 2.1.330 store's biggest session (334 KB): room for a title beyond
// both ends of the picker's reach.
const (
	V330        = "2.1.330"
	V330Project = "-home-dev-work-alpha"
	V330Session = "140fbe06-16c3-4bec-9598-7770985558f2"
)

// V330File returns the main transcript of that session.
func V330File(root string) string {
	return filepath.Join(root, "projects", V330Project, V330Session+".jsonl")
}

// TitleLine is a custom-title line as /rename writes it (2.1.205 and
// 2.1.330: {"type":"custom-title","customTitle":...,"sessionId":...}).
func TitleLine(title, session string) []byte {
	b, _ := json.Marshal(struct {
		Type        string `json:"type"`
		CustomTitle string `json:"customTitle"`
		SessionID   string `json:"sessionId"`
	}{"custom-title", title, session})
	return b
}

// BuryTitle inserts a custom-title line in the middle of the 2.1.330
// session, more than 64 KB from either end, and returns its line.
func BuryTitle(t testing.TB, root, title string) (string, int) {
	t.Helper()
	p := V330File(root)
	ls := Lines(t, p)
	total := 0
	for _, l := range ls {
		total += len(l) + 1
	}
	at, off := 0, 0
	for i, l := range ls {
		if off >= total/2 {
			at = i
			break
		}
		off += len(l) + 1
	}
	if off < validate.PickerReach || total-off < validate.PickerReach+200 {
		t.Fatalf("%s: no line more than 64 KB from both ends", p)
	}
	ls = append(ls[:at:at], append([][]byte{TitleLine(title, V330Session)}, ls[at:]...)...)
	WriteLines(t, p, ls, true)
	return p, at + 1
}

// OldTime is a time more than a day before any test runs: sidecars that
// old have settled, and shell snapshots that old are left behind.
var OldTime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// Gone is the id of a session no store holds.
const Gone = "99999999-9999-4999-8999-999999999999"

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, OldTime, OldTime)
}

// moveSession moves the main transcript of a 2.1.88 session into folder,
// rewriting its cwd; it returns the new path.
func moveSession(t *testing.T, root, from, id, folder, oldCWD, newCWD string) string {
	t.Helper()
	src := filepath.Join(root, "projects", from, id+".jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(`"cwd":"`+oldCWD+`"`), []byte(`"cwd":"`+newCWD+`"`))
	dst := filepath.Join(root, "projects", folder, id+".jsonl")
	writeFile(t, dst, b)
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	return dst
}

// StoreCases are the cases of this file.
var StoreCases = []Case{
	{"title alone, never a transcript", V88, validate.SessionUnwritten, validate.Warning, func(t *testing.T, root string) (string, int) {
		// What issue reports of 2.1.169 to 2.1.227 show: a session file
		// holding a title and nothing else, its conversation written
		// nowhere. The lines are as 2.1.205 and 2.1.330 write /rename.
		id := "77777777-7777-4777-8777-777777777777"
		p := filepath.Join(root, "projects", V88Project, id+".jsonl")
		WriteLines(t, p, [][]byte{
			TitleLine("the lost session", id),
			[]byte(`{"type":"agent-name","agentName":"the lost session","sessionId":"` + id + `"}`),
		}, true)
		return p, 0
	}},
	{"husk of a gone transcript", V88, validate.SessionHusk, validate.Warning, func(t *testing.T, root string) (string, int) {
		// A session folder whose transcript is gone: tool-results/ (2.1.330
		// kept the 200000-byte output of a Bash command as
		// <id>/tool-results/byl11l9zk.txt, which the transcript names) and
		// the title sidecar 2.1.330 writes on /rename.
		dir := filepath.Join(root, "projects", V88Project, Gone)
		writeFile(t, filepath.Join(dir, "tool-results", "byl11l9zk.txt"), bytes.Repeat([]byte("x"), 2000))
		writeFile(t, filepath.Join(dir, "custom-title.json"), []byte(`{"customTitle":"gone"}`))
		return dir, 0
	}},
	{"title beyond the picker's reach", V330, validate.TitleOutOfReach, validate.Warning, func(t *testing.T, root string) (string, int) {
		return BuryTitle(t, root, "my renamed session")
	}},
	{"buried title, found in the title sidecar", V330, validate.TitleOutOfReach, validate.Warning, func(t *testing.T, root string) (string, int) {
		// 2.1.330 writes <session-id>/custom-title.json on /rename and
		// reads it when the tail holds no custom-title: no finding.
		p, n := BuryTitle(t, root, "my renamed session")
		writeFile(t, filepath.Join(root, "projects", V330Project, V330Session, "custom-title.json"), []byte(`{"customTitle":"my renamed session"}`))
		return p, -n
	}},
	{"folder named by CLAUDE_CODE_PROJECT_DIR_NAME", V88, validate.ProjectDirNamed, validate.Notice, func(t *testing.T, root string) (string, int) {
		// 2.1.330 with CLAUDE_CONFIG_DIR set and
		// CLAUDE_CODE_PROJECT_DIR_NAME=shared-work keeps the sessions of
		// every cwd in projects/shared-work/.
		if err := os.Rename(filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub"), filepath.Join(root, "projects", "shared-work")); err != nil {
			t.Fatal(err)
		}
		moveSession(t, root, "-home-dev-work-gamma-with-space", "d835ba00-c046-4bde-985a-3c5515a11cc7", "shared-work", "/home/dev/work/gamma with space", "/home/dev/work/gamma with space")
		return filepath.Join(root, "projects", "shared-work"), 0
	}},
	{"two non-ASCII cwds in one folder", V88, validate.ProjectShared, validate.Notice, func(t *testing.T, root string) (string, int) {
		// 2.1.330 in /w/проект and /w/работа: every UTF-16 unit that is
		// not [A-Za-z0-9] becomes "-", so both land in one folder.
		folder := "-home-dev-work-------"
		moveSession(t, root, "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba", folder, "/home/dev/work/beta.dir/sub", "/home/dev/work/проект")
		moveSession(t, root, "-home-dev-work-gamma-with-space", "d835ba00-c046-4bde-985a-3c5515a11cc7", folder, "/home/dev/work/gamma with space", "/home/dev/work/работа")
		return filepath.Join(root, "projects", folder), 0
	}},
	{"task list of a gone session", V88, validate.OrphanTasks, validate.Warning, func(t *testing.T, root string) (string, int) {
		// 2.1.330's TaskCreate writes tasks/<session-id>/1.json and .lock.
		dir := filepath.Join(root, "tasks", Gone)
		writeFile(t, filepath.Join(dir, ".lock"), nil)
		writeFile(t, filepath.Join(dir, "1.json"), []byte("{\n  \"id\": \"1\",\n  \"subject\": \"write tests\",\n  \"status\": \"in_progress\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"))
		return dir, 0
	}},
	{"plan no transcript names", V88, validate.OrphanPlan, validate.Warning, func(t *testing.T, root string) (string, int) {
		// 2.1.330 in plan mode writes plans/<slug>.md; the session's
		// entries carry "slug".
		p := filepath.Join(root, "plans", "nobody-knows-woolly-hopcroft.md")
		writeFile(t, p, []byte("# Plan\n1. do it\n"))
		return p, 0
	}},
	{"/insights summary of a gone session", V88, validate.OrphanUsageData, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "usage-data", "session-meta", Gone+".json")
		writeFile(t, p, SessionMeta(Gone, "/home/dev/work/alpha"))
		return p, 0
	}},
	{"/insights facets of a gone session", V88, validate.OrphanUsageData, validate.Warning, func(t *testing.T, root string) (string, int) {
		p := filepath.Join(root, "usage-data", "facets", Gone+".json")
		writeFile(t, p, []byte("{\n  \"underlying_goal\": \"run echo\",\n  \"outcome\": \"fully_achieved\",\n  \"brief_summary\": \"ran echo twice\",\n  \"session_id\": \""+Gone+"\"\n}"))
		return p, 0
	}},
	{"pasted text no prompt names", V88, validate.OrphanPaste, validate.Warning, func(t *testing.T, root string) (string, int) {
		// 2.1.330 stores a long paste as paste-cache/<16 hex>.txt and
		// names it in history.jsonl (pastedContents.1.contentHash).
		kept := filepath.Join(root, "paste-cache", "a3e62c4832a6fc39.txt")
		writeFile(t, kept, []byte("line 0 of a long pasted text\n"))
		p := filepath.Join(root, "paste-cache", "0123456789abcdef.txt")
		writeFile(t, p, []byte("an old paste\n"))
		writeFile(t, filepath.Join(root, "history.jsonl"), []byte(`{"display":"look at this: [Pasted text #1 +59 lines]","pastedContents":{"1":{"id":1,"type":"text","contentHash":"a3e62c4832a6fc39"}},"timestamp":1795455934207,"project":"/home/dev/work/alpha","sessionId":"`+V88Session+`"}`+"\n"))
		return p, 0
	}},
	{"shell snapshot of a gone process", V88, validate.OrphanShellSnap, validate.Warning, func(t *testing.T, root string) (string, int) {
		// snapshot-<shell>-<ms>-<random>.sh: every version measured
		// removes its own at a normal exit; a killed one leaves it.
		p := filepath.Join(root, "shell-snapshots", "snapshot-bash-1748779200000-ngeplt.sh")
		writeFile(t, p, []byte("# Snapshot file\nunalias -a 2>/dev/null || true\n"))
		return p, 0
	}},
}

// SessionMeta is a usage-data/session-meta file as /insights writes it
// (2.1.330, two-space indent).
func SessionMeta(id, project string) []byte {
	return []byte("{\n  \"session_id\": \"" + id + "\",\n  \"project_path\": " + string(mustJSON(project)) +
		",\n  \"start_time\": \"2026-11-23T17:43:49.844Z\",\n  \"duration_minutes\": 1,\n  \"user_message_count\": 2,\n  \"first_prompt\": \"BASH: echo one\",\n  \"transcript_mtime\": 1795455830125\n}")
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
