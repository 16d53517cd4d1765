// Package chromium loads pages in a real headless Chromium for tests: the
// DOM it parsed from a file, and a screenshot of it. scripts/test-deps.sh
// installs chromium.
package chromium

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Path is the browser the tests run.
const Path = "/usr/bin/chromium"

// Browser runs headless Chromium for a test, with a profile of its own.
type Browser struct {
	t    testing.TB
	args []string
}

// New fails the test when Chromium is not installed, saying that what
// (the page a package writes) is tested in it.
func New(t testing.TB, what string) *Browser {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Fatalf("%s: %v: %s is tested in headless Chromium; install it (as root: apt-get install -y chromium)", Path, err, what)
	}
	return &Browser{t: t, args: []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(t.TempDir(), "profile")}}
}

// Run runs Chromium with extra arguments and returns what it printed; it
// fails the test when Chromium fails or takes more than 90 seconds.
func (b *Browser) Run(extra ...string) []byte {
	b.t.Helper()
	cmd := exec.Command(Path, append(append([]string(nil), b.args...), extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	timer := time.AfterFunc(90*time.Second, func() { cmd.Process.Kill(); close(done) })
	out, err := cmd.Output()
	if !timer.Stop() {
		<-done
	}
	if err != nil {
		b.t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.Bytes())
	}
	return out
}

// DOM is the page Chromium loaded from file, serialized.
func (b *Browser) DOM(file string) string {
	b.t.Helper()
	return string(b.Run("--dump-dom", "file://"+file))
}

// Screenshot has Chromium load file in a window of size ("W,H") and save
// a screenshot of it as shot.
func (b *Browser) Screenshot(file, shot, size string) {
	b.t.Helper()
	b.Run("--screenshot="+shot, "--window-size="+size, "file://"+file)
}
