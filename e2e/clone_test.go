package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// Clone, move and move-project proven with the real clients: a session that
// Claude Code cannot find from another directory (or after its project
// folder was renamed) is put where it looks by cfix, and the client then
// sends the same history as when it resumes the original in its own folder.
//
// The reference: "-r S -p CLONE CHECK" in S's own folder (<scenario
// HOME>/work/alpha), on a copy of the store. A history is compared item by
// item (cloneHistory: user and assistant texts, thinking, tool_use name and
// id, tool_result id and text, in order), without system reminders,
// system-role messages and the new prompt. S was compacted by the
// scenario, so the history is the compaction summary and what followed.
//
//   - clone: -r S in DIR (another folder) before; cfix clone S --to DIR
//     --apply; the family (subagents of both layouts, todos, file-history)
//     is copied, every entry carries the new id and no cwd under the old
//     folder, the source's sha256 is unchanged; -r NEWID in DIR sends the
//     reference history; -c in DIR continues the clone (the reference
//     history, then the CLONE CHECK turn); then a clone of the clone with
//     --id into a third folder, resumed there. cfix validate: no error.
//   - move-project: the alpha folder "renamed" to NEW (its files copied:
//     the scenario's folder is shared by parallel tests, and the sessions
//     record the old path either way); -c in NEW before; cfix move-project
//     OLD NEW --apply; -c in NEW sends the reference history, -r S in NEW
//     the reference and the -c turn; ~/.claude.json no longer names OLD.
//   - move: cfix move S --to DIR --apply; the original and its subagents
//     are gone, -r S in DIR sends the reference history.
//   - undo: cfix undo of a clone (--id) and of a move gives every file and
//     folder back (the folders the apply made go too), and the same clone
//     or move applies again.
//
// Every subtest works on its own copy of the version's scenario store (the
// copy keeps the scenario's paths in its entries; new folders live under
// the copy's HOME), with mtimes set back from the scenario's so that -c
// sees the same order and cfix apply sees no live session. The probes
// "before" run on yet another copy, since 2.1.330 and later append to the
// original session when they resume it from elsewhere.
//
// What the pinned clients did when this test was written (asserted; the
// last row for every version from 2.1.330 on, see CrossFolderResume):
//
//	version  | -r S in DIR, before clone           | -c in NEW, before move-project | after clone, move, move-project
//	1.0.128  | exit 1, No conversation found       | exit 0, fresh: no history      | every resume: the reference history
//	2.0.77   | exit 1, No conversation found       | exit 0, fresh: no history      | every resume: the reference history
//	2.1.330+ | exit 0, the reference history; the | exit 0, fresh: no history      | every resume: the reference history
//	         | turn is appended to the original    |                                |
//	         | file with cwd DIR                   |                                |
//
// 1.0.128's "-c" sometimes writes its turn into another file (see
// cloneMisfiles); the checks that depend on that turn allow it.
// Run with -v for a table of the runs per version.

// Prompts of the checks. Distinct, and none is a substring of another, so
// the request answering one is found by equality.
const (
	clonePrompt    = "CLONE CHECK"
	continuePrompt = "CONTINUE CHECK"
)

func TestCloneMoveResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		v := sc.Version
		ref := cloneReference(t, sc)
		t.Logf("claude %s: reference resume in %s: %s\n%s", v, filepath.Join(sc.Home, AlphaDir), ref.summary(), cloneDump(ref.Hist))
		tab := &cloneTable{}
		t.Run("clone", func(t *testing.T) { testClone(t, sc, ref, tab) })
		t.Run("move-project", func(t *testing.T) { testMoveProject(t, sc, ref, tab) })
		t.Run("move", func(t *testing.T) { testMove(t, sc, ref, tab) })
		t.Run("undo", func(t *testing.T) { testCloneUndo(t, sc) })
		t.Logf("claude %s:\n%s", v, tab)
	})
}

// cloneTable collects one line per run for the -v log.
type cloneTable struct{ rows []string }

func (tb *cloneTable) add(what string, r cloneResume) {
	tb.rows = append(tb.rows, fmt.Sprintf("  %-48s %s", what, r.summary()))
}

func (tb *cloneTable) String() string { return strings.Join(tb.rows, "\n") }

// cloneReference resumes the main session in its own folder, on a copy of
// the store: the history every resume of a clone or a moved session must
// send.
func cloneReference(t *testing.T, sc *Scenario) cloneResume {
	t.Helper()
	env := cloneEnv(t, sc)
	ref := cloneRun(t, env, filepath.Join(sc.Home, AlphaDir), clonePrompt, "-r", sc.Main)
	if !ref.ok() {
		t.Fatalf("resume of the original session in its own folder: %s\n%s", ref.summary(), ref.Res)
	}
	for _, s := range []string{"user: after compaction BASH: pwd", "user: resume in place"} {
		if !slices.Contains(ref.Hist, s) {
			t.Fatalf("the reference resume does not send %q:\n%s", s, cloneDump(ref.Hist))
		}
	}
	return ref
}

