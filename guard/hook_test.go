package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

func input(event, source, path, id string) *strings.Reader {
	b, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": path, "cwd": "/home/dev/work/alpha",
		"hook_event_name": event, "source": source})
	return strings.NewReader(string(b))
}

// listing is every file of root with its size and bytes' hash, to see
// that a hook wrote nothing.
func listing(t *testing.T, root string) string {
	out, err := exec.Command("sh", "-c", "cd "+root+" && find . -type f -exec sha256sum {} + | sort").CombinedOutput()
	if err != nil {
		t.Fatal(err, string(out))
	}
	return string(out)
}

func TestHookResumeOfDamagedSession(t *testing.T) {
	root := damage.CopyStore(t, "2.1.88")
	path := damage.MainFile(root)
	line := damage.Cycle(t, path, damage.FindLast(t, path, damage.HasBlock("tool_result")))
	before := listing(t, root)
	state := t.TempDir()
	var out bytes.Buffer
	if err := Hook(state, root, "SessionStart", input("SessionStart", "resume", path, damage.V88Session), &out); err != nil {
		t.Fatal(err)
	}
	var ans Output
	if err := json.Unmarshal(out.Bytes(), &ans); err != nil {
		t.Fatalf("answer %q: %v", out.String(), err)
	}
	if ans.HookSpecificOutput == nil || ans.HookSpecificOutput.HookEventName != "SessionStart" {
		t.Fatalf("answer %s", out.String())
	}
	ctx := ans.HookSpecificOutput.AdditionalContext
	for _, want := range []string{fmt.Sprintf("%s:%d", path, line), "chain-cycle", "cfix repair"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q:\n%s", want, ctx)
		}
	}
	if ans.SystemMessage != ctx {
		t.Errorf("systemMessage %q", ans.SystemMessage)
	}
	if after := listing(t, root); after != before {
		t.Errorf("the hook changed the store")
	}
	st, err := ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Last["SessionStart"]; r.Session != damage.V88Session || len(r.Problems) == 0 {
		t.Errorf("state %+v", st)
	}
}

func TestHookSilentWhenNothingToSay(t *testing.T) {
	root := damage.CopyStore(t, "2.1.88")
	path := damage.MainFile(root)
	for _, source := range []string{"resume", "startup", "clear"} {
		var out bytes.Buffer
		if err := Hook(t.TempDir(), root, "SessionStart", input("SessionStart", source, path, damage.V88Session), &out); err != nil {
			t.Fatal(source, err)
		}
		if out.Len() != 0 {
			t.Errorf("%s: answered %q", source, out.String())
		}
	}
	// A startup on a damaged session does not look at it.
	damage.Cycle(t, path, damage.FindLast(t, path, damage.HasBlock("tool_result")))
	var out bytes.Buffer
	if err := Hook(t.TempDir(), root, "SessionStart", input("SessionStart", "startup", path, damage.V88Session), &out); err != nil || out.Len() != 0 {
		t.Errorf("startup: %v %q", err, out.String())
	}
}

