package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browseResumeSince is the oldest version TestBrowseResumesTheClient runs:
// the interactive client's screens were measured with 2.1.332.
const browseResumeSince = "2.1.332"

// TestBrowseResumesTheClient: cfix browse in a real terminal (tmux), run
// from a directory that has nothing to do with the store's sessions, on a
// store the real client wrote (three sessions in three project folders).
// Typing filters the list to the session that holds a planted sentence,
// its preview shows the sentence, and Enter resumes it: browse checks it,
// then the real interactive client takes the terminal in the session's
// directory and shows the conversation. A prompt typed there reaches the
// fake API with the session's history, and the client's entries carry the
// session's directory; /exit ends the client and the pane.
func TestBrowseResumesTheClient(t *testing.T) {
	versions := versionsSince(t, browseResumeSince)
	t.Parallel()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { browseResume(t, v) })
	}
}

func browseResume(t *testing.T, version string) {
	env := NewEnv(t, version, "")
	cfix, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	claude := env.ClaudeDir()
	const planted = "the walrus-tangerine accordion sleeps in the cellar"
	const check = "BROWSE RESUME CHECK"
	var id string
	for _, s := range []struct{ dir, prompt string }{
		{"work/alpha", planted},
		{"work/beta", "a conversation about the beta garden"},
		{"work/gamma", "notes on the gamma tides"},
	} {
		res := env.Run(s.dir, "-p", s.prompt, "--output-format", "json")
		out, err := res.Output()
		if err != nil || res.ExitCode != 0 || out.SessionID == "" {
			t.Fatalf("%s: %v\n%s", s.dir, err, res)
		}
		if s.prompt == planted {
			id = out.SessionID
		}
	}
	alpha := env.Dir("work/alpha")
	unrelated := env.Dir("unrelated")
	if err := os.MkdirAll(unrelated, 0o755); err != nil {
		t.Fatal(err)
	}
	// The client resumes in alpha: its first-run screens answered there.
	interactiveConfig(t, env, alpha)
	tenv := append([]string{"CFIX_JOURNAL_DIR=" + filepath.Join(env.Home, "journal"), "XDG_CACHE_HOME=" + filepath.Join(env.Home, "cache")}, interactiveEnv(env)...)
	before := env.API.Len()
	tm := newTmux(t, 120, 40, tenv, unrelated, cfix, "browse", "--root", claude, "--claude", env.Exe)
	tm.waitUntil("the list of the three sessions", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "3/3") && strings.Contains(s, planted) && strings.Contains(s, "beta garden") && strings.Contains(s, "gamma tides")
	})
	// The filter: one session left, its preview (the header names it, the
	// client's answer quotes the planted sentence).
	tm.typed("walrus-tangerine")
	answer := regexp.MustCompile(`(?m)^ok: the walrus-tangerine accordion`)
	s := tm.waitUntil("the filtered list and the planted sentence in the preview", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "1/3") && strings.Contains(s, "── "+id) && answer.MatchString(s)
	})
	if strings.Contains(s, "beta garden") || strings.Contains(s, "gamma tides") {
		t.Errorf("the filter left other sessions in the list:\n%s", s)
	}
	t.Logf("the filtered list and the preview:\n%s", s)

	// Enter: browse gives the terminal back, says what it resumes, and the
	// client shows the conversation (measured with 2.1.332: its banner
	// with the session's directory, the prompt and the answer of the
	// history, then its prompt box).
	tm.keys("Enter")
	s = tm.waitUntil("the resumed client", time.Minute, func(s string) bool {
		if tm.dead() {
			t.Fatalf("the pane ended instead of showing the client:\n%s", s)
		}
		if strings.Contains(s, "Enter to confirm") {
			t.Fatalf("claude %s shows a dialog instead of the conversation:\n%s", version, s)
		}
		return strings.Contains(s, "Claude Code v"+version) && strings.Contains(s, "~/work/alpha") &&
			strings.Contains(s, "❯ "+planted) && strings.Contains(s, "● ok: the walrus-tangerine") && strings.Contains(s, "mode on")
	})
	if !strings.Contains(s, "cfix: resuming "+id+" ("+planted+") in "+alpha) {
		t.Errorf("cfix did not say what it resumes, and where, before the client:\n%s", s)
	}
	if strings.Contains(s, "cfix browse ·") {
		t.Errorf("the browser's screen stayed under the client:\n%s", s)
	}
	t.Logf("the resumed client:\n%s", s)

	// A prompt in the resumed client: its answer on the screen. Every key
	// goes in when the screen shows the client ready for it (prompt,
	// slash): the client reads what it is sent while it starts and
	// answers, and a key too early goes elsewhere (an /exit typed while
	// it still answered once stayed in its command menu).
	tm.prompt(check)
	s = tm.waitUntil("the fake API's answer", time.Minute, func(s string) bool {
		return strings.Contains(s, "❯ "+check) && strings.Contains(s, "● ok: "+check)
	})
	t.Logf("after the prompt:\n%s", s)
	tm.slash("exit")
	// The pane ends with the client (cfix exec'd it): nothing of the test
	// goes while it still writes.
	s, st := tm.waitEnd("/exit", 2*time.Minute)
	t.Logf("after /exit:\n%s", s)
	if st != "0" {
		t.Errorf("the client exited %s:\n%s", st, s)
	}
	if !strings.Contains(s, "claude --resume "+id) {
		t.Errorf("the client did not end in session %s:\n%s", id, s)
	}

	// What the client sent: the session's history (the planted prompt and
	// its answer), then the new prompt, from the session's directory.
	sent := false
	for _, q := range env.API.Since(before) {
		if !q.IsMessages() || len(q.Tools) == 0 || len(q.Messages) == 0 {
			continue
		}
		// The last user message (2.1.332 sends system-role messages after
		// it) is the new prompt; the history is before it.
		last := -1
		for i, m := range q.Messages {
			if m.Role == "user" {
				last = i
			}
		}
		if last < 0 || !strings.Contains(q.Messages[last].Text(), check) {
			continue
		}
		sent = true
		var asked, answered bool
		for _, m := range q.Messages[:last] {
			asked = asked || m.Role == "user" && strings.Contains(m.Text(), planted)
			answered = answered || m.Role == "assistant" && strings.Contains(m.Text(), "ok: the walrus-tangerine")
		}
		if !asked || !answered {
			t.Errorf("request %d carries the new prompt without the session's history (its prompt %v, its answer %v):\n%s", q.N, asked, answered, clip(q.Text(), 3000))
		}
		if q.Status != 200 {
			t.Errorf("request %d got %d: %s", q.N, q.Status, q.Reply)
		}
		if !strings.Contains(q.Text()+q.System, "Primary working directory: "+alpha+"\n") {
			t.Errorf("request %d does not say the client ran in %s:\n%s", q.N, alpha, clip(q.Text(), 3000))
		}
	}
	if !sent {
		t.Errorf("no request of the resumed client has %q as its last prompt", check)
	}
	// The client's entries of the new prompt: in the session's own
	// transcript, with the session's directory as their cwd.
	dir, err := ProjectDir(claude, alpha)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct {
			Type    string          `json:"type"`
			Cwd     string          `json:"cwd"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "user" || !strings.Contains(string(e.Message), check) {
			continue
		}
		written = true
		if e.Cwd != alpha {
			t.Errorf("the new prompt's entry has cwd %q, want %q", e.Cwd, alpha)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !written {
		t.Errorf("the session's transcript %s holds no entry of the new prompt", f.Name())
	}
}
