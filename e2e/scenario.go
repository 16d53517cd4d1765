package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// Working folders of the scenario, relative to its HOME. The dot and the
// spaces become "-" in the project folder names.
const (
	AlphaDir = "work/alpha"
	OtherDir = "work/gamma with space"
	FreshDir = "work/beta.dir/sub"
)

// Prompts of the scenario that later steps look for in the history.
const (
	FirstPrompt = "hello, first session BASH: echo hello-from-bash"
	firstMarker = "hello, first session"
)

// Scenario is a store one Claude Code version made by running the corpus
// scenario against the fake API.
type Scenario struct {
	Version   string
	Home      string        // the HOME of every run
	ClaudeDir string        // Home/.claude: the store
	Main      string        // session started in AlphaDir, resumed, compacted
	Fresh     string        // session started in FreshDir
	Runs      []Result      // every run, in order
	Duration  time.Duration // wall time of all runs
}

// RunScenario runs the scenario for version in a new HOME under home
// (t.TempDir when empty) and checks each step:
//
//  1. alpha: a fresh session whose prompt runs Bash → Main
//  2. alpha: -r Main, a thinking block and two parallel Bash calls
//     2b. alpha: -r Main, a Write call
//  3. alpha: -r Main, an Agent/Task subagent that itself runs Bash
//  4. alpha: -r Main -p /compact
//  5. alpha: -r Main, Bash after the compaction, then parallel Bash calls
//  6. alpha: -r Main, a plain resume in place
//  7. gamma with space: -r Main from another folder (see CrossFolderResume)
//  8. beta.dir/sub: a fresh session elsewhere, with a Read call → Fresh
//
// Every run must exit 0 (step 7 as the version is known to behave), every
// request must be one the real API would accept, and the resumes must carry
// the earlier history.
func RunScenario(t testing.TB, version, home string) *Scenario {
	t.Helper()
	return runScenario(t, NewEnv(t, version, home))
}

