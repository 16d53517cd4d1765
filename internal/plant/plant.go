// Package plant puts secrets of real shapes into a copy of a corpus
// store the ways real work does, for the tests of cfix secrets, redact,
// export --redact and the MCP server: each secret, and where it is.
package plant

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
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
)

// T is what the helpers need of a test: testing.TB, or a script's
// adapter of it.
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// Secrets are secrets of real shapes, random each run (the rules check
// their entropy): what a test plants in a store.
type Secrets struct {
	GitHub, GitHubFile, AWSID, AWSSecret, Slack, Anthropic, Stripe, PEM string
}

// New returns new secrets.
func New(t T) Secrets {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return secrets(mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 7)), strings.TrimSpace(pemKey))
}

// Seeded returns the same secrets for the same seed, for an output shown
// in the docs: their private key is random text between a PEM key's
// lines (what the rules find), not a key.
func Seeded(seed uint64) Secrets {
	rng := mrand.New(mrand.NewPCG(seed, 7))
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for range 12 {
		for range 64 {
			b.WriteByte(b64[rng.IntN(len(b64))])
		}
		b.WriteByte('\n')
	}
	b.WriteString("-----END RSA PRIVATE KEY-----")
	return secrets(rng, b.String())
}

// secrets draws the secrets but the private key from rng.
func secrets(rng *mrand.Rand, pemKey string) Secrets {
	pick := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	return Secrets{
		GitHub:     "ghp_" + pick(36, alnum),
		GitHubFile: "ghp_" + pick(36, alnum),
		AWSID:      "AKIA" + pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
		AWSSecret:  pick(40, alnum+"+/"),
		Slack:      "xoxb-" + pick(11, "0123456789") + "-" + pick(12, "0123456789") + "-" + pick(24, alnum),
		Anthropic:  "sk-ant-api03-" + pick(93, alnum+"_-") + "AA",
		Stripe:     "sk_live_" + pick(32, alnum),
		PEM:        pemKey,
	}
}

// All names the secrets.
func (p Secrets) All() map[string]string {
	return map[string]string{"github": p.GitHub, "github-file": p.GitHubFile, "aws-id": p.AWSID, "aws-secret": p.AWSSecret,
		"slack": p.Slack, "anthropic": p.Anthropic, "stripe": p.Stripe, "pem": p.PEM}
}

// CopyTree copies the folder src to dst.
func CopyTree(t T, dst, src string) {
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

// EditLine rewrites line n (1-based) of a JSON lines file by edit, which
// gets the decoded entry.
func EditLine(t T, path string, n int, edit func(e map[string]any)) {
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

// LineWith returns the number of the first line of path holding s.
func LineWith(t T, path, s string) int {
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

// Store copies the 2.1.332 corpus store and plants the secrets (Into) the
// ways real work does: a token pasted in a prompt, a .env printed by Bash
// (in the tool_result and in toolUseResult), keys in thinking and in a
// Bash command of a subagent, a PEM key read by Read, a prompt in
// history.jsonl, a file-history backup of an edited file. It returns the
// store and where each secret is (file and line).
func Store(t testing.TB, p Secrets) (string, map[string][]string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	CopyTree(t, root, filepath.Join(damage.Corpus(), "2.1.332", ".claude"))
	return root, Into(t, root, p)
}

// Into plants the secrets into root, a copy of the 2.1.332 corpus store
// (see Store), and returns where each is.
func Into(t T, root string, p Secrets) map[string][]string {
	t.Helper()
	const sid = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	main := filepath.Join(root, "projects/-home-dev-work-alpha", sid+".jsonl")
	sub := filepath.Join(root, "projects/-home-dev-work-alpha", sid, "subagents/agent-a286146d096c0ed79.jsonl")
	beta := filepath.Join(root, "projects/-home-dev-work-beta-dir-sub/87441586-86a4-4e94-a1b0-afc734b56ec1.jsonl")
	where := map[string][]string{}
	at := func(name, path string, line int, w string) {
		where[name] = append(where[name], fmt.Sprintf("%s:%d %s", path, line, w))
	}

	// A prompt.
	n := LineWith(t, main, `"content":"hello, first session BASH: echo hello-from-bash"},"uuid"`)
	EditLine(t, main, n, func(e map[string]any) {
		e["message"].(map[string]any)["content"] = "hello, first session BASH: echo hello-from-bash; my token is " + p.GitHub
	})
	at("github", main, n, "prompt")
	// cat .env, in the result and in toolUseResult.
	env := fmt.Sprintf("AWS_ACCESS_KEY_ID=%s\naws_secret_access_key=%s\nSLACK_TOKEN=%s\nANTHROPIC_API_KEY=%s\n", p.AWSID, p.AWSSecret, p.Slack, p.Anthropic)
	n = LineWith(t, main, `"stdout":"hello-from-bash"`)
	EditLine(t, main, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["content"] = env
		e["toolUseResult"].(map[string]any)["stdout"] = env
	})
	for _, s := range []string{"aws-id", "aws-secret", "slack", "anthropic"} {
		at(s, main, n, "tool output")
	}
	// Thinking.
	n = LineWith(t, main, `"thinking":"two at once"`)
	EditLine(t, main, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["thinking"] = "two at once; the stripe key " + p.Stripe + " should not be printed"
	})
	at("stripe", main, n, "thinking")
	// A subagent's Bash command.
	n = LineWith(t, sub, `"command":"echo sub"`)
	EditLine(t, sub, n, func(e map[string]any) {
		for _, b := range e["message"].(map[string]any)["content"].([]any) {
			if b := b.(map[string]any); b["type"] == "tool_use" {
				b["input"].(map[string]any)["command"] = `curl -H "x-api-key: ` + p.Anthropic + `" https://api.anthropic.com/v1/models`
			}
		}
	})
	at("anthropic", sub, n, "tool input")
	// A PEM key read by Read: newlines escaped in the JSON string.
	n = LineWith(t, beta, `"toolUseResult":{"type":"text","file"`)
	EditLine(t, beta, n, func(e map[string]any) {
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["content"] = "1\t" + strings.ReplaceAll(p.PEM, "\n", "\n2\t")
		e["toolUseResult"].(map[string]any)["file"].(map[string]any)["content"] = p.PEM + "\n"
	})
	at("pem", beta, n, "tool output")
	// history.jsonl.
	hist := filepath.Join(root, "history.jsonl")
	h, _ := json.Marshal(map[string]any{"display": "deploy with " + p.GitHub, "pastedContents": map[string]any{}, "timestamp": 1795724311527,
		"project": "/home/dev/work/alpha", "sessionId": sid})
	other, _ := json.Marshal(map[string]any{"display": "a plain prompt", "pastedContents": map[string]any{}, "timestamp": 1795724311528,
		"project": "/home/dev/work/alpha", "sessionId": sid})
	if err := os.WriteFile(hist, append(append(append(other, '\n'), h...), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	at("github", hist, 2, "prompt")
	// A file-history backup.
	fh := filepath.Join(root, "file-history", sid, "3f2a9c0d1e5b7a64@v2")
	os.MkdirAll(filepath.Dir(fh), 0o700)
	if err := os.WriteFile(fh, []byte("# config\nhost=example.com\nGITHUB_TOKEN="+p.GitHubFile+"\nport=8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	at("github-file", fh, 3, "file backup")
	// Old enough for apply to take them as not live.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	return where
}

// Grep returns the files of root holding s, raw or as a JSON string
// holds it.
func Grep(t T, root, s string) []string {
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
