package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
)

// Archives written by hand, as anyone could write them: the restore of
// each must never write outside the session's own files, nor hold or
// write more than the archive's manifest allows.

const (
	hSession = "11111111-2222-4333-8444-555555555555"
	hProject = "-home-dev-work-alpha"
)

// crafted is an archive to write: a manifest and its members.
type crafted struct {
	m       *Manifest
	members []craftedMember
	// manifest, when set, is written as the manifest instead of m
	// (manifestSize bytes).
	manifest     io.Reader
	manifestSize int64
	noManifest   bool // the members only
}

type craftedMember struct {
	hdr  tar.Header
	body io.Reader
	raw  []byte // when set, written as it is instead of hdr and body
}

var hTime = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// newCrafted returns the archive of one session with one main transcript
// and its index entry, as cfix archive writes it.
func newCrafted() *crafted {
	c := &crafted{m: &Manifest{Format: FormatName, Version: FormatVersion, Session: hSession, Projects: []string{hProject},
		LastActivity: hTime, Archived: hTime,
		Index: map[string]json.RawMessage{hProject: json.RawMessage(`{"sessionId": "` + hSession + `", "messageCount": 1}`)}}}
	c.file("projects/"+hProject+"/"+hSession+".jsonl", 0o600, []byte(`{"type":"user","sessionId":"`+hSession+`"}`+"\n"), true)
	return c
}

// file adds a file (a part of its own when part).
func (c *crafted) file(p string, mode fs.FileMode, data []byte, part bool) {
	sum := sha256.Sum256(data)
	c.sized(p, mode, int64(len(data)), hex.EncodeToString(sum[:]), bytes.NewReader(data), part)
}

// sized adds a file of size bytes read from body, sum its sha256.
func (c *crafted) sized(p string, mode fs.FileMode, size int64, sum string, body io.Reader, part bool) {
	if part {
		c.m.Parts = append(c.m.Parts, PartInfo{Path: p, What: "main transcript"})
	}
	c.m.Files = append(c.m.Files, FileInfo{Path: p, Mode: mode, ModTime: hTime, Size: size, SHA256: sum})
	c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: int64(mode), Size: size, ModTime: hTime, Format: tar.FormatPAX}, body: body})
}

