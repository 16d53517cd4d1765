package validate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

func caseNamed(t *testing.T, name string) damage.Case {
	t.Helper()
	for _, c := range damage.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no damage case %q", name)
	return damage.Case{}
}

func findingsOf(rep *validate.Report, c validate.Code) []validate.Finding {
	var out []validate.Finding
	for _, f := range rep.Findings {
		if f.Code == c {
			out = append(out, f)
		}
	}
	return out
}

// TestUnwrittenIsNotStub: a metadata-only file whose session has no
// transcript anywhere is session-unwritten, with its title, in a whole
// run and checked alone; one whose session has a transcript in another
// file is a stub that says where.
func TestUnwrittenIsNotStub(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p, _ := caseNamed(t, "title alone, never a transcript").Damage(t, root)
	for _, targets := range [][]string{nil, {p}} {
		rep := run(t, root, targets...)
		fs := findingsOf(rep, validate.SessionUnwritten)
		if len(fs) != 1 || fs[0].Path != p || !strings.Contains(fs[0].Message, `"the lost session"`) || hasCode(rep, validate.SessionStub) {
			t.Errorf("targets %v: %+v", targets, rep.Findings)
		}
		if len(fs) == 1 && fs[0].Hint != "cfix prune --what empty-sessions --apply" {
			t.Errorf("hint %q", fs[0].Hint)
		}
	}
	// A live session writes its metadata first: a notice.
	id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	reg := filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid()))
	os.WriteFile(reg, []byte(fmt.Sprintf(`{"pid":%d,"sessionId":%q}`, os.Getpid(), id)), 0o600)
	if fs := findingsOf(run(t, root), validate.SessionUnwritten); len(fs) != 1 || fs[0].Severity != validate.Notice {
		t.Errorf("live: %+v", fs)
	}
	os.Remove(reg)
	// The same session id with a conversation in another folder: the
	// transcript lives elsewhere.
	elsewhere := filepath.Join(root, "projects", "-home-dev-work-delta", filepath.Base(p))
	b, _ := os.ReadFile(damage.MainFile(root))
	os.WriteFile(elsewhere, b, 0o600)
	for _, targets := range [][]string{nil, {p}} {
		rep := run(t, root, targets...)
		if hasCode(rep, validate.SessionUnwritten) || !hasFinding(rep, validate.SessionStub, p, 0) {
			t.Errorf("targets %v, transcript elsewhere: %+v", targets, rep.Findings)
		}
	}
}

// TestNamedFolder: 2.1.330 with CLAUDE_CONFIG_DIR=$HOME/.claude and
// CLAUDE_CODE_PROJECT_DIR_NAME=shared-work, run in /tmp/x/h8/proj-a and
// in /tmp/x/h8/other/b, wrote both sessions to projects/shared-work/ (and
// shared-work/memory/), their entries' cwd the directory each ran in;
// without CLAUDE_CONFIG_DIR it ignored the variable (projects/-tmp-x-h8-
// proj-c/). 2.1.234 did the same (projects/shared-work/ with
// CLAUDE_CONFIG_DIR, the encoded folder without). The client reads the variable only when it matches
// ^[A-Za-z0-9_-]{1,64}$ and is not a Windows device name. Such a folder
// gets one notice listing its cwds, and no cwd-mismatch.
func TestNamedFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	dir, _ := caseNamed(t, "folder named by CLAUDE_CODE_PROJECT_DIR_NAME").Damage(t, root)
	rep := run(t, root)
	fs := findingsOf(rep, validate.ProjectDirNamed)
	if len(fs) != 1 || fs[0].Path != dir || !strings.Contains(fs[0].Message, `"/home/dev/work/beta.dir/sub"`) || !strings.Contains(fs[0].Message, `"/home/dev/work/gamma with space"`) {
		t.Errorf("notice: %+v", fs)
	}
	for _, f := range rep.Findings {
		if f.Code == validate.CWDMismatch || f.Severity > validate.Notice {
			t.Errorf("%s:%d %s %s %s", f.Path, f.Line, f.Severity, f.Code, f.Message)
		}
	}
	// A folder whose name is the encoding of a path stays a mismatch: the
	// sessions were moved there by hand.
	root = damage.CopyStore(t, damage.V88)
	os.Rename(filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub"), filepath.Join(root, "projects", "-home-dev-work-elsewhere"))
	rep = run(t, root)
	if hasCode(rep, validate.ProjectDirNamed) || !hasCode(rep, validate.CWDMismatch) {
		t.Errorf("moved folder: %+v", rep.Findings)
	}
}