// runScenario runs the scenario of RunScenario in env.
func runScenario(t testing.TB, env *Env) *Scenario {
	t.Helper()
	version := env.Version
	sc := &Scenario{Version: version, Home: env.Home, ClaudeDir: env.ClaudeDir()}
	start := time.Now()
	defer func() { sc.Duration = time.Since(start) }()
	run := func(step, dir string, args ...string) Result {
		t.Helper()
		res := env.Run(dir, args...)
		sc.Runs = append(sc.Runs, res)
		t.Logf("claude %s step %s: exit %d in %v, %d requests", version, step, res.ExitCode, res.Duration.Round(time.Millisecond), len(res.Requests))
		if res.Duration > 20*time.Second {
			t.Logf("slow run: %s", res)
		}
		for _, q := range res.Requests {
			if q.IsMessages() && q.Status != 200 {
				t.Errorf("step %s: the fake API refused request %d: %d %s\n%s", step, q.N, q.Status, q.Reply, res)
			}
		}
		return res
	}
	mustExit0 := func(step string, res Result) {
		t.Helper()
		if res.ExitCode != 0 || res.TimedOut {
			t.Fatalf("step %s failed: %s", step, res)
		}
	}

	// 1. A fresh session with a tool call.
	res := run("1 fresh", AlphaDir, "-p", FirstPrompt, "--output-format", "json")
	mustExit0("1 fresh", res)
	out, err := res.Output()
	if err != nil {
		t.Fatalf("step 1: %v\n%s", err, res)
	}
	sc.Main = out.SessionID
	if sc.Main == "" {
		if sc.Main, err = NewestSession(sc.ClaudeDir, env.Dir(AlphaDir)); err != nil {
			t.Fatalf("step 1: no session id in the output nor the store: %v\n%s", err, res)
		}
	}
	if !strings.Contains(out.Result, "hello-from-bash") {
		t.Errorf("step 1: result %q does not show the Bash output\n%s", out.Result, res)
	}
	requireReplies(t, "1 fresh", res, "bash", "done")
	requireTranscript(t, "1 fresh", sc.ClaudeDir, env.Dir(AlphaDir), sc.Main)

	// 2. Resume with a thinking block and parallel tool calls.
	res = run("2 parallel", AlphaDir, "-r", sc.Main, "-p", "THINK: two at once BASH2: echo one ;; echo two")
	mustExit0("2 parallel", res)
	requireReplies(t, "2 parallel", res, "think+bash2", "done")
	requireHistory(t, "2 parallel", res, firstMarker)
	if !hasRequest(res, func(q fakeapi.Request) bool { return len(lastResults(q.Messages)) == 2 }) {
		t.Errorf("step 2: no request answers both parallel calls in one message\n%s", res)
	}

	// 2b. A Write tool call (file-history snapshots in versions that keep them).
	notes := filepath.Join(env.Dir(AlphaDir), "notes.txt")
	res = run("2b write", AlphaDir, "-r", sc.Main, "-p", "WRITE: "+notes+" :: written by the fake API")
	mustExit0("2b write", res)
	requireReplies(t, "2b write", res, "write", "done")
	if raw, err := os.ReadFile(notes); err != nil || string(raw) != "written by the fake API\n" {
		t.Errorf("step 2b: %s holds %q (%v)\n%s", notes, raw, err, res)
	}

	// 3. A subagent that runs Bash.
	res = run("3 agent", AlphaDir, "-r", sc.Main, "-p", "AGENT: BASH: echo sub")
	mustExit0("3 agent", res)
	requireReplies(t, "3 agent", res, "agent")
	if !hasRequest(res, func(q fakeapi.Request) bool {
		return q.Reply == "bash" && firstUserText(q.Messages) == "BASH: echo sub"
	}) {
		t.Errorf("step 3: no subagent request starting with the agent's prompt\n%s", res)
	}
	if !hasRequest(res, func(q fakeapi.Request) bool {
		r := lastResults(q.Messages)
		return len(r) == 1 && strings.TrimSpace(r[0].ResultText()) == "sub"
	}) {
		t.Errorf("step 3: the subagent's Bash result never came back\n%s", res)
	}

	// 4. Compaction.
	res = run("4 compact", AlphaDir, "-r", sc.Main, "-p", "/compact")
	mustExit0("4 compact", res)
	requireReplies(t, "4 compact", res, "summary")

	// 5. A tool call after the compaction; the summary carries the start.
	res = run("5 after compact", AlphaDir, "-r", sc.Main, "-p", "after compaction BASH: pwd")
	mustExit0("5 after compact", res)
	requireReplies(t, "5 after compact", res, "bash", "done")
	requireHistory(t, "5 after compact", res, firstMarker)
	if !hasRequest(res, func(q fakeapi.Request) bool {
		r := lastResults(q.Messages)
		return len(r) == 1 && strings.TrimSpace(r[0].ResultText()) == env.Dir(AlphaDir)
	}) {
		t.Errorf("step 5: Bash did not run pwd in %s\n%s", env.Dir(AlphaDir), res)
	}

	// 5b. Parallel tool calls after the compaction: on the chain a resume
	// loads, where some versions hang one result beside the chain.
	res = run("5b parallel after compact", AlphaDir, "-r", sc.Main, "-p", "BASH2: echo three ;; echo four")
	mustExit0("5b parallel after compact", res)
	requireReplies(t, "5b parallel after compact", res, "bash2", "done")
	if !hasRequest(res, func(q fakeapi.Request) bool { return len(lastResults(q.Messages)) == 2 }) {
		t.Errorf("step 5b: no request answers both parallel calls in one message\n%s", res)
	}

	// 6. Resume in place.
	res = run("6 resume", AlphaDir, "-r", sc.Main, "-p", "resume in place")
	mustExit0("6 resume", res)
	requireReplies(t, "6 resume", res, "text")
	requireHistory(t, "6 resume", res, "after compaction BASH: pwd", firstMarker)
	if !strings.Contains(res.Stdout, "ok: resume in place") {
		t.Errorf("step 6: stdout %q", res.Stdout)
	}

	// 7. Resume from another folder.
	res = run("7 resume elsewhere", OtherDir, "-r", sc.Main, "-p", "resumed from another folder")
	finds, known := CrossFolderResume(version)
	switch {
	case res.ExitCode == 0 && (finds || !known):
		requireReplies(t, "7 resume elsewhere", res, "text")
		requireHistory(t, "7 resume elsewhere", res, "resume in place", firstMarker)
	case res.ExitCode != 0 && (!finds || !known) && strings.Contains(res.Stdout+res.Stderr, "No conversation found with session ID"):
		if !known {
			t.Logf("step 7: claude %s does not resume from another folder", version)
		}
	default:
		t.Errorf("step 7: claude %s, want the session found: %v\n%s", version, finds, res)
	}

	// 8. A fresh session in a third folder.
	res = run("8 fresh elsewhere", FreshDir, "-p", "a fresh one elsewhere READ: "+notes, "--output-format", "json")
	mustExit0("8 fresh elsewhere", res)
	if out, err = res.Output(); err != nil {
		t.Fatalf("step 8: %v\n%s", err, res)
	}
	sc.Fresh = out.SessionID
	if sc.Fresh == "" {
		sc.Fresh, _ = NewestSession(sc.ClaudeDir, env.Dir(FreshDir))
	}
	if sc.Fresh == "" || sc.Fresh == sc.Main {
		t.Errorf("step 8: fresh session id %q (main %q)", sc.Fresh, sc.Main)
	}
	requireReplies(t, "8 fresh elsewhere", res, "read", "done")
	if !strings.Contains(out.Result, "written by the fake API") {
		t.Errorf("step 8: result %q does not show the file Read returned\n%s", out.Result, res)
	}
	for _, q := range res.MessageRequests() {
		if strings.Contains(q.Text(), firstMarker) {
			t.Errorf("step 8: a fresh session's request %d carries the other session's history", q.N)
		}
	}
	requireTranscript(t, "8 fresh elsewhere", sc.ClaudeDir, env.Dir(FreshDir), sc.Fresh)
	return sc
}

