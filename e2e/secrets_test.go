package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
	"github.com/cfix-dev/cfix/internal/plant"
)

// interactiveSince is the oldest version whose interactive client the
// tests drive in tmux (its first screens answered in .claude.json:
// interactiveConfig).
const interactiveSince = "2.1.205"

// TestSecrets: secrets pass through a store the ways real work does, with
// every pinned client: a token pasted in a prompt, a .env printed by cat,
// a PEM key read by a subagent, a key in thinking in a resumed session,
// and with the interactive client in tmux (2.1.205 on) a prompt holding a
// token (history.jsonl) and a file holding a key that Write replaces
// (file-history). cfix secrets finds each with its file and line; cfix
// export --redact and the MCP server's read_session hold none of them;
// cfix redact --apply leaves no byte of any in the store, raw or
// JSON-escaped; validate finds nothing new; the client resumes the
// redacted session, sends as many messages as it sent before and none of
// the secrets, and every request gets 200; the journal holds them until
// cfix journal prune --journal removes it.
func TestSecrets(t *testing.T) {
	for _, v := range versionsSince(t, "1.0.128") {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			secretsRoundTrip(t, v)
		})
	}
}

// planted are the secrets of a test, and the files they are put in.
type planted struct {
	plant.Secrets
	NPM string
}

func (p planted) all() map[string]string {
	m := p.Secrets.All()
	m["npm"] = p.NPM
	return m
}

