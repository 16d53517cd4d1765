// Package rsstest is the harness of the tests of bounded memory: it makes
// stores whose session is hostile input (ten million empty objects, a
// crash's half a GB of NUL bytes, a line of a quarter of a GB), and runs a
// function in a child test process, whose peak RSS it checks.
package rsstest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The session the stores make hostile: the one of the 2.1.88 corpus
// store in beta.dir/sub.
const (
	Session = "faa4037a-9834-4495-ada4-b0c35ab615ba"
	Project = "-home-dev-work-beta-dir-sub"
	version = "2.1.88"
)

// Kind is a hostile transcript.
type Kind string

// The hostile transcripts.
const (
	// Empties: the transcript is 10 million lines of {} (30 MB).
	Empties Kind = "empties"
	// FewEmpties: 2 million lines of {} (6 MB), for the tests of
	// commands that read a transcript several times: on the code before
	// bounded memory, already over a GB.
	FewEmpties Kind = "empties-2m"
	// NULTail: the session, then a last line of 512 MB of NUL bytes
	// without "\n", as a crash leaves it (a sparse file).
	NULTail Kind = "nul-tail"
	// HugeLine: the session, then a prompt of 256 MB (one line of valid
	// JSON, as a pasted file makes), then a reply to it.
	HugeLine Kind = "huge-line"
)

// Kinds are the hostile transcripts, in the order tests run them;
// QuickKinds the same with FewEmpties.
var (
	Kinds      = []Kind{Empties, NULTail, HugeLine}
	QuickKinds = []Kind{FewEmpties, NULTail, HugeLine}
)

// Lines is how many lines of {} the transcript of kind holds.
func Lines(kind Kind) int {
	switch kind {
	case Empties:
		return EmptyLines
	case FewEmpties:
		return EmptyLines / 5
	}
	return 0
}

// Sizes of the hostile transcripts.
const (
	EmptyLines = 10_000_000
	NULBytes   = 512 << 20
	HugeBytes  = 256 << 20
)

// HugeUUID is the uuid of HugeLine's prompt, ReplyUUID that of the reply
// after it.
const (
	HugeUUID  = "0fa0b0c0-0000-4000-8000-00000000f00d"
	ReplyUUID = "0fa0b0c0-0000-4000-8000-00000000beef"
)

const (
	childEnv = "CFIX_RSS_CHILD"
	rootEnv  = "CFIX_RSS_ROOT"
)

// Store makes a copy of the 2.1.88 corpus store whose session is kind,
// in a temp folder, and returns the store's root and the session's
// transcript. In the child process of Measure it makes nothing: it returns
// its parent's store.
func Store(t testing.TB, kind Kind) (root, transcript string) {
	t.Helper()
	if c := os.Getenv(childEnv); c == t.Name() || strings.HasPrefix(c, t.Name()+"/") {
		root = os.Getenv(rootEnv)
		return root, Transcript(root)
	}
	dir := t.TempDir()
	root = filepath.Join(dir, ".claude")
	src := filepath.Join(corpus(), version, ".claude")
	if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", root).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	transcript = Transcript(root)
	if err := place(transcript, kind); err != nil {
		t.Fatal(err)
	}
	stores.m[t.Name()] = root
	return root, transcript
}

// cacheVersion is the format of the cached transcripts: bump it when
// write changes what it writes.
const cacheVersion = 1

// place makes the transcript at path, a copy of the corpus session, kind.
// A transcript of hundreds of MB (Empties, FewEmpties, HugeLine) is
// written once per machine into a shared cache folder under os.TempDir(),
// read-only, and hard-linked into place: the tests that read one only
// read it, and the planners that write one replace it by rename, leaving
// the cached file as it was. NULTail, which a repair cuts in place (and
// only in a file of one name), is written anew each time: it is sparse,
// so no byte of its tail is written.
func place(path string, kind Kind) error {
	if kind != NULTail {
		cached, err := cache(path, kind)
		if err == nil {
			if err = os.Remove(path); err != nil {
				return err
			}
			if err = os.Link(cached, path); err == nil {
				return nil
			}
		}
		// No cache (no room, another file system): written here.
	}
	if err := corpusSession(path); err != nil {
		return err
	}
	if err := write(path, kind); err != nil {
		return err
	}
	return age(path)
}

// age gives the transcript at path an mtime of a day ago: not a live
// session.
func age(path string) error {
	old := time.Now().Add(-24 * time.Hour)
	return os.Chtimes(path, old, old)
}

// corpusSession copies the corpus session to path, unless it is there.
func corpusSession(path string) error {
	session, err := os.ReadFile(Transcript(filepath.Join(corpus(), version, ".claude")))
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, session) {
		return nil
	}
	return os.WriteFile(path, session, 0o600)
}

