package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cfix-dev/cfix/internal/plant"
)

// TestDocExamples runs every example of README.md and docs/*.md on a
// copy of a corpus store and compares what cfix prints with what the
// example shows. An example is a fenced block with lines `$ cfix ...`,
// each followed by its output; the HTML comment just above the fence says
// how to run it (CONTRIBUTING.md, "Examples in the docs"):
//
//	<!-- example: store=2.1.330 -->             the store of testdata/corpus/2.1.330
//	<!-- example: store=2.1.332                 setup lines: testscript commands
//	plant .claude                                run in the example's HOME first
//	-->
//	<!-- example: skip REASON -->               not run (it needs a live client, a terminal...)
//	<!-- example: mcp store=2.1.332 -->         MCP calls (TOOL {ARGUMENTS}, the answer indented,
//	                                             or as Claude Code shows them) run by cfix mcp
//
// Each example gets a HOME of its own (/tmp/cfix-doc-XXXXXXXX/home) holding a
// copy of the store (.claude, .claude.json), every file's mtime set to
// the store's last entry; cfix runs there with nothing else of the
// machine's (no CLAUDE_CONFIG_DIR, XDG_* or CFIX_* variables; TZ=UTC). What
// it prints is compared after the normalisations of normalizeDoc; a line
// `...` of the doc stands for any lines. go test -run TestDocExamples
// -update writes the output into the docs where it differs (elisions
// then go: put them back by hand).
func TestDocExamples(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	dir := t.TempDir()
	var bad []string
	n := 0
	for _, f := range files {
		exs, errs := parseDocExamples(f)
		bad = append(bad, errs...)
		for _, ex := range exs {
			if ex.skip != "" {
				continue
			}
			n++
			name := fmt.Sprintf("%s-%d.txtar", strings.ReplaceAll(ex.file, "/", "-"), ex.line)
			if err := os.WriteFile(filepath.Join(dir, name), ex.script(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	if n == 0 {
		t.Fatal("no example found in README.md and docs/*.md")
	}
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	docUpdates.m = map[string][]docUpdate{}
	t.Cleanup(func() {
		if *update {
			writeDocUpdates(t)
		}
	})
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TESTDATA", testdata)
			// HOME's path has the same length each run and on every
			// machine: the journals hold it, and their sizes are shown.
			var dir string
			for {
				dir = fmt.Sprintf("/tmp/cfix-doc-%08x", mrand.Uint32())
				if err := os.Mkdir(dir, 0o700); err == nil {
					break
				} else if !os.IsExist(err) {
					return err
				}
			}
			env.Defer(func() { os.RemoveAll(dir) })
			env.Setenv("HOME", filepath.Join(dir, "home"))
			return os.Mkdir(filepath.Join(dir, "home"), 0o700)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"docstore": cmdDocStore,
			"shows":    cmdShows,
			"mcpshows": cmdMCPShows,
			"age":      cmdAge,
			"plant":    cmdPlant,
			"chop":     cmdChop,
			"tear":     cmdTear,
		},
	})
}

// docExample is one example block of a doc.
type docExample struct {
	file  string // relative to the repository: README.md, docs/ls.md
	line  int    // of the fence
	store string
	skip  string
	setup []string
	cmds  []docCommand
	// mcp: the block is MCP tool calls (marker word mcp), each a line
	// TOOL {ARGUMENTS} and, indented two spaces, the text cfix mcp answers
	// ("error: " first when the answer is a tool error).
	mcp   bool
	calls []docCommand
	view  bool // the calls as Claude Code shows them (mcpViewCalls)
	// shape: the output shown is the shape of a JSON document (its
	// members' names, "..." and <placeholders> for what is not spelled
	// out): every member cfix prints must be named there (shapeMatch).
	shape bool
}

// docCommand is one `$ cfix ...` line and the output shown under it.
type docCommand struct {
	line int
	cmd  string
	want []string
	end  int // the line after the output shown
}

var (
	fenceRE  = regexp.MustCompile("^( *)(```+|~~~+)")
	markerRE = regexp.MustCompile(`^<!-- example:\s*(.*?)\s*(-->)?$`)
)

// parseDocExamples returns the examples of a Markdown file, and what is
// wrong with its markers.
func parseDocExamples(path string) ([]docExample, []string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{err.Error()}
	}
	rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
	lines := strings.Split(string(raw), "\n")
	var exs []docExample
	var errs []string
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence := m[1], m[2]
		start := i
		var body []string
		for i++; i < len(lines); i++ {
			l := strings.TrimPrefix(lines[i], indent)
			if strings.HasPrefix(l, fence) && strings.TrimLeft(l, fence[:1]) == "" {
				break
			}
			body = append(body, l)
		}
		ex := docExample{file: rel, line: start + 1}
		var cur *docCommand
		for j, l := range body {
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				ex.cmds = append(ex.cmds, docCommand{line: start + 2 + j, cmd: c, end: start + 3 + j})
				cur = &ex.cmds[len(ex.cmds)-1]
				continue
			}
			if cur != nil {
				cur.want = append(cur.want, l)
				cur.end = start + 3 + j
			}
		}
		if len(ex.cmds) == 0 {
			if calls := mcpCalls(body, start); len(calls) > 0 && mcpMarked(lines, start) {
				ex.mcp, ex.calls = true, calls
				ex.view = slices.ContainsFunc(body, mcpViewRE.MatchString)
			} else {
				continue
			}
		}
		// The marker: the HTML comment ending on the line before the fence.
		k := start - 1
		for k >= 0 && strings.TrimSpace(lines[k]) == "" {
			k--
		}
		end := k
		for k >= 0 && !strings.HasPrefix(strings.TrimSpace(lines[k]), "<!--") {
			k--
		}
		if end < 0 || !strings.HasSuffix(strings.TrimSpace(lines[end]), "-->") || k < 0 {
			errs = append(errs, fmt.Sprintf("%s:%d: an example without its marker (<!-- example: store=VERSION --> or <!-- example: skip REASON --> just above the fence)", rel, start+1))
			continue
		}
		mm := markerRE.FindStringSubmatch(strings.TrimSpace(lines[k]))
		if mm == nil {
			errs = append(errs, fmt.Sprintf("%s:%d: the comment above the example is not its marker (<!-- example: ... -->)", rel, k+1))
			continue
		}
		if r, ok := strings.CutPrefix(mm[1], "skip"); ok {
			ex.skip = strings.TrimSpace(r)
			if ex.skip == "" {
				errs = append(errs, fmt.Sprintf("%s:%d: a skipped example says why", rel, k+1))
			}
			exs = append(exs, ex)
			continue
		}
		for _, w := range strings.Fields(mm[1]) {
			if v, ok := strings.CutPrefix(w, "store="); ok {
				ex.store = v
			} else if w == "shape" {
				ex.shape = true
			} else if w == "mcp" {
				if !ex.mcp {
					errs = append(errs, fmt.Sprintf("%s:%d: an mcp example holds calls (TOOL {ARGUMENTS}, the answer indented), not $ lines", rel, k+1))
				}
			} else {
				errs = append(errs, fmt.Sprintf("%s:%d: unknown word %q in the example's marker", rel, k+1, w))
			}
		}
		if ex.store == "" {
			errs = append(errs, fmt.Sprintf("%s:%d: the example's marker names no store (store=VERSION)", rel, k+1))
			continue
		}
		for _, l := range lines[k+1 : end+1] {
			l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "-->"))
			if l != "" {
				ex.setup = append(ex.setup, l)
			}
		}
		for _, c := range ex.cmds {
			if !strings.HasPrefix(c.cmd, "cfix ") && c.cmd != "cfix" {
				errs = append(errs, fmt.Sprintf("%s:%d: the example runs %q: only cfix is run (or mark the example skip)", rel, c.line, c.cmd))
			}
		}
		exs = append(exs, ex)
	}
	return exs, errs
}