// requireReplies checks that the run's requests got replies of these kinds,
// in this order (other requests may come between).
func requireReplies(t testing.TB, step string, res Result, kinds ...string) {
	t.Helper()
	i := 0
	for _, q := range res.MessageRequests() {
		if i < len(kinds) && q.Reply == kinds[i] {
			i++
		}
	}
	if i < len(kinds) {
		t.Errorf("step %s: no %q reply among the requests (want %q in order)\n%s", step, kinds[i], kinds, res)
	}
}

// requireHistory checks that the run's first main-loop request (the one
// answering the new prompt) carries each text of the earlier history.
func requireHistory(t testing.TB, step string, res Result, texts ...string) {
	t.Helper()
	for _, q := range res.MessageRequests() {
		if len(q.Tools) == 0 || len(q.Messages) < 2 {
			continue
		}
		all := q.Text()
		for _, s := range texts {
			if !strings.Contains(all, s) {
				t.Errorf("step %s: request %d does not carry %q from the earlier history\n%s", step, q.N, s, res)
			}
		}
		return
	}
	t.Errorf("step %s: no request carries a history\n%s", step, res)
}

// requireTranscript checks that the session's transcript exists in the
// project folder of dir and is not empty.
func requireTranscript(t testing.TB, step, claudeDir, dir, id string) {
	t.Helper()
	p, err := ProjectDir(claudeDir, dir)
	if err != nil {
		t.Errorf("step %s: %v", step, err)
		return
	}
	fi, err := os.Stat(filepath.Join(p, id+".jsonl"))
	if err != nil || fi.Size() == 0 {
		t.Errorf("step %s: transcript of session %s missing or empty in %s (%v)", step, id, p, err)
	}
}

