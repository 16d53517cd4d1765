package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstallGOBIN: make install puts cfix where go install would, in
// the GOBIN of the environment (the Makefile set it with :=, so cfix went
// to $GOPATH/bin whatever GOBIN said), or of make's command line.
func TestMakeInstallGOBIN(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs cfix")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	for _, how := range []string{"environment", "command line"} {
		bin := t.TempDir()
		cmd := exec.Command("make", "-C", filepath.Join("..", ".."), "install")
		cmd.Env = os.Environ()
		if how == "environment" {
			cmd.Env = append(cmd.Env, "GOBIN="+bin)
		} else {
			cmd.Args = append(cmd.Args, "GOBIN="+bin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: make install: %v\n%s", how, err, out)
		}
		if fi, err := os.Stat(filepath.Join(bin, "cfix")); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("GOBIN from the %s: no cfix in %s (%v):\n%s", how, bin, err, out)
		}
		if !strings.Contains(string(out), "cfix installed to "+bin+"/cfix") {
			t.Errorf("GOBIN from the %s: make says\n%s", how, out)
		}
	}
}
