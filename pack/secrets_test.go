package pack_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/internal/plant"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/secrets"
)

// TestSecretsRefused: the sessions of a store with secrets planted the
// ways real work leaves them (a prompt, a .env printed by Bash, thinking,
// a subagent's command, history.jsonl, a file-history backup) are not
// packed, encrypted or not: Write refuses and says how many of which
// rules each session holds, never a secret, and writes nothing.
// AllowSecrets packs them as they are; Redact packs them with the same
// rules counted and no secret left.
func TestSecretsRefused(t *testing.T) {
	p := plant.New(t)
	src, _ := plant.Store(t, p)
	const alpha, beta = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c", "87441586-86a4-4e94-a1b0-afc734b56ec1"
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	pass, err := age.NewScryptRecipient("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	var refused *pack.SecretsError
	for _, o := range []pack.Options{{}, {Recipients: []age.Recipient{id.Recipient()}}, {Recipients: []age.Recipient{pass}, Passphrase: true}} {
		o.Root, o.Sessions, o.Host, o.Home = src, []string{alpha, beta}, "laptop", "/home/dev"
		var out bytes.Buffer
		w, err := pack.Write(&out, o)
		var se *pack.SecretsError
		if !errors.As(err, &se) || w != nil {
			t.Fatalf("encrypted %q: %v, want a SecretsError", o.Recipients, err)
		}
		if out.Len() != 0 {
			t.Errorf("encrypted %q: %d bytes written", o.Recipients, out.Len())
		}
		msg := se.Error()
		for name, s := range p.All() {
			for _, line := range strings.Split(s, "\n") {
				if len(line) > 8 && strings.Contains(msg, line) {
					t.Errorf("the refusal shows the secret %s: %s", name, msg)
				}
			}
		}
		refused = se
	}
	if len(refused.Sessions) != 2 || refused.Sessions[0].ID != alpha || refused.Sessions[1].ID != beta {
		t.Fatalf("refused %+v, want %s then %s", refused.Sessions, alpha, beta)
	}
	a, b := refused.Sessions[0], refused.Sessions[1]
	for _, r := range []string{"github-pat", "aws-access-token", "slack-bot-token", "anthropic-api-key", "stripe-access-token"} {
		if a.Rules[r] == 0 {
			t.Errorf("session %s: no %s counted: %v", alpha, r, a.Rules)
		}
	}
	// The prompt, history.jsonl and the file-history backup each hold a
	// GitHub token.
	if a.Rules["github-pat"] < 3 {
		t.Errorf("session %s: %d github-pat, want 3 at least (prompt, history.jsonl, file-history)", alpha, a.Rules["github-pat"])
	}
	if b.Rules["private-key"] == 0 {
		t.Errorf("session %s: no private-key counted: %v", beta, b.Rules)
	}
	sum := 0
	for _, k := range a.Rules {
		sum += k
	}
	if sum != a.Count {
		t.Errorf("session %s: count %d, rules sum to %d", alpha, a.Count, sum)
	}
	t.Logf("refused: %v", refused)

	// Asked: as they are.
	path, w := packed(t, src, pack.Options{AllowSecrets: true}, alpha, beta)
	if w.Manifest.Redacted || w.Manifest.Sessions[0].Redacted != 0 {
		t.Fatalf("AllowSecrets redacted")
	}
	if got := extracted(t, path); !bytes.Contains(got, []byte(p.GitHub)) || !bytes.Contains(got, []byte(p.GitHubFile)) {
		t.Errorf("AllowSecrets: the pack lacks the secrets")
	}

	// Redacted: the same rules go, none is left.
	f, err := secrets.NewFilter(secrets.RedactorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path, w = packed(t, src, pack.Options{Redact: f}, alpha, beta)
	if !w.Manifest.Redacted {
		t.Fatal("not redacted")
	}
	for i, want := range []pack.SessionSecrets{a, b} {
		s := w.Manifest.Sessions[i]
		if s.Redacted != want.Count || pack.RuleList(s.Rules) != pack.RuleList(want.Rules) {
			t.Errorf("session %s: redacted %d (%s), refused for %d (%s)", s.ID, s.Redacted, pack.RuleList(s.Rules), want.Count, pack.RuleList(want.Rules))
		}
	}
	got := extracted(t, path)
	for name, s := range p.All() {
		for _, line := range strings.Split(s, "\n") {
			if len(line) > 8 && bytes.Contains(got, []byte(line)) {
				t.Errorf("the redacted pack holds %s", name)
			}
		}
	}
}

// TestSecretsIgnored: a finding the store's ignore file names does not
// stop a pack.
func TestSecretsIgnored(t *testing.T) {
	p := plant.New(t)
	src, _ := plant.Store(t, p)
	const beta = "87441586-86a4-4e94-a1b0-afc734b56ec1"
	var fps []string
	if _, err := secrets.Scan(secrets.Options{Root: src, Targets: []string{beta}}, func(f *secrets.Finding) error {
		fps = append(fps, f.Fingerprint)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(fps) == 0 {
		t.Fatal("no finding in the planted session")
	}
	var out bytes.Buffer
	if _, err := pack.Write(&out, pack.Options{Root: src, Sessions: []string{beta}}); err == nil {
		t.Fatal("packed a session with a secret")
	}
	if err := os.WriteFile(filepath.Join(src, secrets.IgnoreFile), []byte(strings.Join(fps, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	packed(t, src, pack.Options{}, beta)
}

// extracted returns every member of the pack at path, one after the
// other.
func extracted(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pack.Open(f, path, pack.Keys{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defer r.Close()
	if err := r.Extract(dir); err != nil {
		t.Fatal(err)
	}
	var all []byte
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return err
	})
	return all
}