// write writes the archive at path: tar, zstd, the checksum frame.
func (c *crafted) write(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	zw, err := newEncoder(1)
	if err != nil {
		t.Fatal(err)
	}
	zw.Reset(io.MultiWriter(f, h))
	tw := tar.NewWriter(zw)
	mr, size := c.manifest, c.manifestSize
	if mr == nil {
		mb, err := json.Marshal(c.m)
		if err != nil {
			t.Fatal(err)
		}
		mr, size = bytes.NewReader(mb), int64(len(mb))
	}
	if !c.noManifest {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Mode: 0o600, Size: size, ModTime: hTime, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, mr); err != nil {
			t.Fatal(err)
		}
	}
	for _, mb := range c.members {
		if mb.raw != nil {
			if err := tw.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := zw.Write(mb.raw); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := tw.WriteHeader(&mb.hdr); err != nil {
			t.Fatal(err)
		}
		if mb.body != nil {
			if _, err := io.Copy(tw, mb.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(trailer(h.Sum(nil))); err != nil {
		t.Fatal(err)
	}
}

// hostileStore makes a store with the session's project folder (its
// sessions-index.json without the session) and another project's, an
// archive folder, and a sessions-index.json outside the store, beside it.
func hostileStore(t *testing.T) (root, adir, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "home", ".claude")
	index := []byte("{\n  \"version\": 1,\n  \"entries\": []\n}\n")
	for _, p := range []string{hProject, "-home-dev-work-other"} {
		if err := os.MkdirAll(filepath.Join(root, "projects", p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "projects", p, "sessions-index.json"), index, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outside = filepath.Join(base, "somewhere")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "sessions-index.json"), index, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(base, "archive"), outside
}

// TestRestoreCrafted: the crafted archive itself restores, byte for byte
// (the ground the hostile ones stand on).
func TestRestoreCrafted(t *testing.T) {
	root, adir, _ := hostileStore(t)
	newCrafted().write(t, filepath.Join(adir, hSession+Ext))
	p, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	apply(t, p.ChangeSet, t.TempDir())
	b, err := os.ReadFile(filepath.Join(root, "projects", hProject, hSession+".jsonl"))
	if err != nil || !bytes.Contains(b, []byte(hSession)) {
		t.Fatalf("the transcript was not restored: %q, %v", b, err)
	}
	idx, _ := os.ReadFile(filepath.Join(root, "projects", hProject, "sessions-index.json"))
	if !bytes.Contains(idx, []byte(hSession)) {
		t.Fatalf("the index entry was not restored:\n%s", idx)
	}
}

// TestRestoreNotOwned: a manifest that names a file or an index that is
// not its session's own is refused whole, named, before anything is
// planned: nothing outside the store, in another project or of another
// session is written.
func TestRestoreNotOwned(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *crafted)
		names  string // what the refusal names
	}{
		{"index key outside the store", func(c *crafted) {
			c.m.Index = map[string]json.RawMessage{"../../../somewhere": c.m.Index[hProject]}
		}, "../../../somewhere"},
		{"index key of another project", func(c *crafted) {
			c.m.Index["-home-dev-work-other"] = c.m.Index[hProject]
		}, "-home-dev-work-other"},
		{"index entry of another session", func(c *crafted) {
			c.m.Index[hProject] = json.RawMessage(`{"sessionId":"99999999-2222-4333-8444-555555555555"}`)
		}, "index entry"},
		{"another project's memory", func(c *crafted) {
			c.file("projects/-home-dev-work-other/memory/MEMORY.md", 0o600, []byte("# planted\n"), true)
		}, "projects/-home-dev-work-other/memory/MEMORY.md"},
		{"another session's transcript", func(c *crafted) {
			c.file("projects/"+hProject+"/99999999-2222-4333-8444-555555555555.jsonl", 0o600, []byte("{}\n"), true)
		}, "99999999-2222-4333-8444-555555555555.jsonl"},
		{"a flat subagent in another project", func(c *crafted) {
			c.file("projects/-home-dev-work-other/agent-a1.jsonl", 0o600, []byte("{}\n"), true)
		}, "projects/-home-dev-work-other/agent-a1.jsonl"},
		{"another session's file-history", func(c *crafted) {
			c.file("file-history/99999999-2222-4333-8444-555555555555", 0o600, []byte("x"), true)
		}, "file-history/99999999-2222-4333-8444-555555555555"},
		{"a settings file", func(c *crafted) {
			c.file("projects/"+hProject+"/settings.json", 0o600, []byte("{}"), true)
		}, "settings.json"},
		{"a member of no part", func(c *crafted) {
			c.file("tasks/"+hSession+"/x.json", 0o600, []byte("{}"), false)
		}, "tasks/" + hSession + "/x.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, adir, outside := hostileStore(t)
			c := newCrafted()
			tc.change(c)
			path := filepath.Join(adir, hSession+Ext)
			c.write(t, path)
			before := tree(t, filepath.Dir(filepath.Dir(root)))
			for _, extract := range []bool{false, true} {
				p, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: extract})
				if err == nil {
					var where []string
					for _, op := range p.ChangeSet.Ops {
						where = append(where, string(op.Action)+" "+op.Path)
					}
					p.Cleanup()
					t.Fatalf("restore planned %d changes, want a refusal:\n%s", len(where), strings.Join(where, "\n"))
				}
				var ne *NotOwnedError
				if !errors.As(err, &ne) || !strings.Contains(err.Error(), "archive "+path+": manifest ") ||
					!strings.Contains(err.Error(), tc.names) || !strings.HasSuffix(err.Error(), ": refusing it") {
					t.Fatalf("restore: %v; want a refusal naming %s and %s", err, path, tc.names)
				}
				if list, bad, _ := List(adir); len(list) != 0 || bad[path] == nil {
					t.Fatalf("archive --list accepts it: %d listed, %v", len(list), bad)
				}
			}
			requireTree(t, "after the refusals", before, tree(t, filepath.Dir(filepath.Dir(root))))
			if b, _ := os.ReadFile(filepath.Join(outside, "sessions-index.json")); bytes.Contains(b, []byte(hSession)) {
				t.Fatal("the index outside the store was rewritten")
			}
		})
	}
	// The message, whole.
	root, adir, _ := hostileStore(t)
	c := newCrafted()
	c.file("projects/-home-dev-work-other/memory/MEMORY.md", 0o777, []byte("# planted\n"), true)
	path := filepath.Join(adir, hSession+Ext)
	c.write(t, path)
	_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}})
	want := "archive " + path + ": manifest names projects/-home-dev-work-other/memory/MEMORY.md, which is not session " + hSession + "'s: refusing it"
	if err == nil || err.Error() != want {
		t.Fatalf("restore: %v\nwant: %s", err, want)
	}
}

