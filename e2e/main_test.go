package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain installs the pinned Claude Code versions first, or those
// CFIX_E2E_VERSIONS names (a no-op when they are installed), so "go test
// ./e2e" works on a fresh machine. With -short the end-to-end tests are
// skipped and nothing is installed.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		versions, err := ScenarioVersions()
		if err == nil {
			err = Install(versions...)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if os.Getenv("CFIX_E2E_COSTS") == "1" {
		WriteCosts(os.Stderr)
	}
	RemoveTemp()
	os.Exit(code)
}

// versionsSince are the scenario versions from since on, the ones a test
// of a behaviour first measured with since runs. It skips the test in
// -short mode (it runs Claude Code) and when no such version is pinned.
func versionsSince(t *testing.T, since string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Claude Code")
	}
	versions, err := ScenarioVersions()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range versions {
		if Since(v, since) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		t.Skipf("no version from %s on among %v", since, versions)
	}
	return out
}

// newestPinned is the newest pinned version, installed, for a test of a
// behaviour measured with it alone. It skips the test in -short mode (it
// runs Claude Code).
func newestPinned(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: runs a real Claude Code version")
	}
	pinned, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	version := pinned[len(pinned)-1]
	if err := Install(version); err != nil {
		t.Fatal(err)
	}
	return version
}