func TestHookBadInput(t *testing.T) {
	state := t.TempDir()
	var out bytes.Buffer
	for _, in := range []string{"", "not json", `{"hook_event_name": "SessionEnd"}`} {
		if err := Hook(state, "", "SessionStart", strings.NewReader(in), &out); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	if err := Hook(state, "", "Nope", strings.NewReader(`{}`), &out); err == nil {
		t.Error("unknown event: no error")
	}
	if out.Len() != 0 {
		t.Errorf("answered %q", out.String())
	}
}

func TestHookSessionEndRecordsTornLine(t *testing.T) {
	root := damage.CopyStore(t, "2.1.88")
	path := damage.MainFile(root)
	ls := damage.Lines(t, path)
	last := ls[len(ls)-1]
	ls[len(ls)-1] = last[:len(last)/2]
	damage.WriteLines(t, path, ls, false)
	before := listing(t, root)
	state := t.TempDir()
	var out bytes.Buffer
	if err := Hook(state, root, "SessionEnd", input("SessionEnd", "", path, damage.V88Session), &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("answered %q", out.String())
	}
	st, _ := ReadState(state)
	r := st.Problems["SessionEnd"]
	if r.Path != path || !strings.Contains(strings.Join(r.Problems, " "), fmt.Sprintf("(line %d)", len(ls))) {
		t.Errorf("state %+v", st)
	}
	if listing(t, root) != before {
		t.Error("the hook changed the store")
	}
}

func TestLogRotates(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", LogLimit)
	if err := Log(dir, big); err != nil {
		t.Fatal(err)
	}
	if err := Log(dir, "next"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(LogPath(dir))
	old, _ := os.ReadFile(LogPath(dir) + ".1")
	if !strings.HasSuffix(string(b), " next\n") || len(b) > 100 || !strings.Contains(string(old), big) {
		t.Errorf("log %d bytes, old %d", len(b), len(old))
	}
}

// archived records what the hook asked Archiver to run.
var archived [][]string

func TestMain(m *testing.M) {
	Archiver = func(args []string, _ string) error {
		archived = append(archived, args)
		return nil
	}
	os.Exit(m.Run())
}

func TestHookStartupArchivesBeforeSweep(t *testing.T) {
	root := damage.CopyStore(t, "2.1.88")
	state := t.TempDir()
	newPath := filepath.Join(root, "projects", "-home-dev-work-alpha", "7f8d1b52-0000-4000-8000-000000000001.jsonl")
	start := func(source string) {
		t.Helper()
		var out bytes.Buffer
		if err := Hook(state, root, "SessionStart", input("SessionStart", source, newPath, "7f8d1b52-0000-4000-8000-000000000001"), &out); err != nil || out.Len() != 0 {
			t.Fatalf("%v %q", err, out.String())
		}
	}
	archived = nil
	start("startup")
	want := fmt.Sprint([]string{"archive", "--older-than", "25d", "--by-transcript", "--root", root, "--apply", "--yes"})
	if len(archived) != 1 || fmt.Sprint(archived[0]) != want {
		t.Fatalf("archived %v, want %s", archived, want)
	}
	// Once a day, whatever starts.
	start("startup")
	Hook(state, root, "SessionStart", input("SessionStart", "resume", damage.MainFile(root), damage.V88Session), io.Discard)
	if len(archived) != 1 {
		t.Errorf("archived %v", archived)
	}
	// A resume starts it too (a resumed session sweeps as a new one does),
	// leaving the session resumed in the store.
	other := t.TempDir()
	if err := Hook(other, root, "SessionStart", input("SessionStart", "resume", damage.MainFile(root), damage.V88Session), io.Discard); err != nil {
		t.Fatal(err)
	}
	wantResume := fmt.Sprint([]string{"archive", "--older-than", "25d", "--by-transcript", "--root", root, "--apply", "--yes", "--except", damage.V88Session})
	if len(archived) != 2 || fmt.Sprint(archived[1]) != wantResume {
		t.Errorf("a resume archived %v, want %s", archived[1:], wantResume)
	}
	// Even when the session resumed cannot be checked.
	gone := filepath.Join(root, "projects", "-nowhere", "0badf00d-0000-4000-8000-000000000000.jsonl")
	if err := Hook(t.TempDir(), root, "SessionStart", input("SessionStart", "resume", gone, "0badf00d-0000-4000-8000-000000000000"), io.Discard); err == nil {
		t.Errorf("a resume of a session that is nowhere: no error")
	}
	if len(archived) != 3 || archived[2][len(archived[2])-1] != "0badf00d-0000-4000-8000-000000000000" {
		t.Errorf("a resume whose check failed archived %v", archived[2:])
	}
	st, _ := ReadState(state)
	if st.Archived == nil || st.Archived.Archive != "25d" {
		t.Errorf("state %+v", st)
	}
	// cleanupPeriodDays of settings.json; none at or below the margin.
	for days, want := range map[string]string{"40": "35d", "5": "", "0": ""} {
		os.WriteFile(filepath.Join(root, "settings.json"), []byte(`{"cleanupPeriodDays": `+days+`}`), 0o644)
		got := ArchiveArgs(root)
		if (want == "") != (got == nil) || got != nil && got[2] != want {
			t.Errorf("cleanupPeriodDays %s: %v", days, got)
		}
	}
}