func secretsRoundTrip(t *testing.T, version string) {
	env := NewEnv(t, version, "")
	claude := env.ClaudeDir()
	journal := filepath.Join(env.Home, "journal")
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 3))
	npm := make([]byte, 36)
	for i := range npm {
		npm[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
	}
	p := planted{Secrets: plant.New(t), NPM: "npm_" + string(npm)}
	app := env.Dir("work/app")
	os.MkdirAll(filepath.Join(app, "keys"), 0o755)
	files := map[string]string{
		".env":            fmt.Sprintf("AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nSLACK_BOT_TOKEN=%s\n", p.AWSID, p.AWSSecret, p.Slack),
		"keys/deploy.pem": p.PEM + "\n",
		"config.env":      "# deploy\nGITHUB_TOKEN=" + p.GitHubFile + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(app, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// 1. A token pasted in a prompt; cat .env.
	res := env.Run("work/app", "-p", "my token is "+p.GitHub+" BASH: cat .env", "--output-format", "json")
	out, err := res.Output()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("step 1: %v\n%s", err, res)
	}
	id := out.SessionID
	if id == "" {
		if id, err = NewestSession(claude, app); err != nil {
			t.Fatalf("step 1: %v\n%s", err, res)
		}
	}
	requireReplies(t, "1 cat .env", res, "bash", "done")
	// 2. A subagent reads a PEM key.
	res = env.Run("work/app", "-r", id, "-p", "AGENT: READ: "+filepath.Join(app, "keys/deploy.pem"))
	if res.ExitCode != 0 {
		t.Fatalf("step 2: %s", res)
	}
	if !hasRequest(res, func(q fakeapi.Request) bool {
		r := lastResults(q.Messages)
		return len(r) == 1 && strings.Contains(r[0].ResultText(), "PRIVATE KEY")
	}) {
		t.Fatalf("step 2: the subagent's Read of the key never came back\n%s", res)
	}
	// 3. Resumed: a key in thinking, then Bash.
	res = env.Run("work/app", "-r", id, "-p", "THINK: the stripe key "+p.Stripe+" stays out of the logs BASH: echo resumed")
	if res.ExitCode != 0 {
		t.Fatalf("step 3: %s", res)
	}
	requireReplies(t, "3 thinking", res, "think+bash", "done")
	// 4. The interactive client: history.jsonl and file-history.
	if Since(version, interactiveSince) {
		interactiveSecrets(t, env, app, p)
	}

	expect := []struct {
		rule, kind, where string
	}{
		{"github-pat", "transcript", "prompt"},
		{"aws-access-token", "transcript", "tool output"},
		{"slack-bot-token", "transcript", "tool output"},
		{"generic-api-key", "transcript", "tool output"},
		{"private-key", "", "tool output"},
		{"stripe-access-token", "transcript", "thinking"},
	}
	if Since(version, interactiveSince) {
		expect = append(expect, struct{ rule, kind, where string }{"github-pat", "file-history", "file backup"},
			struct{ rule, kind, where string }{"npm-access-token", "history", "prompt"})
	}
	found := scanSecrets(t, journal, claude, p)
	for _, e := range expect {
		ok := false
		for _, f := range found {
			ok = ok || f.Rule == e.rule && (e.kind == "" || f.Kind == e.kind) && f.Where == e.where
		}
		if !ok {
			t.Errorf("no %s finding in a %s's %s; found:\n%s", e.rule, e.kind, e.where, foundList(found))
		}
	}

	// The export and the MCP server, before the redaction.
	for _, format := range []string{"md", "jsonl"} {
		r := RunCfix(t, journal, "export", "--root", claude, "--format", format, "--redact", id)
		if r.ExitCode != 0 {
			t.Fatalf("%s", r)
		}
		requireNone(t, "cfix export --redact --format "+format, r.Stdout, p)
		if !strings.Contains(r.Stdout, "[REDACTED:") {
			t.Errorf("cfix export --redact --format %s: no marker", format)
		}
		plain := RunCfix(t, journal, "export", "--root", claude, "--format", format, id)
		if !strings.Contains(plain.Stdout, p.GitHub) {
			t.Errorf("cfix export --format %s lacks the prompt's token: the check proves nothing", format)
		}
	}
	if version == mcpVersion {
		text := mcpRead(t, env, id)
		requireNone(t, "read_session", text, p)
		if !strings.Contains(text, "[REDACTED:") {
			t.Errorf("read_session: no marker:\n%s", clip(text, 3000))
		}
	}

	before := validateFindings(t, claude)
	// The resume before the redaction, on the store as it is, which is
	// put back after.
	saved := filepath.Join(t.TempDir(), "claude")
	if err := copyTree(saved, claude); err != nil {
		t.Fatal(err)
	}
	pre := resumeCheck(t, env, id)
	if !strings.Contains(string(pre.Body), p.GitHub) {
		t.Errorf("the resume before the redaction does not send the prompt's token: the check after proves nothing")
	}
	if err := os.RemoveAll(claude); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(claude, saved); err != nil {
		t.Fatal(err)
	}
	// Files written in the last minute count as live: aged.
	age(t, claude, 5*time.Minute)

	dry := RunCfix(t, journal, "redact", "--root", claude)
	if dry.ExitCode != 0 {
		t.Fatalf("%s", dry)
	}
	requireNone(t, "cfix redact's dry run", dry.Stdout+dry.Stderr, p)
	if !strings.Contains(dry.Stdout, "[REDACTED:") {
		t.Errorf("the dry run shows no marker:\n%s", dry.Stdout)
	}
	applied := RunCfix(t, journal, "redact", "--root", claude, "--apply", "--yes")
	if applied.ExitCode != 0 {
		t.Fatalf("%s", applied)
	}
	requireNone(t, "cfix redact --apply", applied.Stdout+applied.Stderr, p)
	for name, s := range p.all() {
		if in := plant.Grep(t, claude, s); len(in) > 0 {
			t.Errorf("secret %s is still in the store: %v", name, in)
		}
	}
	if r := RunCfix(t, journal, "secrets", "--root", claude); r.ExitCode != 0 {
		t.Errorf("cfix secrets after the redaction: %s", r)
	}
	after := validateFindings(t, claude)
	for k := range after {
		if !before[k] {
			t.Errorf("validate finds after the redaction what it did not before: %s", k)
		}
	}

	post := resumeCheck(t, env, id)
	if len(post.Messages) != len(pre.Messages) {
		t.Errorf("the resume sends %d messages after the redaction, %d before", len(post.Messages), len(pre.Messages))
	}
	requireNone(t, "the resume's request", string(post.Body), p)
	if !bytes.Contains(post.Body, []byte("[REDACTED:")) {
		t.Errorf("the resume's request holds no marker")
	}
	// Thinking: the client sends the redacted text with the signature the
	// block had (an unsigned one the API would refuse).
	preSig, postSig := thinkingWith(pre, p.Stripe[:8]), thinkingWith(post, "[REDACTED:stripe-access-token]")
	t.Logf("claude %s sends the thinking block whose text the redaction changed with its signature: %v (%d bytes)", version, preSig != "" && preSig == postSig, len(postSig))
	if preSig == "" || postSig != preSig {
		t.Errorf("the thinking block's signature: %q before, %q after", clip(preSig, 20), clip(postSig, 20))
	}
	if unsignedThinking(post.Messages) {
		t.Errorf("the resume sends a thinking block without a signature")
	}

	// The journal holds the secrets until it goes.
	m := regexp.MustCompile(`cfix journal prune --journal (\S+) --apply`).FindStringSubmatch(applied.Stdout)
	if m == nil {
		t.Fatalf("the apply names no journal to prune:\n%s", applied.Stdout)
	}
	if len(plant.Grep(t, journal, p.GitHub)) == 0 {
		t.Errorf("the journal holds no copy of the prompt's token")
	}
	if r := RunCfix(t, journal, "journal", "prune", "--root", claude, "--journal", m[1], "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("%s", r)
	}
	for name, s := range p.all() {
		if in := plant.Grep(t, journal, s); len(in) > 0 {
			t.Errorf("secret %s is in the journals after cfix journal prune --journal: %v", name, in)
		}
	}
}

// interactiveSecrets runs the interactive client in tmux in app: a prompt
// holding a token (history.jsonl keeps it) that reads config.env, then a
// Write over it (file-history keeps its old bytes), then /exit.
func interactiveSecrets(t *testing.T, env *Env, app string, p planted) {
	t.Helper()
	interactiveConfig(t, env, app)
	var tenv []string
	for _, kv := range env.environ() {
		if strings.HasPrefix(kv, "TERM=") {
			kv = "TERM=xterm-256color"
		}
		tenv = append(tenv, kv)
	}
	tm := newTmux(t, 160, 50, tenv, app, env.Exe, "--allowedTools", strings.Join(AllowedTools, ","))
	tm.waitUntil("the prompt of an interactive session", 2*time.Minute, func(s string) bool {
		if strings.Contains(s, "Enter to confirm") || strings.Contains(s, "Pane is dead") {
			t.Fatalf("claude %s shows a dialog or ended instead of its prompt:\n%s", env.Version, s)
		}
		return strings.Contains(s, "mode on") && strings.Contains(s, "❯")
	})
	config := filepath.Join(app, "config.env")
	tm.prompt("the npm token is " + p.NPM + " READ: " + config)
	tm.waitUntil("the Read's result", time.Minute, func(s string) bool { return strings.Contains(s, "done:") })
	tm.prompt("WRITE: " + config + " :: GITHUB_TOKEN=rotated")
	for end := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if b, _ := os.ReadFile(config); strings.Contains(string(b), "rotated") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the Write did not happen:\n%s", tm.screen())
		}
	}
	tm.waitUntil("the Write's result", time.Minute, func(s string) bool { return strings.Count(s, "done:") >= 2 })
	tm.slash("exit")
	if s, st := tm.waitEnd("/exit", 2*time.Minute); st != "0" {
		t.Fatalf("claude %s exited %s:\n%s", env.Version, st, s)
	}
}

