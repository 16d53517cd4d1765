package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/usage"
)

// maxStatusInput bounds what cfix statusline reads of its standard input.
const maxStatusInput = 1 << 20

func newStatusLineCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use: "statusline",
		Example: `  cfix statusline
  cfix statusline --root ~/.claude`,
		Short: "Print Claude Code's status line: the session's cost, today's, the 5-hour block's and its time left, the session's health",
		Long: `Statusline is what Claude Code's statusLine setting runs (cfix guard
install --statusline --apply sets it): it reads the JSON Claude Code writes on its
standard input (session_id, transcript_path) and prints one line: the cost
of the session so far, of today, of the current 5-hour block and the time
left of it, and the health of the session's transcript (its quick checks,
as cfix ls shows them). Costs are cfix usage's, through its cache.

Exit status: 0; 2 when the input is not Claude Code's JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatusLine(cmd.InOrStdin(), cmd.OutOrStdout(), root, time.Now())
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	return cmd
}

func runStatusLine(in io.Reader, out io.Writer, rootFlag string, now time.Time) error {
	b, err := io.ReadAll(io.LimitReader(in, maxStatusInput+1))
	if err != nil {
		return usageError(fmt.Errorf("statusline: standard input: %w", err))
	}
	if len(b) > maxStatusInput {
		return usageError(fmt.Errorf("statusline: standard input over %d bytes: not Claude Code's status line input", maxStatusInput))
	}
	var input struct {
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
	}
	if err := json.Unmarshal(b, &input); err != nil {
		return usageError(fmt.Errorf("statusline: standard input is not Claude Code's JSON: %v", err))
	}
	root, err := store.Resolve(rootFlag)
	if err != nil {
		return usageError(err)
	}
	opts := usage.Options{Root: root, CacheDir: catalog.CacheDir()}
	if dir, err := archive.DefaultDir(); err == nil {
		opts.ArchiveDir = dir
	}
	set, err := usage.Collect(opts)
	if err != nil {
		return usageError(err)
	}
	st := usage.StatusOf(set, input.SessionID, now, time.Local, usage.NewPricer(nil))
	fmt.Fprintln(out, st.Line(transcriptHealth(root, input.TranscriptPath)))
	return nil
}

// transcriptHealth is the health of the transcript at path as cfix ls
// shows it ("ok", "1 error, 2 warnings"); "" for a path that is not a
// regular file under the store's projects folder (the input is not
// trusted to name anything else).
func transcriptHealth(root, path string) string {
	if path == "" || !filepath.IsAbs(path) || filepath.Ext(path) != ".jsonl" {
		return ""
	}
	rel, err := filepath.Rel(store.ProjectsDir(root), filepath.Clean(path))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	f := store.File{Path: path, Project: parts[0], Kind: store.KindSession, Session: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	f.Identify(fi)
	c := catalog.Open(root)
	g := c.Glance(f)
	c.Close()
	h := catalog.HealthOf(&g)
	var words []string
	if h.Errors > 0 {
		words = append(words, plural.Count(h.Errors, "error"))
	}
	if h.Warnings > 0 {
		words = append(words, plural.Count(h.Warnings, "warning"))
	}
	if len(words) == 0 {
		return "ok"
	}
	return strings.Join(words, ", ")
}
