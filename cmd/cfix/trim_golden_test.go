package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// TestTrimForkGolden: the diff and the JSON of a trim plan, and the diff
// of a fork plan, of the 2.1.88 corpus session.
func TestTrimForkGolden(t *testing.T) {
	// A path of fixed length: the plan's sizes depend on the paths it holds.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cfix-golden-trim-%010d", os.Getpid()))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := damage.CopyStoreTo(t, damage.V88, dir)
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"

	out, code := cli(t, "trim", id, "--thinking", "--tool-output", "--keep-turns", "1", "--root", root, "--exit-code")
	if code != exitChanges {
		t.Errorf("trim dry run with --exit-code: status %d, want %d", code, exitChanges)
	}
	golden(t, "trim-plan.diff", strings.ReplaceAll(out, root, "$ROOT"))
	out, code = cli(t, "trim", id, "--thinking", "--tool-output", "--keep-turns", "1", "--root", root, "--json")
	if code != exitOK {
		t.Errorf("trim --json dry run: status %d", code)
	}
	golden(t, "trim-plan.json", strings.ReplaceAll(out, root, "$ROOT"))
	out, code = cli(t, "fork", id, "--turn", "1", "--root", root)
	if code != exitOK {
		t.Errorf("fork dry run: status %d", code)
	}
	golden(t, "fork-plan.diff", strings.ReplaceAll(out, root, "$ROOT"))
}
