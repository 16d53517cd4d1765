// Package remote is where cfix push keeps sessions and cfix pull finds
// them: a flat store of objects named by keys ("machine/index.json"),
// on an S3 server (s3://bucket/prefix) or in a folder (file:///dir: a
// mounted disk, a synced folder). A Put is atomic from a reader's view:
// a reader sees the old object or the new one whole, never a part (S3's
// PUT is; a folder's object is written beside and renamed).
package remote

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"time"
)

// Object is one object a listing names.
type Object struct {
	Key     string // relative to the remote's prefix, forward slashes
	Size    int64
	ModTime time.Time
}

// Store is a remote.
type Store interface {
	// List returns the objects whose keys start with prefix, sorted by
	// key.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Get opens the object key; a missing one is an error for which
	// IsNotFound is true.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Put writes the object key with the size bytes r reads, whole or
	// not at all.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Delete removes the object key (a missing one is no error).
	Delete(ctx context.Context, key string) error
	// String is the remote's URL.
	String() string
}

// Open returns the remote a URL names: s3://bucket/prefix (credentials,
// region and endpoint from the AWS environment variables and files:
// see S3Config), or file:///dir.
func Open(raw string) (Store, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return nil, &Error{URL: raw, Msg: "not a remote's URL", Hint: "give s3://BUCKET/PREFIX or file:///DIR"}
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, &Error{URL: raw, Msg: "a file URL names a folder of this machine", Hint: "give file:///DIR (three slashes)"}
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return nil, &Error{URL: raw, Msg: "no folder", Hint: "give file:///DIR, an absolute path"}
		}
		return OpenDir(u.Path)
	case "s3":
		if u.Host == "" {
			return nil, &Error{URL: raw, Msg: "no bucket", Hint: "give s3://BUCKET/PREFIX"}
		}
		prefix := strings.Trim(u.Path, "/")
		if prefix != "" && !ValidKey(prefix) {
			return nil, &Error{URL: raw, Msg: "the prefix is not a clean path", Hint: "give s3://BUCKET/PREFIX with no . or .. parts"}
		}
		cfg, err := S3ConfigFromEnv()
		if err != nil {
			return nil, &Error{URL: raw, Msg: err.Error(), Hint: "check AWS_CONFIG_FILE and AWS_PROFILE"}
		}
		return OpenS3(u.Host, prefix, cfg)
	}
	return nil, &Error{URL: raw, Msg: fmt.Sprintf("scheme %q is not one cfix reaches", u.Scheme), Hint: "give s3://BUCKET/PREFIX or file:///DIR"}
}

// ValidKey says a key is a clean relative path: no empty, "." or ".."
// part, no backslash, no control character.
func ValidKey(key string) bool {
	if key == "" || len(key) > 1024 || strings.HasPrefix(key, "/") || path.Clean(key) != key {
		return false
	}
	for _, p := range strings.Split(key, "/") {
		if p == "" || p == "." || p == ".." {
			return false
		}
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	return true
}

// Error is a remote's failure in words: what it was doing, on which
// object, what went wrong and what to check.
type Error struct {
	URL  string // the remote, or the object's URL
	Op   string // "reading", "writing", "listing", "removing"
	Msg  string
	Hint string
	Err  error // the library's error, for errors.Is
	// NotFound says the object does not exist.
	NotFound bool
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op + " ")
	}
	b.WriteString(e.URL)
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsNotFound says err is an object that does not exist.
func IsNotFound(err error) bool {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.NotFound
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