// TestRestoreMode: a member archived with mode 0777 is restored without
// its execute and others' write bits, and the plan says so.
func TestRestoreMode(t *testing.T) {
	root, adir, _ := hostileStore(t)
	c := newCrafted()
	c.m.Files[0].Mode = 0o777
	c.members[0].hdr.Mode = 0o777
	c.m.Parts = append(c.m.Parts, PartInfo{Path: "tasks/" + hSession, Dir: true, What: "task list"})
	c.m.Files = append(c.m.Files, FileInfo{Path: "tasks/" + hSession, Dir: true, Mode: 0o777, ModTime: hTime})
	c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeDir, Name: "tasks/" + hSession + "/", Mode: 0o777, ModTime: hTime, Format: tar.FormatPAX}})
	c.file("tasks/"+hSession+"/1.json", 0o6755, []byte("{}"), false)
	c.write(t, filepath.Join(adir, hSession+Ext))
	p, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	if !strings.Contains(strings.Join(p.ChangeSet.Notes, "\n"), "0777") {
		t.Errorf("the plan does not say the mode was narrowed: %q", p.ChangeSet.Notes)
	}
	apply(t, p.ChangeSet, t.TempDir())
	// Files without execute bits, nothing writable by others.
	for p, never := range map[string]fs.FileMode{
		filepath.Join(root, "projects", hProject, hSession+".jsonl"): 0o113,
		filepath.Join(root, "tasks", hSession):                       0o002,
		filepath.Join(root, "tasks", hSession, "1.json"):             0o113,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&(never|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			t.Errorf("%s: mode %v", p, fi.Mode())
		}
	}
}

// zeros reads n zero bytes.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func zeroSum(n int64) string {
	h := sha256.New()
	io.Copy(h, zeros(n))
	return hex.EncodeToString(h.Sum(nil))
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHugeManifest: an archive of a few KB whose manifest is 200 MB is
// refused, named, unread: archive --list and the restore dry run allocate
// a few MB, not the manifest's size.
func TestHugeManifest(t *testing.T) {
	root, adir, _ := hostileStore(t)
	c := newCrafted()
	// {"files":[{},{},...{}]}: the shape that costs most to decode.
	const size = 200 << 20
	head, tail := `{"files":[`, `{}]}`
	n := (size - len(head) - len(tail)) / 3
	c.manifest = io.MultiReader(strings.NewReader(head), &repeat{s: "{},", n: n}, strings.NewReader(tail))
	c.manifestSize = int64(len(head) + 3*n + len(tail))
	path := filepath.Join(adir, hSession+Ext)
	c.write(t, path)
	if fi, _ := os.Stat(path); fi.Size() > 1<<20 {
		t.Fatalf("the archive is %d bytes", fi.Size())
	}
	var err error
	var bad map[string]error
	if n := allocated(func() { _, bad, err = List(adir) }); n > 32<<20 || err != nil {
		t.Fatalf("archive --list allocated %d MB (%v)", n>>20, err)
	}
	if !strings.Contains(bad[path].Error(), "refused unread") {
		t.Fatalf("archive --list: %v", bad[path])
	}
	for _, extract := range []bool{false, true} {
		if n := allocated(func() {
			_, err = Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: extract})
		}); n > 32<<20 {
			t.Fatalf("restore (extract %v) allocated %d MB", extract, n>>20)
		}
		var de *DamagedError
		if !errors.As(err, &de) || de.Path != path || !strings.Contains(err.Error(), "its manifest is 200 MB, over the 16 MB a manifest may have: refused unread") {
			t.Fatalf("restore: %v", err)
		}
	}
}

