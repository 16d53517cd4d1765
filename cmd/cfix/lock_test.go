package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
)

// TestPausedArchiveChild is the child process of TestUndoDuringArchive:
// it archives every session of the store $PAUSE_ROOT into $PAUSE_ARCHIVE
// and, when the archive files are written and the first session is about
// to be removed, says PAUSED and waits for its stdin to end.
func TestPausedArchiveChild(t *testing.T) {
	root := os.Getenv("PAUSE_ROOT")
	if root == "" {
		t.Skip("the child of TestUndoDuringArchive")
	}
	p, err := archive.Archive(archive.Options{Root: root, Dir: os.Getenv("PAUSE_ARCHIVE"), OlderThan: 24 * time.Hour, Build: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	cs := p.ChangeSet
	paused := false
	_, err = changeset.Apply(cs, changeset.ApplyOptions{JournalDir: os.Getenv("CFIX_JOURNAL_DIR"), Hook: func(step string, i int) {
		if !paused && step == "before" && cs.Ops[i].Action == changeset.Delete {
			paused = true
			fmt.Println("PAUSED")
			io.Copy(io.Discard, os.Stdin)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUndoDuringArchive (issue 18, finding 1): cfix undo started while an
// archive of every session is half-way (its archive files written, no
// session removed yet) waits for the store's lock, then refuses, naming
// the archive's pid; it does not undo the unfinished journal. Every
// session ends in the archive folder, and a later undo brings the store
// back byte for byte.
func TestUndoDuringArchive(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V330, dir)
	damage.Age(t, root)
	adir := filepath.Join(dir, "archive")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	t.Setenv("CFIX_ARCHIVE_DIR", adir)
	before := fileTree(t, root)
	ids := sessionIDs(t, root)

	child := exec.Command(os.Args[0], "-test.run=^TestPausedArchiveChild$")
	child.Env = append(os.Environ(), "PAUSE_ROOT="+root, "PAUSE_ARCHIVE="+adir)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	var childErr bytes.Buffer
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "PAUSED\n" {
		t.Fatalf("the archive said %q (%v)\n%s", line, err, childErr.String())
	}
	// The last journal, and the archive's journal named: both wait, then
	// are refused.
	journals, _ := filepath.Glob(filepath.Join(dir, "journal", "*-archive-*"))
	if len(journals) != 1 {
		t.Fatalf("journals of the archive: %v", journals)
	}
	var code, namedCode int
	var undoOut, undoErr, namedErr string
	var wg sync.WaitGroup
	wg.Go(func() { code, undoOut, undoErr = cfixRun(t, "undo", "--root", root, "--apply", "--yes") })
	wg.Go(func() { namedCode, _, namedErr = cfixRun(t, "undo", journals[0], "--root", root, "--apply", "--yes") })
	wg.Wait()
	stdin.Close()
	go io.Copy(io.Discard, stdout)
	if err := child.Wait(); err != nil {
		t.Fatalf("the archive: %v\n%s", err, childErr.String())
	}
	missing := lostSessions(t, ids, root, adir)
	if len(missing) > 0 {
		t.Fatalf("sessions in neither the store nor the archive folder: %v\nundo said (status %d):\n%s%s", missing, code, undoOut, undoErr)
	}
	want := fmt.Sprintf("is being changed by another cfix (pid %d: ", child.Process.Pid)
	if code != exitFound || !strings.Contains(undoErr, want) {
		t.Errorf("undo during the archive: status %d, stderr %q; want status 1 and %q", code, undoErr, want)
	}
	if namedCode != exitFound || !strings.Contains(namedErr, want) {
		t.Errorf("undo of the archive's journal during the archive: status %d, stderr %q; want status 1 and %q", namedCode, namedErr, want)
	}
	if code, out, errOut := cfixRun(t, "undo", "--root", root, "--apply", "--yes"); code != exitOK {
		t.Fatalf("undo after the archive: status %d\n%s%s", code, out, errOut)
	}
	requireSameTree(t, "after the undo", before, fileTree(t, root))
}

// TestConcurrentWriters (issue 18): undo, repair, archive and restore
// started as cfix processes against one store, in random order and with
// random delays, round after round ($CFIX_RACE_ROUNDS, default 4). After
// each round the store and the archive folder together hold every
// session; every process says what happened (status 0, or 1 with the
// lock's message or a "plan again" refusal; never a rollback that
// failed); at the end, undoing every journal gives back the store as it
// was, byte for byte, and no archive file.
func TestConcurrentWriters(t *testing.T) {
	rounds := 4
	if s := os.Getenv("CFIX_RACE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V330, dir)
	// Torn last lines: something for repair to do.
	mains, _ := filepath.Glob(filepath.Join(root, "projects", "*", "*.jsonl"))
	for _, m := range mains {
		f, err := os.OpenFile(m, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"assistant","torn`)
		f.Close()
	}
	damage.Age(t, root)
	adir := filepath.Join(dir, "archive")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	t.Setenv("CFIX_ARCHIVE_DIR", adir)
	before := fileTree(t, root)
	ids := sessionIDs(t, root)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	ok := regexp.MustCompile(`is being changed by another cfix \(pid \d+: cfix |changed since the plan was made.*; plan again|changed while applying.*; plan again|appeared while applying; plan again|removed since the plan was made|exists now; it did not when the plan was made`)
	outcomes := map[string]int{}
	for round := range rounds {
		type result struct {
			args           []string
			code           int
			stdout, stderr string
		}
		var mu sync.Mutex
		var results []result
		var wg sync.WaitGroup
		cmds := [][]string{
			{"undo", "--root", root, "--apply", "--yes"},
			{"repair", "--root", root, "--apply", "--yes"},
			{"archive", "--older-than", "1d", "--root", root, "--apply", "--yes"},
			{"restore"}, // the archives there when it starts
		}
		rnd.Shuffle(len(cmds), func(i, j int) { cmds[i], cmds[j] = cmds[j], cmds[i] })
		for _, args := range cmds {
			delay := time.Duration(rnd.IntN(40)) * time.Millisecond
			wg.Go(func() {
				time.Sleep(delay)
				if args[0] == "restore" {
					files, _ := filepath.Glob(filepath.Join(adir, "*"+archive.Ext))
					if len(files) == 0 {
						return
					}
					for _, f := range files {
						args = append(args, strings.TrimSuffix(filepath.Base(f), archive.Ext))
					}
					args = append(args, "--root", root, "--apply", "--yes")
				}
				code, out, errOut := cfixRun(t, args...)
				mu.Lock()
				results = append(results, result{args, code, out, errOut})
				mu.Unlock()
			})
		}
		wg.Wait()
		for _, r := range results {
			what := fmt.Sprintf("round %d: cfix %s: status %d\n%s%s", round, strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
			switch {
			case strings.Contains(r.stderr, "failed") || strings.Contains(r.stderr, "panic"):
				t.Errorf("%s", what)
			case r.code == exitOK:
				outcomes[r.args[0]+" ok"]++
			case r.code == exitFound && ok.MatchString(r.stderr):
				outcomes[r.args[0]+" refused: "+ok.FindString(r.stderr)[:20]]++
			case r.code == exitUsage && r.args[0] == "undo" && strings.Contains(r.stderr, "no journal to undo"):
			case r.code == exitUsage && r.args[0] == "restore" && strings.Contains(r.stderr, "no archive"):
			default:
				t.Errorf("unexpected: %s", what)
			}
		}
		if missing := lostSessions(t, ids, root, adir); len(missing) > 0 {
			for _, r := range results {
				t.Logf("cfix %s: status %d\n%s", strings.Join(r.args, " "), r.code, r.stderr)
			}
			t.Fatalf("round %d: sessions in neither the store nor the archive folder: %v", round, missing)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	// Undo everything, newest first.
	for n := 0; ; n++ {
		code, out, errOut := cfixRun(t, "undo", "--root", root, "--apply", "--yes")
		if code == exitUsage && strings.Contains(errOut, "no journal to undo") {
			break
		}
		if code != exitOK || n > 4*rounds+4 {
			t.Fatalf("undo %d: status %d\n%s%s", n, code, out, errOut)
		}
	}
	requireSameTree(t, "after undoing every journal", before, fileTree(t, root))
	if left, _ := filepath.Glob(filepath.Join(adir, "*"+archive.Ext)); len(left) > 0 {
		t.Errorf("archive files left after undoing every journal: %v", left)
	}
}

// cfixRun runs the cfix binary (the test binary, as testscript installs
// it in $PATH) and returns its status, stdout and stderr.
func cfixRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("cfix", args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Error(err) // from the goroutines of TestConcurrentWriters too
		return -1, out.String(), errOut.String()
	}
	return 0, out.String(), errOut.String()
}

var sessionName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$`)

// sessionIDs lists the sessions of a store: its main transcripts.
func sessionIDs(t *testing.T, root string) []string {
	t.Helper()
	ids := storeSessions(root)
	sort.Strings(ids)
	if len(ids) < 3 {
		t.Fatalf("%d sessions in %s", len(ids), root)
	}
	return ids
}

func storeSessions(root string) []string {
	mains, _ := filepath.Glob(filepath.Join(root, "projects", "*", "*.jsonl"))
	var ids []string
	for _, m := range mains {
		if sessionName.MatchString(filepath.Base(m)) {
			ids = append(ids, strings.TrimSuffix(filepath.Base(m), ".jsonl"))
		}
	}
	return ids
}

// lostSessions returns the sessions of ids that are neither in the store
// (a main transcript) nor in the archive folder (an archive that lists
// it).
func lostSessions(t *testing.T, ids []string, root, adir string) []string {
	t.Helper()
	here := map[string]bool{}
	for _, id := range storeSessions(root) {
		here[id] = true
	}
	list, _, err := archive.List(adir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		here[a.Manifest.Session] = true
	}
	var lost []string
	for _, id := range ids {
		if !here[id] {
			lost = append(lost, id)
		}
	}
	return lost
}

// fileTree maps every file under root to the sha256 of its bytes, its mode
// and its mtime.
func fileTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		out[r] = fmt.Sprintf("%x %v %s", sha256.Sum256(b), fi.Mode(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func requireSameTree(t *testing.T, when string, want, got map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is missing", when, p)
		} else if g != w {
			t.Errorf("%s: %s is %s, want %s", when, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s was not there before", when, p)
		}
	}
}

// TestNextWriterRollsBack: an archive killed with SIGKILL half-way (its
// archive files written, no session removed) holds the store's lock no
// more; the next writer rolls its journal back first, says so in one
// line, then does its own work. No archive file is left, every session is
// in the store, and the journal is marked rolled back.
func TestNextWriterRollsBack(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V330, dir)
	damage.Age(t, root)
	adir := filepath.Join(dir, "archive")
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	t.Setenv("CFIX_ARCHIVE_DIR", adir)
	ids := sessionIDs(t, root)

	child := exec.Command(os.Args[0], "-test.run=^TestPausedArchiveChild$")
	child.Env = append(os.Environ(), "PAUSE_ROOT="+root, "PAUSE_ARCHIVE="+adir)
	child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "PAUSED\n" {
		t.Fatalf("the archive said %q (%v)", line, err)
	}
	child.Process.Kill()
	child.Wait()
	if left, _ := filepath.Glob(filepath.Join(adir, "*"+archive.Ext)); len(left) != len(ids) {
		t.Fatalf("the killed archive left %d archive files, want %d", len(left), len(ids))
	}

	code, out, errOut := cfixRun(t, "repair", "--root", root, "--apply", "--yes")
	if code != exitOK {
		t.Fatalf("repair after the kill: status %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^journal \S+-archive-\S+: rolled back \d+ changes that a cfix that was killed left unfinished \(undo journal \S+-undo-\S+\)\n$`).MatchString(errOut) {
		t.Errorf("repair's stderr: %q, want one line on the rollback", errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(adir, "*"+archive.Ext)); len(left) != 0 {
		t.Errorf("archive files left: %v", left)
	}
	if got := storeSessions(root); len(got) != len(ids) {
		t.Errorf("sessions in the store: %v, want %v", got, ids)
	}
	_, out, _ = cfixRun(t, "undo", "--root", root, "--list")
	if !regexp.MustCompile(`archive +\d+ changes +rolled-back`).MatchString(out) {
		t.Errorf("undo --list:\n%s", out)
	}
}