// testClone: before the clone, -r S in DIR fails (or, in 2.1.330, finds the
// original in its own folder); after cfix clone, -r NEWID and -c in DIR
// send the reference history, and the source is unchanged.
func testClone(t *testing.T, sc *Scenario, ref cloneResume, tab *cloneTable) {
	env := cloneEnv(t, sc)
	claude := env.ClaudeDir()
	journal := t.TempDir()
	dir := filepath.Join(env.Home, "work", "else where.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	oldDir := filepath.Join(sc.Home, AlphaDir)
	src := filepath.Join(cloneProjectDir(t, claude, oldDir), sc.Main+".jsonl")
	srcSum := fileSum(t, src)
	srcFamily := cloneFamilyOf(t, claude, filepath.Dir(src), sc.Main)
	excused := map[string]bool{}

	// Before: on another copy, with the same DIR path under its HOME.
	{
		penv := cloneEnv(t, sc)
		pdir := filepath.Join(penv.Home, "work", "else where.d")
		psrc := filepath.Join(cloneProjectDir(t, penv.ClaudeDir(), filepath.Join(sc.Home, AlphaDir)), sc.Main+".jsonl")
		before := cloneRun(t, penv, pdir, clonePrompt, "-r", sc.Main)
		tab.add("before clone: -r S in DIR", before)
		t.Logf("before the clone, -r %s in %s: %s", sc.Main, pdir, before.summary())
		finds, known := CrossFolderResume(sc.Version)
		if !known {
			finds = before.Res.ExitCode == 0
			t.Logf("claude %s: no measure of -r from another folder yet; it finds the session: %v", sc.Version, finds)
		}
		if finds {
			// 2.1.330 and later look for the session in every project
			// folder and resume it where it is: the whole history, and the
			// new turn appended to the original file, with cwd DIR.
			if !before.ok() {
				t.Errorf("claude %s was known to resume from another folder: %s\n%s", sc.Version, before.summary(), before.Res)
			} else {
				cloneRequireHistory(t, "-r S in DIR before the clone", ref.Hist, before.Hist)
			}
			if raw, err := os.ReadFile(psrc); err != nil || !bytes.Contains(raw, []byte(`"cwd":"`+pdir+`"`)) || !bytes.Contains(raw, []byte(clonePrompt)) {
				t.Errorf("claude %s resumed from %s but did not append to the original %s with that cwd (%v)", sc.Version, pdir, psrc, err)
			}
		} else {
			out := before.Res.Stdout + before.Res.Stderr
			if before.Res.ExitCode == 0 || !strings.Contains(out, "No conversation found with session ID") {
				t.Errorf("claude %s, -r S from another folder: want exit 1 and No conversation found, got %s\n%s", sc.Version, before.summary(), before.Res)
			}
			// (Under load 2.0.77 was seen to send the prompt alone, with no
			// history, before it said No conversation found: not a history.)
			if len(before.Hist) > 0 {
				t.Errorf("claude %s sent a history from %s before the clone:\n%s", sc.Version, pdir, cloneDump(before.Hist))
			}
		}
	}

	// Clone.
	cloneAge(t, sc, claude)
	res := RunCfix(t, journal, "clone", sc.Main, "--to", dir, "--root", claude, "--apply", "--yes")
	if res.ExitCode != 0 {
		t.Fatalf("cfix clone: %s", res)
	}
	newID := cloneResumeID(t, res, dir)
	if newID == sc.Main {
		t.Fatalf("cfix clone kept the session id %s", newID)
	}
	clonePath := filepath.Join(cloneProjectDir(t, claude, dir), newID+".jsonl")
	if _, err := os.Stat(clonePath); err != nil {
		t.Fatalf("cfix clone printed id %s but %v", newID, err)
	}
	if got := fileSum(t, src); got != srcSum {
		t.Errorf("cfix clone changed the source %s: sha256 %s, was %s", src, got, srcSum)
	}
	cloneRequireFamily(t, "the clone", srcFamily, cloneFamilyOf(t, claude, filepath.Dir(clonePath), newID), sc.Main, newID, true)
	cloneRequireEntries(t, claude, filepath.Dir(clonePath), newID, oldDir, dir)

	// -r NEWID in DIR: the reference history.
	after := cloneRun(t, env, dir, clonePrompt, "-r", newID)
	tab.add("after clone: -r NEWID in DIR", after)
	if !after.ok() {
		t.Fatalf("-r %s in %s after the clone: %s\n%s", newID, dir, after.summary(), after.Res)
	}
	cloneRequireHistory(t, "-r NEWID in DIR after the clone", ref.Hist, after.Hist)
	filed := cloneTurnFiled(t, sc.Version, clonePath, clonePrompt, excused)

	// -c in DIR continues the clone: its history starts with the reference
	// history and carries the turn just made.
	cont := cloneRun(t, env, dir, continuePrompt, "-c")
	tab.add("after clone: -c in DIR", cont)
	if !cont.ok() {
		t.Fatalf("-c in %s after the clone: %s\n%s", dir, cont.summary(), cont.Res)
	}
	cloneRequireContinued(t, "-c in DIR after the clone", ref.Hist, cont.Hist, clonePrompt)
	contFiled := cloneTurnFiled(t, sc.Version, clonePath, continuePrompt, excused)
	if got := fileSum(t, src); got != srcSum {
		t.Errorf("the source %s changed after resuming the clone: sha256 %s, was %s", src, got, srcSum)
	}
	cloneRequireValid(t, claude, excused)

	// A clone of the clone, with --id, into a third folder: -r ID there
	// sends everything -c sent, then the -c turn.
	dir2 := filepath.Join(env.Home, "work", "third")
	const id2 = "0c1de2f3-a4b5-4c6d-8e7f-8091a2b3c4d5"
	cloneAge(t, sc, claude)
	midSum := fileSum(t, clonePath)
	midFamily := cloneFamilyOf(t, claude, filepath.Dir(clonePath), newID)
	res = RunCfix(t, journal, "clone", clonePath, "--to", dir2, "--id", id2, "--root", claude, "--apply", "--yes")
	if res.ExitCode != 0 {
		t.Fatalf("cfix clone of the clone: %s", res)
	}
	if got := cloneResumeID(t, res, dir2); got != id2 {
		t.Errorf("cfix clone --id %s printed session id %s", id2, got)
	}
	if got := fileSum(t, clonePath); got != midSum {
		t.Errorf("cfix clone changed its source, the first clone %s", clonePath)
	}
	clone2 := filepath.Join(cloneProjectDir(t, claude, dir2), id2+".jsonl")
	cloneRequireFamily(t, "the clone of the clone", midFamily, cloneFamilyOf(t, claude, filepath.Dir(clone2), id2), newID, id2, true)
	cloneRequireEntries(t, claude, filepath.Dir(clone2), id2, dir, dir2)
	third := cloneRun(t, env, dir2, clonePrompt, "-r", id2)
	tab.add("clone of the clone: -r ID2 in DIR2", third)
	if !third.ok() {
		t.Fatalf("-r %s in %s after the clone of the clone: %s\n%s", id2, dir2, third.summary(), third.Res)
	}
	if filed && contFiled {
		cloneRequireContinued(t, "-r ID2 in DIR2 (clone of the clone)", cont.Hist, third.Hist, continuePrompt)
	} else {
		// A turn the client misfiled is not in the first clone's file, so
		// not in its clone either: only the reference history is sure.
		cloneRequireContinued(t, "-r ID2 in DIR2 (clone of the clone)", ref.Hist, third.Hist, "")
	}
	cloneRequireValid(t, claude, excused)
}

// testMoveProject renames the project folder (the scenario's alpha folder
// is shared by the other tests, so its contents are copied to NEW instead
// of renamed: the sessions record the old path either way), then
// move-project OLD NEW: -c and -r S in NEW send the reference history.
func testMoveProject(t *testing.T, sc *Scenario, ref cloneResume, tab *cloneTable) {
	env := cloneEnv(t, sc)
	claude := env.ClaudeDir()
	journal := t.TempDir()
	old := filepath.Join(sc.Home, AlphaDir)
	nw := filepath.Join(env.Home, "work", "alpha-renamed")
	srcFamily := cloneFamilyOf(t, claude, cloneProjectDir(t, claude, old), sc.Main)
	excused := map[string]bool{}
	if err := os.CopyFS(nw, os.DirFS(old)); err != nil {
		t.Fatalf("copy %s to %s: %v", old, nw, err)
	}

	// Before: on another copy, -c in NEW starts a fresh session.
	{
		penv := cloneEnv(t, sc)
		pnew := filepath.Join(penv.Home, "work", "alpha-renamed")
		before := cloneRun(t, penv, pnew, clonePrompt, "-c")
		tab.add("before move-project: -c in NEW", before)
		t.Logf("before move-project, -c in %s: %s", pnew, before.summary())
		if before.Main != nil && len(before.Hist) > 0 {
			t.Errorf("-c in %s before move-project sent a history:\n%s", pnew, cloneDump(before.Hist))
		}
	}

	cloneAge(t, sc, claude)
	res := RunCfix(t, journal, "move-project", old, nw, "--root", claude, "--apply", "--yes")
	if res.ExitCode != 0 {
		t.Fatalf("cfix move-project: %s", res)
	}
	if !strings.Contains(res.Stdout, "claude --continue") {
		t.Errorf("cfix move-project printed no continue command: %s", res)
	}
	if _, err := ProjectDir(claude, old); err == nil {
		t.Errorf("cfix move-project left the project folder of %s", old)
	}
	moved := filepath.Join(cloneProjectDir(t, claude, nw), sc.Main+".jsonl")
	if _, err := os.Stat(moved); err != nil {
		t.Fatalf("cfix move-project: %v", err)
	}
	cloneRequireFamily(t, "move-project", srcFamily, cloneFamilyOf(t, claude, filepath.Dir(moved), sc.Main), sc.Main, sc.Main, true)
	cloneRequireEntries(t, claude, filepath.Dir(moved), sc.Main, old, nw)
	if raw, err := os.ReadFile(filepath.Join(env.Home, ".claude.json")); err == nil && bytes.Contains(raw, []byte(`"`+old+`"`)) {
		t.Errorf("~/.claude.json still names %s", old)
	}

	after := cloneRun(t, env, nw, clonePrompt, "-c")
	tab.add("after move-project: -c in NEW", after)
	if !after.ok() {
		t.Fatalf("-c in %s after move-project: %s\n%s", nw, after.summary(), after.Res)
	}
	cloneRequireHistory(t, "-c in NEW after move-project", ref.Hist, after.Hist)
	turn := clonePrompt
	if !cloneTurnFiled(t, sc.Version, moved, clonePrompt, excused) {
		turn = "" // -r S reads S's file only: the misfiled turn is not there
	}

	again := cloneRun(t, env, nw, continuePrompt, "-r", sc.Main)
	tab.add("after move-project: -r S in NEW", again)
	if !again.ok() {
		t.Fatalf("-r %s in %s after move-project: %s\n%s", sc.Main, nw, again.summary(), again.Res)
	}
	cloneRequireContinued(t, "-r S in NEW after move-project", ref.Hist, again.Hist, turn)
	cloneRequireValid(t, claude, excused)
}

// testMove: cfix move S --to DIR keeps the id, removes the original, and
// -r S in DIR sends the reference history.
func testMove(t *testing.T, sc *Scenario, ref cloneResume, tab *cloneTable) {
	env := cloneEnv(t, sc)
	claude := env.ClaudeDir()
	journal := t.TempDir()
	dir := filepath.Join(env.Home, "work", "moved")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	oldDir := filepath.Join(sc.Home, AlphaDir)
	src := filepath.Join(cloneProjectDir(t, claude, oldDir), sc.Main+".jsonl")
	srcFamily := cloneFamilyOf(t, claude, filepath.Dir(src), sc.Main)

	cloneAge(t, sc, claude)
	res := RunCfix(t, journal, "move", sc.Main, "--to", dir, "--root", claude, "--apply", "--yes")
	if res.ExitCode != 0 {
		t.Fatalf("cfix move: %s", res)
	}
	if id := cloneResumeID(t, res, dir); id != sc.Main {
		t.Errorf("cfix move printed session id %s, want %s", id, sc.Main)
	}
	if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cfix move left the original %s (%v)", src, err)
	}
	movedPath := filepath.Join(cloneProjectDir(t, claude, dir), sc.Main+".jsonl")
	if _, err := os.Stat(movedPath); err != nil {
		t.Fatalf("cfix move: %v", err)
	}
	cloneRequireFamily(t, "move", srcFamily, cloneFamilyOf(t, claude, filepath.Dir(movedPath), sc.Main), sc.Main, sc.Main, true)
	if left := cloneFamilyOf(t, claude, filepath.Dir(src), sc.Main); len(left.Sub) > 0 || len(left.Flat) > 0 {
		t.Errorf("cfix move left the session's subagents in %s: %s", filepath.Dir(src), left)
	}
	cloneRequireEntries(t, claude, filepath.Dir(movedPath), sc.Main, oldDir, dir)

	after := cloneRun(t, env, dir, clonePrompt, "-r", sc.Main)
	tab.add("after move: -r S in DIR", after)
	if !after.ok() {
		t.Fatalf("-r %s in %s after the move: %s\n%s", sc.Main, dir, after.summary(), after.Res)
	}
	cloneRequireHistory(t, "-r S in DIR after the move", ref.Hist, after.Hist)
	excused := map[string]bool{}
	cloneTurnFiled(t, sc.Version, movedPath, clonePrompt, excused)
	cloneRequireValid(t, claude, excused)
}