// repeat reads s n times.
type repeat struct {
	s   string
	n   int
	buf []byte
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.buf == nil {
		r.buf = bytes.Repeat([]byte(r.s), 64<<10/len(r.s))
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p)/len(r.s), len(r.buf)/len(r.s))
	if k == 0 {
		return 0, io.ErrShortBuffer
	}
	r.n -= k
	return copy(p, r.buf[:k*len(r.s)]), nil
}

// TestManifestShape: a manifest under 16 MB of millions of empty entries,
// or of strings, is refused before it is decoded.
func TestManifestShape(t *testing.T) {
	for _, b := range []string{
		`{"files":[` + strings.Repeat("{},", 5<<20) + `{}]}`,
		`{"projects":[` + strings.Repeat(`"",`, 4<<20) + `""]}`,
		`{"index":{` + strings.Repeat(`"":0,`, 3<<20) + `"":0}}`,
	} {
		var err error
		if n := allocated(func() { _, err = parseManifest([]byte(b)) }); n > 16<<20 || err == nil || !strings.Contains(err.Error(), "more than a manifest holds") {
			t.Fatalf("parseManifest of %s...: allocated %d MB: %v", b[:20], n>>20, err)
		}
	}
}

// TestRestoreZeros: an archive of a few hundred KB declaring a 64 MB
// file. The dry run reads and hashes it and writes nothing anywhere; an
// apply checks the room for it first (refused when there is too little,
// nothing extracted) and restores it when there is; a member longer than
// its manifest says is refused as damaged.
func TestRestoreZeros(t *testing.T) {
	const size = 64 << 20
	root, adir, _ := hostileStore(t)
	c := newCrafted()
	c.sized("debug/"+hSession+".txt", 0o600, size, zeroSum(size), zeros(size), true)
	path := filepath.Join(adir, hSession+Ext)
	c.write(t, path)
	base := filepath.Dir(filepath.Dir(root))
	before := tree(t, base)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	p, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing written, before the plan is cleaned up.
	requireTree(t, "after the dry run", before, tree(t, base))
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("the dry run wrote %d entries into the temporary folder", len(ents))
	}
	var sb strings.Builder
	if _, err := (changeset.View{Diff: p.Diff}).Write(&sb, p.ChangeSet); err != nil || !strings.Contains(sb.String(), "debug/"+hSession+".txt") {
		t.Fatalf("the dry run's plan does not show the file: %v\n%s", err, sb.String())
	}
	p.Cleanup()

	// Too little room: refused before anything is extracted.
	real := freeSpace
	var asked []string
	freeSpace = func(path string) (uint64, int64, error) {
		asked = append(asked, path)
		dev, _, err := real(path)
		return dev, 1 << 20, err
	}
	_, err = Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: true})
	freeSpace = real
	if err == nil || !strings.Contains(err.Error(), "restore needs") || !strings.Contains(err.Error(), "nothing is planned") {
		t.Fatalf("restore with 1 MB free: %v", err)
	}
	if len(asked) == 0 {
		t.Fatal("the free space was not asked")
	}
	requireTree(t, "after the refusal", before, tree(t, base))

	// Room enough: restored.
	p, err = Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet, t.TempDir())
	p.Cleanup()
	if fi, err := os.Stat(filepath.Join(root, "debug", hSession+".txt")); err != nil || fi.Size() != size {
		t.Fatalf("the restored file: %v %v", fi, err)
	}

	// A member longer than the manifest declares: damaged, whatever the
	// tar header says.
	root, adir, _ = hostileStore(t)
	c = newCrafted()
	c.sized("debug/"+hSession+".txt", 0o600, 1<<20, zeroSum(1<<20), zeros(size), true)
	c.members[1].hdr.Size = size
	c.write(t, filepath.Join(adir, hSession+Ext))
	for _, extract := range []bool{false, true} {
		_, err = Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: extract})
		var de *DamagedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "the manifest says 1048576") {
			t.Fatalf("a member longer than declared: %v", err)
		}
		if ents, _ := os.ReadDir(adir); len(ents) != 1 {
			t.Fatalf("the archive folder holds %d entries (staging left?)", len(ents))
		}
	}
}