// secretFinding is one finding of cfix secrets --json.
type secretFinding struct {
	Path, Kind, Where, Rule, Preview string
	Line                             int
}

// scanSecrets runs cfix secrets --json and checks that each finding's file
// holds, at its line, one of the secrets planted (or its start).
func scanSecrets(t *testing.T, journal, claude string, p planted) []secretFinding {
	t.Helper()
	r := RunCfix(t, journal, "secrets", "--root", claude, "--json")
	if r.ExitCode != 1 {
		t.Fatalf("cfix secrets: want exit 1 (secrets found)\n%s", r)
	}
	requireNone(t, "cfix secrets --json", r.Stdout, p)
	var doc struct {
		Findings []secretFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	for _, f := range doc.Findings {
		raw, err := os.ReadFile(f.Path)
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		lines := strings.Split(string(raw), "\n")
		if f.Line < 1 || f.Line > len(lines) {
			t.Errorf("%s:%d: no such line", f.Path, f.Line)
			continue
		}
		// The line holds a secret, or the start of one (the fake API's
		// replies quote 40 characters of a tool's result).
		line := lines[f.Line-1]
		ok := false
		for _, s := range p.all() {
			first := strings.SplitN(s, "\n", 2)[0]
			first = first[:min(len(first), 12)]
			ok = ok || strings.Contains(line, first) || strings.Contains(line, jsonEscaped(first))
		}
		if !ok {
			t.Errorf("%s:%d (%s in %s): the line holds none of the secrets planted: %.300s", f.Path, f.Line, f.Rule, f.Where, line)
		}
	}
	return doc.Findings
}

func foundList(fs []secretFinding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s:%d %s %s %s\n", f.Path, f.Line, f.Rule, f.Kind, f.Where)
	}
	return b.String()
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// requireNone fails the test when text holds a secret, as it is or as a
// JSON string holds it (a PEM key: any of its lines).
func requireNone(t *testing.T, what, text string, p planted) {
	t.Helper()
	for name, s := range p.all() {
		forms := []string{s, jsonEscaped(s)}
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 20 && !strings.HasPrefix(l, "-----") {
				forms = append(forms, l)
			}
		}
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds secret %s", what, name)
				break
			}
		}
	}
}

