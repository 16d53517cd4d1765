package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// tmpPrefix starts the name of an object being written to a folder.
const tmpPrefix = ".cfix-put-"

// dirStore is a remote in a folder of this machine.
type dirStore struct {
	dir string
}

// OpenDir returns the remote in the folder dir, which must exist (a
// mounted disk that is not there is an error, never an empty remote).
func OpenDir(dir string) (Store, error) {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, &Error{URL: "file://" + dir, Msg: "no such folder", Hint: "make it, or mount the disk it is on", Err: err}
	}
	if !fi.IsDir() {
		return nil, &Error{URL: "file://" + dir, Msg: "not a folder"}
	}
	return &dirStore{dir: dir}, nil
}

func (d *dirStore) String() string { return "file://" + d.dir }

func (d *dirStore) url(key string) string { return "file://" + d.dir + "/" + key }

func (d *dirStore) path(op, key string) (string, error) {
	if !ValidKey(key) {
		return "", &Error{URL: d.url(key), Op: op, Msg: "not a clean key"}
	}
	return filepath.Join(d.dir, filepath.FromSlash(key)), nil
}

func (d *dirStore) fail(op, key string, err error) error {
	e := &Error{URL: d.url(key), Op: op, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.Msg, e.NotFound = "no such object", true
	case errors.Is(err, fs.ErrPermission):
		e.Msg, e.Hint = "permission denied", "check the folder's owner and modes"
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		e.Msg = err.Error()
	}
	return e
}

func (d *dirStore) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	err := filepath.WalkDir(d.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if de.IsDir() || strings.HasPrefix(de.Name(), tmpPrefix) || !de.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(d.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		out = append(out, Object{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, d.fail("listing", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (d *dirStore) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path("reading", key)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(p)
	if err == nil && !fi.Mode().IsRegular() {
		return nil, &Error{URL: d.url(key), Op: "reading", Msg: "not a regular file"}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, d.fail("reading", key, err)
	}
	return f, nil
}

// Put writes the object into a temporary file beside it, synced, then
// renamed over the key: a reader sees the old one or the new one.
func (d *dirStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := d.path("writing", key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return d.fail("writing", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), tmpPrefix+"*")
	if err != nil {
		return d.fail("writing", key, err)
	}
	n, err := io.Copy(f, r)
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("%d bytes read where %d were given", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return d.fail("writing", key, err)
	}
	if dir, err := os.Open(filepath.Dir(p)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}

func (d *dirStore) Delete(ctx context.Context, key string) error {
	p, err := d.path("removing", key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.fail("removing", key, err)
	}
	// Folders it leaves empty go too (never the remote's own).
	for dir := filepath.Dir(p); dir != d.dir && strings.HasPrefix(dir, d.dir+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}