// mcpMarked reports whether the HTML comment ending just above the fence
// at start is an example marker with the word mcp.
func mcpMarked(lines []string, start int) bool {
	k := start - 1
	for k >= 0 && strings.TrimSpace(lines[k]) == "" {
		k--
	}
	if k < 0 || !strings.HasSuffix(strings.TrimSpace(lines[k]), "-->") {
		return false
	}
	for k >= 0 && !strings.HasPrefix(strings.TrimSpace(lines[k]), "<!--") {
		k--
	}
	if k < 0 {
		return false
	}
	mm := markerRE.FindStringSubmatch(strings.TrimSpace(lines[k]))
	return mm != nil && slices.Contains(strings.Fields(mm[1]), "mcp")
}

var (
	mcpCallRE = regexp.MustCompile(`^([a-z_]+) (\{.*\})$`)
	// Claude Code's view of a call: ● cfix - TOOL (KEY: VALUE, ...).
	mcpViewRE = regexp.MustCompile(`^● cfix - ([a-z_]+) \((.*)\)$`)
	mcpKeyRE  = regexp.MustCompile(`(^|, )([a-z_]+): `)
)

// mcpCalls reads a block of MCP calls: a line TOOL {ARGUMENTS} and the
// lines indented two spaces under it, the answer (blank lines in it
// kept); or a block as Claude Code shows calls (mcpViewCalls). Nil when
// the block is something else.
func mcpCalls(body []string, start int) []docCommand {
	for _, l := range body {
		if mcpViewRE.MatchString(l) {
			return mcpViewCalls(body, start)
		}
	}
	var calls []docCommand
	for j, l := range body {
		if m := mcpCallRE.FindStringSubmatch(l); m != nil {
			calls = append(calls, docCommand{line: start + 2 + j, cmd: l, end: start + 3 + j})
			continue
		}
		if len(calls) == 0 || l != "" && !strings.HasPrefix(l, "  ") {
			return nil
		}
		c := &calls[len(calls)-1]
		c.want = append(c.want, strings.TrimPrefix(l, "  "))
		c.end = start + 3 + j
	}
	return trimAnswers(calls)
}

