package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// cli runs cfix with args and returns its stdout and exit status.
func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, _, code := cliErr(args...)
	return out, code
}

// TestRepairGolden: the diff and the JSON of a realistic repair plan.
func TestRepairGolden(t *testing.T) {
	// A path of fixed length: the plan's sizes depend on the paths it holds.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cfix-golden-%010d", os.Getpid()))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := damage.CopyStoreTo(t, damage.V88, dir)
	damage.Many(t, root)
	main := damage.MainFile(root)
	n := damage.FindLast(t, main, damage.HasBlock("tool_result"))
	damage.EditLine(t, main, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "the result was lost"}}
	})
	ls := damage.Lines(t, main)
	damage.WriteLines(t, main, append(ls[:12:12], append([][]byte{ls[11]}, ls[12:]...)...), false)
	damage.Age(t, root)

	// The diff of each change, whole (--diff: the plan is longer than a
	// screen, and the default shows its summary alone).
	out, code := cli(t, "repair", "--root", root, "--exit-code", "--diff")
	if code != exitChanges {
		t.Errorf("dry run with --exit-code: status %d, want %d", code, exitChanges)
	}
	golden(t, "repair-plan.diff", strings.ReplaceAll(out, root, "$ROOT"))
	out, code = cli(t, "repair", "--root", root, "--json")
	if code != exitOK {
		t.Errorf("--json dry run: status %d", code)
	}
	golden(t, "repair-plan.json", strings.ReplaceAll(out, root, "$ROOT"))
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/cfix -run Golden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/cfix -run Golden -update rewrites it):\n%s", name, got)
	}
}
