package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// titleReachSince is the first version TestTitleReach measured: the
// 64 KB windows and `-r TITLE` hold for it and every later one.
const titleReachSince = "2.1.330"

// TestTitleReach: a session renamed and grown past the 64 KB the /resume
// picker reads of each end of a transcript cannot be found by its name
// (2.1.330 and later: `claude -p -r TITLE` answers that TITLE "does not
// match any session title"); cfix validate says so (title-out-of-reach),
// cfix repair appends the title line again at the end, and the client
// finds the session by its name. It runs every pinned version from
// titleReachSince on.
func TestTitleReach(t *testing.T) {
	for _, v := range versionsSince(t, titleReachSince) {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			titleReach(t, v)
		})
	}
}

func titleReach(t *testing.T, version string) {
	const title = "findme-title"
	env := NewEnv(t, version, "")
	res := env.Run("proj", "-p", "BASH: echo one", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v\n%s", err, res)
	}
	dir, err := ProjectDir(env.ClaudeDir(), env.Dir("proj"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, out.SessionID+".jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The title as /rename writes it, 100 KB from either end: queue
	// operations (as the client writes them) pad the file around it.
	lines := bytes.SplitAfter(b, []byte("\n"))
	pad := func(n int) []byte {
		var p []byte
		for i := 0; i < n; i++ {
			p = append(p, fmt.Sprintf(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00.000Z","sessionId":%q,"content":"%s"}`+"\n", out.SessionID, strings.Repeat("x", 1000))...)
		}
		return p
	}
	var grown []byte
	grown = append(grown, bytes.Join(lines[:1], nil)...)
	grown = append(grown, pad(100)...)
	grown = append(grown, fmt.Sprintf(`{"type":"custom-title","customTitle":%q,"sessionId":%q}`+"\n", title, out.SessionID)...)
	grown = append(grown, pad(100)...)
	grown = append(grown, bytes.Join(lines[1:], nil)...)
	if err := os.WriteFile(path, grown, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour) // out of apply's live window
	os.Chtimes(path, old, old)

	res = env.Run("proj", "-r", title, "-p", "RESUME CHECK")
	if res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "does not match any session title") {
		t.Fatalf("the buried title was found:\n%s", res)
	}
	os.Chtimes(path, old, old)
	rep := ValidateStore(t, env.ClaudeDir())
	found := false
	for _, f := range rep.Findings {
		found = found || (f.Code == "title-out-of-reach" && f.Path == path)
	}
	if !found {
		t.Fatalf("validate: %+v", rep.Findings)
	}
	if r := RunCfix(t, t.TempDir(), "repair", "--root", env.ClaudeDir(), "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}
	res = env.Run("proj", "-r", title, "-p", "RESUME CHECK")
	if res.ExitCode != 0 || len(res.MessageRequests()) == 0 {
		t.Fatalf("after repair the title is still not found:\n%s", res)
	}
}
