package pack

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/store"
)

// Place says where the sessions of a pack land on this machine.
type Place struct {
	// To, when set, is the working directory every session lands in.
	To string
	// Map maps a directory of the source machine (and what is under it)
	// to one of this machine: "OLD=NEW", the first that holds a session's
	// cwd wins.
	Map []string
}

// UnpackOptions configure an unpack plan.
type UnpackOptions struct {
	// Root is the store the sessions land in.
	Root string
	// Pack is the pack file's path.
	Pack string
	Keys Keys
	Place
	// Staging is the folder the staging folder is made in ("" for
	// StagingDir()).
	Staging string
}

// Plan is an unpack plan: where each session lands and the change set.
type Plan struct {
	*carry.Landing
	Manifest *Manifest
	// Staging holds the pack's files, extracted and checked; the change
	// set copies them from there. Cleanup removes it.
	Staging   string
	Encrypted string
}

// Cleanup removes the staging folder.
func (p *Plan) Cleanup() {
	if p != nil && p.Staging != "" {
		os.RemoveAll(p.Staging)
	}
}

// StagingDir is where unpack extracts packs: cfix's cache folder
// (store.CacheDir), else the system's temporary folder.
func StagingDir() string {
	if d := store.CacheDir(); d != "" {
		return filepath.Join(d, "unpack")
	}
	return filepath.Join(os.TempDir(), "cfix-unpack")
}

// Unpack plans unpacking the pack at o.Pack into the store o.Root: the
// pack is read whole and checked (Open, Extract) into a staging folder of
// its own, then each session is placed (Dirs) and landed (carry.Land).
// A dry run and an apply make the same plan; the caller removes the
// staging folder (Cleanup) once the plan is shown or applied.
func Unpack(o UnpackOptions) (*Plan, error) {
	f, err := os.Open(o.Pack)
	if err != nil {
		return nil, &carry.InputError{Msg: fmt.Sprintf("pack %s: %v", o.Pack, err)}
	}
	defer f.Close()
	return UnpackFrom(f, o.Pack, o)
}

// UnpackFrom is Unpack of the pack read from r (named name in messages):
// a pack fetched from elsewhere, streamed.
func UnpackFrom(r io.Reader, name string, o UnpackOptions) (*Plan, error) {
	rd, err := Open(r, name, o.Keys)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	parent := o.Staging
	if parent == "" {
		parent = StagingDir()
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(parent, "pack-")
	if err != nil {
		return nil, err
	}
	p := &Plan{Manifest: rd.Manifest, Staging: staging, Encrypted: rd.Encrypted}
	if err := rd.Extract(staging); err != nil {
		p.Cleanup()
		return nil, err
	}
	p.Landing, err = LandExtracted(o.Root, staging, rd.Manifest, o.Place)
	if err != nil {
		p.Cleanup()
		return nil, err
	}
	return p, nil
}

// LandExtracted plans the landing of the sessions of the pack m, extracted
// into staging, into the store root, each in the folder of the directory
// Dirs gives it.
func LandExtracted(root, staging string, m *Manifest, pl Place) (*carry.Landing, error) {
	dirs, err := Dirs(root, m, pl)
	if err != nil {
		return nil, err
	}
	o := carry.LandOptions{Root: root, From: staging, Host: m.Host, Command: "unpack"}
	for i, s := range m.Sessions {
		o.Sessions = append(o.Sessions, carry.Arrival{Session: s.ID, Dir: dirs[i], Title: s.Title})
	}
	if len(m.Files) > 0 && m.Files[len(m.Files)-1].Path == HistoryName {
		o.History = filepath.Join(staging, HistoryName)
	}
	return carry.Land(o)
}

// Dirs returns the working directory each session of m lands in: the
// directory it runs in in the store already (Land keeps it there), else
// pl.To, else its cwd mapped by the first of pl.Map that holds it, else
// its cwd when that directory exists here. A session none of these
// places is refused, with the --to and --map that would place it.
func Dirs(root string, m *Manifest, pl Place) ([]string, error) {
	type mapping struct{ old, new string }
	var maps []mapping
	for _, kv := range pl.Map {
		old, nw, ok := strings.Cut(kv, "=")
		if !ok || old == "" || nw == "" {
			return nil, &carry.InputError{Msg: fmt.Sprintf("--map %s: give OLD=NEW (a directory of the machine the pack comes from, and one of this machine)", kv)}
		}
		old = filepath.Clean(old)
		if !changeset.MappableDir(old) {
			return nil, &carry.InputError{Msg: fmt.Sprintf("--map %s: OLD must be an absolute directory other than /", kv)}
		}
		n, err := carry.NormDir(nw)
		if err != nil {
			return nil, err
		}
		maps = append(maps, mapping{old, n})
	}
	to := ""
	if pl.To != "" {
		var err error
		if to, err = carry.NormDir(pl.To); err != nil {
			return nil, err
		}
	}
	l, err := store.Scan(root)
	if err != nil {
		return nil, err
	}
	here := map[string]string{} // session id → the cwd of its transcript here
	for _, f := range l.Files {
		if f.Kind == store.KindSession {
			here[strings.ToLower(f.Session)] = f.Path
		}
	}
	out := make([]string, len(m.Sessions))
	for i, s := range m.Sessions {
		if p, ok := here[strings.ToLower(s.ID)]; ok {
			if d := carry.FirstCWD(p, 200); d != "" {
				out[i] = d // where it is (a fork of it lands there too)
				continue
			}
		}
		switch {
		case to != "":
			out[i] = to
			continue
		case s.CWD == "":
			return nil, &carry.InputError{Msg: fmt.Sprintf("session %s names no cwd: give --to DIR, the directory it belongs to here", s.ID)}
		}
		for _, mp := range maps {
			if d, ok := changeset.MapPath(mp.old, mp.new, s.CWD); ok {
				out[i] = d
				break
			}
		}
		if out[i] != "" {
			continue
		}
		if fi, err := os.Stat(s.CWD); err == nil && fi.IsDir() && filepath.IsAbs(s.CWD) {
			out[i] = filepath.Clean(s.CWD)
			continue
		}
		hint := fmt.Sprintf("--to DIR, or --map %s=DIR", s.CWD)
		if m.Home != "" && changeset.MappableDir(m.Home) {
			if home, err := os.UserHomeDir(); err == nil && home != m.Home {
				if d, ok := changeset.MapPath(m.Home, home, s.CWD); ok {
					hint += fmt.Sprintf(" (--map %s=%s puts it in %s)", m.Home, home, d)
				}
			}
		}
		return nil, &carry.InputError{Msg: fmt.Sprintf("session %s ran in %s, which does not exist here: give %s", s.ID, s.CWD, hint)}
	}
	return out, nil
}