// trimAnswers drops the blank lines that end each call's answer.
func trimAnswers(calls []docCommand) []docCommand {
	for i := range calls {
		c := &calls[i]
		for len(c.want) > 0 && c.want[len(c.want)-1] == "" {
			c.want = c.want[:len(c.want)-1]
		}
	}
	return calls
}

// mcpViewCalls reads the calls of a block that shows them as Claude Code
// does: a line ● cfix - TOOL (KEY: VALUE, ...), the first line of the
// answer after "  ⎿ ", the others indented four spaces (blank lines in it
// kept). The person's prompt (> ...) and Claude's words (● ... and the
// lines indented two spaces under them) are not checked.
func mcpViewCalls(body []string, start int) []docCommand {
	var calls []docCommand
	in := false // in the answer of the last call
	for j, l := range body {
		if m := mcpViewRE.FindStringSubmatch(l); m != nil {
			args := "{" + mcpKeyRE.ReplaceAllString(m[2], `$1"$2": `) + "}"
			calls = append(calls, docCommand{line: start + 2 + j, cmd: m[1] + " " + args, end: start + 3 + j})
			in = false
			continue
		}
		if len(calls) == 0 {
			continue
		}
		c := &calls[len(calls)-1]
		switch {
		case !in && c.want == nil && strings.HasPrefix(l, "  ⎿ "):
			c.want = append(c.want, strings.TrimPrefix(l, "  ⎿ "))
			in = true
		case in && (l == "" || strings.HasPrefix(l, "    ")):
			c.want = append(c.want, strings.TrimPrefix(l, "    "))
		default:
			in = false
			continue
		}
		c.end = start + 3 + j
	}
	return trimAnswers(calls)
}

// answerMatch reports whether the answer got is the one want shows: a
// line ... stands for any lines; as Claude Code cuts what it shows, a …
// stands for any characters; with wrap (as Claude Code shows it), a long
// line may be shown broken in several.
func answerMatch(want, got string, last time.Time, wrap bool) bool {
	if !wrap && !strings.Contains(want, "…") {
		return docMatch(normalizeDoc(want, last), normalizeDoc(got, last))
	}
	w := strings.Join(normalizeDoc(want, last), "\n")
	g := strings.Join(normalizeDoc(got, last), "\n")
	parts := strings.Split(w, "…")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
		if wrap {
			parts[i] = strings.ReplaceAll(parts[i], "\n", "\n?")
		}
	}
	re, err := regexp.Compile("(?s)^" + strings.Join(parts, ".*") + "$")
	return err == nil && re.MatchString(g)
}

// script is the testscript of the example: the store, the setup, then
// each command and what it shows.
func (ex docExample) script() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s:%d\n", ex.file, ex.line)
	fmt.Fprintf(&b, "docstore %s\n", ex.store)
	b.WriteString("cd $HOME\n")
	for _, s := range ex.setup {
		b.WriteString(s + "\n")
	}
	var files []txtar.File
	if ex.mcp {
		var calls []string
		for i, c := range ex.calls {
			form := "a"
			if ex.view {
				form = "v"
			}
			calls = append(calls, fmt.Sprintf("%d %d %s %s", c.line, c.end, form, c.cmd))
			files = append(files, txtar.File{Name: fmt.Sprintf("doc/%d.want", i), Data: []byte(strings.Join(append(c.want, ""), "\n"))})
		}
		fmt.Fprintf(&b, "mcpshows %s\n", ex.file)
		files = append(files, txtar.File{Name: "doc/calls", Data: []byte(strings.Join(append(calls, ""), "\n"))})
		return txtar.Format(&txtar.Archive{Comment: []byte(b.String()), Files: files})
	}
	for i, c := range ex.cmds {
		shape := ""
		if ex.shape {
			shape = " shape"
		}
		fmt.Fprintf(&b, "shows %s %d %d %d%s\n", ex.file, c.line, c.end, i, shape)
		files = append(files,
			txtar.File{Name: fmt.Sprintf("doc/%d.cmd", i), Data: []byte(c.cmd + "\n")},
			txtar.File{Name: fmt.Sprintf("doc/%d.want", i), Data: []byte(strings.Join(append(c.want, ""), "\n"))})
	}
	return txtar.Format(&txtar.Archive{Comment: []byte(b.String()), Files: files})
}

