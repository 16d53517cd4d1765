package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fastClock runs an interactive client's clocks through libfaketime (the
// Debian package libfaketime, loaded with LD_PRELOAD) Speed times faster
// than real time from the client's start (FAKETIME="+0 xSpeed"), so that a
// wait of the client's own, the sweep's 10 minutes after the first prompt,
// passes in a minute.
//
// The realtime and the monotonic clock both run fast
// (FAKETIME_DONT_FAKE_MONOTONIC=0): Date.now and the timers. The 2.1.x
// clients are native (bun) binaries whose event loop waits in
// epoll_pwait2, which libfaketime 0.9.10 does not scale (it scales
// epoll_wait, epoll_pwait, poll and the sleeps): a timer fires at the
// first wake-up of the loop past its faked deadline, and the client's
// loop wakes several times a second. File times are left real
// (NO_FAKE_STAT): the sweep ages transcripts by their real mtimes, against
// a clock a few minutes ahead at most. The shells the client starts for
// its hooks run fast too; cfix (Go: no libc clock) does not.
//
// The rate is fixed when the client starts: libfaketime can read it again
// from a file (FAKETIME_TIMESTAMP_FILE), which would let the start run in
// real time, but it reads that file inside clock_gettime with fopen, and
// the 2.1.332 client, whose allocator calls clock_gettime, then hangs (its
// request "Pondering…" for over a minute, in most runs at load 20).
// Whatever the client does in real time before the wait is stretched
// Speed times by its clock: its start, the SessionStart hook, the first
// prompt and its reply must take less than a tenth of the 10 minutes.
type fastClock struct {
	Speed float64
}

// realTime says whether CFIX_E2E_REALTIME=1 asks the tests that wait for
// a client's own timer to wait for it in real time (TestGuardSweep: over
// ten minutes), the proof the faked clock is held to.
func realTime() bool { return os.Getenv("CFIX_E2E_REALTIME") == "1" }

// newFastClock returns a clock speed times faster than real time and the
// environment that gives it to a client. The test fails when libfaketime
// is not installed (scripts/test-deps.sh installs it).
func newFastClock(t *testing.T, speed float64) (*fastClock, []string) {
	t.Helper()
	lib := faketimeLib()
	if lib == "" {
		t.Fatalf("libfaketime is not installed (Debian: apt-get install libfaketime; scripts/test-deps.sh installs it): the client's 10-minute wait cannot be sped up; CFIX_E2E_REALTIME=1 waits in real time")
	}
	return &fastClock{Speed: speed}, []string{
		"LD_PRELOAD=" + lib,
		"FAKETIME=+0 x" + strconv.FormatFloat(speed, 'f', -1, 64),
		"FAKETIME_DONT_FAKE_MONOTONIC=0",
		"NO_FAKE_STAT=1",
	}
}

// Elapsed is the time the client's clock sees pass from from to to (real
// instants while the client runs); a nil clock is real time.
func (c *fastClock) Elapsed(from, to time.Time) time.Duration {
	if c == nil {
		return to.Sub(from)
	}
	return time.Duration(float64(to.Sub(from)) * c.Speed)
}

// faketimeLib is the path of libfaketime.so.1, or "" when it is not
// installed.
func faketimeLib() string {
	cands, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	cands = append(cands, "/usr/lib/faketime/libfaketime.so.1", "/usr/lib64/faketime/libfaketime.so.1", "/usr/local/lib/faketime/libfaketime.so.1")
	for _, p := range cands {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// removeFaketimeLeftovers removes what libfaketime left in /dev/shm
// since the time since. Each process it loads into makes a semaphore and a
// shared memory object named by its process id, and one that ends without
// running libfaketime's destructor leaves them: the shells of the client's
// hooks (they exec cfix), the client (bun's allocator fails libfaketime's
// sem_open half-way, after the file is made). Only those of processes that
// have ended go. (A later process given that id goes on without them, but
// for a shared memory object left without its semaphore: then it exits 1.)
func removeFaketimeLeftovers(since time.Time) {
	for _, pattern := range []string{"/dev/shm/sem.faketime_sem_*", "/dev/shm/faketime_shm_*"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			pid, err := strconv.Atoi(p[strings.LastIndexByte(p, '_')+1:])
			fi, serr := os.Stat(p)
			if err != nil || pid <= 0 || serr != nil || fi.ModTime().Before(since) || alive(pid) {
				continue
			}
			os.Remove(p)
		}
	}
}

// alive says whether the process pid is there.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
