// Package s3server runs a real S3 server on loopback for tests:
// versitygw (github.com/versity/versitygw) over a temporary folder, one
// process per Start, stopped by the test's cleanup, with a fresh bucket
// for each Bucket call. scripts/test-deps.sh installs versitygw into the
// repository's .cache/bin.
package s3server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Access and Secret are the server's root credentials.
const (
	Access = "cfixtestaccess"
	Secret = "cfixtestsecret0123456789"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL (http://127.0.0.1:PORT); Dir the folder its
	// buckets are folders of.
	Endpoint string
	Dir      string
	client   *minio.Client
}

// Binary returns the path of versitygw: $CFIX_VERSITYGW, else the
// repository's .cache/bin/versitygw, else one in PATH; "" when none is.
func Binary() string {
	if p := os.Getenv("CFIX_VERSITYGW"); p != "" {
		return p
	}
	if root := repoRoot(); root != "" {
		p := filepath.Join(root, ".cache", "bin", "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	return ""
}

func repoRoot() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// Start starts a server for the test, stopped by its cleanup. Without
// versitygw the test is skipped, or fails when CFIX_REQUIRE_S3 is set
// (make test sets it).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "versitygw is not installed (scripts/test-deps.sh installs it into .cache/bin)"
		if os.Getenv("CFIX_REQUIRE_S3") != "" {
			t.Fatal(msg + "; CFIX_REQUIRE_S3 is set")
		}
		t.Skip(msg + ": skipped")
	}
	dir := t.TempDir()
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("versitygw-%d.log", try)))
		if err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(dir, "data")
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--access", Access, "--secret", Secret, "--port", addr, "--quiet", "posix", data)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait(); logf.Close() }()
		if err := waitUp(addr, done); err != nil {
			lastErr = err
			cmd.Process.Kill()
			continue
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
		s := &Server{Endpoint: "http://" + addr, Dir: data}
		s.client, err = minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(Access, Secret, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("versitygw did not start: %v", lastErr)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitUp waits until addr takes connections, or the process ends, or 20
// seconds have passed.
func waitUp(addr string, done chan error) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("versitygw ended: %v", err)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after 20 s", addr)
}

// Bucket makes a new bucket and returns its name.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "cfix-" + hex.EncodeToString(b)
	if err := s.client.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("making bucket %s: %v", name, err)
	}
	return name
}

// Env is the environment that points cfix at the server: its endpoint,
// credentials and region, and no AWS file of the machine's.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + Access,
		"AWS_SECRET_ACCESS_KEY=" + Secret,
		"AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
	}
}

// Setenv sets Env for the test (t.Setenv).
func (s *Server) Setenv(t *testing.T) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
}

// Object is one object on the server.
type Object struct {
	Key          string
	Size         int64
	LastModified time.Time
}

// Objects lists the bucket's objects, read from the server itself.
func (s *Server) Objects(t testing.TB, bucket string) []Object {
	t.Helper()
	var out []Object
	for o := range s.client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", bucket, o.Err)
		}
		out = append(out, Object{Key: o.Key, Size: o.Size, LastModified: o.LastModified})
	}
	return out
}

// Read returns an object's bytes.
func (s *Server) Read(t testing.TB, bucket, key string) []byte {
	t.Helper()
	o, err := s.client.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("reading %s/%s: %v", bucket, key, err)
	}
	return b
}