// cmdDocStore copies a store of testdata into $HOME (.claude and
// .claude.json), every file's mtime the time of the store's last entry:
// docstore VERSION (the corpus store testdata/corpus/VERSION) or docstore
// wild/NAME (testdata/wild/NAME).
func cmdDocStore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: docstore VERSION|wild/NAME")
	}
	src := filepath.Join(ts.Getenv("TESTDATA"), "corpus", args[0])
	if strings.HasPrefix(args[0], "wild/") {
		src = filepath.Join(ts.Getenv("TESTDATA"), args[0])
	}
	home := ts.Getenv("HOME")
	t := scriptT{ts}
	if _, err := os.Stat(filepath.Join(src, ".claude")); err != nil {
		ts.Fatalf("no corpus store %s: %v", args[0], err)
	}
	plant.CopyTree(t, filepath.Join(home, ".claude"), filepath.Join(src, ".claude"))
	if b, err := os.ReadFile(filepath.Join(src, ".claude.json")); err == nil {
		ts.Check(os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600))
	}
	last := lastTimestamp(filepath.Join(home, ".claude"))
	ts.Setenv("DOCSTORE_LAST", last.Format(time.RFC3339Nano))
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			ts.Check(os.Chtimes(p, last, last))
		}
		return nil
	})
}

// cmdTear cuts the last line of a file to its first N bytes, without a
// newline, as a kill mid-write leaves it: tear FILE N.
func cmdTear(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tear FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	p := ts.MkAbs(args[0])
	fi, err := os.Stat(p)
	ts.Check(err)
	b, err := os.ReadFile(p)
	ts.Check(err)
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.LastIndexByte(b, '\n') + 1
	if n > len(b)-i {
		ts.Fatalf("tear: the last line of %s has %d bytes", args[0], len(b)-i)
	}
	ts.Check(os.WriteFile(p, b[:i+n], 0o600))
	ts.Check(os.Chtimes(p, fi.ModTime(), fi.ModTime()))
}

var timestampRE = regexp.MustCompile(`"timestamp":"(20\d\d-\d\d-\d\dT[0-9:.]+Z)"`)

// lastTimestamp is the latest "timestamp" of the transcripts under root.
func lastTimestamp(root string) time.Time {
	var last time.Time
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, m := range timestampRE.FindAllSubmatch(b, -1) {
			if t, err := time.Parse(time.RFC3339Nano, string(m[1])); err == nil && t.After(last) {
				last = t
			}
		}
		return nil
	})
	return last
}

// cmdShows runs the command of an example as a shell would (the example's
// HOME; a pipe into head -N, > FILE, < FILE) and compares what it prints,
// stdout and stderr as a terminal interleaves them, with the output shown:
// shows DOC LINE END N (the command and the output are doc/N.cmd and
// doc/N.want).
func cmdShows(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 && (len(args) != 5 || args[4] != "shape") {
		ts.Fatalf("usage: shows DOC LINE END N [shape]")
	}
	doc, n := args[0], args[3]
	line, _ := strconv.Atoi(args[1])
	end, _ := strconv.Atoi(args[2])
	cmdline := strings.TrimSuffix(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), "doc", n+".cmd")), "\n")
	want := strings.TrimSuffix(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), "doc", n+".want")), "\n")
	home := ts.Getenv("HOME")
	sc, err := parseShell(substituteJournals(ts, cmdline))
	if err != nil {
		ts.Fatalf("%s:%d: %v", doc, line, err)
	}
	// A folder remote in the example's HOME: file:///home/dev/...
	for i, a := range sc.args {
		if r, ok := strings.CutPrefix(a, "file:///home/dev/"); ok {
			sc.args[i] = "file://" + filepath.Join(ts.Getenv("HOME"), r)
		}
	}
	prog, err := exec.LookPath(sc.args[0])
	ts.Check(err)
	cmd := exec.Command(prog, sc.args[1:]...)
	cmd.Dir = home
	cmd.Env = docEnv(ts)
	var out, stdout bytes.Buffer
	cmd.Stderr = &out
	cmd.Stdout = &out
	if sc.head >= 0 || sc.out != "" {
		cmd.Stdout = &stdout
	}
	if sc.in != "" {
		f, err := os.Open(filepath.Join(home, sc.in))
		ts.Check(err)
		defer f.Close()
		cmd.Stdin = f
	}
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			ts.Fatalf("%s:%d: %v", doc, line, err)
		}
	}
	got := out.String()
	switch {
	case sc.out != "":
		ts.Check(os.WriteFile(filepath.Join(home, sc.out), stdout.Bytes(), 0o600))
	case sc.head >= 0:
		ls := strings.SplitAfter(stdout.String(), "\n")
		if len(ls) > sc.head {
			ls = ls[:sc.head]
		}
		got = strings.Join(ls, "") + got
	}
	got = laptop(strings.ReplaceAll(got, home, "/home/dev"))
	rememberJournals(ts, got)
	last, _ := time.Parse(time.RFC3339Nano, ts.Getenv("DOCSTORE_LAST"))
	if len(args) == 5 {
		if missing := shapeMatch(want, got); missing != "" {
			ts.Fatalf("%s:%d: $ %s: %s", doc, line, cmdline, missing)
		}
		return
	}
	if docMatch(normalizeDoc(want, last), normalizeDoc(got, last)) {
		return
	}
	if *update {
		docUpdates.Lock()
		docUpdates.m[doc] = append(docUpdates.m[doc], docUpdate{from: line + 1, to: end, text: strings.TrimSuffix(got, "\n")})
		docUpdates.Unlock()
	}
	ts.Fatalf("%s:%d: $ %s: the output differs from the doc's (-doc +cfix):\n%s", doc, line, cmdline, lineDiff(want, strings.TrimSuffix(got, "\n")))
}

