package secrets

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/validate"
)

// secretsOf are secrets of real shapes, random each run (rules check
// their entropy).
type planted struct {
	github, githubFile, awsID, awsSecret, slack, anthropic, stripe, pemKey string
}

func newPlanted(t testing.TB) planted {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 7))
	pick := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return planted{
		github:     "ghp_" + pick(36, alnum),
		githubFile: "ghp_" + pick(36, alnum),
		awsID:      "AKIA" + pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
		awsSecret:  pick(40, alnum+"+/"),
		slack:      "xoxb-" + pick(11, "0123456789") + "-" + pick(12, "0123456789") + "-" + pick(24, alnum),
		anthropic:  "sk-ant-api03-" + pick(93, alnum+"_-") + "AA",
		stripe:     "sk_live_" + pick(32, alnum),
		pemKey:     strings.TrimSpace(pemKey),
	}
}

// all lists the secrets and the forms each may take in a file: as it is,
// and as a JSON string holds it.
func (p planted) all() map[string]string {
	return map[string]string{"github": p.github, "github-file": p.githubFile, "aws-id": p.awsID, "aws-secret": p.awsSecret,
		"slack": p.slack, "anthropic": p.anthropic, "stripe": p.stripe, "pem": p.pemKey}
}

// copyTree copies the folder src to dst.
func copyTree(t testing.TB, dst, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// editLine rewrites line n (1-based) of a JSON lines file by edit, which
// gets the decoded entry.
func editLine(t testing.TB, path string, n int, edit func(e map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(raw, []byte("\n"))
	var e map[string]any
	if err := json.Unmarshal(lines[n-1], &e); err != nil {
		t.Fatalf("%s:%d: %v", path, n, err)
	}
	edit(e)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		t.Fatal(err)
	}
	lines[n-1] = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lineWith returns the number of the first line of path holding s.
func lineWith(t testing.TB, path, s string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range bytes.Split(raw, []byte("\n")) {
		if bytes.Contains(l, []byte(s)) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line holds %q", path, s)
	return 0
}

// plantStore copies the 2.1.332 corpus store and plants the secrets the
// ways real work does: a token pasted in a prompt, a .env printed by Bash
// (in the tool_result and in toolUseResult), keys in thinking and in a
// Bash command of a subagent, a PEM key read by Read, a prompt in
// history.jsonl, a file-history backup of an edited file. It returns the
// store and where each secret is (file and line).
func plantStore(t testing.TB, p planted) (string, map[string][]string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	copyTree(t, root, "../testdata/corpus/2.1.332/.claude")
	const sid = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	main := filepath.Join(root, "projects/-home-dev-work-alpha", sid+".jsonl")
	sub := filepath.Join(root, "projects/-home-dev-work-alpha", sid, "subagents/agent-a286146d096c0ed79.jsonl")
	beta := filepath.Join(root, "projects/-home-dev-work-beta-dir-sub/87441586-86a4-4e94-a1b0-afc734b56ec1.jsonl")
	where := map[string][]string{}
	at := func(name, path string, line int, w Where) {
		where[name] = append(where[name], fmt.Sprintf("%s:%d %s", path, line, w))
	}

	// A prompt.
	n := lineWith(t, main, `"content":"hello, first session BASH: echo hello-from-bash"},"uuid"`)
	editLine(t, main, n, func(e map[string]any) {
		e["message"].(map[string]any)["content"] = "hello, first session BASH: echo hello-from-bash; my token is " + p.github
	})
	at("github", main, n, WherePrompt)
	// cat .env, in the result and in toolUseResult.
	env := fmt.Sprintf("AWS_ACCESS_KEY_ID=%s\naws_secret_access_key=%s\nSLACK_TOKEN=%s\nANTHROPIC_API_KEY=%s\n", p.awsID, p.awsSecret, p.slack, p.anthropic)
	n = lineWith(t, main, `"stdout":"hello-from-bash"`)
	editLine(t, main, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["content"] = env
		e["toolUseResult"].(map[string]any)["stdout"] = env
	})
	for _, s := range []string{"aws-id", "aws-secret", "slack", "anthropic"} {
		at(s, main, n, WhereToolOutput)
	}
	// Thinking.
	n = lineWith(t, main, `"thinking":"two at once"`)
	editLine(t, main, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["thinking"] = "two at once; the stripe key " + p.stripe + " should not be printed"
	})
	at("stripe", main, n, WhereThinking)
	// A subagent's Bash command.
	n = lineWith(t, sub, `"command":"echo sub"`)
	editLine(t, sub, n, func(e map[string]any) {
		for _, b := range e["message"].(map[string]any)["content"].([]any) {
			if b := b.(map[string]any); b["type"] == "tool_use" {
				b["input"].(map[string]any)["command"] = `curl -H "x-api-key: ` + p.anthropic + `" https://api.anthropic.com/v1/models`
			}
		}
	})
	at("anthropic", sub, n, WhereToolInput)
	// A PEM key read by Read: newlines escaped in the JSON string.
	n = lineWith(t, beta, `"toolUseResult":{"type":"text","file"`)
	editLine(t, beta, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["content"] = "1\t" + strings.ReplaceAll(p.pemKey, "\n", "\n2\t")
		e["toolUseResult"].(map[string]any)["file"].(map[string]any)["content"] = p.pemKey + "\n"
	})
	at("pem", beta, n, WhereToolOutput)
	// history.jsonl.
	hist := filepath.Join(root, "history.jsonl")
	h, _ := json.Marshal(map[string]any{"display": "deploy with " + p.github, "pastedContents": map[string]any{}, "timestamp": 1795724311527,
		"project": "/home/dev/work/alpha", "sessionId": sid})
	other, _ := json.Marshal(map[string]any{"display": "a plain prompt", "pastedContents": map[string]any{}, "timestamp": 1795724311528,
		"project": "/home/dev/work/alpha", "sessionId": sid})
	if err := os.WriteFile(hist, append(append(append(other, '\n'), h...), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	at("github", hist, 2, WherePrompt)
	// A file-history backup.
	fh := filepath.Join(root, "file-history", sid, "3f2a9c0d1e5b7a64@v2")
	os.MkdirAll(filepath.Dir(fh), 0o700)
	if err := os.WriteFile(fh, []byte("# config\nhost=example.com\nGITHUB_TOKEN="+p.githubFile+"\nport=8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	at("github-file", fh, 3, WhereBackup)
	// Old enough for apply to take them as not live.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	return root, where
}

// grepStore returns the files of root holding s, raw or as a JSON string
// holds it.
func grepStore(t testing.TB, root, s string) []string {
	t.Helper()
	esc, _ := json.Marshal(s)
	forms := [][]byte{[]byte(s), bytes.Trim(esc, `"`)}
	if strings.Contains(s, "\n") {
		// Each line of a PEM key, too.
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 20 && !strings.HasPrefix(l, "-----") {
				forms = append(forms, []byte(l))
			}
		}
	}
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range forms {
			if bytes.Contains(b, f) {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	return out
}

// TestScanFindsPlanted: every planted secret is found where it was put,
// with its rule, and no finding shows more than the start of its secret.
func TestScanFindsPlanted(t *testing.T) {
	p := newPlanted(t)
	root, where := plantStore(t, p)
	got := map[string][]string{}
	var all []*Finding
	_, err := Scan(Options{Root: root}, func(f *Finding) error {
		all = append(all, f)
		for name, s := range p.all() {
			if strings.Contains(s, f.secret) || strings.Contains(f.secret, s) {
				got[name] = append(got[name], fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Where))
			}
		}
		if len([]rune(f.Preview)) > 5 || strings.Contains(f.secret, strings.TrimSuffix(f.Preview, "…")) == false {
			t.Errorf("%s:%d: preview %q", f.Path, f.Line, f.Preview)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range where {
		for _, w := range want {
			found := false
			for _, g := range got[name] {
				found = found || g == w
			}
			if !found {
				t.Errorf("%s: not found at %s; found at %q", name, w, got[name])
			}
		}
	}
	rules := map[string]bool{}
	for _, f := range all {
		rules[f.Rule] = true
	}
	for _, r := range []string{"github-pat", "aws-access-token", "slack-bot-token", "anthropic-api-key", "private-key", "stripe-access-token", "generic-api-key"} {
		if !rules[r] {
			t.Errorf("no finding of rule %s; rules found: %v", r, rules)
		}
	}
}

// TestNeverFindings: ids, signatures, hashes and base64 data hold no
// finding, even holding what a rule would find in text.
func TestNeverFindings(t *testing.T) {
	p := newPlanted(t)
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-x")
	os.MkdirAll(dir, 0o700)
	line := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	tok := p.github
	body := line(map[string]any{"type": "assistant", "uuid": tok, "parentUuid": tok, "sessionId": tok, "requestId": tok,
		"message": map[string]any{"id": tok, "role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "plain", "signature": tok},
			map[string]any{"type": "tool_use", "id": tok, "name": "Bash", "input": map[string]any{"command": "ls"}},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "token=" + p.stripe}},
			map[string]any{"type": "redacted_thinking", "data": "token=" + p.stripe},
		}}})
	result := line(map[string]any{"type": "user", "uuid": "u2", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": tok, "content": "ok"}}}, "toolUseResult": map[string]any{"contentHash": tok}})
	if err := os.WriteFile(filepath.Join(dir, "11111111-2222-3333-4444-555555555555.jsonl"), []byte(body+"\n"+result+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	Scan(Options{Root: root}, func(f *Finding) error {
		n++
		t.Errorf("%s:%d: %s in %s %s", f.Path, f.Line, f.Rule, f.Where, f.Field)
		return nil
	})
	// The same token in a prompt is found: the test can fail.
	prompt := line(map[string]any{"type": "user", "uuid": "u3", "message": map[string]any{"role": "user", "content": "use " + tok}})
	os.WriteFile(filepath.Join(dir, "11111111-2222-3333-4444-555555555556.jsonl"), []byte(prompt+"\n"), 0o600)
	Scan(Options{Root: root}, func(f *Finding) error { n++; return nil })
	if n != 1 {
		t.Errorf("%d findings, want the prompt's only", n)
	}
}

// TestRedactApply: the redaction of the planted store, applied, leaves no
// byte of any secret in the store (raw or JSON-escaped), keeps every line
// JSON with the same members, uuid and parentUuid, adds no validate
// finding; its diff shows no secret; the journal holds the secrets until
// it is removed.
func TestRedactApply(t *testing.T) {
	p := newPlanted(t)
	root, _ := plantStore(t, p)
	before, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	shapes := lineShapes(t, root)
	plan, err := PlanRedact(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if plan.CS.Empty() || plan.Secrets < len(p.all()) {
		t.Fatalf("plan: %d ops, %d secrets", len(plan.CS.Ops), plan.Secrets)
	}
	var shown bytes.Buffer
	if err := plan.Show(&shown); err != nil {
		t.Fatal(err)
	}
	if err := changeset.Show(&shown, plan.CS); err != nil {
		t.Fatal(err)
	}
	for name, s := range p.all() {
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 12 && strings.Contains(shown.String(), l[4:]) {
				t.Errorf("the plan shows secret %s:\n%s", name, shown.String())
			}
		}
	}
	if !strings.Contains(shown.String(), "[REDACTED:github-pat]") {
		t.Errorf("the diff shows no marker:\n%s", shown.String())
	}
	jdir := t.TempDir()
	res, err := changeset.Apply(plan.CS, changeset.ApplyOptions{JournalDir: jdir})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range p.all() {
		if files := grepStore(t, root, s); len(files) > 0 {
			t.Errorf("secret %s still in %v", name, files)
		}
		if files := grepStore(t, res.Journal, s); len(files) == 0 && name != "github-file" {
			t.Errorf("the journal holds no copy of secret %s", name)
		}
	}
	after := lineShapes(t, root)
	for path, ls := range shapes {
		if len(after[path]) != len(ls) {
			t.Errorf("%s: %d lines, was %d", path, len(after[path]), len(ls))
			continue
		}
		for i := range ls {
			if ls[i] != after[path][i] {
				t.Errorf("%s:%d: shape changed:\n was %s\n now %s", path, i+1, ls[i], after[path][i])
			}
		}
	}
	now, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(codes(before)) != fmt.Sprint(codes(now)) {
		t.Errorf("validate: before %v, after %v", codes(before), codes(now))
	}
	n := 0
	Scan(Options{Root: root}, func(f *Finding) error { n++; t.Errorf("left: %s:%d %s", f.Path, f.Line, f.Rule); return nil })
	again, err := PlanRedact(Options{Root: root})
	if err != nil || !again.CS.Empty() {
		t.Errorf("a second plan: %v, %d ops", err, len(again.CS.Ops))
	}
	if err := changeset.RemoveJournal(jdir, res.Journal); err != nil {
		t.Fatal(err)
	}
	for name, s := range p.all() {
		if files := grepStore(t, jdir, s); len(files) > 0 {
			t.Errorf("secret %s still in %v after the journal went", name, files)
		}
	}
}

func codes(r *validate.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %d", filepath.Base(f.Path), f.Code, f.Line))
	}
	sort.Strings(out)
	return out
}

// lineShapes returns, for each JSON lines file of the store, each line's
// shape: its members and their kinds, recursively, and its uuid and
// parentUuid (strings are left out but for those).
func lineShapes(t testing.TB, root string) map[string][]string {
	out := map[string][]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		raw, _ := os.ReadFile(p)
		for _, l := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
			var v any
			if err := json.Unmarshal(l, &v); err != nil {
				out[p] = append(out[p], "not JSON")
				continue
			}
			out[p] = append(out[p], shape(v, ""))
		}
		return nil
	})
	return out
}

func shape(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		var ks []string
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var b strings.Builder
		b.WriteString("{")
		for _, k := range ks {
			b.WriteString(k + ":" + shape(x[k], k) + ",")
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteString("[")
		for _, e := range x {
			b.WriteString(shape(e, key) + ",")
		}
		return b.String() + "]"
	case string:
		switch key {
		case "uuid", "parentUuid", "type", "signature", "id", "tool_use_id", "sessionId":
			return x
		}
		return "s"
	}
	return fmt.Sprintf("%T", v)
}
