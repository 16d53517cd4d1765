package validate_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// newTypeLines are entries of the types 2.1.207 to 2.1.232 write, as the
// skeleton of a real store of those versions holds them, and frame-link
// as 2.1.332 writes it.
var newTypeLines = []string{
	`{"type":"bridge-session","sessionId":"bc1c66c0-560d-4a6f-b0d4-796e1f92068c","bridgeSessionId":"xxxxxxxxxxxxxxxxxxxxxxxxxxxx","lastSequenceNum":0,"ownerAccountUuid":"xxxx","ownerOrganizationUuid":"xxxx"}`,
	`{"type":"file-history-delta","messageId":"ac1f8b81-3ea5-4407-8e86-c97909e45501","snapshotMessageId":"77faf9aa-49ac-425e-9ec7-d862c3be03b7","trackingPath":"xxxx","backup":{"backupFileName":"d26db686c3c2ef01@v1","version":1,"backupTime":"2026-08-05T09:03:05.400Z","realParentDir":"xxxx"},"timestamp":"2026-08-05T09:03:05.400Z"}`,
	`{"type":"frame-link","sessionId":"bc1c66c0-560d-4a6f-b0d4-796e1f92068c","path":"xxxx","frameUrl":"xxxx","title":"xxxx","timestamp":"2026-08-12T06:22:34.454Z"}`,
	`{"type":"frame-link","artifactCount":2,"sessionId":"bc1c66c0-560d-4a6f-b0d4-796e1f92068c","timestamp":"2026-11-20T10:00:00.000Z"}`,
}

// TestNewEntryTypes: the entry types of 2.1.2xx (bridge-session,
// file-history-delta, frame-link; fork-context-ref in a subagent) have a
// schema: no type-unknown or schema-invalid for them, and nothing else.
func TestNewEntryTypes(t *testing.T) {
	root := damage.CopyStore(t, "2.1.332")
	main := filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c.jsonl")
	before := run(t, root)
	appendLines(t, main, newTypeLines...)
	agents, _ := filepath.Glob(filepath.Join(root, "projects", "-home-dev-work-alpha", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c", "subagents", "agent-*.jsonl"))
	if len(agents) == 0 {
		t.Fatal("no subagent in the corpus store")
	}
	b, err := os.ReadFile(agents[0])
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(agents[0]), "agent-"), ".jsonl")
	ref := `{"type":"fork-context-ref","agentId":"` + id + `","parentSessionId":"bc1c66c0-560d-4a6f-b0d4-796e1f92068c","parentLastUuid":"00000000-0000-4000-8000-000000000000","contextLength":3}` + "\n"
	if err := os.WriteFile(agents[0], append([]byte(ref), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	after := run(t, root)
	for _, f := range after.Findings {
		if f.Code == validate.TypeUnknown || f.Code == validate.SchemaInvalid {
			t.Errorf("%s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	if len(after.Findings) != len(before.Findings) {
		for _, f := range after.Findings {
			t.Logf("%s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
		t.Errorf("%d findings, %d before the new entries", len(after.Findings), len(before.Findings))
	}
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWildNewEntryTypes: the skeleton of a real store of 2.1.207 to
// 2.1.232 holds the four types, and validate knows each of them.
func TestWildNewEntryTypes(t *testing.T) {
	const name = "2.1.207-2.1.232"
	root := wild.Root(name)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		for _, typ := range []string{"bridge-session", "file-history-delta", "fork-context-ref", "frame-link"} {
			if bytes.Contains(b, []byte(`"type":"`+typ+`"`)) {
				seen[typ] = true
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 {
		t.Fatalf("the store holds %v, want the four types", seen)
	}
	for _, f := range run(t, root).Findings {
		if f.Code == validate.TypeUnknown || f.Code == validate.SchemaInvalid {
			t.Errorf("%s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
}
