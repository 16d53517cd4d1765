package pack

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Packs written by hand, as anyone could write them: the unpack of each
// is refused before anything lands, with what is wrong named, and nothing
// is written outside its staging folder (which is removed).

const (
	hSession = "11111111-2222-4333-8444-555555555555"
	hProject = "-home-dev-work-alpha"
)

var hTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type craftedMember struct {
	hdr  tar.Header
	body []byte
}

type crafted struct {
	m        *Manifest
	members  []craftedMember
	manifest []byte // written instead of m when set
	cut      int    // bytes cut off the end
}

func newCrafted() *crafted {
	c := &crafted{m: &Manifest{Format: FormatName, Version: FormatVersion, Created: hTime, Host: "h", Home: "/home/dev",
		Sessions: []Session{{ID: hSession, CWD: "/home/dev/work/alpha", Project: hProject, Main: "projects/" + hProject + "/" + hSession + ".jsonl"}}}}
	c.file("projects/"+hProject+"/"+hSession+".jsonl", hSession, []byte(`{"type":"user","cwd":"/home/dev/work/alpha","sessionId":"`+hSession+`"}`+"\n"))
	return c
}

func (c *crafted) file(p, session string, data []byte) {
	sum := sha256.Sum256(data)
	c.m.Files = append(c.m.Files, File{Path: p, Mode: 0o600, ModTime: hTime, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Session: session})
	c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o600, Size: int64(len(data)), ModTime: hTime, Format: tar.FormatPAX}, body: data})
}

func (c *crafted) bytes(t testing.TB) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	mb := c.manifest
	if mb == nil {
		if mb, err = json.Marshal(c.m); err != nil {
			t.Fatal(err)
		}
	}
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: 0o600, Size: int64(len(mb)), ModTime: hTime, Format: tar.FormatPAX})
	tw.Write(mb)
	for _, m := range c.members {
		if err := tw.WriteHeader(&m.hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.body)
	}
	tw.Close()
	zw.Close()
	b := out.Bytes()
	return b[:len(b)-c.cut]
}

// hostileStore is an empty store, and a folder beside it that must stay
// empty.
func hostileStore(t *testing.T) (root, outside string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, ".claude")
	outside = filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(root, "projects"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// files lists the files under dir.
func files(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestHostilePacks(t *testing.T) {
	evil := []byte(`{"type":"user","sessionId":"x"}` + "\n")
	cases := []struct {
		name, want string
		edit       func(c *crafted)
	}{
		{"dot-dot", "not a clean relative path", func(c *crafted) { c.file("projects/../../outside/x", hSession, evil) }},
		{"absolute", "not a clean relative path", func(c *crafted) { c.file("/etc/x", hSession, evil) }},
		{"another session's", "is not session", func(c *crafted) {
			c.file("projects/"+hProject+"/99999999-2222-4333-8444-555555555555.jsonl", hSession, evil)
		}},
		{"a store file", "not in a folder of the store that holds sessions", func(c *crafted) { c.file("settings.json", hSession, evil) }},
		{"a session not packed", "which the pack does not hold", func(c *crafted) {
			c.file("todos/99999999-2222-4333-8444-555555555555-agent-x.json", "99999999-2222-4333-8444-555555555555", evil)
		}},
		{"history not last", "not the last member", func(c *crafted) {
			c.file(HistoryName, "", evil)
			c.file("todos/"+hSession+"-agent-"+hSession+".json", hSession, []byte("[]"))
		}},
		{"not a uuid", "is not a UUID", func(c *crafted) { c.m.Sessions[0].ID = "../x" }},
		{"version", "format version 9", func(c *crafted) { c.m.Version = 9 }},
		{"extra member", "is not in the manifest", func(c *crafted) {
			c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "todos/x.json", Size: 2, Mode: 0o600, ModTime: hTime}, body: []byte("[]")})
		}},
		{"a link", "of another kind", func(c *crafted) {
			c.file("todos/"+hSession+"-agent-"+hSession+".json", hSession, nil)
			c.members[len(c.members)-1].hdr = tar.Header{Typeflag: tar.TypeSymlink, Name: "todos/" + hSession + "-agent-" + hSession + ".json", Linkname: "/etc/passwd", Mode: 0o600, ModTime: hTime}
		}},
		{"longer", "bytes, the manifest says", func(c *crafted) {
			c.members[0].body = append(c.members[0].body, "more\n"...)
			c.members[0].hdr.Size = int64(len(c.members[0].body))
		}},
		{"other bytes", "differ from the manifest's sha256", func(c *crafted) {
			c.members[0].body = bytes.ToUpper(c.members[0].body)
		}},
		{"cut", "", func(c *crafted) { c.cut = 20 }},
		{"zeros", "free", func(c *crafted) {
			c.m.Files = append(c.m.Files, File{Path: "todos/" + hSession + "-agent-" + hSession + ".json", Mode: 0o600, ModTime: hTime, Size: 1 << 49, SHA256: strings.Repeat("0", 64), Session: hSession})
		}},
		{"not json", "manifest", func(c *crafted) { c.manifest = []byte("{{{") }},
		{"many objects", "more than a manifest holds", func(c *crafted) {
			c.manifest = []byte("[" + strings.Repeat("{},", 200000) + "{}]")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := hostileStore(t)
			c := newCrafted()
			tc.edit(c)
			path := filepath.Join(t.TempDir(), "evil.cfixpack")
			if err := os.WriteFile(path, c.bytes(t), 0o600); err != nil {
				t.Fatal(err)
			}
			staging := t.TempDir()
			p, err := Unpack(UnpackOptions{Root: root, Pack: path, Staging: staging, Place: Place{To: "/home/dev/work/alpha"}})
			if err == nil {
				p.Cleanup()
				t.Fatalf("unpacked: %+v", p.Sessions)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			var de *DamagedError
			var ve *versionError
			if !errors.As(err, &de) && !errors.As(err, &ve) && tc.name != "zeros" {
				t.Errorf("error %T %v, want a DamagedError", err, err)
			}
			if fs := files(outside); len(fs) > 0 {
				t.Errorf("written outside: %v", fs)
			}
			if fs := files(root); len(fs) > 0 {
				t.Errorf("written into the store: %v", fs)
			}
			if fs := files(staging); len(fs) > 0 {
				t.Errorf("left in the staging folder: %v", fs)
			}
		})
	}
}

// TestHugeManifest: a manifest member over the bound is refused before a
// byte of it is read.
func TestHugeManifest(t *testing.T) {
	var out bytes.Buffer
	zw, _ := zstd.NewWriter(&out)
	tw := tar.NewWriter(zw)
	size := int64(1 << 30)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: 0o600, Size: size, ModTime: hTime, Format: tar.FormatPAX})
	io.CopyN(tw, zeroReader{}, 1<<20) // the rest never comes
	zw.Close()
	_, err := Open(bytes.NewReader(out.Bytes()), "huge", Keys{})
	if err == nil || !strings.Contains(err.Error(), "refused unread") {
		t.Fatalf("Open: %v", err)
	}
}

// TestNotAPack: a file that is neither zstd nor age is named as such.
func TestNotAPack(t *testing.T) {
	_, err := Open(strings.NewReader("hello, this is text\n"), "notes.txt", Keys{})
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "neither a zstd stream nor an age file") {
		t.Fatalf("Open: %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
