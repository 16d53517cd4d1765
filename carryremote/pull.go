package carryremote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
)

// PullOptions configure a pull.
type PullOptions struct {
	// Root is the store the sessions land in; Remote where they come
	// from.
	Root   string
	Remote remote.Store
	// Machine is the one whose sessions are pulled; Self this one's,
	// which PullMachines leaves out.
	Machine string
	// Sessions, when set, limit the pull to these ids (or unique
	// prefixes of them).
	Sessions []string
	Keys     pack.Keys
	// Place says where sessions land; the other machine's home maps to
	// Home (this one's) after Place.Map.
	pack.Place
	Home string
	// Staging is the folder objects are fetched into ("" for the
	// cache's).
	Staging string
}

// PullPlan is the plan of a pull of one machine's sessions.
type PullPlan struct {
	*carry.Landing
	Machine string
	// Manifest holds the sessions fetched, as one pack's (each object's
	// sessions and files).
	Manifest *pack.Manifest
	// Fetched are the objects read; Bytes their size.
	Fetched []string
	Bytes   int64
	staging string
}

// Cleanup removes what the pull fetched.
func (p *PullPlan) Cleanup() {
	if p != nil && p.staging != "" {
		os.RemoveAll(p.staging)
	}
}

// PullMachines returns the machines a pull reads: machine when it is
// given (refused when the remote has no index of it), else every machine
// of the remote but self.
func PullMachines(ctx context.Context, st remote.Store, machine, self string) ([]string, error) {
	ms, err := Machines(ctx, st)
	if err != nil {
		return nil, err
	}
	if machine != "" {
		for _, m := range ms {
			if m == machine {
				return []string{m}, nil
			}
		}
		return nil, &carry.InputError{Msg: fmt.Sprintf("%s holds no sessions of machine %s (it has: %s)", st, machine, listOr(ms))}
	}
	var out []string
	for _, m := range ms {
		if m != self {
			out = append(out, m)
		}
	}
	return out, nil
}

func listOr(ms []string) string {
	if len(ms) == 0 {
		return "none"
	}
	return strings.Join(ms, ", ")
}

