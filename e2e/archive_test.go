package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Archive, restore and rm proven with the real clients. For each pinned
// version, on a copy of its scenario store (mtimes set back, as for the
// clone tests):
//
//   - archive: cfix archive S --apply moves the main session S (its
//     subagents of both layouts, session folder, file-history, todos,
//     debug log...) into one archive file; S's files are gone from the
//     store; cfix archive --list names S.
//   - restore: cfix restore S --apply puts every file back: the whole
//     store is the same as before the archive (every path, byte, mode and
//     mtime); the archive folder is empty. Then "-r S -p CHECK" in S's own
//     folder gets 200 for every request and sends the same history as the
//     reference resume of the untouched store (cloneReference).
//   - rm: cfix rm S --history --apply, then cfix undo --apply: the same
//     whole-store comparison.
func TestArchiveRestoreResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		ref := cloneReference(t, sc)
		env := cloneEnv(t, sc)
		claude := env.ClaudeDir()
		journal := t.TempDir()
		adir := filepath.Join(t.TempDir(), "archive")
		before := storeTree(t, claude)
		main := filepath.Join(cloneProjectDir(t, claude, filepath.Join(sc.Home, AlphaDir)), sc.Main+".jsonl")

		res := RunCfix(t, journal, "archive", sc.Main, "--root", claude, "--archive-dir", adir, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix archive: %s", res)
		}
		if _, err := os.Stat(main); err == nil {
			t.Fatalf("cfix archive left %s", main)
		}
		for p := range storeTree(t, claude) {
			if strings.Contains(p, sc.Main) {
				t.Errorf("cfix archive left %s", p)
			}
		}
		if _, err := os.Stat(filepath.Join(adir, sc.Main+".tar.zst")); err != nil {
			t.Fatalf("no archive file: %v", err)
		}
		list := RunCfix(t, journal, "archive", "--list", "--archive-dir", adir)
		if list.ExitCode != 0 || !strings.Contains(list.Stdout, sc.Main) {
			t.Fatalf("cfix archive --list does not name %s: %s", sc.Main, list)
		}

		res = RunCfix(t, journal, "restore", sc.Main, "--root", claude, "--archive-dir", adir, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix restore: %s", res)
		}
		requireSameTree(t, "archive then restore", before, storeTree(t, claude))
		if ents, _ := os.ReadDir(adir); len(ents) != 0 {
			t.Errorf("the archive folder holds %d entries after restore", len(ents))
		}

		// rm, then undo, before the resume writes to the session.
		res = RunCfix(t, journal, "rm", sc.Main, "--history", "--root", claude, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix rm: %s", res)
		}
		if _, err := os.Stat(main); err == nil {
			t.Fatalf("cfix rm left %s", main)
		}
		res = RunCfix(t, journal, "undo", "--root", claude, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix undo of rm: %s", res)
		}
		requireSameTree(t, "rm then undo", before, storeTree(t, claude))

		got := cloneRun(t, env, filepath.Join(sc.Home, AlphaDir), clonePrompt, "-r", sc.Main)
		t.Logf("claude %s: -r S after archive and restore: %s", sc.Version, got.summary())
		if !got.ok() {
			t.Fatalf("-r %s after restore: %s\n%s", sc.Main, got.summary(), got.Res)
		}
		cloneRequireHistory(t, "-r S after archive and restore", ref.Hist, got.Hist)
	})
}

// storeTree describes every file under root: mode, mtime, size, sha256;
// and every folder by its mode.
func storeTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		case d.Type().IsRegular():
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(raw)
			out[rel] = fmt.Sprintf("%v %s %d %s", fi.Mode().Perm(), fi.ModTime().UTC().Format(time.RFC3339Nano), fi.Size(), hex.EncodeToString(sum[:]))
		default:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func requireSameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if g := got[k]; g != w {
			diffs = append(diffs, fmt.Sprintf("%s: was %q, now %q", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: new, %q", k, g))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: the store differs from before (%d paths):\n%s", what, len(diffs), strings.Join(diffs, "\n"))
	}
}
