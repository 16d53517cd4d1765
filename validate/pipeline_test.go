package validate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBigFilePathAgrees: checking a file's lines on several cores (big
// files) finds exactly what the one-core path finds.
func TestBigFilePathAgrees(t *testing.T) {
	damaged := t.TempDir()
	dir := filepath.Join(damaged, "projects", "-w")
	os.MkdirAll(dir, 0o700)
	body := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00Z","cwd":"/w","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:01Z","cwd":"/w","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:01Z","cwd":"/w","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}

{"type":"user","uuid":oops}
{"type":"mystery","x":"\ud83d"}{"type":"queue-operation","operation":"enqueue","timestamp":"t","sessionId":"s"}
{"type":"user","uuid":"u2","parentUuid":"gone","sessionId":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:02Z","cwd":"/elsewhere","message":{"role":"user","content":7}}
` + "\x00\x00\x00" + `{"type":"user","torn`
	os.WriteFile(filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001.jsonl"), []byte(body), 0o600)
	roots := []string{damaged}
	for _, v := range []string{"1.0.51", "2.0.77", "2.1.88", "2.1.330"} {
		roots = append(roots, filepath.Join("..", "testdata", "corpus", v, ".claude"))
	}
	defer func(old int64) { bigFile = old }(bigFile)
	for _, root := range roots {
		bigFile = 1 << 62
		one, err := Run(Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		bigFile = 0
		many, err := Run(Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one.Findings, many.Findings) {
			t.Errorf("%s: the two paths differ:\none core: %+v\nmany:     %+v", root, one.Findings, many.Findings)
		}
		if root == damaged && len(one.Findings) < 8 {
			t.Errorf("damaged store: only %d findings: %+v", len(one.Findings), one.Findings)
		}
	}
}
