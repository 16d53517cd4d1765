package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// tmuxTerm is a terminal of tmux running one command, read as a person
// sees it.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

// newTmux starts command in a w×h terminal of a tmux server of its own;
// the pane stays after the command ends.
func newTmux(t *testing.T, w, h int, env []string, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	tm := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "env"}
	args = append(args, env...)
	args = append(args, "sh", "-c", command+`; echo "EXITED $?"; sleep 600`)
	tm.run(args...)
	tm.run("set-option", "-g", "remain-on-exit", "on")
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types text (tmux key names: Enter, Escape, Tab, C-c).
func (tm *tmuxTerm) keys(keys ...string) {
	tm.run(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

func (tm *tmuxTerm) typed(text string) { tm.run("send-keys", "-t", "0", "-l", text) }

func (tm *tmuxTerm) screen() string { return tm.run("capture-pane", "-p", "-J", "-t", "0") }

// waitFor waits until the screen shows every one of want, and returns it.
func (tm *tmuxTerm) waitFor(what string, want ...string) string {
	tm.t.Helper()
	var s string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		s = tm.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
	}
	tm.t.Fatalf("%s: the screen never showed %q:\n%s", what, want, s)
	return ""
}

// waitUntil waits until ok says yes of the screen.
func (tm *tmuxTerm) waitUntil(what string, ok func(screen string) bool) {
	tm.t.Helper()
	var s string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if s = tm.screen(); ok(s) {
			return
		}
	}
	tm.t.Fatalf("%s: never on the screen:\n%s", what, s)
}

// flags reads tmux's format variables of the pane.
func (tm *tmuxTerm) flags() string {
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", "0", "alt=#{alternate_on} mouse=#{mouse_any_flag} cursor=#{cursor_flag}"))
}