// cmdMCPShows runs cfix mcp in the example's HOME, sends it the calls of
// the example (doc/calls: LINE END TOOL {ARGUMENTS} a line) after the
// handshake Claude Code makes, and compares the text of each answer with
// the one shown (doc/N.want): mcpshows DOC.
func cmdMCPShows(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mcpshows DOC")
	}
	doc := args[0]
	type call struct {
		line, end  int
		tool, args string
		view       bool
	}
	var calls []call
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"docs","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, l := range strings.Split(strings.TrimSuffix(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), "doc", "calls")), "\n"), "\n") {
		var c call
		var rest string
		if _, err := fmt.Sscanf(l, "%d %d", &c.line, &c.end); err != nil {
			ts.Fatalf("doc/calls: %q: %v", l, err)
		}
		f := strings.SplitN(l, " ", 4)
		c.view, rest = f[2] == "v", f[3]
		m := mcpCallRE.FindStringSubmatch(rest)
		c.tool, c.args = m[1], m[2]
		if !json.Valid([]byte(c.args)) {
			ts.Fatalf("%s:%d: the arguments of %s are not JSON: %s", doc, c.line, c.tool, c.args)
		}
		calls = append(calls, c)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", i+1, c.tool, c.args)
	}
	home := ts.Getenv("HOME")
	prog, err := exec.LookPath("cfix")
	ts.Check(err)
	cmd := exec.Command(prog, "mcp")
	cmd.Dir = home
	cmd.Env = docEnv(ts)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("%s: cfix mcp: %v\n%s", doc, err, stderr.String())
	}
	answers := map[int]string{}
	for _, l := range strings.Split(string(out), "\n") {
		var m struct {
			ID     *int `json:"id"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if l == "" || json.Unmarshal([]byte(l), &m) != nil || m.ID == nil {
			continue
		}
		switch {
		case m.Error != nil:
			answers[*m.ID] = "error: " + m.Error.Message
		case m.Result != nil:
			var texts []string
			for _, c := range m.Result.Content {
				texts = append(texts, c.Text)
			}
			a := strings.Join(texts, "\n")
			if m.Result.IsError {
				a = "error: " + a
			}
			answers[*m.ID] = a
		}
	}
	last, _ := time.Parse(time.RFC3339Nano, ts.Getenv("DOCSTORE_LAST"))
	var failed []string
	for i, c := range calls {
		got, ok := answers[i+1]
		if !ok {
			ts.Fatalf("%s:%d: %s: cfix mcp gave no answer:\n%s", doc, c.line, c.tool, stderr.String())
		}
		// The blank lines an answer ends with are not shown.
		got = strings.TrimRight(strings.ReplaceAll(got, home, "/home/dev"), "\n")
		want := strings.TrimSuffix(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), "doc", fmt.Sprintf("%d.want", i))), "\n")
		if answerMatch(want, got, last, c.view) {
			continue
		}
		if *update && !c.view && !strings.Contains(want, "…") {
			var ind []string
			for _, l := range strings.Split(got, "\n") {
				ind = append(ind, strings.TrimRight("  "+l, " "))
			}
			docUpdates.Lock()
			docUpdates.m[doc] = append(docUpdates.m[doc], docUpdate{from: c.line + 1, to: c.end, text: strings.Join(ind, "\n")})
			docUpdates.Unlock()
		}
		failed = append(failed, fmt.Sprintf("%s:%d: %s %s: the answer differs from the doc's (-doc +cfix):\n%s", doc, c.line, c.tool, c.args, lineDiff(want, got)))
	}
	if len(failed) > 0 {
		ts.Fatalf("%s", strings.Join(failed, "\n"))
	}
}

// laptop shows the machine's host name as laptop where cfix prints it as
// where sessions come from (a pack's, a fork's title).
func laptop(s string) string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return s
	}
	re := regexp.MustCompile(`(pack from |\(from )` + regexp.QuoteMeta(h) + `\b`)
	return re.ReplaceAllString(s, "${1}laptop")
}

var shapeStringRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// shapeMatch says what of the JSON document got the shape shown leaves
// unnamed: a member name of got (at any depth) that is not a name of the
// shape. A name in the shape is a string not after a colon; under a name
// whose value is {...}, [...] or an object with a <placeholder> name,
// got's names are not looked at. "" when every name is in the shape.
func shapeMatch(shape, got string) string {
	names := map[string]bool{}
	open := map[string]bool{} // names whose members are not spelled out
	for _, loc := range shapeStringRE.FindAllStringIndex(shape, -1) {
		before := strings.TrimRight(shape[:loc[0]], " \t\n")
		if strings.HasSuffix(before, ":") {
			continue // a value
		}
		name := shape[loc[0]+1 : loc[1]-1]
		names[name] = true
		after := strings.TrimLeft(shape[loc[1]:], " \t\n")
		if v, ok := strings.CutPrefix(after, ":"); ok {
			v = strings.TrimLeft(v, " \t\n")
			obj, _, _ := strings.Cut(v, "}")
			if strings.HasPrefix(v, "{...}") || strings.HasPrefix(v, "[...]") || strings.HasPrefix(v, "{") && strings.Contains(obj, `"<`) {
				open[name] = true
			}
		}
	}
	var doc any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		return fmt.Sprintf("the output is not one JSON document: %v", err)
	}
	var unnamed []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				if !names[k] {
					unnamed = append(unnamed, path+"."+k)
					continue
				}
				if !open[k] {
					walk(m, path+"."+k)
				}
			}
		case []any:
			for _, m := range v {
				walk(m, path+"[]")
			}
		}
	}
	walk(doc, "")
	if len(unnamed) == 0 {
		return ""
	}
	slices.Sort(unnamed)
	unnamed = slices.Compact(unnamed)
	return fmt.Sprintf("the doc's shape does not name %s, which cfix prints", strings.Join(unnamed, ", "))
}

