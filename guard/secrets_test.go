package guard

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/plant"
)

// TestHookSecrets: with the scan on, the SessionEnd hook of a session
// holding secrets records them (writing nothing to the store); the next
// start, new or resumed, says which session holds how many and the cfix
// redact command, once; with the scan off, neither happens.
func TestHookSecrets(t *testing.T) {
	p := plant.New(t)
	root, _ := plant.Store(t, p)
	const sid = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	path := filepath.Join(root, "projects/-home-dev-work-alpha", sid+".jsonl")
	before := listing(t, root)
	for _, on := range []bool{false, true} {
		state := t.TempDir()
		if err := SetSecrets(state, on); err != nil {
			t.Fatal(err)
		}
		if err := Hook(state, root, "SessionEnd", input("SessionEnd", "", path, sid), &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		st, err := ReadSecrets(state)
		if err != nil {
			t.Fatal(err)
		}
		if !on {
			if len(st.Found) > 0 {
				t.Errorf("off: the SessionEnd hook recorded %v", st.Found)
			}
			continue
		}
		if len(st.Found) != 1 || st.Found[0].Session != sid || st.Found[0].Secrets < 5 {
			t.Fatalf("found %+v", st.Found)
		}
		// A new session starts: it is told.
		var out bytes.Buffer
		if err := Hook(state, root, "SessionStart", input("SessionStart", "startup", "", "99999999-2222-3333-4444-555555555555"), &out); err != nil {
			t.Fatal(err)
		}
		var ans Output
		if err := json.Unmarshal(out.Bytes(), &ans); err != nil {
			t.Fatalf("answer %q: %v", out.String(), err)
		}
		for _, want := range []string{sid, "cfix redact", "github-pat", "secrets"} {
			if !strings.Contains(ans.SystemMessage, want) || !strings.Contains(ans.HookSpecificOutput.AdditionalContext, want) {
				t.Errorf("answer lacks %q: %+v", want, ans)
			}
		}
		for _, s := range p.All() {
			if strings.Contains(out.String(), s) || strings.Contains(out.String(), s[4:12]) {
				t.Errorf("the answer holds a secret: %s", out.String())
			}
		}
		// Told once.
		out.Reset()
		if err := Hook(state, root, "SessionStart", input("SessionStart", "resume", path, sid), &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "cfix redact") {
			t.Errorf("told twice: %s", out.String())
		}
	}
	if after := listing(t, root); after != before {
		t.Errorf("the hooks changed the store")
	}
}
