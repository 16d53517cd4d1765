package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/mcpserver"
	"github.com/cfix-dev/cfix/store"
)

func newMCPCmd() *cobra.Command {
	var root string
	var noRedact bool
	cmd := &cobra.Command{
		Use: "mcp",
		Example: `  cfix mcp
  cfix mcp --root ~/.claude
  cfix mcp install --apply --yes`,
		Short: "Serve the store to Claude over MCP: search, list and read past sessions (read-only)",
		Long: `Mcp serves the Model Context Protocol over stdin and stdout, so that Claude
(or any MCP client) can recall its own past sessions. It never writes to the
store. Its tools:

  search_sessions  find a text (literal, or a regex) in prompts, answers,
                   thinking, tool inputs and outputs: sessions whose title
                   or first prompt matches first, then the places in the
                   conversations, each with session id, title, project,
                   time, role and a snippet; the answer fits max_chars
  list_sessions    a project's sessions (or all), newest first, with title,
                   start, last activity, messages and health
  read_session     a session as cfix export writes it, a page at a time (an
                   offset and max_chars, or from_turn/to_turn), as text;
                   each tool output's first lines, attachments a line each;
                   thinking, whole outputs, subagents and every attachment
                   when asked
  session_health   what cfix validate finds in a session, what a resume does
                   with it, and the command that fixes it

"This project" is the directory the client starts the server in (Claude Code
starts it in the project's directory). Every answer is redacted: each secret
cfix secrets finds (but those .cfix-secrets-ignore names) is replaced by
[REDACTED:<rule>] before it is sent (--no-redact sends them as they are).
cfix mcp install adds the server to
Claude Code's user configuration, as claude mcp add --scope user cfix --
cfix mcp does; cfix mcp uninstall takes it out. Other clients: the command
is "cfix" with the arguments ["mcp"].`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := resolveRoot(root)
			if err != nil {
				return err
			}
			wd, _ := os.Getwd()
			v := strings.TrimPrefix(strings.SplitN(versionText(), "\n", 2)[0], "cfix ")
			var index string
			if c := store.CacheDir(); c != "" {
				index = filepath.Join(c, "export")
			}
			mo := mcpserver.Options{Root: r, Version: v, Dir: wd, Index: index}
			if !noRedact {
				if mo.Redact, err = redactFilter(r); err != nil {
					return err
				}
			}
			if err := mcpserver.Serve(context.Background(), mo, os.Stdin, os.Stdout); err != nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&noRedact, "no-redact", false, "send secrets as they are (the default replaces each by [REDACTED:rule])")
	cmd.AddCommand(newMCPInstallCmd(false), newMCPInstallCmd(true))
	return cmd
}

func newMCPInstallCmd(remove bool) *cobra.Command {
	opts := &planFlags{}
	cfixBin := ""
	name, short := "install", "Plan (and with --apply, make) the entry that adds cfix mcp to Claude Code's user configuration"
	long := `Mcp install adds the cfix server to the mcpServers of Claude Code's user
configuration (~/.claude.json beside ~/.claude, $CLAUDE_CONFIG_DIR/.claude.json)
as claude mcp add --scope user cfix -- /path/to/cfix mcp does: {"type": "stdio",
"command": "/path/to/cfix", "args": ["mcp"], "env": {}}. The command is the
absolute path of this cfix binary (--cfix names another), as cfix guard's
hooks name theirs: Claude Code starts the server with the PATH it was
started with, which may not hold ~/go/bin.`
	if remove {
		name, short = "uninstall", "Plan (and with --apply, make) taking cfix mcp out of Claude Code's user configuration"
		long = `Mcp uninstall takes the cfix server out of the mcpServers of Claude Code's
user configuration (~/.claude.json beside ~/.claude,
$CLAUDE_CONFIG_DIR/.claude.json) as claude mcp remove --scope user cfix does.`
	}
	cmd := &cobra.Command{
		Use:     name,
		Example: fmt.Sprintf("  cfix mcp %s\n  cfix mcp %s --apply --yes", name, name),
		Short:   short,
		Long: long + `
Only the bytes of that entry change. A dry run shows the change; --apply
makes it with a backup that cfix undo restores.

` + plannerExitStatus,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			root, err := resolveRoot(opts.root)
			if err != nil {
				return err
			}
			bin := ""
			if !remove {
				if bin, err = hookBinary(cfixBin); err != nil {
					return usageError(fmt.Errorf("the path of this cfix: %w", err))
				}
			}
			cs, err := mcpserver.PlanInstall(root, bin, remove)
			if err != nil {
				return planError(err)
			}
			return runPlan(opts, cs)
		},
	}
	opts.register(cmd, false)
	if !remove {
		cmd.Flags().StringVar(&cfixBin, "cfix", "", "the cfix binary the server runs (default: this one)")
	}
	return cmd
}