// PlanPull plans the landing of o.Machine's sessions in the store: every
// object its index names is fetched and read as unpack reads a pack
// (checked whole, decrypted with o.Keys), into a staging folder, then the
// sessions land through carry.Land: a session new here is copied in, one
// here that is a prefix of the remote one gets what it lacks appended,
// one here with more is left, one that went its own way stays and the
// remote one lands beside it as a fork titled with the machine. Nothing
// is written to the store: the plan is applied by the change set.
func PlanPull(ctx context.Context, o PullOptions) (*PullPlan, error) {
	if err := CheckMachine(o.Machine); err != nil {
		return nil, &carry.InputError{Msg: err.Error()}
	}
	ix, err := ReadIndex(ctx, o.Remote, o.Machine, o.Keys)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		return nil, &carry.InputError{Msg: fmt.Sprintf("%s holds no index of machine %s", o.Remote, o.Machine)}
	}
	entries := ix.Sessions
	if len(o.Sessions) > 0 {
		entries = nil
		for _, arg := range o.Sessions {
			var found []Entry
			for _, e := range ix.Sessions {
				if strings.HasPrefix(strings.ToLower(e.ID), strings.ToLower(arg)) {
					found = append(found, e)
				}
			}
			switch len(found) {
			case 0:
				return nil, &carry.InputError{Msg: fmt.Sprintf("machine %s has no session %s on %s", o.Machine, arg, o.Remote)}
			case 1:
				entries = append(entries, found[0])
			default:
				return nil, &carry.InputError{Msg: fmt.Sprintf("%s names %d sessions of machine %s: give more of the id", arg, len(found), o.Machine)}
			}
		}
	}
	parent := o.Staging
	if parent == "" {
		parent = pack.StagingDir()
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(parent, "pull-")
	if err != nil {
		return nil, err
	}
	p := &PullPlan{Machine: o.Machine, staging: staging}
	ok := false
	defer func() {
		if !ok {
			p.Cleanup()
		}
	}()
	all := filepath.Join(staging, "store")
	if err := os.Mkdir(all, 0o700); err != nil {
		return nil, err
	}
	var m *pack.Manifest
	var history []string
	for i, e := range entries {
		one := filepath.Join(staging, fmt.Sprintf("object-%d", i))
		om, err := fetch(ctx, o.Remote, e.Key, one, o.Keys)
		if err != nil {
			return nil, err
		}
		if len(om.Sessions) != 1 || om.Sessions[0].ID != e.ID {
			return nil, fmt.Errorf("%s/%s: holds other sessions than %s, which the index says", o.Remote, e.Key, e.ID)
		}
		p.Fetched = append(p.Fetched, e.Key)
		p.Bytes += e.Size
		if m == nil {
			c := *om
			c.Sessions, c.Files = nil, nil
			m = &c
		}
		m.Sessions = append(m.Sessions, om.Sessions...)
		for _, f := range om.Files {
			if f.Path == pack.HistoryName {
				history = append(history, filepath.Join(one, pack.HistoryName))
				continue
			}
			m.Files = append(m.Files, f)
		}
		// The object's files join the others (each session's are its own).
		if err := filepath.WalkDir(one, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(one, path)
			if err != nil || rel == pack.HistoryName {
				return err
			}
			dst := filepath.Join(all, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return err
			}
			return os.Rename(path, dst)
		}); err != nil {
			return nil, err
		}
		copyDirTimes(one, all, om)
	}
	if m == nil {
		ok = true
		p.Landing = &carry.Landing{ChangeSet: changeset.New(o.Root, "pull")}
		p.Manifest = &pack.Manifest{Host: o.Machine}
		return p, nil
	}
	if len(history) > 0 {
		if err := concat(filepath.Join(all, pack.HistoryName), history); err != nil {
			return nil, err
		}
		m.Files = append(m.Files, pack.File{Path: pack.HistoryName})
	}
	m.Host = o.Machine
	pl := o.Place
	if m.Home != "" && o.Home != "" && m.Home != o.Home && changeset.MappableDir(m.Home) {
		pl.Map = append(append([]string(nil), pl.Map...), m.Home+"="+o.Home)
	}
	ld, err := landExtracted(o.Root, all, m, pl)
	if err != nil {
		return nil, err
	}
	p.Landing, p.Manifest = ld, m
	ok = true
	return p, nil
}

// landExtracted is pack.LandExtracted, the change set named pull.
func landExtracted(root, staging string, m *pack.Manifest, pl pack.Place) (*carry.Landing, error) {
	dirs, err := pack.Dirs(root, m, pl)
	if err != nil {
		return nil, err
	}
	o := carry.LandOptions{Root: root, From: staging, Host: m.Host, Command: "pull"}
	for i, s := range m.Sessions {
		o.Sessions = append(o.Sessions, carry.Arrival{Session: s.ID, Dir: dirs[i], Title: s.Title})
	}
	if len(m.Files) > 0 && m.Files[len(m.Files)-1].Path == pack.HistoryName {
		o.History = filepath.Join(staging, pack.HistoryName)
	}
	return carry.Land(o)
}

// fetch reads the object key of st as a pack into the folder dst.
func fetch(ctx context.Context, st remote.Store, key, dst string, keys pack.Keys) (*pack.Manifest, error) {
	rc, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	name := st.String() + "/" + key
	rd, err := pack.Open(rc, name, keys)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, err
	}
	if err := rd.Extract(dst); err != nil {
		return nil, err
	}
	return rd.Manifest, nil
}

// copyDirTimes gives the folders of m moved from one into all their
// mtimes back (moving their files changed them).
func copyDirTimes(one, all string, m *pack.Manifest) {
	for i := len(m.Files) - 1; i >= 0; i-- {
		f := m.Files[i]
		if f.Dir {
			os.Chtimes(filepath.Join(all, filepath.FromSlash(f.Path)), f.ModTime, f.ModTime)
		}
	}
}

// concat writes the files srcs, one after the other, to dst.
func concat(dst string, srcs []string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		in, err := os.Open(s)
		if err != nil {
			out.Close()
			return err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// IsKeyError says err is an object that cannot be opened with the keys
// given.
func IsKeyError(err error) bool {
	var ke *pack.KeyError
	return errors.As(err, &ke)
}
