// Command mcpcall times one tool call of an MCP server over stdio, as a
// client such as Claude Code makes it:
//
//	go run ./bench/mcpcall [-runs 3] [-cache fresh|DIR] [-warm] [-next] [-at-once N] [-refused] [-long NAME=BYTES] -tool NAME -args JSON -- CMD ARG...
//
// Each run starts CMD (say bin/cfix mcp --root DIR) with the SDK's
// CommandTransport, initializes the session, and times the tool call
// alone: from sending tools/call to its whole answer decoded. Starting
// the process and initializing are not timed. The server runs with
// XDG_CACHE_HOME set to -cache: "fresh", a new empty folder each run
// (nothing kept from a run before), or a folder kept across runs; with
// -warm, one call (not timed) is made before the runs, in a server of its
// own, to fill it.
//
// With -next (read_session), each run first calls the tool with -args, not
// timed, and times the call of the next page: -args with offset set to the
// next_offset its answer ends with. With -at-once N, each run sends N calls
// at once (as a client pipelines them) and times them until the last
// answer; with -refused, each call must be refused (a protocol error or a
// tool error), as a call of arguments over the server's bounds is: -long
// NAME=BYTES makes such an argument.
//
// It prints "SECONDS PEAK_RSS_KB BYTES": the best call of the runs, the
// highest peak RSS of the server processes and the size of the answer's
// text; exit status 1 when a call fails or answers with a tool error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: %v\n", err)
		os.Exit(1)
	}
}

// after is how long a call waits after initialize (-after); atOnce how
// many calls are sent at once (-at-once); refused, whether each must be
// refused (-refused).
var (
	after   time.Duration
	atOnce  = 1
	refused bool
)

func run() error {
	runs := flag.Int("runs", 3, "timed runs, each in a new server process")
	cache := flag.String("cache", "fresh", `the server's XDG_CACHE_HOME: "fresh" (a new empty folder each run) or a folder`)
	warm := flag.Bool("warm", false, "make one call first, not timed, to fill the cache folder")
	next := flag.Bool("next", false, "time the call of the next page (read_session): offset set to the next_offset of a first call, not timed")
	tool := flag.String("tool", "", "the tool to call")
	args := flag.String("args", "{}", "the tool's arguments, a JSON object")
	flag.IntVar(&atOnce, "at-once", 1, "send this many calls at once, timed until the last answer")
	flag.BoolVar(&refused, "refused", false, "each call must be refused: a protocol error or a tool error")
	long := flag.String("long", "", "NAME=BYTES: the argument NAME is a string of BYTES letters (an argument longer than a command line takes)")
	flag.DurationVar(&after, "after", 0, "wait this long after initialize before the timed call (what the server does once started: its warming)")
	flag.Parse()
	if *tool == "" || flag.NArg() == 0 {
		return errors.New("usage: mcpcall [-runs N] [-cache fresh|DIR] [-warm] -tool NAME -args JSON -- CMD ARG...")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		return fmt.Errorf("-args: %v", err)
	}
	if *long != "" {
		name, n, ok := strings.Cut(*long, "=")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 {
			return fmt.Errorf("-long %q: want NAME=BYTES", *long)
		}
		arguments[name] = strings.Repeat("q", size)
	}
	if *warm {
		if *cache == "fresh" {
			return errors.New("-warm needs a -cache folder")
		}
		if _, _, _, err := call(*cache, *tool, arguments, false, flag.Args()); err != nil {
			return fmt.Errorf("warming: %v", err)
		}
	}
	best, rss, size := time.Duration(0), int64(0), 0
	for i := 0; i < *runs; i++ {
		dir := *cache
		if dir == "fresh" {
			d, err := os.MkdirTemp("", "mcpcall-cache-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(d)
			dir = d
		}
		d, r, n, err := call(dir, *tool, arguments, *next, flag.Args())
		if err != nil {
			return err
		}
		if i == 0 || d < best {
			best = d
		}
		rss, size = max(rss, r), n
	}
	fmt.Printf("%.3f %d %d\n", best.Seconds(), rss, size)
	return nil
}

// nextOffset finds the offset of the next page in read_session's answer.
var nextOffset = regexp.MustCompile(`\n\(next_offset ([0-9]+):[^\n]*$`)

// call starts the server, initializes, and times one call of tool (with
// next, the call of the page after the one args asks for). It returns the
// call's time, the server's peak RSS in KB and the size of the answer's
// text.
func call(cache, tool string, args map[string]any, next bool, command []string) (time.Duration, int64, int, error) {
	ctx := context.Background()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	cmd.Stderr = os.Stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpcall", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %v", command[0], err)
	}
	if next {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			cs.Close()
			return 0, 0, 0, fmt.Errorf("%s: the first page: %v", tool, err)
		}
		// read_session's answer is text whose last line is
		// "(next_offset N: ...)" when more follows.
		var m []string
		if len(res.Content) == 1 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				m = nextOffset.FindStringSubmatch(t.Text)
			}
		}
		if m == nil {
			cs.Close()
			return 0, 0, 0, fmt.Errorf("%s: the first page has no next_offset", tool)
		}
		more := map[string]any{}
		for k, v := range args {
			more[k] = v
		}
		more["offset"], _ = strconv.Atoi(m[1])
		args = more
	}
	time.Sleep(after)
	start := time.Now()
	results := make([]*mcp.CallToolResult, atOnce)
	errs := make([]error, atOnce)
	var wg sync.WaitGroup
	for i := range atOnce {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		}()
	}
	wg.Wait()
	d := time.Since(start)
	hwm := peakOf(cmd.Process.Pid)
	cerr := cs.Close()
	size := 0
	for i, res := range results {
		err := errs[i]
		if refused {
			if err == nil && !res.IsError {
				return 0, 0, 0, fmt.Errorf("%s: answered, not refused", tool)
			}
			continue
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %v", tool, err)
		}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				size += len(t.Text)
				if res.IsError {
					return 0, 0, 0, fmt.Errorf("%s: tool error: %s", tool, t.Text)
				}
			}
		}
	}
	if cerr != nil && cmd.ProcessState == nil {
		return 0, 0, 0, fmt.Errorf("closing %s: %v", command[0], cerr)
	}
	rss := hwm
	if rss == 0 && cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss
		}
	}
	return d, rss, size, nil
}

// peakOf is the peak RSS in KB of the running process pid (VmHWM, Linux),
// 0 when unknown. The rusage of a child counts what its parent held when
// it started it (Go starts a child sharing the parent's memory until
// exec), and this process holds the long arguments of -long: after the
// first run, every server would seem to hold them too.
func peakOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
