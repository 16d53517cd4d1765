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
	RemoveTemp()
	os.Exit(code)
}
