package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// CfixResult is what one cfix run did.
type CfixResult struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
}

func (r CfixResult) String() string {
	return fmt.Sprintf("cfix %q: exit %d\nstdout: %s\nstderr: %s", r.Args, r.ExitCode, clip(r.Stdout, 4000), clip(r.Stderr, 2000))
}

// RunCfix runs the cfix binary CfixBinary builds with args. Its
// environment is the test's without CLAUDE_CONFIG_DIR (pass --root), with
// CFIX_JOURNAL_DIR set to journalDir so backups stay in the test's folders,
// and CFIX_CLIENT=store unless the test's sets it: validate and repair judge
// by the newest version that wrote to the store, not by a claude the
// machine has installed (pass --client to name one).
// Any exit status is returned; a run that cannot start or times out fails
// the test.
func RunCfix(t testing.TB, journalDir string, args ...string) CfixResult {
	t.Helper()
	return RunCfixEnv(t, journalDir, nil, args...)
}

// RunCfixEnv is RunCfix with env (KEY=VALUE) added to cfix's environment
// (a HOME, a remote's endpoint and credentials).
func RunCfixEnv(t testing.TB, journalDir string, extra []string, args ...string) CfixResult {
	t.Helper()
	bin, err := CfixBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") || strings.HasPrefix(kv, "CFIX_JOURNAL_DIR=") || strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	// What cfix caches (the catalog's cache) stays in the test's own
	// folder, never in a HOME of the machine.
	cmd.Env = append(append(env, "CFIX_JOURNAL_DIR="+journalDir, "XDG_CACHE_HOME="+t.TempDir()), extra...)
	if os.Getenv("CFIX_CLIENT") == "" && !hasKey(extra, "CFIX_CLIENT") {
		cmd.Env = append(cmd.Env, "CFIX_CLIENT=store")
	}
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	res := CfixResult{Args: args, Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		res.ExitCode = exitErr.ExitCode()
	default:
		t.Fatalf("cfix %q: %v\n%s", args, err, res)
	}
	return res
}

// hasKey reports whether env (KEY=VALUE) sets key.
func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}
