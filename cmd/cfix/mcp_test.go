package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcpProcess is a cfix mcp process spoken to over its stdin and stdout.
type mcpProcess struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startMCP starts cfix mcp on a copy of a corpus store and initializes
// the session as Claude Code does.
func startMCP(t *testing.T) *mcpProcess {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "testdata", "corpus", "2.1.332", ".claude"), root).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd := exec.Command("cfix", "mcp", "--root", root)
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpProcess{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	t.Cleanup(func() {
		in.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := p.recv(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *mcpProcess) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v (the server ended)", err)
	}
}

// recv reads the next answer: a JSON object, or a JSON array (a batch's)
// as {"batch": [...]}.
func (p *mcpProcess) recv() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("no answer: the server ended (%v)", p.wait())
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			p.t.Fatalf("answer %.300s: %v", line, err)
		}
		if a, ok := v.([]any); ok {
			return map[string]any{"batch": a}
		}
		return v.(map[string]any)
	case <-time.After(60 * time.Second):
		p.t.Fatal("no answer in 60 s")
	}
	return nil
}

// listAll asks list_sessions of every project: the server still serves.
func (p *mcpProcess) listAll(id int) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_sessions","arguments":{"project":"all"}}}`, id))
	m := p.recv()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(id) || res == nil || res["isError"] == true {
		p.t.Fatalf("list_sessions %d: %v", id, m)
	}
}

// wait closes the server's input and waits for it to end: its status.
func (p *mcpProcess) wait() error {
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("still running 30 s after its input ended")
	}
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestMCPBatch sends a cfix mcp process JSON-RPC batches, which the
// protocol's version 2025-06-18 no longer has: each request of one gets
// the protocol's error, and the server answers the next request.
func TestMCPBatch(t *testing.T) {
	p := startMCP(t)
	p.send(`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"list_sessions","arguments":{}}}]`)
	m := p.recv()
	batch, _ := m["batch"].([]any)
	if len(batch) != 2 {
		t.Fatalf("batch: %v, want an error for each of its 2 requests", m)
	}
	for i, id := range []any{2.0, "three"} {
		r, _ := batch[i].(map[string]any)
		if r["id"] != id || errorCode(r) != -32600 {
			t.Errorf("batch answer %d: %v, want code -32600 for id %v", i, r, id)
		}
	}
	p.listAll(4)
	// As JSON-RPC answers them: an error for each value of [1,2], none
	// for a notification, one for an empty batch.
	for _, c := range []struct {
		line    string
		answers int
	}{{`[1,2]`, 2}, {`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}]`, 0}, {`[]`, -1}} {
		p.send(c.line)
		if c.answers == 0 {
			p.listAll(5) // the next answer is list_sessions'
			continue
		}
		switch m := p.recv(); {
		case c.answers < 0:
			if errorCode(m) != -32600 {
				t.Errorf("%s: %v", c.line, m)
			}
		default:
			batch, _ := m["batch"].([]any)
			if len(batch) != c.answers || errorCode(batch[0].(map[string]any)) != -32600 {
				t.Errorf("%s: %v", c.line, m)
			}
		}
		p.listAll(5)
	}
	if err := p.wait(); err != nil {
		t.Errorf("cfix mcp: %v, want exit 0 at the end of its input", err)
	}
}

// TestMCPBounds sends a cfix mcp process a search of a 10 MB query, then
// four at once, then queries and names over the tools' bounds: each is
// refused (a line over the bound is refused without being held), the
// server answers the next request, and its peak memory stays small.
func TestMCPBounds(t *testing.T) {
	p := startMCP(t)
	call := func(id int, tool string, args map[string]any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": args}})
		return string(b)
	}
	huge := strings.Repeat("needle ", 10<<20/7)
	for id := 10; id < 15; id++ {
		p.send(call(id, "search_sessions", map[string]any{"query": huge, "project": "all"}))
		if id == 10 {
			// One alone first, then four pipelined.
			if m := p.recv(); m["id"] != 10.0 || errorCode(m) != -32700 && errorCode(m) != -32600 {
				t.Fatalf("a 10 MB query: %.300v", m)
			}
		}
	}
	for id := 11; id < 15; id++ {
		if m := p.recv(); m["id"] != float64(id) || m["error"] == nil {
			t.Errorf("10 MB query %d: %.300v", id, m)
		}
	}
	p.listAll(20)
	// Under the line's bound, over a tool's.
	for i, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_sessions", map[string]any{"query": strings.Repeat("x", 65<<10)}, "query is 66560 bytes: at most 65536"},
		{"search_sessions", map[string]any{"query": "x", "tool": strings.Repeat("t", 1000)}, "tool is 1000 bytes"},
		{"search_sessions", map[string]any{"query": "x", "project": strings.Repeat("/p", 5000)}, "project is 10000 bytes"},
		{"read_session", map[string]any{"session": strings.Repeat("a", 5000)}, "session is 5000 bytes"},
		{"session_health", map[string]any{"session": "a", "project": strings.Repeat("/p", 5000)}, "project is 10000 bytes"},
		{"list_sessions", map[string]any{"project": strings.Repeat("/p", 5000)}, "project is 10000 bytes"},
	} {
		p.send(call(30+i, c.tool, c.args))
		m := p.recv()
		res, _ := m["result"].(map[string]any)
		text := fmt.Sprint(res["content"])
		if m["id"] != float64(30+i) || res["isError"] != true || !strings.Contains(text, c.want) {
			t.Errorf("%s: %.300v, want a tool error %q", c.tool, m, c.want)
		}
	}
	p.listAll(40)
	// The server's own peak (VmHWM), read while it runs: the rusage of a
	// child counts what this test process held when it started it (Go
	// starts a child sharing its parent's memory until exec), which other
	// tests of the package grow.
	hwm := vmHWM(p.cmd.Process.Pid)
	if err := p.wait(); err != nil {
		t.Errorf("cfix mcp: %v", err)
	}
	peak := hwm
	if peak == 0 {
		peak = p.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	t.Logf("peak RSS %d MB (the rusage says %d MB)", peak>>20, p.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss>>10)
	if peak > 100<<20 {
		t.Errorf("peak RSS %d MB: a refused line was held, or a query searched", peak>>20)
	}
}

// vmHWM is the peak RSS in bytes of the running process pid (VmHWM of
// /proc/PID/status, Linux), 0 when unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
