package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// clientStore is the --client value that asks for the newest version that
// wrote to the store.
const clientStore = "store"

var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// addClientFlag registers --client: the Claude Code version whose resume
// the chain checks model.
func addClientFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "client", "", `the Claude Code version that will resume the sessions (default $CFIX_CLIENT, else the installed claude's, else the newest version that wrote to the store: "store")`)
}

// resumingClient returns the version of the client that will resume the
// store's sessions, and where it comes from: --client (else $CFIX_CLIENT),
// a version or "store"; else the installed claude's (claude --version, the
// program $CFIX_CLAUDE names or claude from PATH); else "", which leaves
// the choice to validate and repair: the newest version that wrote to the
// store.
func resumingClient(flag string) (version, from string, err error) {
	from = "--client"
	if flag == "" {
		flag, from = os.Getenv("CFIX_CLIENT"), "$CFIX_CLIENT"
	}
	switch {
	case flag == clientStore:
		return "", "", nil
	case flag != "":
		if !versionRE.MatchString(flag) {
			return "", "", fmt.Errorf("%s %s: not a Claude Code version (like 2.1.219) nor %q", from, flag, clientStore)
		}
		return flag, from, nil
	}
	prog, err := claudeProgram("")
	if err != nil {
		return "", "", nil
	}
	if v := installedVersion(prog); v != "" {
		return v, "the installed claude (" + prog + ")", nil
	}
	return "", "", nil
}

// installedVersion runs prog --version and returns the version it prints
// ("2.1.219 (Claude Code)"), "" when it prints none within 10 s.
func installedVersion(prog string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog, "--version").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) == 0 || !versionRE.MatchString(f[0]) {
		return ""
	}
	return f[0]
}
