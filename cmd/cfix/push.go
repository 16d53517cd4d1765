package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"

	agelib "filippo.io/age"
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
	"github.com/cfix-dev/cfix/secrets"
)

type pushOptions struct {
	root         string
	machine      string
	recipients   []string
	passphrase   bool
	identities   []string
	redact       bool
	allowSecrets bool
	apply        bool
	json         bool
}

func newPushCmd() *cobra.Command {
	opts := &pushOptions{}
	cmd := &cobra.Command{
		Use: "push URL [SESSION...]",
		Example: `  cfix push s3://my-bucket/claude
  cfix push s3://my-bucket/claude --apply --recipient age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
  cfix push file:///mnt/sync/claude 2bc4b42d --apply`,
		Short: "Send the sessions of this store to a remote (S3 or a folder), for cfix pull elsewhere",
		Long: `Push sends the sessions of the store (or those named) to a remote: an S3 bucket,
s3://BUCKET/PREFIX, or a folder, file:///DIR (a mounted disk, a synced folder).
The remote holds, for each machine (--machine, default this one's host name),
one object per session (a pack of it, as cfix pack writes it) and an index.
Only sessions whose files changed since the last push are sent: the objects
first, then the index, then the versions replaced are removed, so that a push
stopped at any moment leaves the remote readable. Push reads the store and never
changes it. Without --apply it says what it would send.

S3: credentials, region and endpoint are the AWS CLI's: AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, else the profile AWS_PROFILE (or
default) of ~/.aws/credentials; AWS_REGION, AWS_ENDPOINT_URL (a server other
than Amazon S3: MinIO, versitygw, R2...), else the profile's region and
endpoint_url in ~/.aws/config.

--recipient (age public keys; repeatable) or --passphrase encrypt every object
and the text the index shows (titles, folders): the server learns sizes, times
and session ids. Sessions that hold secrets (cfix secrets finds them) are not
sent unless --redact takes them out of what is sent or --allow-secrets sends
them as they are.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPush(cmd, opts, args[0], args[1:])
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.root, "root", "", "store directory (default $CLAUDE_CONFIG_DIR or ~/.claude)")
	f.StringVar(&opts.machine, "machine", "", "this machine's name on the remote (default: its host name)")
	f.StringArrayVar(&opts.recipients, "recipient", nil, "encrypt to this age public key (age1...; repeatable)")
	f.BoolVar(&opts.passphrase, "passphrase", false, "encrypt with a passphrase (asked on the terminal; $CFIX_PASSPHRASE)")
	f.StringArrayVar(&opts.identities, "identity", nil, "an age identity file that opens the remote's encrypted index, to seal it in one part again (without it, the titles of sessions this push leaves are kept sealed as they are)")
	f.BoolVar(&opts.redact, "redact", false, "take secrets out of what is sent (the store keeps them)")
	f.BoolVar(&opts.allowSecrets, "allow-secrets", false, "send sessions that hold secrets as they are")
	f.BoolVar(&opts.apply, "apply", false, "send (the default is a dry run that says what would be sent)")
	f.BoolVar(&opts.json, "json", false, "print the plan and what was sent as JSON")
	return cmd
}

// pushJSON is the --json document of cfix push.
type pushJSON struct {
	*carryremote.PushPlan
	// Secrets counts the secrets of each session that holds some.
	Secrets map[string]int      `json:"secrets"`
	Applied bool                `json:"applied"`
	Pushed  *carryremote.Pushed `json:"pushed,omitempty"`
}

func runPush(cmd *cobra.Command, opts *pushOptions, url string, sessions []string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	st, err := remote.Open(url)
	if err != nil {
		return usageError(err)
	}
	machine := opts.machine
	if machine == "" {
		machine = carryremote.DefaultMachine()
	}
	o := carryremote.PushOptions{Root: root, Remote: st, Machine: machine, Sessions: sessions}
	o.Home, _ = os.UserHomeDir()
	if o.Recipients, o.Passphrase, err = encryptFlags(cmd, opts.recipients, opts.passphrase); err != nil {
		return err
	}
	if o.Keys, err = identityKeys(opts.identities); err != nil {
		return err
	}
	if opts.redact && opts.allowSecrets {
		return usageError(errors.New("--redact and --allow-secrets: give one of them"))
	}
	if opts.redact {
		if o.Redact, err = redactFilter(root); err != nil {
			return err
		}
	}
	o.AllowSecrets = opts.allowSecrets
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, err := carryremote.PlanPush(ctx, o)
	if err != nil {
		return planError(err)
	}
	doc := pushJSON{PushPlan: p, Secrets: map[string]int{}}
	if !opts.redact && !opts.allowSecrets && len(p.Items) > 0 {
		var ids []string
		for _, it := range p.Items {
			ids = append(ids, it.ID)
		}
		if _, err := secrets.Scan(secrets.Options{Root: root, Targets: ids}, func(f *secrets.Finding) error {
			doc.Secrets[f.Session]++
			return nil
		}); err != nil {
			return planError(err)
		}
	}
	out := cmd.OutOrStdout()
	if !opts.json {
		printPushPlan(out, p, doc.Secrets)
	}
	if len(doc.Secrets) > 0 {
		n := len(doc.Secrets)
		verb := "hold"
		if n == 1 {
			verb = "holds"
		}
		err := fmt.Errorf("%d %s to send %s secrets (cfix secrets ID lists them): --redact takes them out of what is sent, --allow-secrets sends them as they are; nothing was sent",
			n, plural.Of(n, "session"), verb)
		if opts.json {
			printJSON(out, doc)
		}
		if opts.apply {
			return &exitError{code: exitFound, err: err}
		}
		if !opts.json {
			fmt.Fprintf(cmd.ErrOrStderr(), "cfix: --apply refuses this push: %v\n", err)
		}
		return nil
	}
	if !opts.apply || p.Empty() {
		if opts.json {
			return printJSON(out, doc)
		}
		if !p.Empty() {
			fmt.Fprintln(out, "\ndry run: nothing was sent; run again with --apply to send it")
		}
		return nil
	}
	progress := func(key string, size int64) {
		if opts.json {
			return
		}
		if size >= 0 {
			fmt.Fprintf(out, "sent %s (%s)\n", visible.String(key), changeset.Size(size))
		} else {
			fmt.Fprintf(out, "sent %s\n", visible.String(key))
		}
	}
	res, err := p.Apply(ctx, progress)
	var se *pack.SecretsError
	if errors.As(err, &se) {
		return &exitError{code: exitFound, err: fmt.Errorf("%v; the index was not written: --redact takes them out of what is sent, --allow-secrets sends them as they are (cfix secrets lists them)", se)}
	}
	if err != nil {
		return &exitError{code: exitFound, err: fmt.Errorf("%v; the remote holds what the last whole push wrote: push again", err)}
	}
	doc.Applied, doc.Pushed = true, res
	res.Notes = append(res.Notes, p.Notes...)
	if opts.json {
		return printJSON(out, doc)
	}
	if len(p.Items) == 0 {
		fmt.Fprintf(out, "removed %d %s no index named from %s\n", len(res.Removed), plural.Of(len(res.Removed), "object"), visible.String(st.String()))
		return nil
	}
	objs := len(res.Written) - 1
	fmt.Fprintf(out, "pushed %d %s to %s as %s (%d %s and the index written, %s; %d old %s removed)\n", len(p.Items), plural.Of(len(p.Items), "session"),
		visible.String(st.String()), machine, objs, plural.Of(objs, "object"), changeset.Size(res.Bytes), len(res.Removed), plural.Of(len(res.Removed), "version"))
	return nil
}

// printPushPlan says what a push sends.
func printPushPlan(w io.Writer, p *carryremote.PushPlan, found map[string]int) {
	fmt.Fprintf(w, "push to %s as %s: %d %s to send (%s), %d unchanged\n", visible.String(p.Remote), p.Machine,
		len(p.Items), plural.Of(len(p.Items), "session"), changeset.Size(p.Bytes), p.Unchanged)
	for _, it := range p.Items {
		title := ""
		if it.Title != "" {
			title = fmt.Sprintf("  %q", cut(textCell(it.Title), 50))
		}
		sec := ""
		if n := found[it.ID]; n > 0 {
			sec = fmt.Sprintf(", %d %s", n, plural.Of(n, "secret"))
		}
		fmt.Fprintf(w, "  %s  %s%s  (%s, %d %s, %s%s)\n", it.ID, visible.String(it.CWD), title, it.Why, it.Files, plural.Of(it.Files, "file"), changeset.Size(it.Bytes), sec)
	}
	if n := len(p.Stale); n > 0 {
		fmt.Fprintf(w, "  %d %s a stopped push left, which no index names: removed\n", n, plural.Of(n, "object"))
	}
	notes := append([]string(nil), p.Notes...)
	sort.Strings(notes)
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", visible.String(n))
	}
}

// encryptFlags turns --recipient and --passphrase into age recipients.
func encryptFlags(cmd *cobra.Command, recipients []string, passphrase bool) ([]agelib.Recipient, bool, error) {
	var out []agelib.Recipient
	for _, r := range recipients {
		rc, err := agelib.ParseX25519Recipient(r)
		if err != nil {
			return nil, false, usageError(fmt.Errorf("--recipient %s: not an age public key (age1...): %v", r, err))
		}
		out = append(out, rc)
	}
	if !passphrase {
		return out, false, nil
	}
	if len(out) > 0 {
		return nil, false, usageError(errors.New("--passphrase and --recipient: give one of them (age encrypts to a passphrase alone)"))
	}
	pass, err := newPassphrase(cmd.ErrOrStderr())
	if err != nil {
		return nil, false, usageError(err)
	}
	sr, err := agelib.NewScryptRecipient(pass)
	if err != nil {
		return nil, false, usageError(err)
	}
	return []agelib.Recipient{sr}, true, nil
}

// identityKeys reads --identity files; a passphrase is asked when one is
// needed.
func identityKeys(paths []string) (pack.Keys, error) {
	keys := pack.Keys{Passphrase: askPassphrase}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return keys, usageError(fmt.Errorf("--identity %s: %v", path, err))
		}
		ids, err := agelib.ParseIdentities(f)
		f.Close()
		if err != nil {
			return keys, usageError(fmt.Errorf("--identity %s: not an age identity file: %v", path, err))
		}
		keys.Identities = append(keys.Identities, ids...)
	}
	return keys, nil
}
