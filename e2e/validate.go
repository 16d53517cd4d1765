package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Finding is one problem cfix validate reports.
type Finding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // error, warning, notice
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

// Report is the output of cfix validate --json.
type Report struct {
	Findings []Finding      `json:"findings"`
	Counts   map[string]any `json:"counts"`
}

// Errors returns the findings of severity "error".
func (r Report) Errors() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == "error" {
			out = append(out, f)
		}
	}
	return out
}

var cfixBuild struct {
	once sync.Once
	path string
	err  error
}

// CfixBinary builds ./cmd/cfix once per test binary (go build -o into a
// temporary folder) and returns its path.
func CfixBinary() (string, error) {
	cfixBuild.once.Do(func() {
		dir, err := mkTemp("cfix-e2e-bin-")
		if err != nil {
			cfixBuild.err = err
			return
		}
		out := filepath.Join(dir, "cfix")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/cfix")
		cmd.Dir = RepoRoot()
		if msg, err := cmd.CombinedOutput(); err != nil {
			cfixBuild.err = fmt.Errorf("e2e: go build ./cmd/cfix: %v\n%s", err, msg)
			return
		}
		cfixBuild.path = out
	})
	return cfixBuild.path, cfixBuild.err
}

// ValidateStore runs "cfix validate --root claudeDir --json" and returns
// its report. Exit codes 0 (clean) and 1 (errors found) are normal; any
// other outcome, or output that is not the JSON report, fails the test.
func ValidateStore(t testing.TB, claudeDir string, args ...string) Report {
	t.Helper()
	res := RunCfix(t, "", append([]string{"validate", "--root", claudeDir, "--json"}, args...)...)
	if res.ExitCode != 0 && res.ExitCode != 1 {
		t.Fatalf("%s", res)
	}
	var rep Report
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, res)
	}
	if rep.Findings == nil && !strings.Contains(res.Stdout, `"findings"`) {
		t.Fatalf("no findings array:\n%s", res)
	}
	return rep
}
