package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Set by the release build (goreleaser): -ldflags "-X main.version=v1.2.3
// -X main.commit=abc123 -X main.date=2026-01-02T03:04:05Z". Empty ones are
// read from the build info Go records.
var version, commit, date string

// versionText is what cfix --version and cfix version print: version,
// commit, build date and Go version.
func versionText() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(bi, version, commit, date)
}

// formatVersion describes a build: the -X values where set, else what bi
// records (a go install pkg@v1.2.3 build has its module version; a build
// in a git checkout has vcs.revision, vcs.time and vcs.modified).
func formatVersion(bi *debug.BuildInfo, v, c, d string) string {
	modified := false
	if bi != nil {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					c = s.Value
				}
			case "vcs.time":
				if d == "" {
					d = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	} else if modified {
		c += " (modified)"
	}
	if d == "" {
		d = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cfix %s\n", v)
	fmt.Fprintf(&b, "commit  %s\n", c)
	fmt.Fprintf(&b, "built   %s\n", d)
	fmt.Fprintf(&b, "go      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// versionLine is the version alone (v1.2.3, or a pseudo-version).
func versionLine() string {
	v, _, _ := strings.Cut(versionText(), "\n")
	return strings.TrimPrefix(v, "cfix ")
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cfix's version, commit, build date and Go version",
		Long: `Version prints cfix's version (a release's tag, the module version of a
go install ...@VERSION build, or a pseudo-version of the git checkout it was
built in), the commit, the build date (the commit's time for a build from a
checkout) and the Go version and platform. cfix --version prints the same.`,
		Example: `  cfix version
  cfix --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}
