package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testStores are the stores of testdata: the corpus stores the real
// clients wrote and the skeletons of real stores (ids, hashes, filler; no
// secrets).
func testStores(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"../testdata/corpus/*/.claude", "../testdata/wild/*/.claude"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 15 {
		t.Fatalf("found %d test stores", len(out))
	}
	return out
}

// TestFalseFindings scans every store of testdata: they hold no secret, so
// every finding is a false one. The bar: at most one per 100 transcripts.
func TestFalseFindings(t *testing.T) {
	transcripts, findings := 0, 0
	for _, root := range testStores(t) {
		filepath.WalkDir(filepath.Join(root, "projects"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				transcripts++
			}
			return nil
		})
		_, err := Scan(Options{Root: root, Ignore: map[string]bool{}}, func(f *Finding) error {
			findings++
			t.Logf("false finding: %s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Where, f.Preview)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
	}
	t.Logf("%d findings in %d transcripts", findings, transcripts)
	if findings*100 > transcripts {
		t.Errorf("%d false findings in %d transcripts (bar: at most 1 per 100)", findings, transcripts)
	}
}
