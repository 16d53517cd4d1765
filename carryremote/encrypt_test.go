package carryremote_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/carryremote"
	"github.com/cfix-dev/cfix/e2e/s3server"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/remote"
)

// TestEncrypted: pushed with --recipient, no object on the server holds
// any text of the sessions (each is an age file; the index's titles and
// folders are sealed); a pull without the identity is refused in a
// sentence, with it the sessions land byte for byte as an unencrypted
// push's do.
func TestEncrypted(t *testing.T) {
	srv := s3server.Start(t)
	srv.Setenv(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	a := damage.CopyStore(t, "2.1.332")
	texts := []string{"/home/dev/work/alpha", "-home-dev-work-alpha", "hello, first session", "hello-from-bash", "gamma with space", "/home/dev"}

	plainBucket, encBucket := srv.Bucket(t), srv.Bucket(t)
	plain, _ := remote.Open("s3://" + plainBucket)
	enc, _ := remote.Open("s3://" + encBucket)
	push(t, plain, a, "laptop", "/home/dev", carryremote.PushOptions{})
	push(t, enc, a, "laptop", "/home/dev", carryremote.PushOptions{Recipients: []age.Recipient{id.Recipient()}})

	// The check finds the text where it is in the clear.
	if ix := srv.Read(t, plainBucket, "laptop/index.json"); !bytes.Contains(ix, []byte("/home/dev/work/alpha")) {
		t.Fatal("the unencrypted index shows no folder: the check below proves nothing")
	}
	objs := srv.Objects(t, encBucket)
	if len(objs) < 2 {
		t.Fatalf("the server holds %d objects", len(objs))
	}
	for _, o := range objs {
		body := srv.Read(t, encBucket, o.Key)
		for _, s := range texts {
			if bytes.Contains(body, []byte(s)) {
				t.Errorf("object %s holds %q", o.Key, s)
			}
		}
		if strings.HasSuffix(o.Key, ".cfixpack") && !bytes.HasPrefix(body, []byte("age-encryption.org/v1\n")) {
			t.Errorf("object %s is not an age file", o.Key)
		}
	}

	// Without the identity: refused, nothing planned.
	b := carrytest.EmptyStore(t)
	for _, keys := range []pack.Keys{{}, {Identities: []age.Identity{other}}} {
		_, err := carryremote.PlanPull(context.Background(), carryremote.PullOptions{Root: b, Remote: enc, Machine: "laptop", Home: "/home/b", Keys: keys, Staging: t.TempDir()})
		if !carryremote.IsKeyError(err) || !strings.Contains(err.Error(), "s3://"+encBucket+"/laptop/sessions/") {
			t.Fatalf("a pull without the identity: %v", err)
		}
	}
	if sessionCount(t, b) != 0 {
		t.Fatal("a refused pull wrote sessions")
	}

	// With it: what an unencrypted push lands, byte for byte.
	want := carrytest.EmptyStore(t)
	pull(t, plain, want, "laptop", "/home/b", carryremote.PullOptions{})
	p := pull(t, enc, b, "laptop", "/home/b", carryremote.PullOptions{Keys: pack.Keys{Identities: []age.Identity{other, id}}})
	if len(p.Sessions) != sessionCount(t, a) {
		t.Fatalf("pulled %d sessions", len(p.Sessions))
	}
	if w, g := treeSums(t, want), treeSums(t, b); !equalMaps(w, g) {
		t.Fatalf("the stores differ:\n%v\n%v", w, g)
	}
	// The index's titles open with the identity (ls --remote).
	ix, err := carryremote.ReadIndex(context.Background(), enc, "laptop", pack.Keys{Identities: []age.Identity{id}})
	if err != nil || ix.Encrypted != "recipients" || ix.Sessions[0].Meta == nil || ix.Sessions[0].Meta.CWD == "" {
		t.Fatalf("the sealed index: %+v, %v", ix, err)
	}
	ix, _ = carryremote.ReadIndex(context.Background(), enc, "laptop", pack.Keys{})
	if ix.Sessions[0].Meta != nil {
		t.Fatal("the index's text reads without a key")
	}
}

// treeSums maps each file under root to its sha256.
func treeSums(t *testing.T, root string) map[string][32]byte {
	out := map[string][32]byte{}
	filepath.WalkDir(filepath.Join(root, "projects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	return out
}

func equalMaps(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSealedKept: a push to recipients without the identity that opens
// the index keeps the titles and folders of the sessions only the remote
// has (their sealed entries copied over as they are, never opened); with
// the identity, the index is sealed whole again.
func TestSealedKept(t *testing.T) {
	dir := t.TempDir()
	st, _ := remote.Open("file://" + dir)
	id, _ := age.GenerateX25519Identity()
	to := []age.Recipient{id.Recipient()}
	keys := pack.Keys{Identities: []age.Identity{id}}
	a := damage.CopyStore(t, "2.1.332")
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{Recipients: to})
	// The alpha session leaves the store; another grows; pushed without
	// the identity.
	gone := carrytest.MainOf(t, a, alpha)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(strings.TrimSuffix(gone, ".jsonl"))
	grown := carrytest.MainOf(t, a, "d80d47a1")
	carrytest.AppendLine(t, grown, `{"type":"custom-title","customTitle":"grown","sessionId":"d80d47a1-34cb-49a2-9a85-a7599617b8b3"}`)
	p, _ := push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{Recipients: to})
	if len(p.Items) != 1 {
		t.Fatalf("the second push sends %d sessions, want the one that grew", len(p.Items))
	}
	check := func(what string) {
		t.Helper()
		ix, err := carryremote.ReadIndex(context.Background(), st, "laptop", keys)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ix.Sessions {
			if e.Meta == nil || e.Meta.CWD == "" {
				t.Errorf("%s: session %s has no title or folder in the index", what, e.ID)
				continue
			}
			n++
			if e.ID == alpha && !strings.Contains(e.Meta.Title, "hello, first session") {
				t.Errorf("%s: the alpha session's title is %q", what, e.Meta.Title)
			}
			if e.ID == "d80d47a1-34cb-49a2-9a85-a7599617b8b3" && e.Meta.Title != "grown" {
				t.Errorf("%s: the grown session's title is %q, want the new one", what, e.Meta.Title)
			}
		}
		if n != 5 {
			t.Errorf("%s: %d sessions with their titles, want 5", what, n)
		}
	}
	check("pushed without the identity")
	// With the identity, one sealed part again.
	carrytest.AppendLine(t, grown, `{"type":"custom-title","customTitle":"grown","sessionId":"d80d47a1-34cb-49a2-9a85-a7599617b8b3"}`)
	push(t, st, a, "laptop", "/home/dev", carryremote.PushOptions{Recipients: to, Keys: keys})
	check("pushed with the identity")
	raw, _ := os.ReadFile(filepath.Join(dir, "laptop", "index.json"))
	if n := strings.Count(string(raw), "BEGIN AGE ENCRYPTED FILE"); n != 1 {
		t.Errorf("the index pushed with the identity has %d sealed parts, want 1", n)
	}
}