// docEnv is the environment of an example's commands: the machine's,
// without what would point cfix elsewhere than the example's HOME.
func docEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CLAUDE_"), strings.HasPrefix(k, "CFIX_"), strings.HasPrefix(k, "XDG_"),
			k == "HOME", k == "PATH", k == "TZ", k == "COLUMNS", k == "LINES", k == "NO_COLOR", k == "PAGER",
			k == "LESS", k == "TERM", k == "PWD", k == "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+ts.Getenv("HOME"), "PATH="+ts.Getenv("PATH"), "TZ=UTC", "TMPDIR="+ts.Getenv("TMPDIR"))
	// What the setup set with env.
	for _, k := range []string{"CFIX_BROWSE_FIRST_FRAME", "CFIX_CLAUDE", "CFIX_PASSPHRASE", "COLUMNS"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// shellCommand is a command line as the examples write them.
type shellCommand struct {
	args    []string
	head    int // a pipe into head -N; -1 without
	in, out string
}

// parseShell splits a command line as sh does for the few forms the
// examples use: words, quotes, a comment, < FILE, > FILE, | head -N.
func parseShell(line string) (shellCommand, error) {
	sc := shellCommand{head: -1}
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return sc, fmt.Errorf("unclosed quote in %q", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		case (c == '|' || c == '<' || c == '>') && !inWord:
			words = append(words, string(c))
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "<", ">":
			if i+1 == len(words) {
				return sc, fmt.Errorf("%s without a file in %q", words[i], line)
			}
			if words[i] == "<" {
				sc.in = words[i+1]
			} else {
				sc.out = words[i+1]
			}
			i++
		case "|":
			rest := words[i+1:]
			if len(rest) != 2 || rest[0] != "head" || !strings.HasPrefix(rest[1], "-") {
				return sc, fmt.Errorf("the pipe of %q: only | head -N is run", line)
			}
			n, err := strconv.Atoi(rest[1][1:])
			if err != nil {
				return sc, fmt.Errorf("the pipe of %q: %v", line, err)
			}
			sc.head = n
			i = len(words)
		default:
			sc.args = append(sc.args, words[i])
		}
	}
	if len(sc.args) == 0 {
		return sc, fmt.Errorf("no command in %q", line)
	}
	return sc, nil
}

var journalRE = regexp.MustCompile(`\b\d{8}T\d{6}\.\d{3}Z-([a-z-]+)-[0-9a-f]{6}\b`)

// rememberJournals keeps the journal ids an example's output names, by
// command, for the commands after it that name one.
func rememberJournals(ts *testscript.TestScript, out string) {
	for _, m := range journalRE.FindAllStringSubmatch(out, -1) {
		ts.Setenv("DOCJOURNAL_"+strings.ReplaceAll(m[1], "-", "_"), m[0])
	}
}

// substituteJournals puts into a command line the journals of this run in
// place of those the doc names (the id has the time of the apply in it).
func substituteJournals(ts *testscript.TestScript, line string) string {
	return journalRE.ReplaceAllStringFunc(line, func(id string) string {
		m := journalRE.FindStringSubmatch(id)
		if v := ts.Getenv("DOCJOURNAL_" + strings.ReplaceAll(m[1], "-", "_")); v != "" {
			return v
		}
		return id
	})
}

var (
	dateTimeRE   = regexp.MustCompile(`\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?\b`)
	restoreDirRE = regexp.MustCompile(`\.restore-[0-9a-f]{8}\b`)
	freesRE      = regexp.MustCompile(`\bfrees [0-9.]+ [KMG]?B\b`)
)

