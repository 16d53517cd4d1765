package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/secrets"
	"github.com/cfix-dev/cfix/store"
)

type secretsOptions struct {
	root    string
	json    bool
	allow   []string
	rules   bool
	targets []string
	out     io.Writer
}

func newSecretsCmd() *cobra.Command {
	opts := &secretsOptions{}
	cmd := &cobra.Command{
		Use: "secrets [TARGET...]",
		Example: `  cfix secrets
  cfix secrets 2bc4b42d --json
  cfix secrets --allow generic-api-key /home/me/work/app`,
		Short: "Find the secrets the store keeps: keys, tokens, passwords, private keys",
		Long: `Secrets lists each secret the store keeps in plain text: a key pasted in a
prompt, a .env a tool printed, a private key a subagent read, a file Claude
Code backed up before an edit. gitleaks's default rules run on the decoded
text of every string of every JSON line (an escaped PEM key is found, a match
never spans two fields) and on the store's other files: tool results kept
apart, file-history backups, pasted texts, todos, plans, tasks, shell
snapshots, session-env, transcript exports, usage data and debug logs.
Settings, credentials and plugins are not read. Ids, uuids, hashes, thinking
signatures and base64 data are never findings.

Each finding is one line: the file and line, the rule, where in the entry
(prompt, answer, thinking, tool input, tool output, file backup, ...), and
the secret's first characters, never the whole. Its fingerprint (--json)
goes into .cfix-secrets-ignore in the store's directory, one a line, to
leave it out from then on; --allow RULE leaves out a rule's findings.

A TARGET is a session id or a unique prefix of one, a .jsonl file, a project
folder or a working directory; a session brings its subagents, tool results,
file-history backups, todos, tasks, plans, pastes and history.jsonl lines.

cfix redact takes them out.

Exit status:
  0  no secret found
  1  a secret found
  2  usage or I/O error`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.targets = args
			opts.out = cmd.OutOrStdout()
			return runSecrets(opts)
		},
		ValidArgsFunction: completeSessions,
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON document")
	cmd.Flags().StringSliceVar(&opts.allow, "allow", nil, "leave out the findings of this rule (repeatable, or a comma list)")
	cmd.Flags().BoolVar(&opts.rules, "rules", false, "list the rules and exit")
	return cmd
}

// secretJSON is one finding in the --json document.
type secretJSON struct {
	Path        string `json:"path"`
	Line        int    `json:"line"`
	Kind        string `json:"kind"`
	Session     string `json:"session,omitempty"`
	Where       string `json:"where"`
	Tool        string `json:"tool,omitempty"`
	Field       string `json:"field,omitempty"`
	Rule        string `json:"rule"`
	Preview     string `json:"preview"`
	Length      int    `json:"length"`
	Fingerprint string `json:"fingerprint"`
}

// secretsJSON is cfix secrets --json.
type secretsJSON struct {
	Root     string         `json:"root"`
	Files    int            `json:"files_scanned"`
	Bytes    int64          `json:"bytes_scanned"`
	Findings []secretJSON   `json:"findings"`
	Secrets  int            `json:"secrets"` // distinct secrets
	Ignored  int            `json:"ignored"` // findings the ignore file left out
	ByRule   map[string]int `json:"by_rule"`
}

