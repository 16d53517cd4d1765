package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/outfile"
	"github.com/cfix-dev/cfix/show"
)

type exportOptions struct {
	root     string
	format   string
	branches bool
	attach   string
	output   string
	session  string
	out      io.Writer
	redact   bool
}

func newExportCmd() *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use: "export SESSION",
		Example: `  cfix export latest > session.md
  cfix export --format html -o session.html 2bc4b42d
  cfix export --format jsonl --branches 2bc4b42d
  cfix export --attachments all 2bc4b42d`,
		Short: "Write a session's conversation as Markdown, one HTML file, or its chain's JSONL lines",
		Long: `Export writes a session's conversation as a person reads it, without changing
the store: the chain a resume loads (as the version that wrote the transcript
loads it), after the history its compactions summarized; with --branches,
every entry of the transcript in file order, those a resume does not load
marked. Tool calls are folded together with their results, thinking is
marked and folded, the conversation of a subagent sits under the Task or
Agent call that started it (found by the call's result, the subagent's
.meta.json or its first prompt, in both layouts and in older transcripts
that hold their subagents inline), and compactions are shown.

What Claude Code attached to a turn (a file the prompt named, a hook's
output, diagnostics, a todo list ...) is one line naming its kind and what
it holds; its own bookkeeping (the system prompt and tool schemas it sent,
skill, agent and tool listings, dates, reminders) is left out.

  --attachments summary  those lines (the default)
  --attachments all      every attachment, each folded with all it holds
  --attachments none     no attachments

  --format md     Markdown for GitHub (the default): folded parts are
                  <details> blocks; text is escaped so that nothing in it
                  breaks the document
  --format html   one self-contained HTML file: no script, nothing fetched,
                  light and dark colours
  --format jsonl  the chain's entries, each record's bytes as written, in
                  the order a resume loads them

SESSION is a session id, a unique prefix of one, the path of its .jsonl
transcript (the path of a subagent's transcript exports that subagent's
conversation alone), its session folder, or latest. The output goes to
stdout, or to FILE with -o, which may not lie in the store (the store is
written only by the commands that show their change first). With --redact,
each secret cfix secrets finds (but those .cfix-secrets-ignore names) is
replaced by [REDACTED:<rule>], in every format.

Exit status:
  0  written
  2  usage or I/O error (a SESSION that names no session, an unknown format)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.session = args[0]
			opts.out = cmd.OutOrStdout()
			return runExport(opts)
		},
		ValidArgsFunction: completeFirstSession,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().StringVar(&opts.format, "format", "md", "md, html or jsonl")
	cmd.Flags().BoolVar(&opts.branches, "branches", false, "every branch, not only the chain a resume loads")
	cmd.Flags().StringVar(&opts.attach, "attachments", export.AttachSummary, "summary, all or none")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "write to FILE instead of stdout")
	cmd.Flags().BoolVar(&opts.redact, "redact", false, "replace each secret by [REDACTED:rule]")
	return cmd
}

func runExport(opts *exportOptions) error {
	// An export holds little but the line it writes: collecting when the
	// heap reaches five times what is live, not twice, spares most of the
	// collections a long line causes (the bench's 200 MB prompt: 0.73 s
	// and 527 MB, against 1.1 to 1.6 s and 732 MB). A GOGC the user sets
	// wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	switch opts.format {
	case "md", "html", "jsonl":
	default:
		return usageError(fmt.Errorf("--format %s: want md, html or jsonl", opts.format))
	}
	switch opts.attach {
	case export.AttachSummary, export.AttachAll, export.AttachNone:
	default:
		return usageError(fmt.Errorf("--attachments %s: want summary, all or none", opts.attach))
	}
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	fam, err := show.Resolve(root, opts.session)
	if err != nil {
		return usageError(err)
	}
	w := opts.out
	var pf outfile.File
	if opts.output != "" {
		if err := outsideStore(root, opts.output); err != nil {
			return usageError(err)
		}
		// Written beside FILE, synced and renamed into place: a failed
		// export leaves no half-written FILE (a device or FIFO is written
		// as it is).
		pf, err = outfile.Create(opts.output)
		if err != nil {
			return usageError(err)
		}
		defer pf.Cleanup()
		w = pf
	}
	eo := export.Options{Format: opts.format, Branches: opts.branches, Attachments: opts.attach}
	if opts.redact {
		f, err := redactFilter(root)
		if err != nil {
			return err
		}
		eo.Redact = f
	}
	err = export.Write(w, fam, eo)
	if pf != nil && err == nil {
		err = pf.CloseAtomicallyReplace()
	}
	if err != nil {
		// A session export cannot take as named, and an I/O error alike.
		return usageError(err)
	}
	return nil
}

// outsideStore refuses an output file in the store (over a transcript it
// would lose what the export leaves out) and one that is a directory.
func outsideStore(root, output string) error {
	if fi, err := os.Stat(output); err == nil && fi.IsDir() {
		return fmt.Errorf("-o %s: is a directory", output)
	}
	dir, err := filepath.Abs(filepath.Dir(output))
	if err != nil {
		return err
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if rel, err := filepath.Rel(root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("-o %s: inside the store %s, which cfix export does not write", output, root)
	}
	return nil
}