// normalizeDoc is what the comparison leaves aside of an output, on both
// sides: trailing spaces, and what changes each run: a journal's id (the
// time of its apply and a random suffix), a date and time an hour or more
// after the store's last entry (the time of the run: when a journal was
// made), the name of the folder restore unpacks an archive into, what
// removing a journal frees (its plan records a file's identity, a few
// hundred bytes, only once the file's change time has settled).
func normalizeDoc(s string, last time.Time) []string {
	s = journalRE.ReplaceAllString(s, "JOURNAL-$1")
	s = freesRE.ReplaceAllString(s, "frees SIZE")
	s = restoreDirRE.ReplaceAllString(s, ".restore-XXXXXXXX")
	s = dateTimeRE.ReplaceAllStringFunc(s, func(d string) string {
		layout := "2006-01-02 15:04"
		if len(d) > len(layout) {
			layout += ":05"
		}
		t, err := time.Parse(layout, strings.Replace(d, "T", " ", 1))
		if err == nil && t.After(last.Add(time.Hour)) {
			return "NOW"
		}
		return d
	})
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " \t")
	}
	return ls
}

// docMatch reports whether got is what want shows, a line `...` of want
// standing for any lines.
func docMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0 || len(got) == 1 && got[0] == ""
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if docMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && sameDocLine(want[0], got[0]) && docMatch(want[1:], got[1:])
}

// sizeRE is a size as cfix prints it with one decimal: 183.9 KB.
var sizeRE = regexp.MustCompile(`\b\d+\.\d [KMG]B\b`)

// sameDocLine reports whether a line of a doc shows the line cfix printed:
// equal, but that a size with one decimal may be 0.1 off. A journal's size
// counts its plan, whose times are written without their trailing zeros,
// so it varies by a few bytes from run to run and may round either way.
func sameDocLine(want, got string) bool {
	if want == got {
		return true
	}
	ws, gs := sizeRE.FindAllStringIndex(want, -1), sizeRE.FindAllStringIndex(got, -1)
	if len(ws) == 0 || len(ws) != len(gs) || sizeRE.ReplaceAllString(want, "SIZE") != sizeRE.ReplaceAllString(got, "SIZE") {
		return false
	}
	for i := range ws {
		w, g := want[ws[i][0]:ws[i][1]], got[gs[i][0]:gs[i][1]]
		var wn, gn float64
		var wu, gu string
		fmt.Sscanf(w, "%f %s", &wn, &wu)
		fmt.Sscanf(g, "%f %s", &gn, &gu)
		if wu != gu || math.Abs(wn-gn) > 0.1001 {
			return false
		}
	}
	return true
}

// lineDiff is a plain diff of two texts, line by line (the longest common
// subsequence), for the failure message.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if a == "" {
		x = nil
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var d strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			d.WriteString("  " + x[i] + "\n")
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			d.WriteString("+ " + y[j] + "\n")
			j++
		default:
			d.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return d.String()
}

// docUpdate is the output of a command to write into a doc in place of
// lines from..to-1 (-update).
type docUpdate struct {
	from, to int
	text     string
}

var docUpdates struct {
	sync.Mutex
	m map[string][]docUpdate
}