// buildCfix builds the cfix binary for a test that runs it in a terminal.
func buildCfix(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cfix")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBrowseInATerminal drives cfix browse in a real terminal (tmux) on a
// copy of the 2.1.88 corpus store: the list, the filtered list, the
// preview's planted text, the repair dialog of a torn session and its
// apply, then Enter on a session whose directory exists, which runs the
// client there after the terminal is given back. The client here is a
// script that says how it was started; e2e's TestBrowseResumesTheClient
// resumes with the real interactive Claude Code.
func TestBrowseInATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	bin := buildCfix(t)
	tmp := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V88, tmp)
	// A fresh clone's files were all written just now: as live sessions,
	// the actions would refuse them.
	damage.Age(t, root)
	env := []string{"CFIX_JOURNAL_DIR=" + filepath.Join(tmp, "journal"), "CFIX_ARCHIVE_DIR=" + filepath.Join(tmp, "archive"),
		"XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"), "CLAUDE_CONFIG_DIR=", "TERM=xterm-256color"}
	// The last answer of the alpha session, planted; then its last line torn.
	p := damage.MainFile(root)
	n := damage.FindLast(t, p, damage.IsType("assistant"))
	damage.EditLine(t, p, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "PLANTED-IN-THE-PREVIEW"}}
	})
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","message":{"role":"us`)
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	// A clone of the gamma session into a directory that exists, and a
	// client that says how it was started.
	work := filepath.Join(tmp, "moved-here")
	os.Mkdir(work, 0o755)
	gamma := "d835ba00"
	clone := exec.Command(bin, "clone", gamma, "--to", work, "--root", root, "--apply", "--yes")
	clone.Env = append(os.Environ(), env...)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("cfix clone: %v\n%s", err, out)
	}
	// A text the content search finds in the gamma session alone (planted
	// after the clone was made).
	gammas, _ := filepath.Glob(filepath.Join(root, "projects", "-home-dev-work-gamma-with-space", gamma+"*.jsonl"))
	if len(gammas) != 1 {
		t.Fatalf("the gamma session: %v", gammas)
	}
	n = damage.FindLast(t, gammas[0], damage.IsType("assistant"))
	damage.EditLine(t, gammas[0], n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "the words FOUND-BY-THE-SEARCH are here"}}
	})
	os.Chtimes(gammas[0], old, old)
	// A pager that keeps what it was given to show.
	pager := filepath.Join(tmp, "pager")
	paged := filepath.Join(tmp, "paged.md")
	os.WriteFile(pager, []byte("#!/bin/sh\ncp \"$1\" "+shell.Quote(paged)+"\n"), 0o755)
	env = append(env, "CFIX_PAGER="+pager)
	client := filepath.Join(tmp, "claude")
	os.WriteFile(client, []byte("#!/bin/sh\necho \"CLIENT $* IN $(pwd)\"\n"), 0o755)
	for _, m := range []string{"NO_COLOR=1", ""} {
		t.Run("color="+fmt.Sprint(m == ""), func(t *testing.T) {
			e := env
			if m != "" {
				e = append(e, m)
			}
			tm := newTmux(t, 100, 30, e, fmt.Sprintf("cd / && %s browse --root %s --claude %s", bin, shell.Quote(root), shell.Quote(client)))
			tm.waitFor("the list", "5/5", "hello, first session", "a fresh one in gamma", "second project")
			if got := tm.flags(); !strings.Contains(got, "alt=1") || !strings.Contains(got, "mouse=1") {
				t.Errorf("browse runs with %s, want the alternate screen and the mouse", got)
			}
			if m != "" {
				esc := tm.run("capture-pane", "-p", "-e", "-t", "0")
				if regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|38;|9[0-7])[;m]`).MatchString(esc) {
					t.Errorf("with NO_COLOR, the screen has colours:\n%q", esc)
				}
			}
			// The keys of the first screen act at once: / opens the search
			// (Esc back to the list), not the filter.
			tm.waitFor("the first screen's keys", "type to filter", "/: search every session", "q: quit")
			tm.keys("/")
			tm.waitFor("the search at once", "search: ▏", "enter: search")
			tm.keys("Escape")
			tm.waitFor("the list again", "filter: ▏", "type to filter")
			tm.typed("hello")
			s := tm.waitFor("the filtered list", "1/5", "PLANTED-IN-THE-PREVIEW", "hello, first session")
			if strings.Contains(s, "a fresh one in gamma") || m == "" && !strings.Contains(s, "1E") {
				t.Errorf("filtered by hello:\n%s", s)
			}
			if m == "" {
				tm.keys("Escape")
				tm.waitFor("the action keys", "r repair")
				tm.keys("r")
				tm.waitFor("the plan dialog", "cfix repair session 3ba86ea1: the plan", "drop the torn last line", "apply these changes? [y] yes")
				tm.keys("y")
				tm.waitFor("the apply", "applied 1 change", "backup journal")
				tm.keys("Enter")
				// The list read again: the session is healthy.
				tm.waitUntil("the list after the repair", func(s string) bool {
					return strings.Contains(s, "hello, first session") && !strings.Contains(s, "1E") && !strings.Contains(s, "loading")
				})
				v := exec.Command(bin, "validate", "--root", root, p)
				v.Env = append(os.Environ(), env...)
				if out, err := v.CombinedOutput(); err != nil {
					t.Errorf("validate after the repair: %v\n%s", err, out)
				}
				// u: the undo of that repair, planned, then applied.
				tm.keys("u")
				tm.waitFor("the undo dialog", "cfix undo of the last change: the plan", "apply these changes? [y] yes")
				tm.keys("y")
				tm.waitFor("the undo", "applied 1 change")
				tm.keys("Enter")
				tm.waitUntil("the list after the undo", func(s string) bool {
					return strings.Contains(s, "hello, first session") && strings.Contains(s, "1E") && !strings.Contains(s, "loading")
				})
				// f: a fork at the message under the preview's cursor: the
				// reply with the Bash call of the last turn ([), not the
				// session's last message (the planted answer).
				tm.keys("[")
				tm.waitFor("the preview's cursor", "▶ #### Assistant", "f forks here", "▸ Bash run it")
				tm.keys("f")
				s = tm.waitFor("the fork dialog", "cfix fork 3ba86ea1 --at ", "A new session whose history ends with the message marked", "in turn 2",
					`first session (fork)"`, "apply these changes? [y] yes")
				if strings.Contains(s, "--turn") {
					t.Errorf("the fork at a message inside a turn is planned as one at a turn:\n%s", s)
				}
				tm.keys("y")
				// The plan's note names the new session too: the apply's
				// own lines are waited for.
				s = tm.waitFor("the fork", "undo with: cfix undo", "resume it with:", "[enter] close")
				fork := regexp.MustCompile(`claude --resume ([0-9a-f-]{36})`).FindStringSubmatch(s)
				if fork == nil {
					t.Fatalf("the fork's id is not on the screen:\n%s", s)
				}
				tm.keys("Enter")
				tm.waitUntil("the fork in the list", func(s string) bool {
					return strings.Contains(s, "hello, first session (fork)") && strings.Contains(s, "2/6") && !strings.Contains(s, "loading")
				})
				// The fork selected, its preview: the Bash call and its
				// result, not the answer after them.
				if !strings.Contains(tm.screen(), "> "+fork[1][:8]) {
					tm.keys("Down")
				}
				tm.waitUntil("the fork's preview", func(s string) bool {
					return strings.Contains(s, "> "+fork[1][:8]) && strings.Contains(s, "── "+fork[1]) && strings.Contains(s, "▸ Bash run it") &&
						strings.Contains(s, "after compaction BASH: pwd") && !strings.Contains(s, "PLANTED-IN-THE-PREVIEW") && strings.Contains(s, "f forks here")
				})
				// /: the content search of the store, and the jump to its
				// hit in another session.
				tm.keys("/")
				tm.waitFor("the search", "search: ▏", "enter: search")
				tm.typed("found-by-the-search")
				tm.keys("Enter")
				tm.waitFor("the hits", "search: found-by-the-search · 1 hit", "a fresh one in gamma · the words FOUND-BY-THE-SEARCH are here",
					"── d835ba00")
				// The preview is read after the hits are shown.
				tm.waitUntil("the preview at the hit", regexp.MustCompile(`(?m)^the words FOUND-BY-THE-SEARCH are here`).MatchString)
				tm.keys("Enter")
				tm.waitFor("the hit's session selected", "6/6", "> d835ba00", "the words FOUND-BY-THE-SEARCH are here", "f fork")
				// a: the archive of the second project's session, planned,
				// declined, then applied.
				tm.keys("C-f")
				tm.waitFor("the filter", "type to filter")
				tm.typed("second project")
				tm.waitFor("the filtered list", "1/6")
				tm.keys("Escape")
				tm.waitFor("the action keys", "r repair")
				tm.keys("a")
				tm.waitFor("the archive dialog", "cfix archive session faa4037a: the plan", "apply these changes? [y] yes")
				tm.keys("n")
				tm.waitFor("the dialog declined", "second project", "r repair")
				tm.keys("a")
				tm.waitFor("the archive dialog", "cfix archive session faa4037a: the plan")
				tm.keys("y")
				// The session, and the project folder it leaves empty.
				tm.waitFor("the archive", "applied 3 changes")
				tm.keys("Enter")
				tm.waitFor("the list after the archive", "0/5")
				if m, _ := filepath.Glob(filepath.Join(tmp, "archive", "*")); len(m) == 0 {
					t.Errorf("no archive file in %s", filepath.Join(tmp, "archive"))
				}
				// Enter on the clone, in a directory that exists.
				// Still among the action keys: Esc clears the filter.
				tm.keys("Escape")
				tm.waitFor("the whole list", "5/5")
				tm.keys("C-f")
				tm.waitFor("the filter", "type to filter")
				tm.typed(filepath.Base(work))
				tm.waitFor("the clone", "1/5", "a fresh one in gamma", work)
				tm.keys("Enter")
			} else {
				tm.keys("Escape")
				tm.waitFor("the action keys", "r repair")
				// The preview's cursor without colours: the ▶ and the words.
				tm.keys("[")
				tm.waitFor("the preview's cursor", "▶ #### Assistant", "f forks here")
				// e: the export, opened in the pager.
				tm.keys("e")
				tm.waitFor("the export", "exported to ")
				if b, err := os.ReadFile(paged); err != nil || !strings.Contains(string(b), "PLANTED-IN-THE-PREVIEW") || !strings.Contains(string(b), "# Session "+damage.V88Session) {
					t.Errorf("the pager was given %q (%v)", b, err)
				}
				if got := tm.flags(); !strings.Contains(got, "alt=1") || !strings.Contains(got, "mouse=1") {
					t.Errorf("after the pager, browse runs with %s", got)
				}
				tm.keys("q")
			}
			s = tm.waitFor("the exit", "EXITED")
			if strings.Contains(s, "cfix browse ·") {
				t.Errorf("the browser's screen stayed:\n%s", s)
			}
			if got := tm.flags(); !strings.Contains(got, "alt=0") || !strings.Contains(got, "mouse=0") || !strings.Contains(got, "cursor=1") {
				t.Errorf("after browse the terminal is left %s", got)
			}
			if m == "" {
				if !regexp.MustCompile(`CLIENT --resume=[0-9a-f-]{36} IN ` + regexp.QuoteMeta(work)).MatchString(s) {
					t.Errorf("enter did not start the client in %s:\n%s", work, s)
				}
				if !strings.Contains(s, "EXITED 0") {
					t.Errorf("exit status:\n%s", s)
				}
			} else if !strings.Contains(s, "EXITED 0") {
				t.Errorf("q: exit status:\n%s", s)
			}
		})
	}
}

