package remote_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/s3server"
	"github.com/cfix-dev/cfix/remote"
)

// exercise puts, lists, gets and deletes objects of st, as push and pull
// do.
func exercise(t *testing.T, st remote.Store) {
	ctx := context.Background()
	if objs, err := st.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("a new remote lists %v, %v", objs, err)
	}
	put := func(key, body string) {
		t.Helper()
		if err := st.Put(ctx, key, strings.NewReader(body), int64(len(body))); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	put("m1/index.json", "{}")
	put("m1/sessions/a/1.cfixpack", "one")
	put("m2/index.json", "{\"x\":1}")
	put("m1/sessions/a/1.cfixpack", "one, again") // replaced whole
	objs, err := st.List(ctx, "m1/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if got := strings.Join(keys, " "); got != "m1/index.json m1/sessions/a/1.cfixpack" {
		t.Fatalf("List(m1/) = %s", got)
	}
	if objs[1].Size != int64(len("one, again")) {
		t.Fatalf("size %d", objs[1].Size)
	}
	rc, err := st.Get(ctx, "m1/sessions/a/1.cfixpack")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "one, again" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	_, err = st.Get(ctx, "m1/sessions/b/2.cfixpack")
	if !remote.IsNotFound(err) {
		t.Fatalf("Get of a missing object: %v", err)
	}
	if !strings.Contains(err.Error(), "m1/sessions/b/2.cfixpack") {
		t.Fatalf("the error names no key: %v", err)
	}
	if err := st.Delete(ctx, "m1/sessions/a/1.cfixpack"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "m1/sessions/a/1.cfixpack"); err != nil {
		t.Fatalf("deleting a missing object: %v", err)
	}
	if objs, _ := st.List(ctx, ""); len(objs) != 2 {
		t.Fatalf("after delete: %v", objs)
	}
	for _, bad := range []string{"../x", "/abs", "a//b", "a/./b", ""} {
		if err := st.Put(ctx, bad, strings.NewReader("x"), 1); err == nil {
			t.Errorf("put %q: no error", bad)
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MB
	if err := st.Put(ctx, "m3/big", bytes.NewReader(big), int64(len(big))); err != nil {
		t.Fatal(err)
	}
	rc, err = st.Get(ctx, "m3/big")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(b, big) {
		t.Fatal("a 1 MB object came back other")
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	st, err := remote.Open("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, st)
	// A put that fails midway leaves the object as it was, and no
	// temporary file.
	err = st.Put(context.Background(), "m2/index.json", io.MultiReader(strings.NewReader("par"), errReader{}), 10)
	if err == nil {
		t.Fatal("a failing reader: no error")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "m2", "index.json")); string(b) != "{\"x\":1}" {
		t.Fatalf("a failed put changed the object: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "m2"))
	if len(ents) != 1 {
		t.Fatalf("a failed put left %d files", len(ents))
	}
	if _, err := remote.Open("file://" + filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such folder") {
		t.Fatalf("a missing folder: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("cut") }

func TestS3(t *testing.T) {
	srv := s3server.Start(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	st, err := remote.Open("s3://" + bucket + "/team/cfix")
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, st)
	// The keys are under the prefix on the server.
	for _, o := range srv.Objects(t, bucket) {
		if !strings.HasPrefix(o.Key, "team/cfix/") {
			t.Errorf("object %s is not under the prefix", o.Key)
		}
	}
	if got := string(srv.Read(t, bucket, "team/cfix/m2/index.json")); got != "{\"x\":1}" {
		t.Fatalf("the server holds %q", got)
	}
}

// TestS3Errors: each failure is a sentence naming the bucket and key and
// what to check, never a raw dump.
func TestS3Errors(t *testing.T) {
	srv := s3server.Start(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	ctx := context.Background()
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		msg := err.Error()
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", name, msg, w)
			}
		}
		if strings.Contains(msg, "<?xml") || strings.Contains(msg, "\n") {
			t.Errorf("%s: a raw dump: %q", name, msg)
		}
	}
	st, _ := remote.Open("s3://no-such-bucket-cfix/p")
	_, err := st.List(ctx, "")
	check("no bucket", err, "s3://no-such-bucket-cfix", "bucket no-such-bucket-cfix does not exist")

	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	st, _ = remote.Open("s3://" + bucket + "/p")
	err = st.Put(ctx, "m/index.json", strings.NewReader("x"), 1)
	check("wrong secret", err, "s3://"+bucket+"/p/m/index.json", "AWS_SECRET_ACCESS_KEY")

	t.Setenv("AWS_ACCESS_KEY_ID", "nobody")
	st, _ = remote.Open("s3://" + bucket + "/p")
	_, err = st.Get(ctx, "m/index.json")
	check("unknown key", err, "s3://"+bucket+"/p/m/index.json", "AWS_ACCESS_KEY_ID")

	srv.Setenv(t)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	st, _ = remote.Open("s3://" + bucket + "/p")
	_, err = st.List(ctx, "")
	check("refused", err, "s3://"+bucket+"/p", "connection refused", "AWS_ENDPOINT_URL")

	for _, bad := range []string{"s3:///x", "ftp://h/x", "file://host/x", "s3://b/../x", "nothing"} {
		if _, err := remote.Open(bad); err == nil {
			t.Errorf("Open(%q): no error", bad)
		}
	}
}

// TestS3ErrorsDoc: the failures docs/push.md shows are those cfix says
// (a bucket the server lacks, an unknown access key, a wrong secret key,
// no server), the server's bucket named team-claude there.
func TestS3ErrorsDoc(t *testing.T) {
	raw, err := os.ReadFile("../docs/push.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "A failure says which object and what to check")
	if !ok {
		t.Fatal("docs/push.md lacks its failures")
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	shown := strings.Split(strings.TrimSuffix(block, "\n"), "\n")

	srv := s3server.Start(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	ctx := context.Background()
	var got []string
	say := func(err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		got = append(got, "cfix: "+strings.ReplaceAll(err.Error(), bucket, "team-claude"))
	}
	st, _ := remote.Open("s3://team-claude/ana")
	_, err = st.List(ctx, "")
	say(err)
	t.Setenv("AWS_ACCESS_KEY_ID", "nobody")
	st, _ = remote.Open("s3://" + bucket + "/ana")
	err = st.Put(ctx, "laptop/index.json", strings.NewReader("x"), 1)
	say(err)
	srv.Setenv(t)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	st, _ = remote.Open("s3://" + bucket + "/ana")
	_, err = st.Get(ctx, "laptop/index.json")
	say(err)
	srv.Setenv(t)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	st, _ = remote.Open("s3://" + bucket + "/ana")
	_, err = st.List(ctx, "")
	say(err)
	if strings.Join(got, "\n") != strings.Join(shown, "\n") {
		t.Errorf("docs/push.md shows\n%s\ncfix says\n%s", strings.Join(shown, "\n"), strings.Join(got, "\n"))
	}
}

// TestS3Profile: credentials, region and endpoint from a profile of the
// AWS files, as the AWS CLI reads them.
func TestS3Profile(t *testing.T) {
	srv := s3server.Start(t)
	srv.Setenv(t)
	bucket := srv.Bucket(t)
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	conf := filepath.Join(dir, "config")
	os.WriteFile(creds, []byte("[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[team]\naws_access_key_id = "+s3server.Access+"\naws_secret_access_key = "+s3server.Secret+"\n"), 0o600)
	os.WriteFile(conf, []byte("[default]\nregion = eu-west-3\n\n[profile team]\nregion = us-east-1\nendpoint_url = "+srv.Endpoint+"\n"), 0o600)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_PROFILE", "team")
	st, err := remote.Open("s3://" + bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), "m/x", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if objs := srv.Objects(t, bucket); len(objs) != 1 || objs[0].Key != "m/x" {
		t.Fatalf("the server holds %v", objs)
	}
}