// validateFindings are cfix validate's findings, as code, file and line.
func validateFindings(t *testing.T, claude string) map[string]bool {
	t.Helper()
	rep := ValidateStore(t, claude)
	out := map[string]bool{}
	for _, f := range rep.Findings {
		out[fmt.Sprintf("%s %s:%d", f.Code, f.Path, f.Line)] = true
	}
	return out
}

// resumeCheck resumes the session in its folder with a prompt and returns
// the first request answering it; every request must get 200.
func resumeCheck(t *testing.T, env *Env, id string) fakeapi.Request {
	t.Helper()
	res := env.Run("work/app", "-r", id, "-p", "RESUME CHECK")
	if res.ExitCode != 0 {
		t.Fatalf("resume: %s", res)
	}
	var first *fakeapi.Request
	for _, q := range res.MessageRequests() {
		if q.Status != 200 {
			t.Errorf("resume: request %d got %d: %s", q.N, q.Status, q.Reply)
		}
		if first == nil && len(q.Tools) > 0 && len(q.Messages) >= 2 {
			q := q
			first = &q
		}
	}
	if first == nil {
		t.Fatalf("resume: no request carries the history\n%s", res)
	}
	return *first
}

// thinkingWith returns the signature of the thinking block of q whose text
// holds s ("" when none does).
func thinkingWith(q fakeapi.Request, s string) string {
	for _, m := range q.Messages {
		for _, b := range m.Content {
			if b.Type == "thinking" && strings.Contains(b.Thinking, s) {
				return b.Signature
			}
		}
	}
	return ""
}

// mcpRead has the client call cfix mcp's read_session on the session,
// with its thinking, tool output and subagents, and returns the result.
func mcpRead(t *testing.T, env *Env, id string) string {
	t.Helper()
	cfix, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(env.Home, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"cfix": map[string]any{"command": cfix, "args": []string{"mcp", "--root", env.ClaudeDir()}, "alwaysLoad": true},
	}})
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session": id, "include_thinking": true, "include_tool_output": true, "include_subagents": true, "max_chars": 100000})
	res := env.RunProgram(env.Exe, "work/other", "-p", "MCP: mcp__cfix__read_session "+string(in),
		"--mcp-config", conf, "--allowedTools", "mcp__cfix__read_session")
	if res.ExitCode != 0 {
		t.Fatalf("read_session: %s", res)
	}
	for _, q := range res.MessageRequests() {
		if len(q.Messages) == 0 {
			continue
		}
		for _, blk := range q.Messages[len(q.Messages)-1].Content {
			if blk.Type == "tool_result" {
				return blk.ResultText()
			}
		}
	}
	t.Fatalf("read_session: no request holds its result:\n%s", res)
	return ""
}

// age moves the mtime of every file of the store back by d.
func age(t *testing.T, root string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			os.Chtimes(p, when, when)
		}
		return nil
	})
}

// TestGuardSecrets: with cfix guard install --secrets, the newest client's
// SessionEnd hook scans the session that held a token, and the next start
// tells the client (the request holds it) which session holds secrets and
// the cfix redact command; the warning holds no secret.
func TestGuardSecrets(t *testing.T) {
	for _, v := range versionsSince(t, guardSince) {
		if v != mcpVersion {
			continue
		}
		env := NewEnv(t, v, "")
		if res := env.Run("work/app", "-p", "hello"); res.ExitCode != 0 {
			t.Fatalf("%s", res)
		}
		state := filepath.Join(env.Home, ".local", "state")
		r := runCfixEnv(t, filepath.Join(env.Home, "journal"), []string{"XDG_STATE_HOME=" + state},
			"guard", "install", "--secrets", "--root", env.ClaudeDir(), "--apply", "--yes")
		if r.ExitCode != 0 {
			t.Fatalf("%s", r)
		}
		p := plant.New(t)
		res := env.Run("work/app", "-p", "my token is "+p.GitHub, "--output-format", "json")
		out, err := res.Output()
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v\n%s", err, res)
		}
		res = env.Run("work/app", "-p", "a new session")
		warned := false
		for _, q := range res.MessageRequests() {
			text := string(q.Body)
			if strings.Contains(text, "cfix redact") && strings.Contains(text, out.SessionID) {
				warned = true
				if i := strings.Index(text, "cfix: secrets"); i >= 0 {
					t.Logf("claude %s is told: %s", v, clip(text[i:], 300))
				}
			}
			if strings.Contains(text, p.GitHub) {
				t.Errorf("request %d of a new session holds the token", q.N)
			}
		}
		if !warned {
			b, _ := os.ReadFile(filepath.Join(state, "cfix", "guard.log"))
			s, _ := os.ReadFile(filepath.Join(state, "cfix", "guard-secrets.json"))
			t.Errorf("no request of the next start holds the warning\n%s\nguard.log: %s\nguard-secrets.json: %s", res, b, s)
		}
	}
}

