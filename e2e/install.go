// Package e2e runs real Claude Code versions, installed from the npm
// registry, against the fake Messages API of package fakeapi, to produce
// real session stores and to check what cfix does to them.
//
// The versions are listed in versions.txt; scripts/install-claude.sh (make
// claude-versions) installs them into .cache/claude/<version>/. The tests'
// TestMain runs that script itself, so "go test ./e2e" works on a fresh
// machine that has npm and can reach the registry.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// RepoRoot returns the root of the cfix checkout (the folder holding
// go.mod), found from this source file's location.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(filepath.Dir(file))
}

// CacheDir returns where the Claude Code versions are installed:
// $CLAUDE_CACHE_DIR, else .cache/claude in the checkout (the same rule as
// scripts/install-claude.sh).
func CacheDir() string {
	if d := os.Getenv("CLAUDE_CACHE_DIR"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), ".cache", "claude")
}

// Versions returns the pinned Claude Code versions, read from
// e2e/versions.txt: one per line, "#" starts a comment.
func Versions() ([]string, error) {
	path := filepath.Join(RepoRoot(), "e2e", "versions.txt")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("e2e: read versions: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("e2e: %s lists no version", path)
	}
	return out, nil
}

// ErrNotInstalled is returned by Executable for a version that has no
// complete install.
var ErrNotInstalled = errors.New("not installed")

// Executable returns the program that runs the given installed version:
// the path recorded in .cache/claude/<version>/.installed, which the install
// script writes once the install is complete and works.
func Executable(version string) (string, error) {
	dir := filepath.Join(CacheDir(), version)
	raw, err := os.ReadFile(filepath.Join(dir, ".installed"))
	if err != nil {
		return "", fmt.Errorf("claude %s: %w (run 'make claude-versions')", version, ErrNotInstalled)
	}
	exe := filepath.Join(dir, strings.TrimSpace(string(raw)))
	if fi, err := os.Stat(exe); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("claude %s: %s is not an executable file: %w (run 'make claude-versions')", version, exe, ErrNotInstalled)
	}
	return exe, nil
}

var installMu sync.Mutex

// Install installs the given versions (every pinned version when none is
// given) with scripts/install-claude.sh, unless they are installed already.
// Without npm it fails with a message saying so.
func Install(versions ...string) error {
	if len(versions) == 0 {
		var err error
		if versions, err = Versions(); err != nil {
			return err
		}
	}
	installMu.Lock()
	defer installMu.Unlock()
	var missing []string
	for _, v := range versions {
		if _, err := Executable(v); err != nil {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("e2e: Claude Code %s not installed and npm is not in PATH: install Node.js and npm, then run 'make claude-versions' (or go test -short to skip the end-to-end tests)", strings.Join(missing, ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	script := filepath.Join(RepoRoot(), "scripts", "install-claude.sh")
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, missing...)...)
	cmd.Dir = RepoRoot()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("e2e: install Claude Code %s: %v\n%s", strings.Join(missing, ", "), err, out.String())
	}
	for _, v := range missing {
		if _, err := Executable(v); err != nil {
			return fmt.Errorf("e2e: after install: %w\n%s", err, out.String())
		}
	}
	return nil
}

// temps tracks the temporary folders the package made outside any test's
// TempDir (scenario homes that outlive one test, the cfix build).
var temps struct {
	sync.Mutex
	dirs []string
}

func mkTemp(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", err
	}
	temps.Lock()
	temps.dirs = append(temps.dirs, dir)
	temps.Unlock()
	return dir, nil
}

// RemoveTemp removes the temporary folders the package made. TestMain calls
// it after the tests; with CFIX_E2E_KEEP=1 it keeps them and says where they
// are.
func RemoveTemp() {
	temps.Lock()
	defer temps.Unlock()
	for _, d := range temps.dirs {
		if os.Getenv("CFIX_E2E_KEEP") != "" {
			fmt.Fprintf(os.Stderr, "e2e: kept %s\n", d)
			continue
		}
		os.RemoveAll(d)
	}
	temps.dirs = nil
}
