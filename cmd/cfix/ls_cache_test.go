package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
)

// TestLsCachedSameAsUncached: on every corpus and wild store, cfix ls
// --all of the store and of each of its project folders, as text and as
// JSON, and the listings of its extras, say the same with the cache cold
// (an empty cache folder: every transcript read) and warm (the cache the
// cold runs wrote: none read). The copies are aged, so the cache keeps
// what it reads (a file modified in the last seconds is not kept), and
// the test checks the warm runs had a cache to read.
func TestLsCachedSameAsUncached(t *testing.T) {
	t.Setenv("COLUMNS", "150")
	stores := 0
	for _, src := range wild.AllRoots(t) {
		name := filepath.Base(filepath.Dir(src))
		root := filepath.Join(t.TempDir(), ".claude")
		if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", src, err, out)
		}
		damage.Age(t, root)
		runs := lsRuns(root)
		// Cold: each run with a cache folder of its own, empty.
		cold := make([]string, len(runs))
		for i, r := range runs {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			cold[i] = lsRun(t, root, r)
		}
		// Warm: every run twice with one cache, which the first round
		// fills (each run after the first finds some of it).
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		for round := range 2 {
			for i, r := range runs {
				if warm := lsRun(t, root, r); warm != cold[i] {
					t.Errorf("%s: cfix %s (round %d): the cache changes what is shown:\n--- cold\n%s\n--- warm\n%s", name, strings.Join(r, " "), round, cold[i], warm)
				}
			}
			if round == 0 {
				file := catalog.CacheFile(filepath.Join(cache, "cfix", "catalog"), root)
				if c := catalog.OpenCache(file, root); !c.Loaded || c.Len() == 0 {
					t.Fatalf("%s: no cache written by the first round (%s)", name, file)
				}
			}
		}
		stores++
	}
	if stores < 15 {
		t.Fatalf("%d stores compared", stores)
	}
}

// lsRuns are the listings of the store at root: cfix ls --all of the
// store and of each of its project folders, and cfix ls of its extras,
// as text and as JSON.
func lsRuns(root string) [][]string {
	var runs [][]string
	for _, f := range []string{"", "--json"} {
		runs = append(runs, []string{"ls", "--all", f})
		ents, _ := os.ReadDir(filepath.Join(root, "projects"))
		for _, e := range ents {
			runs = append(runs, []string{"ls", "--all", f, "--", e.Name()})
		}
		for _, x := range []string{"transcripts", "pre-compact-session-histories"} {
			if _, err := os.Stat(filepath.Join(root, x)); err == nil {
				runs = append(runs, []string{"ls", f, "--", x})
			}
		}
	}
	return runs
}

// lsRun runs cfix ls with args on the store at root and returns what it
// printed (its status must be 0).
func lsRun(t *testing.T, root string, args []string) string {
	t.Helper()
	var a []string
	for _, x := range args {
		if x != "" {
			a = append(a, x)
		}
	}
	a = append([]string{a[0], "--root", root}, a[1:]...)
	out, errOut, code := cliErr(a...)
	if code != exitOK {
		t.Fatalf("cfix %s: status %d: %s", strings.Join(a, " "), code, errOut)
	}
	return out
}