// cache returns the cached transcript of kind, writing it first when no
// test of the machine has yet: in a folder named by cacheVersion and the
// hash of the corpus session, written to a temporary name and renamed
// into place, so test binaries that run at once never read half a file.
// Its name holds its size, so a file cut or grown since is made again.
func cache(path string, kind Kind) (string, error) {
	session, err := os.ReadFile(Transcript(filepath.Join(corpus(), version, ".claude")))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(session)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cfix-rsstest-v%d-%x", cacheVersion, sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	names, _ := filepath.Glob(filepath.Join(dir, string(kind)+".*"))
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil {
			continue
		}
		var size int64
		if _, err := fmt.Sscanf(strings.TrimPrefix(filepath.Base(name), string(kind)+"."), "%d.jsonl", &size); err == nil &&
			strings.HasSuffix(name, ".jsonl") && fi.Size() == size && fi.Mode().Perm() == 0o444 {
			return name, nil
		}
		if strings.HasSuffix(name, ".jsonl") || time.Since(fi.ModTime()) > time.Hour {
			os.Remove(name) // changed since, or the temporary file of a killed test
		}
	}
	tmp, err := os.CreateTemp(dir, string(kind)+".*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(session)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = write(tmp.Name(), kind)
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err == nil {
		err = age(tmp.Name())
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = os.Stat(tmp.Name())
	}
	if err != nil {
		return "", err
	}
	cached := filepath.Join(dir, fmt.Sprintf("%s.%d.jsonl", kind, fi.Size()))
	return cached, os.Rename(tmp.Name(), cached)
}

var stores = struct{ m map[string]string }{m: map[string]string{}}

// storeOf is the store Store made for the test name, or for the test it
// is a subtest of.
func storeOf(name string) string {
	for {
		if root, ok := stores.m[name]; ok {
			return root
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return ""
		}
		name = name[:i]
	}
}

// SessionLines is how many lines the corpus session holds: HugeLine's
// prompt is the line after them, its reply the one after that.
func SessionLines() int {
	b, err := os.ReadFile(Transcript(filepath.Join(corpus(), version, ".claude")))
	if err != nil {
		panic(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// Transcript is the hostile session's transcript in the store at root.
func Transcript(root string) string {
	return filepath.Join(root, "projects", Project, Session+".jsonl")
}

func corpus() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "corpus")
}

// write makes the transcript at path, the corpus session, kind.
func write(path string, kind Kind) error {
	session, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	switch kind {
	case Empties, FewEmpties:
		block := bytes.Repeat([]byte("{}\n"), 1<<16)
		for n := 0; n < Lines(kind); n += 1 << 16 {
			w.Write(block[:3*min(1<<16, Lines(kind)-n)])
		}
	case NULTail:
		w.Write(session)
	case HugeLine:
		w.Write(session)
		last := lastUUID(session)
		fmt.Fprintf(w, `{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/work/beta.dir/sub","sessionId":%q,"version":%q,"type":"user","message":{"role":"user","content":"`,
			last, Session, version)
		block := bytes.Repeat([]byte("pasted "), 1<<17)
		for n := 0; n < HugeBytes; n += len(block) {
			w.Write(block[:min(len(block), HugeBytes-n)])
		}
		fmt.Fprintf(w, `"},"uuid":%q,"timestamp":"2027-01-02T03:04:05.000Z"}`+"\n", HugeUUID)
		fmt.Fprintf(w, `{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/work/beta.dir/sub","sessionId":%q,"version":%q,"message":{"id":"msg_huge","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"text","text":"Read it."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}},"type":"assistant","uuid":%q,"timestamp":"2027-01-02T03:04:06.000Z"}`+"\n",
			HugeUUID, Session, version, ReplyUUID)
	default:
		return fmt.Errorf("no hostile transcript %q", kind)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if kind == NULTail {
		// Sparse: no byte is written.
		return f.Truncate(int64(len(session)) + NULBytes)
	}
	return nil
}

// lastUUID is the uuid of the last chain entry of a transcript.
func lastUUID(b []byte) string {
	last := ""
	for _, line := range bytes.Split(b, []byte("\n")) {
		var v struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(line, &v) == nil && v.UUID != "" {
			last = v.UUID
		}
	}
	return last
}

// Measure runs fn in a child test process (this test binary, running only
// the test t, in which Measure runs fn and returns) and fails t when the
// child fails or its peak RSS is over limitMB (MB of 2^20 bytes). The
// child gets the store Store made for t.
func Measure(t *testing.T, limitMB int, fn func(t *testing.T)) {
	t.Helper()
	switch c := os.Getenv(childEnv); {
	case c == t.Name():
		fn(t)
		return
	case c != "":
		return // the child of another measure (of a subtest of t)
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(run, "/"), "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), rootEnv+"="+storeOf(t.Name()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", t.Name(), err, out)
	}
	if !bytes.Contains(out, []byte("PASS")) || bytes.Contains(out, []byte("no tests to run")) {
		t.Fatalf("child %s ran no test:\n%s", t.Name(), out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || runtime.GOOS != "linux" {
		t.Skip("peak RSS is measured on Linux (getrusage's ru_maxrss in KB)")
	}
	peak := float64(ru.Maxrss) / 1024
	t.Logf("peak RSS %.1f MB (bound %d MB), %.1f s of CPU", peak, limitMB, cmd.ProcessState.UserTime().Seconds()+cmd.ProcessState.SystemTime().Seconds())
	if peak > float64(limitMB) {
		t.Errorf("peak RSS %.1f MB, over the bound of %d MB", peak, limitMB)
	}
}
