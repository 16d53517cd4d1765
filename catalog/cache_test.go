package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
)

// listing is what a catalog lists of the store at root, with the cache in
// dir, as JSON (every field of every session and project).
func listing(t *testing.T, root, dir string) string {
	t.Helper()
	c := OpenIn(root, dir)
	c.Now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) // the sweep's
	st, err := c.Store()
	if err != nil {
		t.Fatal(err)
	}
	var ps []*Project
	for _, folder := range st.Layout.Projects {
		l, err := store.ScanProject(root, folder)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.Project(l, folder)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	_, gs, err := c.Extras(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(struct {
		Sessions []store.SessionInfo
		Projects []store.ProjectInfo
		Listed   []*Project
		Extras   []store.Glance
	}{st.Sessions, st.Projects, ps, gs}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// aged is a copy of a corpus store with old mtimes (kept by the cache).
func aged(t *testing.T, version string) string {
	t.Helper()
	root := damage.CopyStore(t, version)
	damage.Age(t, root)
	return root
}

// TestCacheNeverTrusted: a cache file that is cut short, corrupt (a byte
// flipped), foreign (not a cache; another store's), of another format
// version or written by another build of cfix is ignored: the listing is
// that of no cache, and the cache is written anew (the next open trusts
// it). A cache whose checksum holds but whose kept glance is not one is
// read again, not believed.
func TestCacheNeverTrusted(t *testing.T) {
	root := aged(t, "2.0.77")
	want := listing(t, root, "")
	dir := t.TempDir()
	file := CacheFile(dir, root)
	if got := listing(t, root, dir); got != want {
		t.Fatal("a cold cache changes the listing")
	}
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if c := OpenCache(file, root); !c.Loaded || c.Len() == 0 {
		t.Fatal("the cache written is not read back")
	}
	resum := func(b []byte) []byte {
		b = b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	other := aged(t, "2.1.88")
	listing(t, other, dir)
	foreignStore, err := os.ReadFile(CacheFile(dir, other))
	if err != nil {
		t.Fatal(err)
	}
	// Kept glances that are none, in a file whose checksum holds.
	c := OpenCache(file, root)
	for _, e := range c.m {
		if e.glance != nil {
			e.glance = append([]byte{e.glance[0]}, 0xff, 0xff, 0xff)
		}
	}
	hostile := c.encode()
	bad := map[string][]byte{
		"cut short": good[:len(good)/2],
		"empty":     {},
		"a byte flipped": func() []byte {
			b := append([]byte(nil), good...)
			b[len(b)/2] ^= 0x40
			return b
		}(),
		"not a cache":     []byte(`{"version":1,"entries":{}}`),
		"another store's": foreignStore,
		"another format":  resum(append([]byte(cacheMagic), append([]byte{cacheFormat + 1}, good[len(cacheMagic)+1:]...)...)),
		"another build's": resum([]byte(strings.Replace(string(good), program(), strings.Repeat("x", len(program())), 1))),
		"glances of lies": hostile,
	}
	for what, b := range bad {
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c := OpenCache(file, root)
		if c.Loaded != (what == "glances of lies") {
			t.Errorf("%s: trusted", what)
		}
		if got := listing(t, root, dir); got != want {
			t.Errorf("%s: the listing differs from that of no cache", what)
		}
		if c := OpenCache(file, root); !c.Loaded {
			t.Errorf("%s: not written anew", what)
		}
	}
}

// TestCacheFiles: the cache is a 0600 file in a 0700 folder, written
// whole (no temporary file left); a cache that did not change is not
// written again; the caches of more stores than MaxStores are pruned,
// the least recently written first.
func TestCacheFiles(t *testing.T) {
	root := aged(t, "2.0.77")
	dir := filepath.Join(t.TempDir(), "cfix", "catalog")
	listing(t, root, dir)
	file := CacheFile(dir, root)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("cache %v in a folder %v, want 0600 in 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(file, old, old)
	listing(t, root, dir)
	if fi, _ := os.Stat(file); !fi.ModTime().Equal(old) {
		t.Fatal("a cache that did not change was written again")
	}
	for i := 0; i < MaxStores+3; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%016x.cache", i))
		os.WriteFile(p, []byte("x"), 0o600)
		at := old.Add(time.Duration(i) * time.Hour)
		os.Chtimes(p, at, at)
	}
	os.Remove(file)
	listing(t, root, dir)
	ents, _ := os.ReadDir(dir)
	if len(ents) != MaxStores {
		t.Fatalf("%d files in the cache folder, want %d", len(ents), MaxStores)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the cache folder", e.Name())
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal("the cache just written was pruned")
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%016x.cache", 0))); err == nil {
		t.Fatal("the oldest cache was kept")
	}
}

// TestCacheFollowsFiles: a file changed is read again, a new one read, a
// removed one dropped; a file modified in the last seconds is read but
// not kept; the entries beyond MaxEntries of files not listed are
// dropped.
func TestCacheFollowsFiles(t *testing.T) {
	root := aged(t, "2.0.77")
	dir := t.TempDir()
	file := CacheFile(dir, root)
	listing(t, root, dir)
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var mains []store.File
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Size > 0 {
			mains = append(mains, f)
		}
	}
	changed, removed := mains[0], mains[1]
	// A new title at the end of one, its mtime old again; another removed;
	// a new one, modified now.
	fh, err := os.OpenFile(changed.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(fh, `{"type":"custom-title","customTitle":"renamed since","sessionId":%q}`+"\n", changed.Session)
	fh.Close()
	os.Chtimes(changed.Path, changed.ModTime, changed.ModTime)
	os.Remove(removed.Path)
	fresh := filepath.Join(filepath.Dir(changed.Path), "0f5e1c9a-1111-4222-8333-444455556666.jsonl")
	b, _ := os.ReadFile(changed.Path)
	os.WriteFile(fresh, b, 0o600)

	c := OpenIn(root, dir)
	st, err := c.Store()
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, s := range st.Sessions {
		titles[s.Path] = s.Title
	}
	if titles[changed.Path] != "renamed since" || titles[fresh] != "renamed since" {
		t.Fatalf("titles after the change: %q, of the new file %q", titles[changed.Path], titles[fresh])
	}
	if _, ok := titles[removed.Path]; ok {
		t.Fatal("a removed file is listed")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	k := OpenCache(file, root)
	if _, ok := k.m[removed.Path]; ok {
		t.Error("the entry of a removed file is kept")
	}
	if _, ok := k.m[fresh]; ok {
		t.Error("the glance of a file modified just now is kept")
	}
	if e, ok := k.m[changed.Path]; !ok || e.size == changed.Size {
		t.Error("the entry of a changed file is not of it as it is")
	}
	// Over the bound: entries are dropped.
	for i := 0; i < MaxEntries+10; i++ {
		k.m[fmt.Sprintf("/elsewhere/%d.jsonl", i)] = &entry{size: 1, glance: []byte{1}}
	}
	k.changed = true
	if err := k.Save(); err != nil {
		t.Fatal(err)
	}
	k = OpenCache(file, root)
	if !k.Loaded || k.Len() > MaxEntries {
		t.Fatalf("%d entries kept (loaded %v), at most %d", k.Len(), k.Loaded, MaxEntries)
	}
}

// TestCacheCounts: the messages of a transcript too big to glance at
// whole are counted once; a count is used only for the file as it was
// counted; a grown file is counted from its old end; a file renamed over
// it (another inode) is counted again.
func TestCacheCounts(t *testing.T) {
	dir := t.TempDir()
	path := bigTranscript(t, dir, 100)
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cacheDir := filepath.Join(dir, "cache")
	age := func() { os.Chtimes(path, old, old) }
	age()
	file := func() store.File {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		f := store.File{Path: path, Kind: store.KindSession}
		f.Identify(fi)
		return f
	}
	count := func(want int, what string) {
		t.Helper()
		c := OpenCache(CacheFile(cacheDir, dir), dir)
		n, err := c.Count(file())
		if err != nil || n != want {
			t.Fatalf("%s: %d messages (%v), want %d", what, n, err, want)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(n int) {
		t.Helper()
		c := OpenCache(CacheFile(cacheDir, dir), dir)
		e, ok := c.m[path]
		if !ok || !e.counted {
			t.Fatalf("no count kept for %s", path)
		}
		e.messages, c.changed = n, true
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(s string) {
		t.Helper()
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(s)
		fh.Close()
		old = old.Add(time.Minute)
		age()
	}
	count(200, "first count")
	plant(7)
	count(7, "a count planted for the file as it is")
	// The old end (a torn line) ended no line: counted again, whole.
	appendTo("\n")
	count(200, "the torn line ended")
	// Appends after a whole line: only the new lines are read.
	plant(50)
	appendTo(`{"type":"user","uuid":"v1","parentUuid":"a99","message":{"role":"user","content":"more"}}` + "\n" +
		`{"type":"assistant","uuid":"v2","parentUuid":"v1","message":{"role":"assistant","content":"ok"}}` + "\n")
	count(52, "appended to a planted count")
	// A file renamed over the transcript, of its size and mtime: another
	// inode, counted again.
	plant(9)
	b, _ := os.ReadFile(path)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte(strings.Replace(string(b), `"uuid":"v2"`, `"uuid":"w2"`, 1)), 0o600)
	os.Chtimes(other, old, old)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	count(202, "a file renamed over the transcript")
	if full, _ := store.CountMessages(path, 0); full != 202 {
		t.Fatalf("a full count says %d", full)
	}
}

// bigTranscript writes a transcript of turns user and assistant entries
// (about 2 KB each) and a torn line, and returns its path.
func bigTranscript(t *testing.T, dir string, turns int) string {
	const id = "3ba86ea1-3a44-408b-917b-a10e19d813f0"
	var b strings.Builder
	b.WriteString(`{"type":"summary","summary":"s","leafUuid":"a0"}` + "\n")
	for i := 0; i < turns; i++ {
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","parentUuid":"a%d","sessionId":"%s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"%s"}}`+"\n", i, i-1, id, strings.Repeat("x", 1000))
		fmt.Fprintf(&b, `{"type":"progress","uuid":"p%d","parentUuid":"u%d","data":{"message":{"type":"user","uuid":"n%d","parentUuid":null}}}`+"\n", i, i, i)
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","parentUuid":"u%d","sessionId":"%s","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]}}`+"\n", i, i, id, strings.Repeat("y", 1000))
	}
	b.WriteString(`{"type":"user","uuid":"torn`)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCacheSidecarTitle: a session renamed by its title sidecar
// (<id>/custom-title.json, the transcript untouched) shows its new name
// with the cache warm: the cache keeps what the transcript says, and the
// sidecar is read each time.
func TestCacheSidecarTitle(t *testing.T) {
	root := aged(t, "2.0.77")
	dir := t.TempDir()
	listing(t, root, dir)
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var f store.File
	for _, x := range l.Files {
		if x.Kind == store.KindSession && x.Size > 0 {
			f = x
			break
		}
	}
	side := filepath.Join(strings.TrimSuffix(f.Path, ".jsonl"), "custom-title.json")
	if err := os.MkdirAll(filepath.Dir(side), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(side, []byte(`{"customTitle":"named by the sidecar"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := OpenIn(root, dir)
	if !c.Cache.Loaded {
		t.Fatal("no cache")
	}
	st, err := c.Store()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Sessions {
		if s.Path == f.Path && (s.Title != "named by the sidecar" || s.TitleFrom != store.TitleCustom) {
			t.Fatalf("title %q (%s) with the sidecar written", s.Title, s.TitleFrom)
		}
	}
	if _, ok := c.Cache.Glance(f, false); !ok {
		t.Fatal("the transcript was not in the cache: the test proves nothing")
	}
}
