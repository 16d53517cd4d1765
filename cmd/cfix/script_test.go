package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cfix-dev/cfix/store"
)

func TestMain(m *testing.M) {
	// ls's message cache: never the cache of the user running the tests
	// (a script sets its own).
	if os.Getenv("XDG_CACHE_HOME") == "" {
		os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "cfix-cmd-test-cache"))
	}
	testscript.Main(m, map[string]func(){
		"cfix": func() { os.Exit(run(os.Args[1:])) },
	})
}

// TestScripts runs the CLI scripts in testdata/script. $CORPUS is the
// corpus of real stores.
func TestScripts(t *testing.T) {
	corpus, err := filepath.Abs("../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("CORPUS", corpus)
			env.Setenv("CLAUDE_CONFIG_DIR", "")
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("CFIX_JOURNAL_DIR", filepath.Join(env.WorkDir, "journal"))
			// Judged by the newest version that wrote to the store, not
			// by a claude the machine has installed.
			env.Setenv("CFIX_CLIENT", "store")
			// What cfix keeps of its own (the message counts' cache, the
			// hooks' log, archives) stays in the script's folder, never
			// in a HOME of the machine.
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, ".data"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"chop":       cmdChop,
			"age":        cmdAge,
			"jsonreport": cmdJSONReport,
			"encode":     cmdEncode,
			"plant":      cmdPlant,
			"nosecret":   cmdNoSecret,
		},
	})
}

// cmdExits runs a program and checks its exit status: exits N prog args...
// Its stdout and stderr become the script's, as with exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		// testscript wraps the status as "exit status N".
		var n int
		if _, serr := fmt.Sscanf(err.Error(), "exit status %d", &n); serr == nil {
			got = n
		} else {
			ts.Fatalf("exits: %v", err)
		}
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdChop removes the final newline of a file (txtar always ends files with
// one): chop FILE.
func cmdChop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: chop file")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, []byte(strings.TrimSuffix(string(b), "\n")), 0o600))
}

// cmdAge sets the mtime of every file under the paths to a fixed time in
// the past, so apply does not take them for live sessions: age PATH...
func cmdAge(ts *testscript.TestScript, neg bool, args []string) {
	old := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, a := range args {
		filepath.Walk(ts.MkAbs(a), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				ts.Check(os.Chtimes(p, old, old))
			}
			return nil
		})
	}
}

// cmdEncode sets an environment variable to the project folder name
// Claude Code uses for a directory (its physical path): encode VAR DIR.
func cmdEncode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: encode VAR dir")
	}
	ts.Setenv(args[0], store.EncodeProject(store.RealPath(ts.MkAbs(args[1]))))
}

// cmdJSONReport checks that stdout is one validate report with the given
// counts: jsonreport FILES ERRORS WARNINGS NOTICES (- skips a number).
func cmdJSONReport(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: jsonreport files errors warnings notices")
	}
	var rep struct {
		Root         *string          `json:"root"`
		FilesChecked *int             `json:"files_checked"`
		Findings     []map[string]any `json:"findings"`
		Counts       map[string]int   `json:"counts"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &rep); err != nil {
		ts.Fatalf("stdout is not one JSON document: %v", err)
	}
	if rep.Root == nil || rep.FilesChecked == nil || rep.Findings == nil || rep.Counts == nil {
		ts.Fatalf("report lacks root, files_checked, findings or counts")
	}
	for _, f := range rep.Findings {
		for _, k := range []string{"code", "severity", "path", "line", "message", "hint"} {
			if _, ok := f[k]; !ok {
				ts.Fatalf("finding lacks %q: %v", k, f)
			}
		}
		if p, _ := f["path"].(string); !filepath.IsAbs(p) {
			ts.Fatalf("finding path %q is not absolute", p)
		}
	}
	got := []int{*rep.FilesChecked, rep.Counts["error"], rep.Counts["warning"], rep.Counts["notice"]}
	for i, a := range args {
		if a == "-" {
			continue
		}
		want, err := strconv.Atoi(a)
		if err != nil {
			ts.Fatalf("jsonreport: %v", err)
		}
		if (got[i] == want) == neg {
			ts.Fatalf("report %v: field %d is %d, want %s%d", got, i, got[i], map[bool]string{true: "not ", false: ""}[neg], want)
		}
	}
}
