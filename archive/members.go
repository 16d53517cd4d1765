package archive

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/internal/visible"
)

// Member is what a manifest says of one member of a stream of a store's
// files (an archive or a pack).
type Member struct {
	Path    string // relative to the store, forward slashes
	Dir     bool
	Mode    fs.FileMode // permission bits
	ModTime time.Time
	Size    int64
	SHA256  string
}

func (f FileInfo) member() Member {
	return Member{Path: f.Path, Dir: f.Dir, Mode: f.Mode, ModTime: f.ModTime, Size: f.Size, SHA256: f.SHA256}
}

// WriteManifest writes the manifest m (indented JSON, a newline after)
// as the member name, the first of tw, modified at mtime.
func WriteManifest(tw *tar.Writer, name string, m any, mtime time.Time) error {
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	mb = append(mb, '\n')
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(mb)),
		ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = tw.Write(mb)
	return err
}

// WriteHeader writes the tar header of member f: a folder (its name
// ending in a slash) or a file of f.Size bytes, with f's mode and mtime.
func WriteHeader(tw *tar.Writer, f Member) error {
	if f.Dir {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.Path + "/", Mode: int64(f.Mode), ModTime: f.ModTime, Format: tar.FormatPAX})
	}
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: int64(f.Mode), Size: f.Size, ModTime: f.ModTime, Format: tar.FormatPAX})
}

// MemberErrors says how ReadMembers reports a damaged stream.
type MemberErrors struct {
	// Damaged is the error of a damaged stream.
	Damaged func(format string, args ...any) error
	// Show is how a member's path from the manifest is shown (nil: as
	// it is).
	Show func(string) string
	// Kind ends the refusal of a member of another kind than the
	// manifest says.
	Kind string
}

// ReadMembers reads the members of tr after the manifest, each checked
// against want as it is read: its name and order, its kind (a file or a
// folder, nothing else), that it is not sparse, its mode and mtime, its
// size (never a byte more is read or written), its sha256; nothing may
// follow the last. With dst, it extracts them under dst, files with the
// modes a store's files may have (SafeMode) and their mtimes, and returns
// the folders, for SetFolders once the rest of the stream is read. A
// damaged member leaves in dst what was extracted before it.
func ReadMembers(tr *tar.Reader, want []Member, dst string, me MemberErrors) ([]Member, error) {
	show := me.Show
	if show == nil {
		show = func(s string) string { return s }
	}
	damaged := me.Damaged
	buf := make([]byte, 256<<10)
	var dirs []Member
	for _, want := range want {
		hdr, err := tr.Next()
		if err != nil {
			return nil, damaged("member %s: %v", want.Path, err)
		}
		if strings.TrimSuffix(hdr.Name, "/") != want.Path {
			return nil, damaged("member %s where the manifest has %s", visible.String(hdr.Name), show(want.Path))
		}
		if want.Dir != (hdr.Typeflag == tar.TypeDir) || !want.Dir && hdr.Typeflag != tar.TypeReg {
			return nil, damaged("member %s: of another kind than the manifest says%s", show(want.Path), me.Kind)
		}
		if sparse(hdr) {
			return nil, damaged("member %s: a sparse file, which cfix never writes", show(want.Path))
		}
		if fs.FileMode(hdr.Mode).Perm() != want.Mode.Perm() || !hdr.ModTime.Equal(want.ModTime) {
			return nil, damaged("member %s: mode or modification time differ from the manifest's", show(want.Path))
		}
		target := ""
		if dst != "" {
			target = filepath.Join(dst, filepath.FromSlash(want.Path))
		}
		if want.Dir {
			if target != "" {
				if err := os.MkdirAll(target, 0o700); err != nil {
					return nil, err
				}
				dirs = append(dirs, want)
			}
			continue
		}
		if hdr.Size != want.Size {
			return nil, damaged("member %s: %d bytes, the manifest says %d", show(want.Path), hdr.Size, want.Size)
		}
		fh := sha256.New()
		var out io.Writer = fh
		var of *os.File
		if target != "" {
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return nil, err
			}
			if of, err = rfile.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
				return nil, err
			}
			out = io.MultiWriter(of, fh)
		}
		// Never more than the manifest declares.
		n, err := io.CopyBuffer(out, io.LimitReader(tr, want.Size), buf)
		if err == nil && n == want.Size {
			if k, _ := tr.Read(buf[:1]); k > 0 {
				err = fmt.Errorf("longer than the %d bytes the manifest says", want.Size)
			}
		}
		if of != nil {
			if cerr := of.Close(); err == nil && cerr != nil {
				return nil, cerr
			}
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, err // writing the extracted copy failed
			}
			return nil, damaged("member %s: %v", show(want.Path), err)
		}
		if n != want.Size || hex.EncodeToString(fh.Sum(nil)) != want.SHA256 {
			return nil, damaged("member %s: its bytes differ from the manifest's sha256", show(want.Path))
		}
		if target != "" {
			if err := os.Chmod(target, SafeMode(false, want.Mode)); err != nil {
				return nil, err
			}
			if err := os.Chtimes(target, want.ModTime, want.ModTime); err != nil {
				return nil, err
			}
		}
	}
	if hdr, err := tr.Next(); err != io.EOF {
		if err == nil {
			return nil, damaged("member %s is not in the manifest", visible.String(hdr.Name))
		}
		return nil, damaged("after the last member: %v", err)
	}
	return dirs, nil
}

// SetFolders gives the folders ReadMembers extracted under dst their
// modes and mtimes, last and deepest first: adding their files moved
// their mtimes.
func SetFolders(dst string, dirs []Member) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		target := filepath.Join(dst, filepath.FromSlash(d.Path))
		if err := os.Chmod(target, SafeMode(true, d.Mode)); err != nil {
			return err
		}
		if err := os.Chtimes(target, d.ModTime, d.ModTime); err != nil {
			return err
		}
	}
	return nil
}