func runSecrets(opts *secretsOptions) error {
	if opts.rules {
		eng, err := secrets.Default()
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		for _, r := range eng.Rules() {
			fmt.Fprintln(opts.out, r)
		}
		return nil
	}
	root, err := store.Resolve(opts.root)
	if err != nil {
		return usageError(err)
	}
	doc := secretsJSON{Root: root, Findings: []secretJSON{}, ByRule: map[string]int{}}
	distinct := map[string]bool{}
	files := map[string]bool{}
	st, err := secrets.Scan(secrets.Options{Root: root, Targets: opts.targets, Allow: opts.allow}, func(f *secrets.Finding) error {
		distinct[f.SecretKey()] = true
		files[f.Path] = true
		doc.ByRule[f.Rule]++
		if opts.json {
			doc.Findings = append(doc.Findings, secretJSON{Path: f.Path, Line: f.Line, Kind: string(f.Kind), Session: f.Session,
				Where: string(f.Where), Tool: f.Tool, Field: f.Field, Rule: f.Rule, Preview: f.Preview, Length: f.Length, Fingerprint: f.Fingerprint})
			return nil
		}
		fmt.Fprintf(opts.out, "%s:%d: %s in %s: %s\n", visible.String(f.Path), f.Line, f.Rule, whereText(f), visible.String(f.Preview))
		return nil
	})
	if err != nil {
		var oe *secrets.OptionError
		if errors.As(err, &oe) || userError(err) {
			return usageError(err)
		}
		return &exitError{code: exitUsage, err: err}
	}
	doc.Files, doc.Bytes, doc.Secrets, doc.Ignored = st.Files, st.Bytes, len(distinct), st.Ignored
	if opts.json {
		if err := printJSON(opts.out, doc); err != nil {
			return err
		}
	} else {
		printSecretsSummary(opts.out, doc, st.Findings, len(files), opts)
	}
	if st.Findings > 0 {
		return &exitError{code: exitFound}
	}
	return nil
}

// whereText says where a finding is: in its entry (tool output (stdout)),
// and in which kind of file when it is no main transcript's.
func whereText(f *secrets.Finding) string {
	w := string(f.Where)
	var in []string
	if f.Tool != "" {
		in = append(in, f.Tool)
	}
	if f.Field != "" {
		in = append(in, f.Field)
	}
	if len(in) > 0 {
		w += " (" + visible.String(strings.Join(in, " ")) + ")"
	}
	switch f.Kind {
	case secrets.KindTranscript, secrets.KindFileHistory:
	case secrets.KindSubagent:
		w += " of a subagent"
	case secrets.KindHistory:
		w += " in history.jsonl"
	case secrets.KindToolResult:
		w += " kept apart"
	default:
		w += " in a " + strings.ReplaceAll(string(f.Kind), "-", " ") + " file"
	}
	return w
}

func printSecretsSummary(w io.Writer, doc secretsJSON, findings, nfiles int, opts *secretsOptions) {
	ignored := ""
	if doc.Ignored > 0 {
		ignored = fmt.Sprintf("; %d left out by %s", doc.Ignored, secrets.IgnoreFile)
	}
	if findings == 0 {
		fmt.Fprintf(w, "no secret found in %d %s (%s)%s\n", doc.Files, plural.Of(doc.Files, "file"), changeset.Size(doc.Bytes), ignored)
		return
	}
	var rules []string
	for r := range doc.ByRule {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		if doc.ByRule[rules[i]] != doc.ByRule[rules[j]] {
			return doc.ByRule[rules[i]] > doc.ByRule[rules[j]]
		}
		return rules[i] < rules[j]
	})
	var by []string
	for _, r := range rules {
		by = append(by, fmt.Sprintf("%s %d", r, doc.ByRule[r]))
	}
	fmt.Fprintf(w, "by rule: %s\n", strings.Join(by, ", "))
	fmt.Fprintf(w, "%d %s (%d %s) in %d of %d files scanned%s\n", doc.Secrets, plural.Of(doc.Secrets, "secret"), findings, plural.Of(findings, "finding"),
		nfiles, doc.Files, ignored)
	cmd := "cfix redact"
	if opts.root != "" {
		cmd += " --root " + shell.Quote(opts.root)
	}
	for _, a := range opts.allow {
		cmd += " --allow " + shell.Quote(a)
	}
	for _, t := range opts.targets {
		cmd += " " + shell.Quote(t)
	}
	fmt.Fprintf(w, "  hint: %s shows how they go (--apply takes them out)\n", cmd)
}
