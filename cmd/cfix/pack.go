package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	agelib "filippo.io/age"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/outfile"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/pack"
)

type packOptions struct {
	root       string
	out        string
	recipients []string
	passphrase bool
	redact     bool
	allow      bool
	json       bool
}

func newPackCmd() *cobra.Command {
	opts := &packOptions{}
	cmd := &cobra.Command{
		Use: "pack SESSION... -o FILE",
		Example: `  cfix pack 2bc4b42d -o work.cfixpack
  cfix pack latest -o work.cfixpack --recipient age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
  cfix pack 2bc4b42d 7f3e9a10 -o work.cfixpack --passphrase --redact`,
		Short: "Write sessions into one file, to carry them to another machine or person",
		Long: `Pack writes the sessions named into one file (FILE, or "-" for standard output):
each with its whole family as clone copies it (main transcript, subagents with
their .meta.json, tool-results, todos, file-history, the task list) and its
prompts of history.jsonl, and a manifest that names each file's path in the
store, its size, mode, mtime and sha256, each session's id, title and cwd, and
this machine's host name and home folder. cfix unpack puts them into a store,
in the folder of a directory of that machine.

With --recipient (age public keys, age1...; repeatable) or --passphrase the
whole file is encrypted with age: only the holder of a recipient's key, or of
the passphrase, can read anything of it, the manifest too. The passphrase is
read from the terminal, or from CFIX_PASSPHRASE where there is none (scripts,
CI).

Secrets never leave the store unless asked: pack looks for them first (the
rules of cfix secrets, but for what .cfix-secrets-ignore names) and refuses
sessions that hold one, encrypted or not, saying how many of which rules each
holds. --redact replaces each by [REDACTED:<rule>] in what is packed (it says
how many went, by rule); --allow-secrets packs them as they are.

Symbolic links are never followed: a link in a session's files is left out and
named. Pack reads the store and writes nothing into it; FILE is never
overwritten (a file being written is named FILE.partial until it is whole).

SESSION is a session id, a unique prefix of one, the path of its .jsonl
transcript, or latest.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeSessions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPack(cmd, opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVarP(&opts.out, "output", "o", "", `the pack file to write ("-" for standard output; required)`)
	f.StringArrayVar(&opts.recipients, "recipient", nil, "encrypt to this age public key (age1...; repeatable)")
	f.BoolVar(&opts.passphrase, "passphrase", false, "encrypt with a passphrase (asked on the terminal; $CFIX_PASSPHRASE)")
	f.BoolVar(&opts.redact, "redact", false, "replace each secret by [REDACTED:<rule>] in what is packed")
	f.BoolVar(&opts.allow, "allow-secrets", false, "pack the sessions' secrets as they are (without it, sessions holding one are refused)")
	f.BoolVar(&opts.json, "json", false, "print what was packed as JSON")
	cmd.MarkFlagRequired("output")
	return cmd
}

// packJSON is the --json document of cfix pack.
type packJSON struct {
	Pack      string         `json:"pack"`
	Size      int64          `json:"size"`
	Encrypted string         `json:"encrypted"`
	Redacted  bool           `json:"redacted"`
	Host      string         `json:"host"`
	Files     int            `json:"files"`
	Bytes     int64          `json:"bytes"`
	Sessions  []pack.Session `json:"sessions"`
	Notes     []string       `json:"notes"`
}

func runPack(cmd *cobra.Command, opts *packOptions, args []string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	o := pack.Options{Root: root, Sessions: args, AllowSecrets: opts.allow}
	if opts.redact && opts.allow {
		return usageError(errors.New("--redact and --allow-secrets: give one of them"))
	}
	if opts.redact {
		if o.Redact, err = redactFilter(root); err != nil {
			return err
		}
	}
	for _, r := range opts.recipients {
		rc, err := agelib.ParseX25519Recipient(r)
		if err != nil {
			return usageError(fmt.Errorf("--recipient %s: not an age public key (age1...): %v", r, err))
		}
		o.Recipients = append(o.Recipients, rc)
	}
	if opts.passphrase {
		if len(o.Recipients) > 0 {
			return usageError(errors.New("--passphrase and --recipient: give one of them (age encrypts to a passphrase alone)"))
		}
		pass, err := newPassphrase(cmd.ErrOrStderr())
		if err != nil {
			return usageError(err)
		}
		sr, err := agelib.NewScryptRecipient(pass)
		if err != nil {
			return usageError(err)
		}
		o.Recipients, o.Passphrase = []agelib.Recipient{sr}, true
	}
	var res *pack.Written
	name := opts.out
	if opts.out == "-" {
		out := cmd.OutOrStdout()
		if isTerminal(out) {
			return usageError(errors.New("-o -: standard output is a terminal; name a file, or pipe the pack"))
		}
		name = "standard output"
		res, err = pack.Write(out, o)
	} else {
		if name, err = filepath.Abs(opts.out); err != nil {
			return usageError(err)
		}
		if fi, serr := os.Stat(name); serr == nil && fi.Mode()&(os.ModeCharDevice|os.ModeDevice|os.ModeNamedPipe) != 0 {
			// A device or a FIFO (/dev/null, a pipe) is written as it is.
			var f outfile.File
			if f, err = outfile.Create(name); err == nil {
				if res, err = pack.Write(f, o); err == nil {
					err = f.CloseAtomicallyReplace()
				}
				f.Cleanup()
			}
		} else {
			res, err = pack.WriteFile(name, o)
		}
	}
	var se *pack.SecretsError
	if errors.As(err, &se) {
		return &exitError{code: exitFound, err: fmt.Errorf("%v; nothing was packed: --redact replaces each by [REDACTED:<rule>], --allow-secrets packs them as they are (cfix secrets lists them)", se)}
	}
	if err != nil {
		return planError(err)
	}
	if opts.out == "-" {
		// The pack went to standard output: what was packed goes to stderr.
		if opts.json {
			return nil
		}
		return printPacked(cmd.ErrOrStderr(), res, name, -1)
	}
	if opts.json {
		m := res.Manifest
		pj := packJSON{Pack: name, Size: res.Size, Encrypted: m.Encrypted, Redacted: m.Redacted, Host: m.Host, Bytes: m.Bytes(), Notes: res.Notes}
		for _, s := range m.Sessions {
			s.Index = nil // Claude Code's own keys: in the manifest only
			pj.Sessions = append(pj.Sessions, s)
		}
		for _, f := range m.Files {
			if !f.Dir {
				pj.Files++
			}
		}
		if pj.Notes == nil {
			pj.Notes = []string{}
		}
		return printJSON(cmd.OutOrStdout(), pj)
	}
	return printPacked(cmd.OutOrStdout(), res, name, res.Size)
}

// printPacked says what a pack holds: a line for the pack, one per
// session, the notes, how to unpack it.
func printPacked(w io.Writer, res *pack.Written, name string, size int64) error {
	m := res.Manifest
	files := 0
	for _, f := range m.Files {
		if !f.Dir {
			files++
		}
	}
	enc := ""
	switch m.Encrypted {
	case "recipients":
		enc = ", encrypted with age"
	case "passphrase":
		enc = ", encrypted with a passphrase"
	}
	written := ""
	if size >= 0 {
		written = fmt.Sprintf("; %s written", changeset.Size(size))
	}
	fmt.Fprintf(w, "packed %d %s into %s (%d %s, %s%s)%s\n", len(m.Sessions), plural.Of(len(m.Sessions), "session"), visible.String(name),
		files, plural.Of(files, "file"), changeset.Size(m.Bytes()), written, enc)
	for _, s := range m.Sessions {
		title := ""
		if s.Title != "" {
			title = fmt.Sprintf("  %q", cut(textCell(s.Title), 60))
		}
		fmt.Fprintf(w, "  %s  %s%s  (%d %s, %s", s.ID, visible.String(s.CWD), title, s.Files, plural.Of(s.Files, "file"), changeset.Size(s.Bytes))
		if s.Prompts > 0 {
			fmt.Fprintf(w, ", %d %s", s.Prompts, plural.Of(s.Prompts, "prompt"))
		}
		fmt.Fprintln(w, ")")
		if m.Redacted {
			if s.Redacted == 0 {
				fmt.Fprintln(w, "      no secret found")
			} else {
				fmt.Fprintf(w, "      %d %s redacted: %s\n", s.Redacted, plural.Of(s.Redacted, "secret"), pack.RuleList(s.Rules))
			}
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", visible.String(n))
	}
	switch {
	case m.Encrypted != "":
	case m.Redacted:
		fmt.Fprintln(w, "note: not encrypted: what the sessions read is in the pack but the secrets cfix secrets finds; --recipient or --passphrase encrypt it")
	default:
		fmt.Fprintln(w, "note: not encrypted: what the sessions read (keys, tokens, .env files) is in the pack as it is; --recipient or --passphrase encrypt it")
	}
	if size >= 0 {
		fmt.Fprintf(w, "unpack it with: cfix unpack %s\n", shell.Quote(name))
	}
	return nil
}

// passphraseEnv names the variable a passphrase is read from where there
// is no terminal to ask on.
const passphraseEnv = "CFIX_PASSPHRASE"

// newPassphrase reads the passphrase a pack is encrypted with: from
// $CFIX_PASSPHRASE, else asked twice on the terminal.
func newPassphrase(errOut io.Writer) (string, error) {
	if p, ok := os.LookupEnv(passphraseEnv); ok {
		if p == "" {
			return "", fmt.Errorf("$%s is empty", passphraseEnv)
		}
		return p, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		return "", fmt.Errorf("--passphrase: no terminal to ask it on; set %s", passphraseEnv)
	}
	defer tty.Close()
	fmt.Fprint(tty, "passphrase: ")
	a, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return "", err
	}
	fmt.Fprint(tty, "again: ")
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return "", err
	}
	switch {
	case string(a) != string(b):
		return "", errors.New("the passphrases differ: nothing was packed")
	case strings.TrimSpace(string(a)) == "":
		return "", errors.New("an empty passphrase: nothing was packed")
	}
	return string(a), nil
}

// askPassphrase reads the passphrase of a pack to unpack: from
// $CFIX_PASSPHRASE, else asked once on the terminal.
func askPassphrase() (string, error) {
	if p, ok := os.LookupEnv(passphraseEnv); ok {
		return p, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		return "", &exitError{code: exitUsage, err: fmt.Errorf("the pack is encrypted with a passphrase and there is no terminal to ask it on; set %s", passphraseEnv)}
	}
	defer tty.Close()
	fmt.Fprint(tty, "passphrase: ")
	a, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	return string(a), err
}
