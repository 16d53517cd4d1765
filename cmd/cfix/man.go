package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd is the hidden command make man and the release build run:
// cfix man DIR writes a man page for each command into DIR.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write man pages for every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageError(fmt.Errorf("man %s: %w", dir, err))
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			escapeStars(root)
			// No title: each page takes its command's (CFIX-SHOW for cfix show).
			header := &doc.GenManHeader{Section: "1", Source: "cfix " + versionLine()}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man %s: %w", dir, err)
			}
			return nil
		},
	}
}

// escapeStars keeps the * of the help texts (transcripts/ses_*.jsonl) from
// reading as Markdown emphasis in the man pages.
func escapeStars(c *cobra.Command) {
	c.Long = strings.ReplaceAll(c.Long, "*", `\*`)
	for _, sub := range c.Commands() {
		escapeStars(sub)
	}
}
