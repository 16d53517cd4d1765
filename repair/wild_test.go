package repair_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// wildFacts is what a repair must keep of a store: every chain entry, every
// tool result, every thinking block of a model that is not Anthropic's.
type wildFacts struct {
	entries  map[string]int // path|uuid → count of lines holding it
	results  map[string]int // path|tool_use_id → tool_result blocks
	foreign  map[string]int // path → thinking blocks of third-party models
	notJSON  map[string]int // path → lines that are not JSON
	repeated map[string]int // path|uuid → byte-identical repeats
}

func readWild(t *testing.T, root string) wildFacts {
	t.Helper()
	w := wildFacts{map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}}
	err := filepath.WalkDir(filepath.Join(root, "projects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		seen := map[string][]byte{}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var e struct {
				UUID    string `json:"uuid"`
				Message struct {
					Model   string          `json:"model"`
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &e) != nil {
				w.notJSON[rel]++
				continue
			}
			if e.UUID != "" {
				if prev, ok := seen[e.UUID]; ok && bytes.Equal(prev, line) {
					w.repeated[rel+"|"+e.UUID]++
				}
				seen[e.UUID] = line
				w.entries[rel+"|"+e.UUID]++
			}
			var blocks []map[string]any
			json.Unmarshal(e.Message.Content, &blocks)
			for _, bl := range blocks {
				switch bl["type"] {
				case "tool_result":
					id, _ := bl["tool_use_id"].(string)
					w.results[rel+"|"+id]++
				case "thinking":
					if validate.ThirdPartyModel(e.Message.Model) {
						w.foreign[rel]++
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWildRepair repairs a copy of each wild store: no chain entry goes but
// byte-identical repeats and lines that are not JSON, no tool_use gets a
// second result (a real one would be shadowed), no thinking of a
// third-party model is stripped, validate finds no error after, and a
// second repair plans nothing.
func TestWildRepair(t *testing.T) {
	for _, name := range wild.Stores(t) {
		t.Run(name, func(t *testing.T) {
			root := wild.Copy(t, name)
			age(t, root)
			before := readWild(t, root)
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if !cs.Empty() {
				apply(t, cs, t.TempDir())
			}
			after := readWild(t, root)
			for k, n := range before.entries {
				if after.entries[k] < n-before.repeated[k] {
					t.Errorf("entry %s: %d lines before, %d after", k, n, after.entries[k])
				}
			}
			for k, n := range after.results {
				if b := before.results[k]; b > 0 && n != b {
					t.Errorf("tool_use %s had %d results, now %d", k, b, n)
				}
			}
			for k, n := range before.foreign {
				if after.foreign[k] != n {
					t.Errorf("%s: %d thinking blocks of third-party models before, %d after", k, n, after.foreign[k])
				}
			}
			rep := findings(t, root)
			for _, f := range rep.Findings {
				if f.Severity == validate.Error {
					t.Errorf("after repair: %s:%d %s: %s", f.Path, f.Line, f.Code, f.Message)
				}
			}
			age(t, root)
			settled(t, root, "")
		})
	}
}

// TestOnlyNotes: repair --only index on a wild store says of the findings it
// leaves what is true: "not selected by --only" of those repair fixes (a
// stub), "no safe automatic fix" of those it never fixes (tool_use calls
// whose result sits on a branch an old client does not load), never that
// repair without --only fixes them.
func TestOnlyNotes(t *testing.T) {
	root := wild.Copy(t, "2.1.12-2.1.29")
	damage.Age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root, Only: []string{"index"}})
	if err != nil {
		t.Fatal(err)
	}
	var trm, stub string
	for _, n := range cs.Notes {
		switch {
		case strings.Contains(n, " tool-result-missing finding"):
			trm = n
		case strings.Contains(n, " session-stub finding"):
			stub = n
		}
	}
	if !strings.HasSuffix(trm, "left: no safe automatic fix; see cfix validate") {
		t.Errorf("the note on tool-result-missing: %q", trm)
	}
	if !strings.HasSuffix(stub, "left: not selected by --only; cfix repair without --only fixes them") {
		t.Errorf("the note on session-stub: %q", stub)
	}
}