// TestBrowseWildInATerminal lists, filters and previews a copy of a wild
// store, and quits with Ctrl+C.
func TestBrowseWildInATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	bin := buildCfix(t)
	root := wild.Copy(t, "2.1.87")
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var ss []store.SessionInfo
	for _, s := range store.SessionsOf(l, nil) {
		if !s.Hidden() {
			ss = append(ss, s)
		}
	}
	slices.SortStableFunc(ss, func(a, b store.SessionInfo) int {
		if a.MetaOnly != b.MetaOnly { // the stubs last
			if a.MetaOnly {
				return 1
			}
			return -1
		}
		if c := b.LastActive.Compare(a.LastActive); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	count, newest := len(ss), &ss[0]
	tmp := t.TempDir()
	env := []string{"CFIX_JOURNAL_DIR=" + filepath.Join(tmp, "journal"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"), "CLAUDE_CONFIG_DIR=", "TERM=xterm-256color"}
	tm := newTmux(t, 60, 24, env, fmt.Sprintf("%s browse --root %s", bin, shell.Quote(root)))
	tm.waitFor("the list", fmt.Sprintf("%d/%d", count, count), "> "+newest.Session[:8], "type to filter · enter resume · / search · ? keys · q quit")
	// The mouse wheel (as the terminal sends it, SGR) over the list, down
	// a row and up again.
	tm.typed("\x1b[<65;10;3M")
	tm.waitFor("the wheel down", "> "+ss[1].Session[:8])
	tm.typed("\x1b[<64;10;3M")
	tm.waitFor("the wheel up", "> "+newest.Session[:8])
	tm.typed(newest.Session[:8])
	s := tm.waitFor("the filtered list", "filter: "+newest.Session[:8], "── "+newest.Session, "#### ")
	for _, line := range strings.Split(s, "\n") {
		if len([]rune(line)) > 60 {
			t.Errorf("a line wider than the terminal: %q", line)
		}
	}
	tm.keys("Escape")
	tm.waitFor("the action keys at 60 columns", "enter resume · f fork · t trim · / search · ? keys · q quit",
		"[ ] msg · v thinking · o tools · r repair · d rm · u undo")
	// The preview's cursor on the message before the last, at 60 columns.
	tm.keys("[")
	tm.waitFor("the preview's cursor at 60 columns", "▶ #### ", "forks here")
	tm.keys("?")
	tm.waitFor("the keys", "f          fork", "↓ more")
	for range 12 {
		tm.keys("Down")
	}
	tm.waitFor("the keys scrolled", "u          undo", "e          export", "swept (Claude Code's next")
	tm.keys("x")
	tm.waitFor("the help closed", "? keys · q quit")
	tm.keys("C-c")
	s = tm.waitFor("the exit", "EXITED 0")
	if got := tm.flags(); !strings.Contains(got, "alt=0") || !strings.Contains(got, "mouse=0") {
		t.Errorf("after Ctrl+C the terminal is left %s:\n%s", got, s)
	}
}

// TestBrowseForkIsTheCommandsFork: f of browse plans, at each message of
// the preview, the plan cfix fork --at prints for the entry the message's
// end mark names (the Markdown the preview reads), and at the last
// message of a turn the plan of cfix fork --turn N (in the 2.1.330
// session, the end of a turn is an entry after the answer); its apply is
// the command's, and the fork ends at that entry.
func TestBrowseForkIsTheCommandsFork(t *testing.T) {
	for _, c := range []struct{ version, session string }{{damage.V88, damage.V88Session}, {"2.1.330", "140fbe06"}} {
		t.Run(c.version, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(tmp, "journal"))
			root := damage.CopyStoreTo(t, c.version, tmp)
			damage.Age(t, root)
			paths, _ := filepath.Glob(filepath.Join(root, "projects", "*", c.session+"*.jsonl"))
			if len(paths) != 1 {
				t.Fatalf("session %s: %v", c.session, paths)
			}
			path := paths[0]
			ats, lastOf := forkPoints(t, root, path)
			if len(ats) < 5 || len(lastOf) < 2 {
				t.Fatalf("the preview's messages: %v, the last of turns %v", ats, lastOf)
			}
			for _, at := range ats {
				p, err := browseFork(root, path, at)
				if err != nil {
					t.Fatalf("f at %s: %v", at, err)
				}
				var plan bytes.Buffer
				if err := changeset.Show(&plan, p.ChangeSet); err != nil {
					t.Fatal(err)
				}
				out, code := cli(t, "fork", path, "--at", at, "--root", root)
				// The command says after the plan that it wrote nothing. A
				// plan longer than its screen it shows up to its diff, which
				// browse's dialog scrolls through.
				want := plan.String()
				if head, _, cut := strings.Cut(out, "\n(the diff is longer than a screen: --diff prints it)\n"); cut {
					if summary, _, ok := strings.Cut(want, "\n\n"); ok && head == summary+"\n" {
						want = head
					}
				}
				if rest, ok := strings.CutPrefix(out, want); code != exitOK || !ok || strings.Count(rest, "\n") > 4 || !strings.Contains(rest, "dry run: nothing was written") {
					t.Errorf("f at %s: browse's plan is not cfix fork --at's (status %d):\n%s\n--- cfix fork --at:\n%s", at, code, plan.String(), out)
				}
				if n, ok := lastOf[at]; ok {
					if byTurn, _ := cli(t, "fork", path, "--turn", strconv.Itoa(n), "--root", root); byTurn != out {
						t.Errorf("f at %s, the last message of turn %d: the plan is not cfix fork --turn %d's:\n%s\n--- --turn:\n%s", at, n, n, out, byTurn)
					}
				}
			}
			// y: the apply of a fork at a message that is not the last of
			// its turn.
			var at string
			for _, a := range ats[1:] {
				if _, ok := lastOf[a]; !ok {
					at = a
				}
			}
			p, err := browseFork(root, path, at)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Apply()
			if err != nil || !strings.Contains(out, "resume it with:") {
				t.Fatalf("the apply: %v\n%s", err, out)
			}
			id := regexp.MustCompile(`claude --resume ([0-9a-f-]{36})`).FindStringSubmatch(out)
			if id == nil {
				t.Fatalf("the apply names no session to resume:\n%s", out)
			}
			want, err := trim.Fork(trim.ForkOptions{Root: root, Session: path, At: at})
			if err != nil {
				t.Fatal(err)
			}
			lc, err := validate.LoadedChain(filepath.Join(filepath.Dir(path), id[1]+".jsonl"))
			if err != nil || len(lc.UUIDs) == 0 || lc.UUIDs[len(lc.UUIDs)-1] != want.Leaf {
				t.Errorf("the fork %s: the chain a resume loads ends at %v (%v), want %s", id[1], lc.UUIDs, err, want.Leaf)
			}
		})
	}
}

// forkPoints reads the marks of the Markdown browse's preview reads of the
// session at path: the entries its messages end at, in order, and of
// those the ends of a turn's last message (the turn).
func forkPoints(t *testing.T, root, path string) ([]string, map[string]int) {
	t.Helper()
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := export.Write(&md, fam, export.Options{Format: "md", Anchors: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md.String(), "\n")
	var ats []string
	lastOf := map[string]int{}
	turn := 0
	for i, l := range lines {
		if n, ok := strings.CutPrefix(l, "### Turn "); ok {
			turn, _ = strconv.Atoi(n)
		}
		at, ok := strings.CutPrefix(l, "<!-- cfix:at ")
		if !ok {
			continue
		}
		at = strings.TrimSuffix(at, " -->")
		ats = append(ats, at)
		if strings.HasPrefix(lines[i+1], "### Turn ") || strings.TrimSpace(strings.Join(lines[i+1:], "")) == "" {
			lastOf[at] = turn
		}
	}
	return ats, lastOf
}

// TestBrowseRemoteInATerminal drives cfix browse --remote in a real
// terminal (tmux): the sessions another machine pushed are listed beside
// the store's, marked with that machine; Enter on one shows the plan of
// its pull, y applies it and the session is resumed where it landed (its
// machine's home mapped to this one's); the store is valid after, and a
// second browse finds the session here already: Enter resumes it with
// nothing to apply.
func TestBrowseRemoteInATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	f := newRemoteBrowse(t, nil)
	env, root, alpha, command := f.env, f.root, f.alpha, f.command
	const id = remoteBrowseID

	tm := newTmux(t, 120, 40, env, command)
	// The store's 4 sessions and laptop's 5.
	tm.waitFor("the list with the remote's", "9/9", "@laptop", "a fresh one in gamma")
	tm.typed("laptop hello")
	s := tm.waitFor("the remote session", "> bc1c66c0", "@laptop", "pushed by machine laptop", "Enter pulls it into this store")
	if !strings.Contains(s, "bc1c66c0") || !strings.Contains(s, "/home/dev/work/alpha") {
		t.Fatalf("the remote session's row and preview:\n%s", s)
	}
	// The action keys do not act on a session that is not here.
	tm.keys("Escape")
	tm.waitFor("the action keys", "r repair")
	tm.keys("r")
	tm.waitFor("r refused", "is on the remote (machine laptop): enter pulls it here first")
	tm.keys("Enter")
	s = tm.waitFor("the pull's plan", "cfix pull bc1c66c0 --machine laptop: the plan", "new here", "apply these changes? [y] yes")
	if !strings.Contains(s, "→ "+alpha) {
		t.Fatalf("the plan does not land the session in %s (laptop's home mapped to this one's):\n%s", alpha, s)
	}
	tm.keys("y")
	tm.waitFor("the session resumed where it landed", "CLIENT --resume="+id+" IN "+alpha, "EXITED 0")

	landed := filepath.Join(root, "projects", store.FolderFor(root, alpha), id+".jsonl")
	if _, err := os.Stat(landed); err != nil {
		t.Fatalf("the pulled session is not in the store: %v", err)
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == validate.Error {
			t.Errorf("after the pull: %s:%d: %s %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	// Again: the remote's session is here already; Enter shows that
	// nothing is to be done and resumes it.
	tm2 := newTmux(t, 120, 40, env, command)
	tm2.waitFor("the list again", "10/10", "@laptop")
	tm2.typed("laptop hello")
	tm2.waitFor("the remote session again", "> bc1c66c0", "@laptop")
	tm2.keys("Enter")
	tm2.waitFor("nothing to pull", "is here already: enter resumes it")
	tm2.keys("Enter")
	tm2.waitFor("resumed", "CLIENT --resume="+id+" IN "+alpha, "EXITED 0")
}

// remoteBrowseID is the session of the 2.1.332 store newRemoteBrowse
// pushes that the browse tests pull.
const remoteBrowseID = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"

// remoteBrowse is a remote and a store for a test of browse --remote: the
// machine laptop pushed the 2.1.332 store (its home /home/dev) to a folder
// remote; this machine holds the 2.1.88 store, its home elsewhere, with the
// folder the pulled session lands in (alpha), for the client to start in.
// command runs cfix browse --remote with a client that says how it was
// started, in env.
type remoteBrowse struct {
	env                  []string
	root, alpha, command string
}

// newRemoteBrowse makes a remoteBrowse; the push runs with pushFlags, and
// pushEnv added to its environment.
func newRemoteBrowse(t *testing.T, pushEnv []string, pushFlags ...string) remoteBrowse {
	t.Helper()
	bin := buildCfix(t)
	tmp := t.TempDir()
	env := []string{"CFIX_JOURNAL_DIR=" + filepath.Join(tmp, "journal"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"CLAUDE_CONFIG_DIR=", "TERM=xterm-256color"}
	dir := filepath.Join(tmp, "remote")
	os.Mkdir(dir, 0o755)
	url := "file://" + dir
	os.Mkdir(filepath.Join(tmp, "a"), 0o755)
	a := damage.CopyStoreTo(t, "2.1.332", filepath.Join(tmp, "a"))
	push := exec.Command(bin, append([]string{"push", url, "--root", a, "--machine", "laptop", "--apply"}, pushFlags...)...)
	push.Env = append(append(append(os.Environ(), env...), "HOME=/home/dev"), pushEnv...)
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("cfix push: %v\n%s", err, out)
	}
	home := filepath.Join(tmp, "b")
	os.Mkdir(home, 0o755)
	root := damage.CopyStoreTo(t, damage.V88, home)
	damage.Age(t, root)
	alpha := filepath.Join(home, "work", "alpha")
	os.MkdirAll(alpha, 0o755)
	client := filepath.Join(tmp, "claude")
	os.WriteFile(client, []byte("#!/bin/sh\necho \"CLIENT $* IN $(pwd)\"\n"), 0o755)
	command := fmt.Sprintf("cd / && %s browse --root %s --claude %s --remote %s --self desk", bin, shell.Quote(root), shell.Quote(client), shell.Quote(url))
	return remoteBrowse{env: append(env, "HOME="+home), root: root, alpha: alpha, command: command}
}

// TestBrowseRemotePassphrase: browse --remote of a remote pushed with a
// passphrase asks it on the terminal before the browser starts, as cfix
// pull does, lists the remote's sessions with their titles (sealed in the
// index), and pulls one with it, not asking again; with CFIX_PASSPHRASE
// set it asks nothing.
func TestBrowseRemotePassphrase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	const pass = "correct horse battery staple"
	f := newRemoteBrowse(t, []string{"CFIX_PASSPHRASE=" + pass}, "--passphrase")
	env, root, alpha, command := append(f.env, "CFIX_PASSPHRASE="), f.root, f.alpha, f.command
	const id = remoteBrowseID

	// No CFIX_PASSPHRASE (it is empty: unset it): asked on the terminal.
	tm := newTmux(t, 120, 40, env, "unset CFIX_PASSPHRASE; "+command)
	tm.waitFor("the passphrase asked", "passphrase:")
	tm.typed(pass)
	tm.keys("Enter")
	tm.waitFor("the list with the remote's titles", "9/9", "@laptop", "hello, first session")
	tm.typed("laptop hello")
	tm.waitFor("the remote session", "> bc1c66c0", "@laptop", "Enter pulls it into this store")
	tm.keys("Enter")
	tm.waitFor("the pull's plan", "cfix pull bc1c66c0 --machine laptop: the plan", "new here", "apply these changes? [y] yes")
	tm.keys("y")
	tm.waitFor("the session resumed where it landed", "CLIENT --resume="+id+" IN "+alpha, "EXITED 0")
	if _, err := os.Stat(filepath.Join(root, "projects", store.FolderFor(root, alpha), id+".jsonl")); err != nil {
		t.Fatalf("the pulled session is not in the store: %v", err)
	}

	// CFIX_PASSPHRASE set: nothing asked, the titles read.
	tm2 := newTmux(t, 120, 40, env, "CFIX_PASSPHRASE='"+pass+"' "+command)
	s := tm2.waitFor("the list again", "10/10", "@laptop", "hello, first session")
	if strings.Contains(s, "passphrase:") {
		t.Errorf("the passphrase was asked with CFIX_PASSPHRASE set:\n%s", s)
	}
}

// docScreen returns the lines of the block of doc just after the comment
// <!-- screen: NAME -->: a screen of browse the doc shows.
func docScreen(t *testing.T, doc, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "<!-- screen: "+name+" -->" || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			continue
		}
		var block []string
		for _, b := range lines[i+2:] {
			if strings.HasPrefix(b, "```") {
				return block
			}
			block = append(block, b)
		}
	}
	t.Fatalf("%s has no block under <!-- screen: %s -->", doc, name)
	return nil
}

// sameScreen fails unless the terminal comes to show the doc's screen
// within 30 s (trailing spaces and blank lines aside, a line ... of the
// doc standing for any lines): what loads off the screen's loop has come.
func sameScreen(t *testing.T, doc, name string, tm *tmuxTerm) {
	t.Helper()
	norm := func(ls []string) []string {
		for i := range ls {
			ls[i] = strings.TrimRight(ls[i], " ")
		}
		for len(ls) > 0 && ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		return ls
	}
	want := norm(docScreen(t, doc, name))
	var got []string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got = norm(strings.Split(tm.screen(), "\n")); docMatch(want, got) {
			return
		}
	}
	t.Errorf("%s's screen %s is not browse's (-doc +browse):\n%s", doc, name, lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
}

// TestBrowseDocScreens: the screens of browse that docs/browse.md shows
// are browse's, drawn in a real terminal (tmux): a search on the 2.1.88
// corpus store at 84×20, and the list with a remote's sessions (the 2.1.332
// store pushed by machine laptop) at 120×40.
func TestBrowseDocScreens(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cfix and runs it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the real-terminal test of cfix browse is skipped")
	}
	bin := buildCfix(t)
	tmp := t.TempDir()
	env := []string{"CFIX_JOURNAL_DIR=" + filepath.Join(tmp, "journal"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"CLAUDE_CONFIG_DIR=", "TERM=xterm-256color", "HOME=" + tmp}
	root := damage.CopyStoreTo(t, damage.V88, tmp)

	tm := newTmux(t, 84, 20, env, fmt.Sprintf("cd / && %s browse --root %s", bin, shell.Quote(root)))
	tm.waitFor("the list", "4/4")
	tm.keys("C-s")
	tm.waitFor("the search", "search: ▏")
	tm.typed("resume in place")
	tm.keys("Enter")
	tm.waitFor("the hits", "2 hits", "reply 26 to: resume in place", "? keys")
	sameScreen(t, "docs/browse.md", "search", tm)

	dir := filepath.Join(tmp, "remote")
	os.Mkdir(dir, 0o755)
	url := "file://" + dir
	os.Mkdir(filepath.Join(tmp, "a"), 0o755)
	a := damage.CopyStoreTo(t, "2.1.332", filepath.Join(tmp, "a"))
	push := exec.Command(bin, "push", url, "--root", a, "--machine", "laptop", "--apply")
	push.Env = append(append(os.Environ(), env...), "HOME=/home/dev")
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("cfix push: %v\n%s", err, out)
	}
	tm = newTmux(t, 120, 40, env, fmt.Sprintf("cd / && %s browse --root %s --remote %s --self desk", bin, shell.Quote(root), shell.Quote(url)))
	tm.waitFor("the list with the remote's", "9/9", "@laptop", "a fresh one in gamma", "second project")
	sameScreen(t, "docs/browse.md", "remote", tm)
}