// runCfixEnv is RunCfix with more environment (XDG_STATE_HOME for the
// guard's state, the one the hooks of the client's HOME use).
func runCfixEnv(t *testing.T, journal string, extra []string, args ...string) CfixResult {
	t.Helper()
	bin, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") && !strings.HasPrefix(kv, "CFIX_JOURNAL_DIR=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, "CFIX_JOURNAL_DIR="+journal, "XDG_CACHE_HOME="+t.TempDir()), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res := CfixResult{Args: args, Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("cfix %q: %v", args, err)
	}
	return res
}

// TestThinkingEdits measures what each pinned client sends, resuming, for
// a thinking block of an earlier turn whose text was changed (what cfix
// redact does to a thinking block holding a secret), whose signature is
// empty, and which has no signature member: the first is sent as written,
// signature and all; an unsigned block, which the API refuses, is sent
// too, so redact never takes a signature away.
func TestThinkingEdits(t *testing.T) {
	for _, v := range versionsSince(t, "1.0.128") {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, v, "")
			res := env.Run("work/app", "-p", "THINK: a plan worth keeping BASH: echo x", "--output-format", "json")
			out, err := res.Output()
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%v\n%s", err, res)
			}
			dir, err := ProjectDir(env.ClaudeDir(), env.Dir("work/app"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, out.SessionID+".jsonl")
			edit := func(f func(b map[string]any)) {
				lines := readLines(t, path)
				for i, l := range lines {
					if !bytes.Contains(l, []byte(`"type":"thinking"`)) {
						continue
					}
					var e map[string]any
					if json.Unmarshal(l, &e) != nil {
						t.Fatalf("line %d", i+1)
					}
					for _, b := range e["message"].(map[string]any)["content"].([]any) {
						if b := b.(map[string]any); b["type"] == "thinking" {
							f(b)
						}
					}
					lines[i], _ = json.Marshal(e)
				}
				writeLines(t, path, lines)
			}
			sent := func(what string) fakeapi.Block {
				res := env.Run("work/app", "-r", out.SessionID, "-p", "CHECK "+what)
				q := resumeRequest(t, res)
				for _, m := range q.Messages {
					for _, b := range m.Content {
						if b.Type == "thinking" {
							return b
						}
					}
				}
				return fakeapi.Block{}
			}
			orig := sent("as written")
			edit(func(b map[string]any) { b["thinking"] = "a plan worth [REDACTED:generic-api-key] keeping" })
			changed := sent("text changed")
			t.Logf("claude %s, thinking text changed: sends %q with signature %v (as written: %v)", v, changed.Thinking, clip(changed.Signature, 12), changed.Signature == orig.Signature)
			if changed.Thinking != "a plan worth [REDACTED:generic-api-key] keeping" || changed.Signature != orig.Signature || orig.Signature == "" {
				t.Errorf("claude %s, text changed: sent %+v (signature before %q)", v, changed, orig.Signature)
			}
			edit(func(b map[string]any) { b["signature"] = "" })
			empty := sent("signature empty")
			t.Logf("claude %s, signature empty: sends the block: %v (text %q)", v, empty.Type == "thinking", empty.Thinking)
			if empty.Type != "thinking" || empty.Signature != "" {
				t.Errorf("claude %s, signature empty: sent %+v", v, empty)
			}
			edit(func(b map[string]any) { delete(b, "signature") })
			none := sent("no signature member")
			t.Logf("claude %s, no signature member: sends the block: %v", v, none.Type == "thinking")
			if none.Type != "thinking" || none.Signature != "" {
				t.Errorf("claude %s, no signature member: sent %+v", v, none)
			}
		})
	}
}

// resumeRequest is the first request of a resume that carries the history.
func resumeRequest(t *testing.T, res Result) fakeapi.Request {
	t.Helper()
	if res.ExitCode != 0 {
		t.Fatalf("%s", res)
	}
	for _, q := range res.MessageRequests() {
		if len(q.Tools) > 0 && len(q.Messages) >= 2 {
			return q
		}
	}
	t.Fatalf("no request carries the history\n%s", res)
	return fakeapi.Request{}
}
