package validate_test

import (
	"bytes"
	"fmt"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/store"
)

func run(t testing.TB, root string, targets ...string) *validate.Report {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCorpusHasNoErrors checks every corpus store: no error, and only the
// warnings and notices listed here, each of them defended.
func TestCorpusHasNoErrors(t *testing.T) {
	// Warnings a healthy store written by these versions gives, by code.
	allowed := map[validate.Code]string{
		validate.OrphanTodos:  "todos/<id>-agent-<id>.json of runs whose session was never written (e.g. -p /compact, failed resumes)",
		validate.OrphanDebug:  "debug/<id>.txt of the same runs",
		validate.SessionStub:  "2.0.14 and 1.0.128 leave summary-only stubs when resuming",
		validate.SessionEmpty: "2.0.77 leaves 0-byte session files",
		validate.CWDMismatch:  "2.1.330 appends to the original file with the new cwd when resuming from another folder (a notice)",
		validate.OrphanShellSnap: "1.0.128 and 2.0.14: shell snapshots of scenario runs that did not exit normally (a normal exit removes its own: " +
			"1.0.128 and 2.1.330 seen); nothing sources them again",
	}
	for _, v := range damage.CorpusVersions(t) {
		t.Run(v, func(t *testing.T) {
			rep := run(t, filepath.Join("..", "testdata", "corpus", v, ".claude"))
			if rep.FilesChecked == 0 {
				t.Fatal("no files checked")
			}
			for _, f := range rep.Findings {
				if f.Severity == validate.Error {
					t.Errorf("error: %s:%d: %s: %s", f.Path, f.Line, f.Code, f.Message)
				} else if _, ok := allowed[f.Code]; !ok {
					t.Errorf("unexpected %s: %s:%d: %s: %s", f.Severity, f.Path, f.Line, f.Code, f.Message)
				}
			}
		})
	}
}

// TestDamageFound damages copies of corpus sessions in each way validate
// knows and checks each damage is found at the right file and line.
func TestDamageFound(t *testing.T) {
	for _, c := range damage.Cases {
		t.Run(c.Name, func(t *testing.T) {
			root := damage.CopyStore(t, c.Version)
			before := run(t, root)
			path, line := c.Damage(t, root)
			rep := run(t, root)
			if line < 0 {
				// The damage must not be reported at -line.
				if hasFinding(rep, c.Code, path, -line) {
					t.Fatalf("%s reported at %s:%d", c.Code, path, -line)
				}
				return
			}
			found := false
			for _, f := range rep.Findings {
				if f.Code != c.Code {
					continue
				}
				if f.Path == path && (line == 0 || f.Line == line) {
					found = true
					if f.Severity != c.Severity {
						t.Errorf("severity %s, want %s", f.Severity, c.Severity)
					}
					if !filepath.IsAbs(f.Path) {
						t.Errorf("path %s is not absolute", f.Path)
					}
				}
			}
			if !found {
				var got []string
				for _, f := range rep.Findings {
					got = append(got, fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Code))
				}
				t.Fatalf("no %s at %s:%d; got:\n%s", c.Code, path, line, strings.Join(got, "\n"))
			}
			for _, f := range before.Findings {
				if f.Code == c.Code && f.Path == path && (line == 0 || f.Line == line) {
					t.Errorf("the undamaged store already had %s at %s:%d", c.Code, path, line)
				}
			}
		})
	}
}

// TestFlatSubagents checks the flat layout of 2.0.77: agents whose
// sessionId names no session in their folder are orphans.
func TestFlatSubagents(t *testing.T) {
	root := damage.CopyStore(t, "2.0.77")
	dir := filepath.Join(root, "projects", "-home-dev-work-alpha")
	p := filepath.Join(dir, "agent-a310640.jsonl")
	parent := store.FlatAgentSession(p)
	if parent == "" {
		t.Fatal("no parent session")
	}
	if rep := run(t, root); rep.Has(validate.Warning) && hasCode(rep, validate.AgentOrphan) {
		t.Fatal("orphan reported in the undamaged store")
	}
	// Move the parent away: its agents become orphans.
	for _, f := range []string{parent + ".jsonl"} {
		os.Rename(filepath.Join(dir, f), filepath.Join(t.TempDir(), f))
	}
	if rep := run(t, root); !hasFinding(rep, validate.AgentOrphan, p, 0) {
		t.Error("no agent-orphan for", p)
	}
}

func hasCode(rep *validate.Report, c validate.Code) bool {
	for _, f := range rep.Findings {
		if f.Code == c {
			return true
		}
	}
	return false
}

