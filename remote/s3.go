package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config is how an S3 server is reached.
type S3Config struct {
	// Endpoint is the server's URL (http://127.0.0.1:7070); "" for
	// Amazon S3. A custom endpoint is addressed path-style.
	Endpoint string
	Region   string
	// Profile names the profile of the AWS files read.
	Profile string
	Creds   *credentials.Credentials
}

// S3ConfigFromEnv reads the standard AWS settings: credentials from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else
// the profile (AWS_PROFILE, else "default") of the shared credentials
// file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; its
// credential_process and SSO too); the region from AWS_REGION or
// AWS_DEFAULT_REGION, else the profile's region in the config file
// (AWS_CONFIG_FILE, else ~/.aws/config); the endpoint from
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else the profile's
// endpoint_url.
func S3ConfigFromEnv() (S3Config, error) {
	c := S3Config{Profile: os.Getenv("AWS_PROFILE")}
	if c.Profile == "" {
		c.Profile = "default"
	}
	conf, err := readAWSConfig(c.Profile)
	if err != nil {
		return c, err
	}
	c.Region = firstOf(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"), conf["region"])
	c.Endpoint = firstOf(os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"), conf["endpoint_url"])
	c.Creds = credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Profile: c.Profile},
	})
	return c, nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// readAWSConfig returns the keys of profile in the AWS config file
// ([default] or [profile NAME]); none when there is no file.
func readAWSConfig(profile string) (map[string]string, error) {
	p := os.Getenv("AWS_CONFIG_FILE")
	if p == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, nil
		}
		p = filepath.Join(home, ".aws", "config")
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	defer f.Close()
	want := "profile " + profile
	if profile == "default" {
		want = "default"
	}
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || l[0] == '#' || l[0] == ';':
		case l[0] == '[':
			name := strings.TrimSpace(strings.Trim(l, "[]"))
			in = name == want || profile == "default" && name == "profile default"
		case in:
			if k, v, ok := strings.Cut(l, "="); ok {
				out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out, sc.Err()
}

// s3Store is a remote in an S3 bucket, under a prefix.
type s3Store struct {
	c              *minio.Client
	bucket, prefix string
	endpoint       string
}

// OpenS3 returns the remote in bucket under prefix ("" for the whole
// bucket). Nothing is sent before the first call.
func OpenS3(bucket, prefix string, cfg S3Config) (Store, error) {
	s := &s3Store{bucket: bucket, prefix: strings.Trim(prefix, "/")}
	host, secure := "s3.amazonaws.com", true
	lookup := minio.BucketLookupAuto
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, &Error{URL: s.String(), Msg: fmt.Sprintf("endpoint %q is not an http:// or https:// URL", cfg.Endpoint), Hint: "check AWS_ENDPOINT_URL"}
		}
		host, secure, lookup = u.Host, u.Scheme == "https", minio.BucketLookupPath
		s.endpoint = cfg.Endpoint
	} else if cfg.Region != "" {
		host = "s3." + cfg.Region + ".amazonaws.com"
	}
	if s.endpoint == "" {
		s.endpoint = "https://" + host
	}
	c, err := minio.New(host, &minio.Options{Creds: cfg.Creds, Secure: secure, Region: cfg.Region, BucketLookup: lookup, MaxRetries: 3})
	if err != nil {
		return nil, &Error{URL: s.String(), Msg: err.Error(), Hint: "check AWS_ENDPOINT_URL and AWS_REGION"}
	}
	s.c = c
	return s, nil
}

func (s *s3Store) String() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

