package repair_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/repair"
)

// synthVariant writes a copy of the wild deepseek session whose line 127 is
// the <synthetic> entry of an interrupted turn (partial, unsigned
// thinking), its replies made Anthropic's (a Claude model, a request id)
// and every version set to version, and returns its store and path.
func synthVariant(t *testing.T, version string) (root, path string) {
	t.Helper()
	const rel = "C--Users-d1-d4-d5/e34bc63b-503e-414b-8fec-720c371ef6a9.jsonl"
	b, err := os.ReadFile(filepath.Join(wild.Root("2.1.139-2.1.173"), "projects", rel))
	if err != nil {
		t.Fatal(err)
	}
	ver := regexp.MustCompile(`"version":"[0-9.]+"`)
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		l = strings.ReplaceAll(l, `"model":"deepseek-v4-pro"`, `"model":"claude-sonnet-4-5-20250929"`)
		if strings.Contains(l, `"type":"assistant"`) && !strings.Contains(l, `"<synthetic>"`) {
			l = strings.Replace(l, `{"parentUuid"`, `{"requestId":"req_011CXYMdu1vaiqC69uftUr9D","parentUuid"`, 1)
		}
		lines[i] = ver.ReplaceAllString(l, `"version":"`+version+`"`)
	}
	root = t.TempDir()
	path = filepath.Join(root, "projects", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path
}

// TestSyntheticThinkingKept: repair strips the unsigned thinking of a
// <synthetic> entry only for a client that sends it (2.0.77, 2.1.6); 2.1.7
// and later leave the entry out of the request, and repair leaves it in
// the file.
func TestSyntheticThinkingKept(t *testing.T) {
	for _, c := range []struct {
		version string
		strip   bool
	}{{"2.1.152", false}, {"2.1.7", false}, {"2.1.6", true}, {"2.0.77", true}} {
		t.Run(c.version, func(t *testing.T) {
			root, path := synthVariant(t, c.version)
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			stripped := false
			for _, op := range cs.Ops {
				for _, e := range op.Edits {
					if op.Path == path && e.Line == 127 {
						stripped = true
					}
				}
			}
			if stripped != c.strip {
				t.Errorf("line 127 (the <synthetic> entry) edited: %v, want %v; plan: %+v", stripped, c.strip, cs.Ops)
			}
		})
	}
}