// sparseMember returns the tar blocks of a PAX sparse file (format 1.0)
// named name of size bytes: a hole, then one byte 'z'. tar.Writer writes
// no sparse files, so its blocks are made by hand.
func sparseMember(t *testing.T, name string, size int64) []byte {
	record := func(k, v string) string {
		r := " " + k + "=" + v + "\n"
		n := len(r)
		for {
			s := fmt.Sprintf("%d%s", n, r)
			if len(s) == n {
				return s
			}
			n = len(s)
		}
	}
	recs := record("GNU.sparse.major", "1") + record("GNU.sparse.minor", "0") + record("GNU.sparse.size", fmt.Sprint(size)) + record("GNU.sparse.name", name)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "pax", Size: int64(len(recs)), Format: tar.FormatUSTAR}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(recs))
	m := fmt.Sprintf("1\n%d\n1\n", size-1) // one block of data: 1 byte at size-1
	data := append(append([]byte(m), make([]byte, 512-len(m))...), 'z')
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o600, ModTime: hTime, Format: tar.FormatUSTAR}); err != nil {
		t.Fatal(err)
	}
	tw.Write(data)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	// The first header is the PAX one: its type and checksum.
	raw[156] = tar.TypeXHeader
	copy(raw[148:156], "        ")
	sum := 0
	for _, c := range raw[:512] {
		sum += int(c)
	}
	copy(raw[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return raw
}

// TestRestoreSparse: a member that is a sparse file (a few bytes that
// read as any number of zeros) is refused as damaged, read or extracted.
func TestRestoreSparse(t *testing.T) {
	const size = 1 << 20
	root, adir, _ := hostileStore(t)
	c := newCrafted()
	p := "debug/" + hSession + ".txt"
	h := sha256.New()
	io.Copy(h, zeros(size-1))
	h.Write([]byte("z"))
	c.m.Parts = append(c.m.Parts, PartInfo{Path: p, What: "debug log"})
	c.m.Files = append(c.m.Files, FileInfo{Path: p, Mode: 0o600, ModTime: time.Unix(hTime.Unix(), 0).UTC(), Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	c.members = append(c.members, craftedMember{raw: sparseMember(t, p, size)})
	path := filepath.Join(adir, hSession+Ext)
	c.write(t, path)
	if fi, _ := os.Stat(path); fi.Size() > 4096 {
		t.Fatalf("the archive is %d bytes", fi.Size())
	}
	for _, extract := range []bool{false, true} {
		_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: extract})
		var de *DamagedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "a sparse file") {
			t.Fatalf("restore (extract %v): %v", extract, err)
		}
	}
}

// TestArchiveNamesVisible: names from an archive reach the terminal
// escaped: a first member, a member that is not in the manifest, a
// session id, in the damaged-archive error and in a refusal.
func TestArchiveNamesVisible(t *testing.T) {
	const esc = "\x1b]0;pwned\x07\x1b[31m"
	cases := map[string]func(c *crafted){
		"first member": func(c *crafted) {
			c.noManifest = true
			c.members = append([]craftedMember{{hdr: tar.Header{Typeflag: tar.TypeReg, Name: esc, Size: 0, Format: tar.FormatPAX}}}, c.members...)
		},
		"member not in the manifest": func(c *crafted) {
			c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "projects/" + esc, Size: 0, Format: tar.FormatPAX}})
		},
		"member in place of another": func(c *crafted) {
			c.members[0].hdr.Name = "projects/" + hProject + "/" + esc
		},
		"session id": func(c *crafted) {
			c.m.Session = esc
		},
		"path of another session": func(c *crafted) {
			c.file("projects/"+hProject+"/"+esc+".jsonl", 0o600, []byte("{}\n"), true)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			root, adir, _ := hostileStore(t)
			c := newCrafted()
			change(c)
			path := filepath.Join(adir, hSession+Ext)
			c.write(t, path)
			_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{path}})
			if err == nil {
				t.Fatal("restored")
			}
			msgs := []string{err.Error()}
			if _, bad, _ := List(adir); bad[path] != nil {
				msgs = append(msgs, bad[path].Error()) // List reads the manifest only
			}
			for _, msg := range msgs {
				if strings.ContainsAny(msg, "\x1b\x07") || !strings.Contains(msg, `\x1b`) {
					t.Errorf("the message is not escaped: %q", msg)
				}
			}
		})
	}
}

