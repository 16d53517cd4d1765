package pack

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPackReader: reading a pack (Open, then Extract into a folder) of
// arbitrary bytes, or of an arbitrary stream in a zstd frame, never
// panics, and what it extracts is only what its manifest lists, under
// the folder it is given.
func FuzzPackReader(f *testing.F) {
	good := newCrafted()
	good.file("todos/"+hSession+"-agent-"+hSession+".json", hSession, []byte("[]"))
	for _, c := range []*crafted{newCrafted(), good} {
		f.Add(c.bytes(f), false)
	}
	f.Add([]byte("age-encryption.org/v1\n-> X25519 abc\nxyz\n--- abc\n"), false)
	f.Add([]byte(`{"format":"cfix-pack","version":1}`), true)
	f.Fuzz(func(t *testing.T, b []byte, wrap bool) {
		if wrap {
			c := newCrafted()
			c.manifest = b
			b = c.bytes(t)
		}
		r, err := Open(bytes.NewReader(b), "fuzz", Keys{})
		if err != nil {
			return
		}
		defer r.Close()
		dir := t.TempDir()
		if err := r.Extract(dir); err != nil {
			return
		}
		listed := map[string]bool{}
		for _, f := range r.Manifest.Files {
			listed[f.Path] = true
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if !listed[rel] && !d.IsDir() || strings.HasPrefix(rel, "..") {
				t.Fatalf("extracted %s, which the manifest does not list", p)
			}
			return nil
		})
	})
}
