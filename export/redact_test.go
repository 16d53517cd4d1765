package export

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/plant"
	"github.com/cfix-dev/cfix/secrets"
	"github.com/cfix-dev/cfix/show"
)

// TestRedact: an export with Redact holds none of the secrets planted in
// a session (a prompt, a .env printed by Bash, thinking, a subagent's Bash
// command), in every format, and says where each was; without it, the
// export holds them (the test can fail).
func TestRedact(t *testing.T) {
	p := plant.New(t)
	root, _ := plant.Store(t, p)
	fam, err := show.Resolve(root, "bc1c66c0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := secrets.NewFilter(secrets.RedactorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := []string{p.GitHub, p.AWSID, p.Slack, p.Anthropic, p.Stripe}
	for _, format := range Formats {
		var plain, red bytes.Buffer
		if err := Write(&plain, fam, Options{Format: format}); err != nil {
			t.Fatal(err)
		}
		if err := Write(&red, fam, Options{Format: format, Redact: f}); err != nil {
			t.Fatal(err)
		}
		for _, s := range in {
			esc, _ := json.Marshal(s)
			if !strings.Contains(plain.String(), s) && !bytes.Contains(plain.Bytes(), esc[1:len(esc)-1]) {
				t.Errorf("%s: the plain export lacks %s…: the test proves nothing", format, s[:6])
			}
			if strings.Contains(red.String(), s) || bytes.Contains(red.Bytes(), esc[1:len(esc)-1]) {
				t.Errorf("%s: the redacted export holds %s…", format, s[:6])
			}
		}
		if !strings.Contains(red.String(), "[REDACTED:github-pat]") {
			t.Errorf("%s: no marker in the redacted export", format)
		}
		if format == "jsonl" {
			// Still the chain's entries, each a JSON line.
			pl, rl := strings.Count(plain.String(), "\n"), strings.Count(red.String(), "\n")
			if pl != rl {
				t.Errorf("jsonl: %d lines redacted, %d plain", rl, pl)
			}
			for i, l := range strings.Split(strings.TrimSpace(red.String()), "\n") {
				if !json.Valid([]byte(l)) {
					t.Errorf("jsonl line %d is not JSON: %.200s", i+1, l)
				}
			}
		}
	}
}

// TestRedactInlineSubagent: a subagent a 1.0.x transcript holds inline
// (sidechain entries, shown under the call that started them) is
// redacted too.
func TestRedactInlineSubagent(t *testing.T) {
	p := plant.New(t)
	root := filepath.Join(t.TempDir(), ".claude")
	plant.CopyTree(t, root, filepath.Join(damage.Corpus(), "1.0.128", ".claude"))
	path := filepath.Join(root, "projects/-home-dev-work-alpha/e08a945a-5a3e-434e-8f69-9e8721080cda.jsonl")
	plant.EditLine(t, path, 20, func(e map[string]any) {
		if e["isSidechain"] != true {
			t.Fatalf("line 20 is not a sidechain entry: %v", e)
		}
		c := e["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
		c["content"] = "GITHUB_TOKEN=" + p.GitHub
	})
	fam, err := show.Resolve(root, "e08a945a")
	if err != nil {
		t.Fatal(err)
	}
	f, err := secrets.NewFilter(secrets.RedactorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var plain, red bytes.Buffer
	if err := Write(&plain, fam, Options{Format: "md"}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&red, fam, Options{Format: "md", Redact: f}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plain.String(), p.GitHub) {
		t.Fatalf("the plain export lacks the token: the test proves nothing")
	}
	if strings.Contains(red.String(), p.GitHub) {
		t.Errorf("the redacted export holds the inline subagent's token")
	}
}
