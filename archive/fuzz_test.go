package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
)

// seedArchives returns real archives, as cfix archive writes them: every
// session of a corpus store, and the crafted one.
func seedArchives(f *testing.F) [][]byte {
	f.Helper()
	dir := f.TempDir()
	root := filepath.Join(dir, ".claude")
	if out, err := exec.Command("cp", "-a", "../testdata/corpus/2.1.330/.claude", root).CombinedOutput(); err != nil {
		f.Fatalf("cp -a: %v\n%s", err, out)
	}
	damage.Age(f, root)
	adir := filepath.Join(dir, "archive")
	p, err := Archive(Options{Root: root, Dir: adir, OlderThan: time.Minute, Build: true})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: filepath.Join(dir, "journal")}); err != nil {
		f.Fatal(err)
	}
	p.Cleanup()
	newCrafted().write(f, filepath.Join(adir, "crafted"+Ext))
	paths, _ := filepath.Glob(filepath.Join(adir, "*"+Ext))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) < 2 {
		f.Fatalf("%d seed archives", len(out))
	}
	return out
}

// untar returns the tar stream and the manifest of an archive.
func untar(f *testing.F, b []byte) (stream, manifest []byte) {
	zr, err := newDecoder(bytes.NewReader(b[:len(b)-trailerSize]), 1)
	if err != nil {
		f.Fatal(err)
	}
	defer zr.Close()
	stream, err = io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(stream))
	if _, err := tr.Next(); err != nil {
		f.Fatal(err)
	}
	manifest, err = io.ReadAll(tr)
	if err != nil {
		f.Fatal(err)
	}
	return stream, manifest
}

// requireOwned fails unless every path m names, and every index key, is
// inside the store and the session's own: its id is a component of the
// path or starts its name (todos/<id>-agent-*.json, debug/<id>.txt), or
// it is a flat subagent in one of its project folders; and no mode gives
// more than 0775.
func requireOwned(t *testing.T, m *Manifest) {
	t.Helper()
	const root = "/store/.claude"
	projects := map[string]bool{}
	for _, p := range m.Projects {
		projects[p] = true
	}
	for key := range m.Index {
		ix := filepath.Join(root, "projects", key, "sessions-index.json")
		if !projects[key] || filepath.Dir(filepath.Dir(ix)) != root+"/projects" {
			t.Fatalf("accepted index key %q (projects %q)", key, m.Projects)
		}
	}
	owned := func(p string) bool {
		if !strings.HasPrefix(filepath.Join(root, p), root+"/") {
			return false
		}
		c := strings.Split(p, "/")
		if len(c) == 3 && c[0] == "projects" && projects[c[1]] && strings.HasPrefix(c[2], "agent-") && strings.HasSuffix(c[2], ".jsonl") {
			return true
		}
		for _, x := range c[1:] {
			if x == m.Session || strings.HasPrefix(x, m.Session+"-agent-") || x == m.Session+".jsonl" || x == m.Session+".txt" || x == m.Session+".json" {
				return true
			}
		}
		return false
	}
	for _, p := range m.Parts {
		if !owned(p.Path) {
			t.Fatalf("accepted part %q of session %q", p.Path, m.Session)
		}
	}
	for _, f := range m.Files {
		if !owned(f.Path) || path.Clean(f.Path) != f.Path {
			t.Fatalf("accepted member %q of session %q", f.Path, m.Session)
		}
		if safeMode(f)&^0o775 != 0 {
			t.Fatalf("member %q restores with mode %v", f.Path, safeMode(f))
		}
	}
}

// FuzzManifest: the manifest parser and its checks, on arbitrary bytes,
// never panic, hold little memory (see parseManifest), and accept only
// manifests that name their session's own files.
func FuzzManifest(f *testing.F) {
	for _, b := range seedArchives(f) {
		_, m := untar(f, b)
		if _, err := acceptManifest("seed"+Ext, m); err != nil {
			f.Fatalf("a real manifest is refused: %v", err)
		}
		f.Add(m)
	}
	f.Add([]byte(`{"format":"cfix-session-archive","version":1,"session":"s","projects":["p"],"index":{"../x":{"sessionId":"s"}}}`))
	f.Add([]byte(`{"files":[{},{},{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := acceptManifest("fuzz"+Ext, b)
		if err != nil {
			return
		}
		requireOwned(t, m)
	})
}

// FuzzArchiveReader: an archive's reader (the manifest alone, as
// archive --list reads it, and the whole archive verified, as a restore
// reads it, then extracted) on arbitrary bytes, and on an arbitrary tar
// stream in a valid zstd frame and checksum frame, never panics, and what
// it accepts and extracts is the session's own.
func FuzzArchiveReader(f *testing.F) {
	for _, b := range seedArchives(f) {
		f.Add(b, false)
		stream, _ := untar(f, b)
		f.Add(stream, true)
	}
	zw, err := newEncoder(1) // one input at a time
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, wrap bool) {
		dir := t.TempDir()
		file := filepath.Join(dir, "fuzz"+Ext)
		if wrap {
			var buf bytes.Buffer
			zw.Reset(&buf)
			zw.Write(b)
			zw.Close()
			sum := sha256.Sum256(buf.Bytes())
			b = append(buf.Bytes(), trailer(sum[:])...)
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if m, err := readManifest(file); err == nil {
			requireOwned(t, m)
		}
		if _, err := verify(file, "", nil); err != nil {
			return
		}
		dst := filepath.Join(dir, "x")
		v, err := verify(file, dst, nil)
		if err != nil {
			t.Fatalf("verified as a stream, not when extracted: %v", err)
		}
		requireOwned(t, v.Manifest)
		listed := map[string]bool{}
		for _, f := range v.Manifest.Files {
			listed[f.Path] = true
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir || p == file || p == dst {
				return err
			}
			rel, _ := filepath.Rel(dst, p)
			rel = filepath.ToSlash(rel)
			if !listed[rel] && !listed[strings.TrimSuffix(rel, "/")] && !d.IsDir() {
				t.Fatalf("extracted %s, which the manifest does not list", p)
			}
			return nil
		})
	})
}
