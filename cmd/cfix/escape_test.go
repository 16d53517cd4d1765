//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: its master, and its slave, which a
// program takes for a terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// onTerminal runs cfix with args, its stdout and stderr a terminal, and
// returns what the terminal got.
func onTerminal(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	m, s := openPTY(t)
	defer m.Close()
	cmd := exec.Command("cfix", args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, m) // ends with EIO once the terminal has no writer
		close(done)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Errorf("cfix %q: still running after 60 s", args)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("cfix %q: the terminal never ended", args)
	}
	return out.String()
}

// hostile holds what a terminal acts on: a window title, an OSC 52 write
// to the clipboard, the alternate screen, a screen clear, an 8-bit CSI.
const hostile = "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[?1049h\x1b[2J\u009b31m"

// TestEscapes runs every command that shows what a store holds on a
// terminal (a pseudo-terminal), with a store whose folder names, session
// names, titles, prompts, replies, tool calls, working directories and a
// hook's session id hold escape sequences: the terminal gets none of them,
// only their escapes, and none but cfix's own (search's highlight and headings,
// validate's progress line).
func TestEscapes(t *testing.T) {
	work := t.TempDir()
	root := filepath.Join(work, ".claude")
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "testdata", "corpus", "2.1.332", ".claude"), root).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	folder := "-home-dev-work-" + hostile
	name := "s" + hostile
	dir := filepath.Join(root, "projects", folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { // a JSON string of s, its controls as \u escapes
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r < 0x20 || r >= 0x7f && r < 0xa0:
				fmt.Fprintf(&b, `\u%04x`, r)
			case r == '"' || r == '\\':
				b.WriteString(`\` + string(r))
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	cwd := q("/home/dev/work/" + hostile)
	lines := []string{
		`{"type":"user","uuid":"00000000-0000-4000-8000-000000000001","parentUuid":null,"sessionId":` + q(name) + `,"cwd":` + cwd + `,"version":"2.1.332","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":` + q("needle prompt "+hostile) + `}}`,
		`{"type":"assistant","uuid":"00000000-0000-4000-8000-000000000002","parentUuid":"00000000-0000-4000-8000-000000000001","sessionId":` + q(name) + `,"cwd":` + cwd + `,"version":"2.1.332","timestamp":"2026-01-01T00:00:01Z","message":{"id":"msg_1","role":"assistant","model":"claude-x","content":[{"type":"text","text":` + q("needle reply "+hostile) + `},{"type":"tool_use","id":"toolu_1","name":` + q("Bash"+hostile) + `,"input":{"command":` + q("echo "+hostile) + `}}]}}`,
		`{"type":"custom-title","customTitle":` + q("needle title "+hostile) + `,"sessionId":` + q(name) + `}`,
		"{\"type\":\"user\",\"needle broken " + hostile,
	}
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+work, "CLAUDE_CONFIG_DIR=", "XDG_CACHE_HOME="+filepath.Join(work, "cache"),
		"XDG_STATE_HOME="+filepath.Join(work, "state"), "CFIX_JOURNAL_DIR="+filepath.Join(work, "journal"),
		"TERM=xterm-256color", "NO_COLOR=", "CFIX_PAGER=cat -u", "LC_ALL=C.UTF-8")
	// A hook's session id, which guard status shows.
	onTerminal(t, env, `{"session_id":`+q("hook"+hostile)+`,"hook_event_name":"SessionStart","source":"resume","cwd":"/nowhere"}`, "hook", "SessionStart")
	// A journal of a change to the session, which journal list and undo
	// --list show.
	rep := exec.Command("cfix", "repair", name, "--root", root, "--apply", "--yes", "--force")
	rep.Env = env
	if out, err := rep.CombinedOutput(); err != nil {
		t.Fatalf("repair: %v\n%s", err, out)
	}
	// What cfix writes itself to a terminal.
	own := regexp.MustCompile(`\x1b\[1;31m|\x1b\[1m|\x1b\[0m|\r\x1b\[K`)
	bad := regexp.MustCompile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f]")
	for _, c := range []struct {
		args []string
		show bool // shows the hostile text, escaped
	}{
		{[]string{"ls"}, true},
		{[]string{"ls", filepath.Join(root, "projects", folder)}, true},
		{[]string{"ls", "--all"}, true},
		{[]string{"du"}, false},
		{[]string{"show", name}, true},
		{[]string{"show", filepath.Join(dir, name+".jsonl")}, true},
		{[]string{"export", name}, true},
		{[]string{"export", name, "--format", "html"}, true},
		{[]string{"search", "needle"}, true},
		{[]string{"search", "needle", "--json"}, true},
		{[]string{"validate"}, true},
		{[]string{"validate", "--severity", "notice"}, true},
		{[]string{"validate", name, "--json"}, true},
		{[]string{"explain", "line-invalid"}, false},
		{[]string{"repair"}, false}, // done above: nothing left to do
		{[]string{"prune"}, false},
		{[]string{"rm", name}, true},
		{[]string{"archive", name}, true},
		{[]string{"trim", name, "--thinking"}, true},
		{[]string{"clone", name, "--to", filepath.Join(work, "to")}, true},
		{[]string{"resume", name, "--check-only"}, true},
		{[]string{"guard", "status"}, true},
		{[]string{"journal", "list"}, false},
		{[]string{"undo", "--list"}, false},
		{[]string{"undo"}, true},
		{[]string{"no-such-command", hostile}, false},
		{[]string{"show", "nosuch" + hostile}, true},
	} {
		args := c.args
		if args[0] != "journal" && args[0] != "no-such-command" {
			args = append(args, "--root", root)
		}
		out := onTerminal(t, env, "", args...)
		rest := own.ReplaceAllString(out, "")
		if loc := bad.FindStringIndex(rest); loc != nil {
			from := max(0, loc[0]-80)
			t.Errorf("cfix %s: a control character reached the terminal at %d: %q", strings.Join(c.args, " "), loc[0], rest[from:min(len(rest), loc[1]+40)])
		}
		if c.show && !strings.Contains(out, `\x1b]0;PWNED`) && !strings.Contains(out, `\u001b]0;PWNED`) {
			t.Errorf("cfix %s: the hostile text is not shown escaped:\n%.1500s", strings.Join(c.args, " "), out)
		}
	}
}