// TestRestoreTwice: two archives of one session are refused.
func TestRestoreTwice(t *testing.T) {
	root, adir, _ := hostileStore(t)
	newCrafted().write(t, filepath.Join(adir, "a"+Ext))
	newCrafted().write(t, filepath.Join(adir, "b"+Ext))
	_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{filepath.Join(adir, "a"+Ext), filepath.Join(adir, "b"+Ext)}})
	if err == nil || !strings.Contains(err.Error(), "both hold session "+hSession) {
		t.Fatalf("two archives of one session: %v", err)
	}
}

// TestRestoreRefusesAsBefore: what was refused before the dry run
// stopped extracting is refused still, read or extracted: a member path
// with .., an absolute one, a link, a hard link, a member named twice, a
// member the manifest does not list.
func TestRestoreRefusesAsBefore(t *testing.T) {
	main := "projects/" + hProject + "/" + hSession + ".jsonl"
	cases := map[string]func(c *crafted){
		"..": func(c *crafted) {
			c.file("projects/"+hProject+"/"+hSession+"/../../x.jsonl", 0o600, []byte("x"), true)
		},
		"absolute": func(c *crafted) {
			c.file("/etc/cfix-test", 0o600, []byte("x"), true)
		},
		"link": func(c *crafted) {
			c.members[0] = craftedMember{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: main, Linkname: "/etc/passwd", ModTime: hTime, Mode: 0o600, Format: tar.FormatPAX}}
		},
		"hard link": func(c *crafted) {
			c.members[0] = craftedMember{hdr: tar.Header{Typeflag: tar.TypeLink, Name: main, Linkname: "/etc/passwd", ModTime: hTime, Mode: 0o600, Format: tar.FormatPAX}}
		},
		"named twice": func(c *crafted) {
			c.file(main, 0o600, []byte("{}\n"), false)
		},
		"not listed": func(c *crafted) {
			c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "debug/" + hSession + ".txt", Format: tar.FormatPAX}, body: strings.NewReader("")})
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			root, adir, _ := hostileStore(t)
			c := newCrafted()
			change(c)
			c.write(t, filepath.Join(adir, hSession+Ext))
			base := filepath.Dir(filepath.Dir(root))
			before := tree(t, base)
			for _, extract := range []bool{false, true} {
				if p, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}, Extract: extract}); err == nil {
					p.Cleanup()
					t.Fatalf("restore (extract %v) planned %d changes", extract, len(p.ChangeSet.Ops))
				}
				requireTree(t, "after the refusal", before, tree(t, base))
			}
		})
	}
}

// TestRestoreErrorVisible: an error of the file system that names a
// member (here: its folder is a file in the store) reaches the terminal
// escaped too.
func TestRestoreErrorVisible(t *testing.T) {
	root, adir, _ := hostileStore(t)
	dir := "projects/" + hProject + "/" + hSession
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(dir)), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCrafted()
	c.m.Parts = append(c.m.Parts, PartInfo{Path: dir, Dir: true, What: "session folder"})
	c.m.Files = append(c.m.Files, FileInfo{Path: dir, Dir: true, Mode: 0o700, ModTime: hTime})
	c.members = append(c.members, craftedMember{hdr: tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o700, ModTime: hTime, Format: tar.FormatPAX}})
	c.file(dir+"/\x1b[31mred.json", 0o600, []byte("{}"), false)
	c.write(t, filepath.Join(adir, hSession+Ext))
	_, err := Restore(RestoreOptions{Root: root, Dir: adir, Archives: []string{hSession}})
	if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), `\x1b[31mred.json`) {
		t.Fatalf("restore: %q", err)
	}
}

// TestRoomForSmallRestore: a restore that fits asks for a margin in
// proportion, not a fixed 16 MB: 429 KB on a file system with 1.9 MB free
// (both folders on it) goes; 1 MB free does not.
func TestRoomForSmallRestore(t *testing.T) {
	real := freeSpace
	defer func() { freeSpace = real }()
	for _, c := range []struct {
		free int64
		ok   bool
	}{{1900 << 10, true}, {1 << 20, false}} {
		freeSpace = func(string) (uint64, int64, error) { return 1, c.free, nil }
		err := roomFor("/store", "/store/staging", 429<<10)
		if (err == nil) != c.ok {
			t.Errorf("%d bytes free: %v, want ok %v", c.free, err, c.ok)
		}
	}
}
