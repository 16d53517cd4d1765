package mcpserver

import (
	"os"
	"testing"
)

// TestMain keeps what the server caches (the catalog's cache) in a folder
// of the test's own, never in a HOME of the machine.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cfix-mcpserver-test-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
