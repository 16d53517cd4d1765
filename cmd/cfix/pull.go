package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
)

type pullOptions struct {
	planFlags
	machine    string
	self       string
	to         string
	maps       []string
	identities []string
}

func newPullCmd() *cobra.Command {
	opts := &pullOptions{}
	cmd := &cobra.Command{
		Use: "pull URL [SESSION...]",
		Example: `  cfix pull s3://my-bucket/claude
  cfix pull s3://my-bucket/claude --machine laptop --apply
  cfix pull file:///mnt/sync/claude --map /home/ana=/Users/ana --identity ~/.config/age/key.txt --apply`,
		Short: "Plan (and with --apply, make) bringing the sessions other machines pushed into this store",
		Long: `Pull brings the sessions other machines pushed to a remote (cfix push) into the
store: every machine's but this one's (--self, default its host name), or the one
--machine names; SESSION limits it to those sessions. Each lands as cfix unpack
puts a pack's: in the project folder of a directory of this machine (where the
store has it already; else --to DIR; else its directory mapped by --map OLD=NEW,
then by the other machine's home mapped to this one's; else its own directory
when it exists here), its cwd fields rewritten there.

A session new here is copied in; one here that is a prefix of the remote one
gets the lines it lacks appended; one here that holds more is left; one that went
on here while it went on there too keeps its lines and the remote one lands beside
it as a fork under a new id, titled with the machine. Nothing is overwritten.
Every object is read whole and checked before anything is planned (as unpack
reads a pack); an encrypted one needs --identity FILE or its passphrase.

Each machine's sessions are one plan: a dry run shows it, --apply writes it under
the store's lock, journaled, undone by cfix undo.

` + plannerExitStatus,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runPull(opts, args[0], args[1:])
		},
	}
	opts.register(cmd, false)
	f := cmd.Flags()
	f.StringVar(&opts.machine, "machine", "", "pull this machine's sessions only")
	f.StringVar(&opts.self, "self", "", "this machine's name on the remote, whose sessions are not pulled (default: its host name)")
	f.StringVar(&opts.to, "to", "", "the working directory every session new here lands in")
	f.StringArrayVar(&opts.maps, "map", nil, "OLD=NEW: sessions that ran in OLD (or under it) land in NEW (repeatable)")
	f.StringArrayVar(&opts.identities, "identity", nil, "an age identity file that opens encrypted objects (repeatable)")
	return cmd
}

// pullJSON is the "pull" member of cfix pull --json.
type pullJSON struct {
	Remote   string         `json:"remote"`
	Machine  string         `json:"machine"`
	Fetched  int            `json:"fetched"`
	Bytes    int64          `json:"bytes"`
	Sessions []carry.Landed `json:"sessions"`
}

func runPull(opts *pullOptions, url string, sessions []string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	st, err := remote.Open(url)
	if err != nil {
		return usageError(err)
	}
	keys, err := identityKeys(opts.identities)
	if err != nil {
		return err
	}
	self := opts.self
	if self == "" {
		self = carryremote.DefaultMachine()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	machines, err := carryremote.PullMachines(ctx, st, opts.machine, self)
	if err != nil {
		return planError(err)
	}
	if len(machines) == 0 {
		if opts.json {
			opts.pull = pullJSON{Remote: st.String(), Sessions: []carry.Landed{}}
			return runPlan(&opts.planFlags, changeset.New(root, "pull"))
		}
		fmt.Fprintf(opts.out, "%s holds no sessions of another machine than %s\n", visible.String(st.String()), self)
		return nil
	}
	if len(machines) > 1 && opts.json {
		return usageError(fmt.Errorf("--json plans one machine's sessions at a time: give --machine (%s has %s)", st, strings.Join(machines, ", ")))
	}
	home, _ := os.UserHomeDir()
	for i, m := range machines {
		o := carryremote.PullOptions{Root: root, Remote: st, Machine: m, Sessions: sessions, Keys: keys,
			Place: pack.Place{To: opts.to, Map: opts.maps}, Home: home}
		p, err := carryremote.PlanPull(ctx, o)
		if err != nil {
			if carryremote.IsKeyError(err) {
				return &exitError{code: exitFound, err: err}
			}
			return planError(err)
		}
		f := opts.planFlags
		landed := p.Sessions
		if landed == nil {
			landed = []carry.Landed{}
		}
		f.pull = pullJSON{Remote: st.String(), Machine: m, Fetched: len(p.Fetched), Bytes: p.Bytes, Sessions: landed}
		f.before = func(w io.Writer) { printPull(w, st.String(), p) }
		if i > 0 && !opts.json {
			fmt.Fprintln(opts.out)
		}
		err = runPlan(&f, p.ChangeSet)
		if err == nil && opts.apply && !opts.json && !p.ChangeSet.Empty() {
			fmt.Fprintln(opts.out, "resume with:")
			for _, l := range p.Sessions {
				if l.How != carry.LandSame && l.How != carry.LandAhead {
					fmt.Fprintf(opts.out, "  %s\n", l.ResumeCommand())
				}
			}
		}
		p.Cleanup()
		if err != nil {
			return err
		}
	}
	return nil
}

// printPull says where each session of a machine lands.
func printPull(w io.Writer, url string, p *carryremote.PullPlan) {
	fmt.Fprintf(w, "pull from %s, machine %s: %d %s (%d %s read, %s)\n", visible.String(url), p.Machine,
		len(p.Sessions), plural.Of(len(p.Sessions), "session"), len(p.Fetched), plural.Of(len(p.Fetched), "object"), changeset.Size(p.Bytes))
	titles := map[string]string{}
	for _, s := range p.Manifest.Sessions {
		titles[s.ID] = s.Title
	}
	for _, l := range p.Sessions {
		if l.How == carry.LandSame {
			continue
		}
		title := ""
		if t := titles[l.Session]; t != "" {
			title = fmt.Sprintf("  %q", cut(textCell(t), 50))
		}
		fmt.Fprintf(w, "  %s  → %s%s\n      %s\n", l.Session, visible.String(l.Dir), title, visible.String(landingWords(l)))
	}
	same := 0
	for _, l := range p.Sessions {
		if l.How == carry.LandSame {
			same++
		}
	}
	if same > 0 {
		fmt.Fprintf(w, "  %d %s here already, the same\n", same, plural.Of(same, "session"))
	}
	fmt.Fprintln(w)
}

// landingWords says how a session lands.
func landingWords(l carry.Landed) string {
	switch l.How {
	case carry.LandNew:
		return "new here"
	case carry.LandSame:
		return "here already, the same"
	case carry.LandAppend:
		return "here already: what it lacks is appended"
	case carry.LandAhead:
		if l.ID != l.Session && l.Why != "" {
			return "here already as " + l.ID + ", left as it is: " + l.Why
		}
		return "here already with more: left as it is"
	case carry.LandFork:
		return "lands as a fork " + l.ID + ": " + l.Why
	}
	return l.How
}