func hasFinding(rep *validate.Report, c validate.Code, path string, line int) bool {
	for _, f := range rep.Findings {
		if f.Code == c && f.Path == path && (line == 0 || f.Line == line) {
			return true
		}
	}
	return false
}

// TestTargets checks a run on a session id, a file and a project folder.
func TestTargets(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	rep := run(t, root, damage.V88Session)
	if rep.FilesChecked != 3 { // main + two subagents
		t.Errorf("session target checked %d files, want 3", rep.FilesChecked)
	}
	rep = run(t, root, damage.MainFile(root))
	if rep.FilesChecked != 1 {
		t.Errorf("file target checked %d files", rep.FilesChecked)
	}
	rep = run(t, root, filepath.Join(root, "projects", damage.V88Project))
	if rep.FilesChecked != 3 {
		t.Errorf("folder target checked %d files, want 3", rep.FilesChecked)
	}
	if _, err := validate.Run(validate.Options{Root: root, Targets: []string{"nope"}}); err == nil {
		t.Error("unknown target accepted")
	}
	// A stub checked alone still finds its transcript elsewhere in the store.
	root = damage.CopyStore(t, "2.0.14")
	stub := filepath.Join(root, "projects", "-home-dev-work-alpha", "5bc7ba4d-ce75-4343-a934-5ad6cd4706b7.jsonl")
	rep = run(t, root, stub)
	if !hasFinding(rep, validate.SessionStub, stub, 0) || hasCode(rep, validate.LeafMissing) {
		t.Errorf("stub alone: %+v", rep.Findings)
	}
}

// TestLongLine reads a 200 MB line: it is checked, not refused.
func TestLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 200<<20)
	fmt.Fprintf(f, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"content":"%s"}`+"\n", damage.V88Session, big)
	fmt.Fprintf(f, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"content":"%s`, damage.V88Session, big[:1<<20])
	f.Close()
	big = nil
	start := time.Now()
	rep := run(t, root, p)
	t.Logf("checked in %v", time.Since(start))
	n := len(damage.Lines(t, p))
	if hasCode(rep, validate.JSONInvalid) || !hasFinding(rep, validate.LineTorn, p, n) {
		t.Errorf("findings: %+v", rep.Findings)
	}
}

// TestCodesDocumented keeps docs/codes.md's table of codes in step with validate.Codes.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/codes.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, c := range validate.Codes {
		row := fmt.Sprintf("| `%s` | %s |", c.Code, c.Severity)
		if !strings.Contains(readme, row) {
			t.Errorf("docs/codes.md lacks the row %q", row)
		}
	}
}

// TestLiveSessionInProgress: a live session's pending tool call and
// half-written last line are notices, not errors.
func TestLiveSessionInProgress(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	use := damage.FindLast(t, main, damage.HasBlock("tool_use"))
	damage.WriteLines(t, main, append(ls[:use:use], []byte(`{"type":"user","uuid":"half`)), false)
	rep := run(t, root)
	if !rep.Has(validate.Error) {
		t.Fatal("not live: no error")
	}
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	os.WriteFile(filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid())),
		[]byte(fmt.Sprintf(`{"pid":%d,"sessionId":%q}`, os.Getpid(), damage.V88Session)), 0o600)
	rep = run(t, root)
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			t.Errorf("live: %s:%d %s %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	if !hasCode(rep, validate.ToolResultMiss) || !hasCode(rep, validate.LineTorn) {
		t.Error("live: the notices are gone")
	}
}

// TestDeepLine: a line of valid JSON nested 100,000 deep is line-too-deep,
// named with its file and line; the same line broken deep inside is
// json-invalid at the broken byte. Neither takes more than one pass over
// the line (before, a line of 100,000 nested objects took 49 s).
func TestDeepLine(t *testing.T) {
	n := 100000
	valid := `{"type":"user","message":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n+1)
	broken := `{"type":"user","message":` + strings.Repeat(`[`, n) + `1,]` + strings.Repeat(`]`, n-1) + `}`
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	ls = append([][]byte{[]byte(valid), []byte(broken)}, ls...)
	damage.WriteLines(t, main, ls, true)
	codes := map[int]validate.Code{}
	for _, f := range run(t, root, main).Findings {
		if f.Line <= 2 {
			codes[f.Line] = f.Code
			if f.Path != main {
				t.Errorf("line %d: finding names %s", f.Line, f.Path)
			}
		}
	}
	if codes[1] != validate.LineTooDeep || codes[2] != validate.JSONInvalid {
		t.Errorf("findings %v, want line-too-deep on line 1, json-invalid on line 2", codes)
	}
}
