package main

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/store"
)

// TestLsWarmReadsNoTranscript: a second round of listings (cfix ls of
// the store, of each project folder, of the extras; text and JSON) of an
// unchanged store opens no transcript, on every corpus and wild store:
// the kernel says so (inotify watches every folder of the store for files
// opened). The first round opens them (the watch sees it), and after one
// transcript changes, the next round opens that one, and only it.
func TestLsWarmReadsNoTranscript(t *testing.T) {
	t.Setenv("COLUMNS", "150")
	for _, src := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(src))
		root := filepath.Join(t.TempDir(), ".claude")
		if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", src, err, out)
		}
		damage.Age(t, root)
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		runs := lsRuns(root)
		round := func() map[string]int {
			w := watchOpens(t, root)
			defer w.close()
			for _, r := range runs {
				lsRun(t, root, r)
			}
			return w.opened(t)
		}
		if cold := round(); len(cold) == 0 {
			t.Fatalf("%s: the first round opened no transcript: the watch sees nothing", name)
		}
		if warm := round(); len(warm) > 0 {
			t.Errorf("%s: the second round opened %d transcripts: %v", name, len(warm), warm)
		}
		// One transcript appended to: read again, alone.
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		main := ""
		for _, f := range l.Files {
			if f.Kind == store.KindSession && f.Size > 0 {
				main = f.Path
				break
			}
		}
		if main == "" {
			continue
		}
		ls := damage.Lines(t, main)
		damage.WriteLines(t, main, append(ls, ls[len(ls)-1]), true)
		if got := round(); len(got) != 1 || got[filepath.Base(main)] == 0 {
			t.Errorf("%s: after %s changed, the round opened %v", name, filepath.Base(main), got)
		}
	}
}

// opens watches the folders of a store for files opened.
type opens struct {
	fd   int
	dirs map[int32]string
}

func watchOpens(t *testing.T, root string) *opens {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	w := &opens{fd: fd, dirs: map[int32]string{}}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			wd, err := syscall.InotifyAddWatch(fd, p, syscall.IN_OPEN|syscall.IN_ACCESS)
			if err != nil {
				t.Fatalf("watch %s: %v", p, err)
			}
			w.dirs[int32(wd)] = p
		}
		return nil
	})
	return w
}

// opened returns the transcripts (.jsonl files) opened or read since the
// watch began, by name, with how many events each.
func (w *opens) opened(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Read(w.fd, buf)
		if err == syscall.EAGAIN || n <= 0 {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			name := strings.TrimRight(string(nameBytes), "\x00")
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify: the queue overflowed")
			}
			if strings.HasSuffix(name, ".jsonl") {
				out[name]++
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func (w *opens) close() { syscall.Close(w.fd) }