// writeDocUpdates writes the outputs that differ into the docs, last
// first so that line numbers hold.
func writeDocUpdates(t *testing.T) {
	for doc, us := range docUpdates.m {
		p := filepath.Join("..", "..", doc)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		sort.Slice(us, func(i, j int) bool { return us[i].from > us[j].from })
		for _, u := range us {
			indent := regexp.MustCompile(`^ *`).FindString(lines[u.from-2])
			var repl []string
			if u.text != "" {
				for _, l := range strings.Split(u.text, "\n") {
					repl = append(repl, strings.TrimRight(indent+l, " "))
				}
			}
			lines = append(lines[:u.from-1], append(repl, lines[u.to-1:]...)...)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", doc)
	}
}

// TestDocExampleParts: an example without its marker is an error, the
// output is compared whole, and ... skips lines (the test can fail).
func TestDocExampleParts(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "x.md")
	os.WriteFile(md, []byte("text\n\n```\n$ cfix ls\nout\n```\n\n<!-- example: skip needs a terminal -->\n```\n$ cfix browse\n```\n\n<!-- example: store=2.1.330\ntear F 3\n-->\n```\n$ cfix show x | head -2  # two lines\na\nb\n$ cfix undo\n```\n"), 0o600)
	exs, errs := parseDocExamples(md)
	if len(errs) != 1 || !strings.Contains(errs[0], ":3: an example without its marker") {
		t.Errorf("errors %q, want the unmarked block of line 3", errs)
	}
	if len(exs) != 2 || exs[0].skip != "needs a terminal" || exs[1].store != "2.1.330" || len(exs[1].setup) != 1 || exs[1].setup[0] != "tear F 3" {
		t.Fatalf("examples %+v", exs)
	}
	c := exs[1].cmds
	if len(c) != 2 || c[0].line != 17 || strings.Join(c[0].want, ",") != "a,b" || c[0].end != 20 || c[1].cmd != "cfix undo" {
		t.Errorf("commands %+v", c)
	}
	sc, err := parseShell(c[0].cmd)
	if err != nil || strings.Join(sc.args, " ") != "cfix show x" || sc.head != 2 {
		t.Errorf("parseShell: %+v %v", sc, err)
	}
	if _, err := parseShell("cfix ls | grep x"); err == nil {
		t.Error("a pipe into grep runs")
	}
	// MCP calls: as TOOL {ARGUMENTS}, and as Claude Code shows them.
	os.WriteFile(md, []byte("<!-- example: mcp store=2.1.332 -->\n```\nlist_sessions {\"project\": \".\"}\n  error: no\n\n  more\nread_session {\"session\": \"x\"}\n  text\n```\n\n<!-- example: mcp store=2.1.332 -->\n```\n> a question\n● cfix - read_session (session: \"bc1c66c0\", from_turn: 2)\n  ⎿ first\n    second\n\n    third\n● The answer,\n  in two lines.\n```\n\n```\nlist_sessions {}\n  not marked: not run\n```\n"), 0o600)
	exs, errs = parseDocExamples(md)
	if len(errs) != 0 || len(exs) != 2 || !exs[0].mcp || exs[0].view || !exs[1].view {
		t.Fatalf("mcp examples %+v, errors %q", exs, errs)
	}
	if c := exs[0].calls; len(c) != 2 || c[0].cmd != `list_sessions {"project": "."}` || strings.Join(c[0].want, "|") != "error: no||more" || c[0].end != 7 || c[1].line != 7 {
		t.Errorf("calls %+v", c)
	}
	if c := exs[1].calls; len(c) != 1 || c[0].cmd != `read_session {"session": "bc1c66c0", "from_turn": 2}` || strings.Join(c[0].want, "|") != "first|second||third" {
		t.Errorf("calls as Claude Code shows them %+v", c)
	}
	last := time.Date(2026, 11, 21, 10, 43, 0, 0, time.UTC)
	for _, c := range []struct {
		want, got string
		wrap, ok  bool
	}{
		{"a\nb", "a\nb", false, true},
		{"a\nb", "ab", false, false},
		{"a\nb", "ab", true, true},
		{"a\nb", "a\nc", true, false},
		{`{"a":1,…,"d":4}`, `{"a":1,"b":2,"c":3,"d":4}`, true, true},
		{`{"a":1,…,"d":4}`, `{"a":1,"b":2,"c":3,"d":5}`, true, false},
	} {
		if got := answerMatch(c.want, c.got, last, c.wrap); got != c.ok {
			t.Errorf("answerMatch(%q, %q, wrap %v) = %v", c.want, c.got, c.wrap, got)
		}
	}
	// A shape names every member printed but those under {...}, [...] or
	// <placeholders>; a value after a colon is not a name.
	if got := shapeMatch(`{"a": "x", "b": {...}, "c": [{"d"}], "t": {"<type>": n}}`, `{"a":1,"b":{"y":1},"c":[{"d":1,"e":2}],"t":{"user":1}}`); got != "the doc's shape does not name .c[].e, which cfix prints" {
		t.Errorf("shapeMatch: %q", got)
	}
	if got := shapeMatch(`{"a", "x"}`, `{"a":1,"x":{"a":2}}`); got != "" {
		t.Errorf("shapeMatch of a shape that names all: %q", got)
	}
	n := func(s string) []string { return normalizeDoc(s, last) }
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb\n", true},
		{"a\nb", "a\nc", false},
		{"a", "a\nb", false},
		{"a\n...\nd", "a\nb\nc\nd", true},
		{"a\n...\nd", "a\nb\nc", false},
		{"journal 20261129T074754.355Z-redact-2333b3", "journal 20261130T101010.001Z-redact-0f53da  ", true},
		{"journal 20261129T074754.355Z-redact-2333b3", "journal 20261130T101010.001Z-repair-0f53da", false},
		{"at 2026-11-29 09:57:55", "at 2026-12-01 00:00:01", true},
		{"at 2026-11-21 10:43", "at 2026-11-21 10:42", false},
	} {
		if got := docMatch(n(c.want), n(c.got)); got != c.ok {
			t.Errorf("docMatch(%q, %q) = %v", c.want, c.got, got)
		}
	}
}

// TestSameDocLine: a size may be 0.1 off, nothing else.
func TestSameDocLine(t *testing.T) {
	for _, c := range []struct {
		want, got string
		same      bool
	}{
		{"rm  2  183.9 KB   183.9 KB  applied", "rm  2  183.8 KB   183.8 KB  applied", true},
		{"rm  2  183.9 KB   183.9 KB  applied", "rm  2  183.7 KB   183.7 KB  applied", false},
		{"rm  2  183.9 KB  applied", "rm  2  183.9 MB  applied", false},
		{"rm  2  183.9 KB  applied", "rm  3  183.9 KB  applied", false},
		{"rm  2  183.9 KB  applied", "rm  2  183.9 KB  undone", false},
		{"no size", "no size", true},
	} {
		if got := sameDocLine(c.want, c.got); got != c.same {
			t.Errorf("sameDocLine(%q, %q) = %v, want %v", c.want, c.got, got, c.same)
		}
	}
}
