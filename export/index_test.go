package export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
)

// writeMD is the Markdown export of a session, with or without an index.
func writeMD(t *testing.T, root, session, index string) (string, error) {
	t.Helper()
	fam, err := show.Resolve(root, session)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = Write(&b, fam, Options{Format: "md", Index: index})
	return b.String(), err
}

// TestIndexAgrees exports every main transcript of the corpus and wild
// stores through an index (every size indexed): the run that writes the
// index and the run that reads it write what the export without one
// writes, byte for byte.
func TestIndexAgrees(t *testing.T) {
	defer func(m int64) { indexMin = m }(indexMin)
	indexMin = 0
	dir := t.TempDir()
	checked, fromIndex := 0, 0
	for _, root := range wild.AllRoots(t) {
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, f := range l.Files {
			if f.Kind != store.KindSession || seen[f.Session] {
				continue
			}
			seen[f.Session] = true
			want, err := writeMD(t, root, f.Session, "")
			if err != nil {
				continue // a session export refuses (transcripts in two folders)
			}
			for pass := 0; pass < 2; pass++ {
				got, err := writeMD(t, root, f.Session, dir)
				if err != nil {
					t.Fatalf("%s, pass %d: %v", f.Path, pass, err)
				}
				if got != want {
					t.Errorf("%s, pass %d: the export through the index differs (%d bytes, want %d)", f.Path, pass, len(got), len(want))
				}
			}
			checked++
			if fh, err := os.Open(f.Path); err == nil {
				if id, err := identityOf(fh); err == nil && readIndex(indexPath(dir, f.Path), f.Path, id) != nil {
					fromIndex++
				} else {
					t.Logf("not indexed: %s", f.Path)
				}
				fh.Close()
			}
		}
	}
	t.Logf("%d sessions exported through an index, %d of them indexed", checked, fromIndex)
	if checked < 100 || fromIndex < checked*9/10 {
		t.Errorf("%d sessions checked, %d indexed", checked, fromIndex)
	}
}

// TestIndexNotTrusted: an index of the transcript as it was, or one that
// does not hold together, is not used; the export reads the transcript.
func TestIndexNotTrusted(t *testing.T) {
	defer func(m int64) { indexMin = m }(indexMin)
	indexMin = 0
	root := damage.CopyStore(t, "2.1.332")
	const id = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	dir := t.TempDir()
	if _, err := writeMD(t, root, id, dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "projects", "-home-dev-work-alpha", id+".jsonl")
	ip := indexPath(dir, path)
	good, err := os.ReadFile(ip)
	if err != nil {
		t.Fatal(err)
	}
	// Every cut and every flipped byte of the index: the export is the
	// one without an index (or an error, never a panic).
	want, _ := writeMD(t, root, id, "")
	check := func(what string, b []byte) {
		t.Helper()
		os.WriteFile(ip, b, 0o600)
		got, err := writeMD(t, root, id, dir)
		if err != nil || got != want {
			t.Errorf("%s: %v, export differs: %v", what, err, got != want)
		}
	}
	for _, n := range []int{0, 5, len(indexMagic), len(indexMagic) + 3, len(good) / 2, len(good) - 1} {
		check("cut", good[:n])
	}
	for i := len(indexMagic); i < len(good); i += max(1, len(good)/97) {
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		check("flipped", b)
	}
	// The transcript grows: the index is of the file as it was.
	os.WriteFile(ip, good, 0o600)
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"type":"custom-title","customTitle":"renamed after the index","sessionId":"` + id + `"}` + "\n")
	fh.Close()
	got, err := writeMD(t, root, id, dir)
	if err != nil || !bytes.Contains([]byte(got), []byte("# renamed after the index")) {
		t.Errorf("after an append the export is of the transcript as it was: %v\n%.300s", err, got)
	}
}