// testCloneUndo: cfix undo of a clone and of a move gives the store back
// as it was (files and folders), and the same clone or move applies again
// afterwards. No client run: what undo gives back is the store the other
// subtests resumed.
func testCloneUndo(t *testing.T, sc *Scenario) {
	claude := CopyStore(t, sc.Version)
	cloneAge(t, sc, claude)
	home := filepath.Dir(claude)
	journal := t.TempDir()
	const id = "0d1e2f3a-b4c5-4d6e-8f7a-8b9c0d1e2f3a"
	for _, c := range []struct {
		name string
		args []string
	}{
		{"clone", []string{"clone", sc.Main, "--to", filepath.Join(home, "work", "cloned"), "--id", id}},
		{"move", []string{"move", sc.Main, "--to", filepath.Join(home, "work", "moved")}},
	} {
		args := append(c.args, "--root", claude, "--apply", "--yes")
		orig := snapshot(t, claude)
		if res := RunCfix(t, journal, args...); res.ExitCode != 0 {
			t.Fatalf("cfix %s: %s", c.name, res)
		}
		applied := snapshot(t, claude)
		if u := RunCfix(t, journal, "undo", "--root", claude, "--apply", "--yes"); u.ExitCode != 0 {
			t.Fatalf("cfix undo of the %s: %s", c.name, u)
		}
		undone := snapshot(t, claude)
		if diff := cloneTreeDiff(orig, undone); diff != "" {
			t.Errorf("cfix undo of the %s did not give the store back (- only before the %s, + only after the undo, ~ other bytes):\n%s", c.name, c.name, diff)
		}
		res := RunCfix(t, journal, args...)
		if res.ExitCode != 0 {
			// Seen with 2.1.330's <id>/subagents/ layout: the undo leaves
			// <target folder>/<id>/subagents/ empty, and clone (--id) or
			// move takes that folder for an existing copy of the session.
			t.Errorf("BUG in cfix: %s again after its undo refused, because the undo left the empty session folder the %s made (listed above) and the planner takes it for a copy of the session: %s", c.name, c.name, res)
			continue
		}
		if diff := cloneTreeDiff(applied, snapshot(t, claude)); diff != "" {
			t.Errorf("cfix %s again after its undo gave another store than the first time (- first, + again):\n%s", c.name, diff)
		}
		if u := RunCfix(t, journal, "undo", "--root", claude, "--apply", "--yes"); u.ExitCode != 0 {
			t.Fatalf("cfix undo of the %s: %s", c.name, u)
		}
	}
}