func (s *s3Store) name(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// fail turns a client's error into words: the bucket and key, what went
// wrong, what to check.
func (s *s3Store) fail(op, key string, err error) error {
	e := &Error{URL: "s3://" + s.bucket + "/" + s.name(key), Op: op, Err: err}
	if key == "" {
		e.URL = s.String()
	}
	r := minio.ToErrorResponse(err)
	var ne net.Error
	switch {
	case r.Code == "NoSuchKey":
		e.Msg, e.NotFound = "no such object", true
	case r.Code == "NoSuchBucket":
		e.Msg, e.Hint = fmt.Sprintf("bucket %s does not exist", s.bucket), "check the bucket's name, and AWS_ENDPOINT_URL and AWS_REGION name the server it is on"
	case r.Code == "AccessDenied" || r.Code == "AllAccessDisabled" || r.StatusCode == 403 && r.Code == "":
		e.Msg, e.Hint = "access denied", fmt.Sprintf("check that the credentials (AWS_ACCESS_KEY_ID, or the profile %s of ~/.aws/credentials) may %s objects of bucket %s", profileName(), verb(op), s.bucket)
	case r.Code == "InvalidAccessKeyId" || r.Code == "XAdminUserNotFound":
		e.Msg, e.Hint = "the server does not know the access key", "check AWS_ACCESS_KEY_ID or the profile's aws_access_key_id, and that AWS_ENDPOINT_URL names the right server"
	case r.Code == "SignatureDoesNotMatch":
		e.Msg, e.Hint = "the secret key does not match the access key", "check AWS_SECRET_ACCESS_KEY or the profile's aws_secret_access_key"
	case r.Code == "ExpiredToken" || r.Code == "InvalidToken":
		e.Msg, e.Hint = "the session token expired or is not valid", "renew AWS_SESSION_TOKEN (aws sso login, or your credentials' source)"
	case r.Code == "AuthorizationHeaderMalformed" || r.Code == "PermanentRedirect" || r.Code == "IllegalLocationConstraintException":
		e.Msg, e.Hint = "the bucket is in another region", "set AWS_REGION to the bucket's region"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Msg, e.Hint = fmt.Sprintf("nothing answers at %s (connection refused)", s.endpoint), "check AWS_ENDPOINT_URL and that the server runs"
	case isDNS(err):
		e.Msg, e.Hint = fmt.Sprintf("the host of %s is not known", s.endpoint), "check AWS_ENDPOINT_URL or AWS_REGION, and the network"
	case errors.As(err, &ne) && ne.Timeout():
		e.Msg, e.Hint = fmt.Sprintf("%s did not answer in time", s.endpoint), "check the network and AWS_ENDPOINT_URL"
	case errors.Is(err, context.Canceled):
		e.Msg = "interrupted"
	case r.Code != "":
		e.Msg = r.Code
		if r.Message != "" {
			e.Msg += ": " + strings.TrimSuffix(r.Message, ".")
		}
	default:
		e.Msg = firstLine(err.Error())
	}
	return e
}

func isDNS(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func profileName() string {
	if p := os.Getenv("AWS_PROFILE"); p != "" {
		return p
	}
	return "default"
}

func verb(op string) string {
	switch op {
	case "writing":
		return "put"
	case "removing":
		return "delete"
	case "listing":
		return "list"
	}
	return "get"
}

func (s *s3Store) List(ctx context.Context, prefix string) ([]Object, error) {
	full := s.name(prefix)
	if prefix == "" && s.prefix != "" {
		full = s.prefix + "/"
	}
	var out []Object
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if o.Err != nil {
			return nil, s.fail("listing", prefix, o.Err)
		}
		key := o.Key
		if s.prefix != "" {
			key = strings.TrimPrefix(key, s.prefix+"/")
		}
		out = append(out, Object{Key: key, Size: o.Size, ModTime: o.LastModified})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (s *s3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if !ValidKey(key) {
		return nil, &Error{URL: s.String() + "/" + key, Op: "reading", Msg: "not a clean key"}
	}
	o, err := s.c.GetObject(ctx, s.bucket, s.name(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail("reading", key, err)
	}
	// GetObject sends nothing until read: the first read sends it, so
	// that a missing object or a denied read is told here.
	br := bufio.NewReaderSize(o, 64<<10)
	if _, err := br.Peek(1); err != nil && err != io.EOF {
		o.Close()
		return nil, s.fail("reading", key, err)
	}
	return &s3Reader{r: br, o: o, s: s, key: key}, nil
}

// s3Reader names the object in a read's error.
type s3Reader struct {
	r   *bufio.Reader
	o   *minio.Object
	s   *s3Store
	key string
}

func (r *s3Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = r.s.fail("reading", r.key, err)
	}
	return n, err
}

func (r *s3Reader) Close() error { return r.o.Close() }

func (s *s3Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if !ValidKey(key) {
		return &Error{URL: s.String() + "/" + key, Op: "writing", Msg: "not a clean key"}
	}
	_, err := s.c.PutObject(ctx, s.bucket, s.name(key), r, size, minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: size >= 0 && size < 64<<20})
	if err != nil {
		return s.fail("writing", key, err)
	}
	return nil
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	if !ValidKey(key) {
		return &Error{URL: s.String() + "/" + key, Op: "removing", Msg: "not a clean key"}
	}
	if err := s.c.RemoveObject(ctx, s.bucket, s.name(key), minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil
		}
		return s.fail("removing", key, err)
	}
	return nil
}