// TestSharedFolder: 2.1.330 run in /tmp/x/h9/w/проект and in
// /tmp/x/h9/w/работа wrote both sessions to projects/-tmp-x-h9-w-------/
// (each UTF-16 unit that is not [A-Za-z0-9] becomes "-"): one notice
// names both cwds; no warning.
func TestSharedFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	dir, _ := caseNamed(t, "two non-ASCII cwds in one folder").Damage(t, root)
	rep := run(t, root)
	fs := findingsOf(rep, validate.ProjectShared)
	if len(fs) != 1 || fs[0].Path != dir || !strings.Contains(fs[0].Message, "проект") || !strings.Contains(fs[0].Message, "работа") {
		t.Errorf("notice: %+v", fs)
	}
	for _, f := range rep.Findings {
		if f.Severity > validate.Notice {
			t.Errorf("%s %s %s", f.Path, f.Code, f.Message)
		}
	}
}

// writeTitled writes a session of lines around a custom-title line: the
// file's size and the title's offsets are what the test sets. The lines
// are queue-operation entries, as 2.1.330 writes them, padded.
func writeTitled(t *testing.T, root string, before, after int) (string, int) {
	t.Helper()
	id := "7171e000-0000-4000-8000-000000000001"
	dir := filepath.Join(root, "projects", damage.V88Project)
	p := filepath.Join(dir, id+".jsonl")
	pad := func(n int) [][]byte {
		var out [][]byte
		for n > 0 {
			head := fmt.Sprintf(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"content":"`, id)
			k := n - len(head) - 3 // `"}` and the newline
			if k > 4000 {
				k = 4000
			}
			if k < 0 {
				k = 0
			}
			l := []byte(head + strings.Repeat("x", k) + `"}`)
			out = append(out, l)
			n -= len(l) + 1
		}
		return out
	}
	user := []byte(fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"uuid":"7171e000-0000-4000-8000-0000000000a1","timestamp":"2026-01-01T00:00:00Z","sessionId":%q,"version":"2.1.330","cwd":"/home/dev/work/alpha","userType":"external"}`, id))
	ls := [][]byte{user}
	ls = append(ls, pad(before-len(user)-1)...)
	n := len(ls) + 1
	ls = append(ls, damage.TitleLine("findme-title", id))
	ls = append(ls, pad(after)...)
	damage.WriteLines(t, p, ls, true)
	return p, n
}

// TestTitleReachBytes holds the check to the bytes 2.1.330 was measured
// at: `claude -p -r findme-title` found the session when its custom-title
// line started 65532 bytes before the end, and not at 65552; found when
// the line ended 65532 bytes into the file, and not at 65552 (cut by the
// head window). The title sidecar (<id>/custom-title.json, 2.1.330) is
// read when the tail has no custom-title.
func TestTitleReachBytes(t *testing.T) {
	title := len(damage.TitleLine("findme-title", "7171e000-0000-4000-8000-000000000001")) + 1
	for _, c := range []struct {
		name          string
		before, after int
		want          bool
	}{
		{"tail: starts 65532 before the end", 200000, 65532 - title, false},
		{"tail: starts 65536 before the end", 200000, 65536 - title, false},
		{"tail: starts 65552 before the end", 200000, 65552 - title, true},
		{"head: ends at 65532", 65532 - title + 1, 200000, false},
		{"head: ends at 65536", 65536 - title + 1, 200000, false},
		{"head: ends at 65552", 65552 - title + 1, 200000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := damage.CopyStore(t, damage.V88)
			p, n := writeTitled(t, root, c.before, c.after)
			b, _ := os.ReadFile(p)
			at := bytes.Index(b, damage.TitleLine("findme-title", "7171e000-0000-4000-8000-000000000001"))
			if at != c.before || len(b)-at != c.after+title {
				t.Fatalf("title at %d, %d before the end; want %d, %d", at, len(b)-at, c.before, c.after+title)
			}
			rep := run(t, root)
			got := hasFinding(rep, validate.TitleOutOfReach, p, n)
			if got != c.want {
				t.Errorf("title-out-of-reach %v, want %v: %+v", got, c.want, findingsOf(rep, validate.TitleOutOfReach))
			}
			if c.want {
				id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
				side := filepath.Join(filepath.Dir(p), id, "custom-title.json")
				os.MkdirAll(filepath.Dir(side), 0o700)
				os.WriteFile(side, []byte(`{"customTitle":"findme-title"}`), 0o600)
				if rep := run(t, root); hasCode(rep, validate.TitleOutOfReach) {
					t.Errorf("the sidecar holds the title: %+v", findingsOf(rep, validate.TitleOutOfReach))
				}
			}
		})
	}
}

// TestTitleInHeadIsOld: a newer title buried in the middle loses to the
// older one the head holds: the picker shows the old name.
func TestTitleInHeadIsOld(t *testing.T) {
	root := damage.CopyStore(t, damage.V330)
	p := damage.V330File(root)
	ls := damage.Lines(t, p)
	ls = append(ls[:1:1], append([][]byte{damage.TitleLine("old name", damage.V330Session)}, ls[1:]...)...)
	damage.WriteLines(t, p, ls, true)
	_, n := damage.BuryTitle(t, root, "new name")
	rep := run(t, root)
	fs := findingsOf(rep, validate.TitleOutOfReach)
	if len(fs) != 1 || fs[0].Line != n || !strings.Contains(fs[0].Message, `shows "old name" instead`) {
		t.Errorf("%+v", fs)
	}
}

// TestPlanNamedBySlug: 2.1.330 in plan mode wrote
// plans/<slug>.md (slug: words of the prompt and two random words, e.g.
// seq-write-file-path-plan-content-plan-n1-woolly-hopcroft) and put
// "slug" on the session's user, attachment and assistant entries from
// then on (17 of 32 lines); a subagent's plan is <slug>-agent-<id>.md.
// A plan whose slug some transcript names is kept.
func TestPlanNamedBySlug(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	n := damage.FindLast(t, main, damage.IsType("user"))
	damage.EditLine(t, main, n, func(m map[string]any) { m["slug"] = "fix-agent-bug-tingly-wilkinson" })
	plans := filepath.Join(root, "plans")
	os.MkdirAll(plans, 0o700)
	for _, name := range []string{"fix-agent-bug-tingly-wilkinson.md", "fix-agent-bug-tingly-wilkinson-agent-a0822258224265608.md", "gone-woolly-hopcroft.md"} {
		os.WriteFile(filepath.Join(plans, name), []byte("# Plan\n"), 0o600)
		os.Chtimes(filepath.Join(plans, name), damage.OldTime, damage.OldTime)
	}
	rep := run(t, root)
	fs := findingsOf(rep, validate.OrphanPlan)
	if len(fs) != 1 || filepath.Base(fs[0].Path) != "gone-woolly-hopcroft.md" {
		t.Errorf("%+v", fs)
	}
	// A plan written in the last hour may belong to a live session whose
	// slug is not on disk yet.
	os.Chtimes(filepath.Join(plans, "gone-woolly-hopcroft.md"), time.Now(), time.Now())
	if rep := run(t, root); hasCode(rep, validate.OrphanPlan) {
		t.Errorf("a fresh plan is reported: %+v", findingsOf(rep, validate.OrphanPlan))
	}
}

// TestShellSnapshotInUse: a snapshot older than a day is left alone while
// a Claude Code process that started before it runs (2.1.330 registers
// itself in sessions/<pid>.json with "startedAt" in ms, and made
// snapshot-bash-<ms>-<random>.sh 124 ms later; it removed both at exit).
func TestShellSnapshotInUse(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p, _ := caseNamed(t, "shell snapshot of a gone process").Damage(t, root)
	made := time.UnixMilli(1748779200000)
	os.MkdirAll(filepath.Join(root, "sessions"), 0o700)
	reg := filepath.Join(root, "sessions", fmt.Sprintf("%d.json", os.Getpid()))
	for _, c := range []struct {
		started time.Time
		want    bool
	}{{made.Add(-time.Hour), false}, {made.Add(time.Hour), true}} {
		os.WriteFile(reg, []byte(fmt.Sprintf(`{"pid":%d,"sessionId":%q,"startedAt":%d,"version":"2.1.330"}`, os.Getpid(), damage.V88Session, c.started.UnixMilli())), 0o600)
		if got := hasFinding(run(t, root), validate.OrphanShellSnap, p, 0); got != c.want {
			t.Errorf("process started %v: orphan %v, want %v", c.started, got, c.want)
		}
	}
	// A young snapshot is never reported: a client before 2.1.x registers
	// no process.
	os.Remove(reg)
	young := filepath.Join(root, "shell-snapshots", fmt.Sprintf("snapshot-bash-%d-abcdef.sh", time.Now().Add(-time.Hour).UnixMilli()))
	os.WriteFile(young, []byte("#\n"), 0o600)
	if rep := run(t, root); hasFinding(rep, validate.OrphanShellSnap, young, 0) || !hasFinding(rep, validate.OrphanShellSnap, p, 0) {
		t.Errorf("%+v", findingsOf(rep, validate.OrphanShellSnap))
	}
}

// TestPasteReferenced: 2.1.330, given a 60-line bracketed paste in the
// prompt, wrote paste-cache/a3e62c4832a6fc39.txt (the first 16 hex digits
// of the text's SHA-256) and the history.jsonl line {"display":"look at
// this: [Pasted text #1 +59 lines]","pastedContents":{"1":{"id":1,
// "type":"text","contentHash":"a3e62c4832a6fc39"}},...}; the transcript
// holds the text itself. A paste a prompt names, or one written in the
// last hour, is kept.
func TestPasteReferenced(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p, _ := caseNamed(t, "pasted text no prompt names").Damage(t, root)
	rep := run(t, root)
	fs := findingsOf(rep, validate.OrphanPaste)
	if len(fs) != 1 || fs[0].Path != p {
		t.Errorf("%+v", fs)
	}
	os.Chtimes(p, time.Now(), time.Now())
	if hasCode(run(t, root), validate.OrphanPaste) {
		t.Error("a fresh paste is reported")
	}
	// A damaged history line still names its paste.
	h := filepath.Join(root, "history.jsonl")
	b, _ := os.ReadFile(h)
	os.WriteFile(h, append(b, []byte(`{"display":"x","pastedContents":{"1":{"id":1,"type":"text","contentHash":"0123456789abcdef"}},"timestamp":`+"\n")...), 0o600)
	os.Chtimes(p, damage.OldTime, damage.OldTime)
	if hasCode(run(t, root), validate.OrphanPaste) {
		t.Error("a paste a damaged line names is reported")
	}
	if !bytes.Contains(b, []byte("a3e62c4832a6fc39")) {
		t.Fatal("test lost its reference")
	}
}