// --- helpers ---------------------------------------------------------------

// cloneEnv copies the scenario store into a new HOME and returns an Env on
// it, with the copy's mtimes set to the scenario's, moved ten minutes back
// (so -c sees the same order, and cfix apply does not take any session for
// a live one).
func cloneEnv(t *testing.T, sc *Scenario) *Env {
	t.Helper()
	claude := CopyStore(t, sc.Version)
	cloneAge(t, sc, claude)
	return NewEnv(t, sc.Version, filepath.Dir(claude))
}

// cloneAge gives every file of the store copy claude the mtime of its
// original in the scenario store minus ten minutes; files the scenario
// store does not have (written since the copy) get their own mtime minus
// ten minutes.
func cloneAge(t *testing.T, sc *Scenario, claude string) {
	t.Helper()
	const back = 10 * time.Minute
	err := filepath.WalkDir(claude, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		r, err := filepath.Rel(claude, p)
		if err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(sc.ClaudeDir, r))
		if err != nil {
			if fi, err = de.Info(); err != nil {
				return err
			}
		}
		at := fi.ModTime().Add(-back)
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cloneProjectDir(t *testing.T, claude, dir string) string {
	t.Helper()
	p, err := ProjectDir(claude, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fileSum returns the sha256 of a file.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

var cloneResumeRE = regexp.MustCompile(`(?m)^\s*cd (.+) && claude --resume ([0-9a-fA-F-]{36})\s*$`)

// cloneResumeID returns the session id of the resume command cfix printed,
// and checks its directory is dir.
func cloneResumeID(t *testing.T, res CfixResult, dir string) string {
	t.Helper()
	m := cloneResumeRE.FindStringSubmatch(res.Stdout)
	if m == nil {
		t.Fatalf("no \"cd DIR && claude --resume ID\" in the output of %s", res)
	}
	if m[1] != dir && m[1] != "'"+dir+"'" {
		t.Errorf("cfix printed cd %s, want %s", m[1], dir)
	}
	return m[2]
}

// cloneRequireValid checks that cfix validate reports no error, but a
// parent-missing in a file that the client itself misfiled a turn into
// (excused, see cloneTurnFiled): that one is the client's damage, and
// validate is right to report it.
func cloneRequireValid(t *testing.T, claude string, excused map[string]bool) {
	t.Helper()
	rep := ValidateStore(t, claude)
	for _, f := range rep.Errors() {
		if excused[f.Path] && f.Code == "parent-missing" {
			t.Logf("cfix validate (the client's own damage, see above): %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
			continue
		}
		t.Errorf("cfix validate: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
	}
}

// cloneMisfiles reports whether version is known to write, now and then, the
// new turn of a "-c" run into the file of the session id they made at
// start (with the continued session's id in the entries) instead of the
// continued session's file. In 1.0.128 the session store keeps the
// transcript path it computed at its first write (sessionFile, set once
// from the session id of that moment); "-p -r ID" switches the id and
// resets that path (lw(id), await hv1()), "-p -c" only switches the id
// (De5 in cli.js: lw(Z.sessionId), no hv1()). When something is appended
// before the switch (the "summary" title entries a resume writes), the
// whole new turn goes to <start id>.jsonl. Seen under load (every version
// at once) in about one suite run in three: "-c" itself sends the full
// history, a later "-r ID" reads ID.jsonl and misses that turn, and cfix
// validate reports parent-missing in the new file.
//
// Measured on 1.0.128; 2.0.77 does not do it: every version before 2.0.0.
func cloneMisfiles(version string) bool { return !Since(version, "2.0.0") }

// cloneTurnFiled reports whether the turn whose prompt is prompt landed in
// the transcript want. When it landed in another transcript of the same
// folder and the version is known to do that (cloneMisfiles), it logs it,
// adds that file to excused and returns false; otherwise a turn missing
// from want fails the test.
func cloneTurnFiled(t *testing.T, version, want, prompt string, excused map[string]bool) bool {
	t.Helper()
	needle := []byte(`"` + prompt + `"`)
	if raw, err := os.ReadFile(want); err == nil && bytes.Contains(raw, needle) {
		return true
	}
	var others []string
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(want), "*.jsonl"))
	for _, p := range files {
		if raw, err := os.ReadFile(p); err == nil && p != want && bytes.Contains(raw, needle) {
			others = append(others, p)
		}
	}
	if len(others) > 0 && cloneMisfiles(version) {
		t.Logf("claude %s wrote the %q turn into %q, not into the resumed session's %s (a known race of this version, see cloneMisfiles)", version, prompt, others, want)
		for _, p := range others {
			excused[p] = true
		}
		return false
	}
	t.Errorf("claude %s: the %q turn is not in the resumed session's file %s (found in %q)", version, prompt, want, others)
	return false
}

// --- what a resume sent ----------------------------------------------------

// cloneResume is what one resume sent.
type cloneResume struct {
	Res  Result
	Main *fakeapi.Request // the first request with tools answering the prompt
	// Hist is the history Main carried before the prompt (see cloneHistory).
	Hist     []string
	Statuses []int // of every /v1/messages request
}

// ok reports whether the run exited 0, sent the prompt with a history,
// and every messages request got 200.
func (r cloneResume) ok() bool {
	if r.Res.ExitCode != 0 || r.Main == nil {
		return false
	}
	for _, s := range r.Statuses {
		if s != 200 {
			return false
		}
	}
	return true
}

func (r cloneResume) summary() string {
	s := fmt.Sprintf("exit %d", r.Res.ExitCode)
	if strings.Contains(r.Res.Stdout+r.Res.Stderr, "No conversation found") {
		s += " (No conversation found)"
	}
	if r.Main == nil {
		return s + fmt.Sprintf(", prompt never sent, statuses %v", r.Statuses)
	}
	return s + fmt.Sprintf(", %d history items sent, statuses %v", len(r.Hist), r.Statuses)
}

// cloneRun runs the client in dir with args and -p prompt and returns what
// it sent.
func cloneRun(t *testing.T, env *Env, dir, prompt string, args ...string) cloneResume {
	t.Helper()
	res := env.Run(dir, append(args, "-p", prompt)...)
	r := cloneResume{Res: res}
	for i := range res.Requests {
		q := &res.Requests[i]
		if !q.IsMessages() {
			continue
		}
		r.Statuses = append(r.Statuses, q.Status)
		if r.Main == nil && len(q.Tools) > 0 && cloneIsPrompt(q.Messages, prompt) {
			r.Main = q
			r.Hist = cloneHistory(q.Messages, prompt)
		}
	}
	return r
}

var cloneReminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

func cloneClean(s string) string {
	return strings.TrimSpace(cloneReminderRE.ReplaceAllString(s, ""))
}

// lastUser returns the index of the last user message, -1 when none.
func cloneLastUser(msgs []fakeapi.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// cloneIsPrompt reports whether the last user message holds the text
// prompt.
func cloneIsPrompt(msgs []fakeapi.Message, prompt string) bool {
	i := cloneLastUser(msgs)
	if i < 0 {
		return false
	}
	for _, b := range msgs[i].Content {
		if b.Type == "text" && cloneClean(b.Text) == prompt {
			return true
		}
	}
	return false
}

// cloneHistory lists what the user and assistant messages carry, in
// order, one item per block: "user: text", "assistant: text",
// "thinking: text", "tool_use NAME ID", "tool_result ID: text". System
// reminders, empty texts, system-role messages and the prompt text of the
// last user message are left out: they are what the client adds for this
// run, not the history it loaded.
func cloneHistory(msgs []fakeapi.Message, prompt string) []string {
	last := cloneLastUser(msgs)
	var out []string
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				s := cloneClean(b.Text)
				if s == "" || (i == last && s == prompt) {
					continue
				}
				out = append(out, m.Role+": "+s)
			case "thinking":
				out = append(out, "thinking: "+strings.TrimSpace(b.Thinking))
			case "tool_use":
				out = append(out, "tool_use "+b.Name+" "+b.ID)
			case "tool_result":
				out = append(out, "tool_result "+b.ToolUseID+": "+strings.TrimSpace(b.ResultText()))
			default:
				out = append(out, m.Role+": "+b.Type)
			}
		}
	}
	return out
}

// cloneRequireHistory checks that got is the reference history want.
func cloneRequireHistory(t *testing.T, what string, want, got []string) {
	t.Helper()
	if !slices.Equal(want, got) {
		t.Errorf("%s: the history sent differs from the reference resume's (- reference, + sent):\n%s", what, cloneDiff(want, got))
	}
}

// cloneRequireContinued checks that got starts with the history want and
// then carries the turn of prompt: the client continued the session that
// the previous run (with prompt) resumed.
func cloneRequireContinued(t *testing.T, what string, want, got []string, prompt string) {
	t.Helper()
	if len(got) < len(want) || !slices.Equal(want, got[:len(want)]) {
		n := min(len(got), len(want))
		t.Errorf("%s: the history sent does not start with the reference history (- reference, + sent, first %d items):\n%s", what, n, cloneDiff(want, got[:n]))
		return
	}
	if prompt != "" && !slices.Contains(got[len(want):], "user: "+prompt) {
		t.Errorf("%s: the history sent does not carry the %q turn after the history it continues:\n%s", what, prompt, cloneDump(got[len(want):]))
	}
}

// cloneDiff is a line diff of two histories (longest common subsequence):
// "  " same, "- " only in want, "+ " only in got.
func cloneDiff(want, got []string) string {
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	line := func(mark, s string) { fmt.Fprintf(&b, "%s %s\n", mark, cloneShow(s)) }
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			line(" ", want[i])
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			line("-", want[i])
			i++
		default:
			line("+", got[j])
			j++
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cloneDump lists a history, one item per line.
func cloneDump(h []string) string {
	var b strings.Builder
	for i, s := range h {
		fmt.Fprintf(&b, "  %3d %s\n", i, cloneShow(s))
	}
	if len(h) == 0 {
		return "  (empty)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func cloneShow(s string) string {
	q := fmt.Sprintf("%q", s)
	return clip(q[1:len(q)-1], 160)
}

// --- the session family on disk ---------------------------------------------

// cloneFamily is what belongs to one session besides its transcript.
type cloneFamily struct {
	Sub     []string // files under <project folder>/<id>/ (subagents, .meta.json, tool-results), relative to it
	Flat    []string // flat <project folder>/agent-*.jsonl whose entries carry the session's id
	History []string // files under file-history/<id>/, relative to it
	Todos   []string // todos/<id>-agent-*.json, with the id written "ID"
}

func (f cloneFamily) String() string {
	return fmt.Sprintf("%d in the session folder, %d flat subagents, %d file-history, %d todos", len(f.Sub), len(f.Flat), len(f.History), len(f.Todos))
}

// cloneFamilyOf lists the family of session id of the project folder proj.
func cloneFamilyOf(t *testing.T, claude, proj, id string) cloneFamily {
	t.Helper()
	var f cloneFamily
	f.Sub = cloneFilesUnder(t, filepath.Join(proj, id))
	f.History = cloneFilesUnder(t, filepath.Join(claude, "file-history", id))
	flat, _ := filepath.Glob(filepath.Join(proj, "agent-*.jsonl"))
	for _, p := range flat {
		if cloneSessionOf(t, p) == id {
			f.Flat = append(f.Flat, filepath.Base(p))
		}
	}
	todos, _ := filepath.Glob(filepath.Join(claude, "todos", id+"-agent-*.json"))
	for _, p := range todos {
		f.Todos = append(f.Todos, strings.ReplaceAll(filepath.Base(p), id, "ID"))
	}
	return f
}

// cloneFilesUnder lists the regular files under dir, relative to it; none
// when dir does not exist.
func cloneFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		r, err := filepath.Rel(dir, p)
		out = append(out, r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cloneSessionOf returns the sessionId of the first entry of a transcript
// that has one.
func cloneSessionOf(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &e) == nil && e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}

// cloneRequireFamily checks that the copy's family (of session newID) has
// what the source's (of oldID) had: the same files in the session folder,
// as many flat subagents, and, when keyed is set (a clone: file-history
// and todos are keyed by the id, so a clone copies them), the same
// file-history files and todos.
func cloneRequireFamily(t *testing.T, what string, src, dst cloneFamily, oldID, newID string, keyed bool) {
	t.Helper()
	t.Logf("%s: source %s has %s; copy %s has %s", what, oldID, src, newID, dst)
	if !slices.Equal(src.Sub, dst.Sub) {
		t.Errorf("%s: the session folder holds %q, the source's %q", what, dst.Sub, src.Sub)
	}
	if len(src.Flat) != len(dst.Flat) {
		t.Errorf("%s: %d flat subagent files carry the new id (%q), the source had %d (%q)", what, len(dst.Flat), dst.Flat, len(src.Flat), src.Flat)
	}
	if keyed && !slices.Equal(src.History, dst.History) {
		t.Errorf("%s: file-history/%s holds %q, the source's %q", what, newID, dst.History, src.History)
	}
	if keyed && !slices.Equal(src.Todos, dst.Todos) {
		t.Errorf("%s: todos %q, the source's %q", what, dst.Todos, src.Todos)
	}
}

// cloneRequireEntries checks every entry of the transcripts of session id
// in the project folder proj (main, session folder, flat subagents): its
// sessionId is id, no cwd is oldDir or under it, and some cwd in the main
// transcript is newDir.
func cloneRequireEntries(t *testing.T, claude, proj, id, oldDir, newDir string) {
	t.Helper()
	files := []string{filepath.Join(proj, id+".jsonl")}
	for _, r := range cloneFilesUnder(t, filepath.Join(proj, id)) {
		if strings.HasSuffix(r, ".jsonl") {
			files = append(files, filepath.Join(proj, id, r))
		}
	}
	flat, _ := filepath.Glob(filepath.Join(proj, "agent-*.jsonl"))
	for _, p := range flat {
		if cloneSessionOf(t, p) == id {
			files = append(files, p)
		}
	}
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for i, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		newCwd := 0
		for n, line := range bytes.Split(raw, []byte("\n")) {
			var e struct {
				SessionID *string `json:"sessionId"`
				Cwd       *string `json:"cwd"`
			}
			if len(line) == 0 || json.Unmarshal(line, &e) != nil {
				continue
			}
			if e.SessionID != nil && *e.SessionID != id {
				t.Errorf("%s:%d: sessionId %s, want %s", p, n+1, *e.SessionID, id)
			}
			if e.Cwd != nil && under(*e.Cwd, oldDir) {
				t.Errorf("%s:%d: cwd %s is still under the old directory %s", p, n+1, *e.Cwd, oldDir)
			}
			if e.Cwd != nil && under(*e.Cwd, newDir) {
				newCwd++
			}
		}
		if i == 0 && newCwd == 0 {
			t.Errorf("%s: no entry has its cwd in %s", p, newDir)
		}
	}
}

// cloneTreeDiff lists the files that differ between two snapshots.
func cloneTreeDiff(want, got map[string]string) string {
	var lines []string
	kind := func(sum string) string {
		if sum == "dir" {
			return " (folder)"
		}
		return ""
	}
	for r, w := range want {
		if g, ok := got[r]; !ok {
			lines = append(lines, "- "+r+kind(w))
		} else if g != w {
			lines = append(lines, "~ "+r)
		}
	}
	for r, g := range got {
		if _, ok := want[r]; !ok {
			lines = append(lines, "+ "+r+kind(g))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// The history helpers on hand-made messages: no Claude Code needed (they
// run with -short too).
func TestCloneHistoryHelpers(t *testing.T) {
	msgs := []fakeapi.Message{
		{Role: "user", Content: fakeapi.Content{{Type: "text", Text: "<system-reminder>\ncwd\n</system-reminder>"}, {Type: "text", Text: " first "}}},
		{Role: "system", Content: fakeapi.Content{{Type: "text", Text: "# Environment"}}},
		{Role: "assistant", Content: fakeapi.Content{{Type: "thinking", Thinking: "hmm"}, {Type: "tool_use", ID: "t1", Name: "Bash"}}},
		{Role: "user", Content: fakeapi.Content{{Type: "tool_result", ToolUseID: "t1", Content: []byte(`"out"`)}}},
		{Role: "assistant", Content: fakeapi.Content{{Type: "text", Text: "done: out"}}},
		{Role: "user", Content: fakeapi.Content{{Type: "text", Text: clonePrompt}}},
	}
	want := []string{"user: first", "thinking: hmm", "tool_use Bash t1", "tool_result t1: out", "assistant: done: out"}
	if got := cloneHistory(msgs, clonePrompt); !slices.Equal(got, want) {
		t.Errorf("cloneHistory = %q, want %q", got, want)
	}
	if !cloneIsPrompt(msgs, clonePrompt) || cloneIsPrompt(msgs, continuePrompt) || cloneIsPrompt(msgs[:5], clonePrompt) {
		t.Errorf("cloneIsPrompt")
	}
	got := cloneDiff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	if wantDiff := "  a\n- b\n+ x\n  c\n+ d"; got != wantDiff {
		t.Errorf("cloneDiff:\n%s\nwant:\n%s", got, wantDiff)
	}
	if d := cloneTreeDiff(map[string]string{"a": "1", "b": "dir", "c": "2"}, map[string]string{"a": "1", "c": "3", "d": "dir"}); d != "+ d (folder)\n- b (folder)\n~ c" {
		t.Errorf("cloneTreeDiff = %q", d)
	}
}
