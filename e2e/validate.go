package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
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
func ValidateStore(t testing.TB, claudeDir string) Report {
	t.Helper()
	bin, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "validate", "--root", claudeDir, "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		t.Fatalf("cfix validate --root %s --json: %v\nstdout: %s\nstderr: %s", claudeDir, err, clip(stdout.String(), 2000), clip(stderr.String(), 2000))
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("cfix validate --root %s --json: output is not a report: %v\nstdout: %s\nstderr: %s", claudeDir, err, clip(stdout.String(), 2000), clip(stderr.String(), 2000))
	}
	if rep.Findings == nil && !bytes.Contains(stdout.Bytes(), []byte(`"findings"`)) {
		t.Fatalf("cfix validate --root %s --json: no findings array in %s", claudeDir, clip(stdout.String(), 2000))
	}
	return rep
}
