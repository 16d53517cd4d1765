package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	agelib "filippo.io/age"
	"github.com/spf13/cobra"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
	"github.com/cfix-dev/cfix/pack"
)

type unpackOptions struct {
	planFlags
	to         string
	maps       []string
	identities []string
}

func newUnpackCmd() *cobra.Command {
	opts := &unpackOptions{}
	cmd := &cobra.Command{
		Use: "unpack FILE",
		Example: `  cfix unpack work.cfixpack
  cfix unpack work.cfixpack --to ~/src/proj --apply
  cfix unpack work.cfixpack --map /home/ana=/Users/ana --identity ~/.config/age/key.txt --apply`,
		Short: "Plan (and with --apply, make) putting the sessions of a pack into the store",
		Long: `Unpack plans putting the sessions of a pack (cfix pack) into the store, each in
the project folder of a directory of this machine, where Claude Code finds it
when it runs there: --to DIR for every session, or --map OLD=NEW (repeatable:
a directory of the machine the pack comes from, and what is under it, to one
of this machine), else the directory the session ran in when it exists here.
The cwd fields of its entries are rewritten to that directory as move-project
rewrites them; a session the store has already stays where it is.

A session of the same id here already with the same bytes is left as it is
(the files it lacks are added); one that the pack continues (its transcripts a
prefix of the pack's) gets what it lacks appended; one that holds more than the
pack's is left as it is; one that went its own way stays, and the pack's lands
beside it as a fork under a new id, titled with the machine it came from.
Nothing is overwritten. Its prompts of history.jsonl the store lacks are
added.

The pack is read whole and checked first, into a staging folder of its own in
cfix's cache (a dry run too; removed when the command ends): every path its
manifest names must be one of its sessions' own files, every member what the
manifest says (kind, size, sha256), nothing more; a damaged pack is refused,
named, and nothing is planned. An encrypted pack needs the key it was
encrypted to (--identity FILE, an age identity file; repeatable) or its
passphrase (asked on the terminal; CFIX_PASSPHRASE where there is none); a
wrong one is refused, and nothing is read. FILE "-" reads standard input.

` + plannerExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.streams(cmd)
			return runUnpack(opts, args[0])
		},
	}
	opts.register(cmd, false)
	f := cmd.Flags()
	f.StringVar(&opts.to, "to", "", "the working directory every session lands in")
	f.StringArrayVar(&opts.maps, "map", nil, "OLD=NEW: sessions that ran in OLD (or under it) land in NEW (repeatable)")
	f.StringArrayVar(&opts.identities, "identity", nil, "an age identity file that opens an encrypted pack (repeatable)")
	return cmd
}

func runUnpack(opts *unpackOptions, file string) error {
	root, err := resolveRoot(opts.root)
	if err != nil {
		return err
	}
	keys := pack.Keys{Passphrase: askPassphrase}
	for _, path := range opts.identities {
		f, err := os.Open(path)
		if err != nil {
			return usageError(fmt.Errorf("--identity %s: %v", path, err))
		}
		ids, err := agelib.ParseIdentities(f)
		f.Close()
		if err != nil {
			return usageError(fmt.Errorf("--identity %s: not an age identity file: %v", path, err))
		}
		keys.Identities = append(keys.Identities, ids...)
	}
	o := pack.UnpackOptions{Root: root, Pack: file, Keys: keys, Place: pack.Place{To: opts.to, Map: opts.maps}}
	var p *pack.Plan
	if file == "-" {
		p, err = pack.UnpackFrom(opts.in, "standard input", o)
	} else {
		p, err = pack.Unpack(o)
	}
	if err != nil {
		var ke *pack.KeyError
		if errors.As(err, &ke) {
			return &exitError{code: exitFound, err: err}
		}
		return planError(err)
	}
	defer p.Cleanup()
	opts.unpack = unpackJSON{Host: p.Manifest.Host, Home: p.Manifest.Home, Created: p.Manifest.Created.Format("2006-01-02T15:04:05Z07:00"),
		Encrypted: p.Encrypted, Sessions: p.Sessions}
	opts.before = func(w io.Writer) { printLanding(w, p) }
	if err := runPlan(&opts.planFlags, p.ChangeSet); err != nil {
		return err
	}
	if opts.apply && !opts.json && !p.ChangeSet.Empty() {
		fmt.Fprintln(opts.out, "resume with:")
		for _, l := range p.Sessions {
			fmt.Fprintf(opts.out, "  %s\n", l.ResumeCommand())
		}
	}
	return nil
}

// unpackJSON is the "unpack" member of cfix unpack --json.
type unpackJSON struct {
	Host      string         `json:"host"`
	Home      string         `json:"home"`
	Created   string         `json:"created"`
	Encrypted string         `json:"encrypted"`
	Sessions  []carry.Landed `json:"sessions"`
}

// printLanding says where each session of an unpack lands.
func printLanding(w io.Writer, p *pack.Plan) {
	m := p.Manifest
	fmt.Fprintf(w, "pack from %s (%s), made %s: %d %s\n", visible.String(m.Host), visible.String(m.Home), m.Created.Local().Format("2006-01-02 15:04"),
		len(m.Sessions), plural.Of(len(m.Sessions), "session"))
	titles := map[string]string{}
	for _, s := range m.Sessions {
		titles[s.ID] = s.Title
	}
	for _, l := range p.Sessions {
		what := ""
		switch l.How {
		case carry.LandNew:
			what = "new here"
		case carry.LandSame:
			what = "here already, the same"
		case carry.LandAppend:
			what = "here already: what it lacks is appended"
		case carry.LandAhead:
			what = "here already with more: left as it is"
			if l.ID != l.Session && l.Why != "" {
				what = "here already as " + l.ID + ", left as it is: " + l.Why
			}
		case carry.LandFork:
			what = "lands as a fork " + l.ID + ": " + l.Why
		}
		title := ""
		if t := titles[l.Session]; t != "" {
			title = fmt.Sprintf("  %q", cut(textCell(t), 50))
		}
		fmt.Fprintf(w, "  %s  → %s%s\n      %s\n", l.Session, visible.String(l.Dir), title, visible.String(what))
	}
	fmt.Fprintln(w)
}