func hasRequest(res Result, ok func(fakeapi.Request) bool) bool {
	for _, q := range res.MessageRequests() {
		if ok(q) {
			return true
		}
	}
	return false
}

// lastResults returns the tool_result blocks of the last user message.
func lastResults(msgs []fakeapi.Message) []fakeapi.Block {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "user" {
			continue
		}
		var out []fakeapi.Block
		for _, b := range msgs[i].Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
		return out
	}
	return nil
}

// firstUserText returns the last text block of the first message, without
// <system-reminder> blocks: the prompt that started the conversation.
func firstUserText(msgs []fakeapi.Message) string {
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return ""
	}
	text := ""
	for _, b := range msgs[0].Content {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
			text = strings.TrimSpace(b.Text)
		}
	}
	return text
}

var scenarios struct {
	sync.Mutex
	byVersion map[string]*scenarioEntry
}

type scenarioEntry struct {
	once sync.Once
	sc   *Scenario
}

// ScenarioStore returns the scenario store of version, running the scenario
// the first time it is asked for (in the calling test; later callers wait
// for it). The store lives in a temporary folder until the test binary ends
// (RemoveTemp), so every test can read it: copy it (CopyStore) before
// changing anything. A test fails when the scenario failed.
func ScenarioStore(t testing.TB, version string) *Scenario {
	t.Helper()
	scenarios.Lock()
	if scenarios.byVersion == nil {
		scenarios.byVersion = map[string]*scenarioEntry{}
	}
	e := scenarios.byVersion[version]
	if e == nil {
		e = &scenarioEntry{}
		scenarios.byVersion[version] = e
	}
	scenarios.Unlock()
	e.once.Do(func() {
		dir, err := mkTemp("cfix-e2e-" + version + "-")
		if err != nil {
			t.Fatal(err)
		}
		sc := RunScenario(t, version, filepath.Join(dir, "home"))
		if !t.Failed() {
			e.sc = sc
		}
	})
	if e.sc == nil {
		t.Fatalf("the scenario for Claude Code %s failed (see the first test that ran it)", version)
	}
	return e.sc
}

// CopyStore copies the scenario store of version (its .claude folder and
// .claude.json) into a new HOME in the test's TempDir and returns that
// HOME's .claude folder, for tests that change the store.
func CopyStore(t testing.TB, version string) string {
	t.Helper()
	sc := ScenarioStore(t, version)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(filepath.Join(home, ".claude"), sc.ClaudeDir); err != nil {
		t.Fatalf("copy store: %v", err)
	}
	if raw, err := os.ReadFile(filepath.Join(sc.Home, ".claude.json")); err == nil {
		if err := os.WriteFile(filepath.Join(home, ".claude.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(home, ".claude")
}

// String sums up the scenario's runs.
func (sc *Scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "claude %s: %d runs in %v, store %s", sc.Version, len(sc.Runs), sc.Duration.Round(time.Millisecond), sc.ClaudeDir)
	return b.String()
}

// copyTree copies the folder src to dst, keeping symbolic links (the store
// has some, such as debug/latest) as links.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, raw, 0o644)
		}
		return nil // sockets, pipes: not part of a store
	})
}

// EachScenario runs fn, in parallel, on the scenario store of every pinned
// version, or of those CFIX_E2E_VERSIONS names (see ScenarioVersions and
// ScenarioStore), beside the other parallel tests (t, a top-level test,
// is made parallel). It skips in -short mode: it runs real Claude Code
// versions.
func EachScenario(t *testing.T, fn func(t *testing.T, sc *Scenario)) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs real Claude Code versions")
	}
	t.Parallel()
	versions, err := ScenarioVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			fn(t, ScenarioStore(t, v))
		})
	}
}
