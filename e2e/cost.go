package e2e

import (
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// costs are the client runs of each top-level test: how many, their wall
// time and the CPU time the client and the children it waited for took.
var costs struct {
	sync.Mutex
	byTest map[string]*cost
}

type cost struct {
	runs int
	wall time.Duration
	cpu  time.Duration
}

// recordCost adds one client run of the test named name to its top-level
// test's cost.
func recordCost(name string, cmd *exec.Cmd, wall time.Duration) {
	top, _, _ := strings.Cut(name, "/")
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	costs.Lock()
	defer costs.Unlock()
	if costs.byTest == nil {
		costs.byTest = map[string]*cost{}
	}
	c := costs.byTest[top]
	if c == nil {
		c = &cost{}
		costs.byTest[top] = c
	}
	c.runs++
	c.wall += wall
	c.cpu += cpu
}

// WriteCosts writes a table of the client runs of each top-level test,
// the costliest first, and their sum (CFIX_E2E_COSTS=1 prints it when
// the tests end).
func WriteCosts(w io.Writer) {
	costs.Lock()
	defer costs.Unlock()
	names := make([]string, 0, len(costs.byTest))
	var sum cost
	for n, c := range costs.byTest {
		names = append(names, n)
		sum.runs += c.runs
		sum.wall += c.wall
		sum.cpu += c.cpu
	}
	sort.Slice(names, func(i, j int) bool { return costs.byTest[names[i]].cpu > costs.byTest[names[j]].cpu })
	fmt.Fprintf(w, "%-34s %5s %9s %9s\n", "client runs of", "runs", "wall", "cpu")
	for _, n := range names {
		c := costs.byTest[n]
		fmt.Fprintf(w, "%-34s %5d %8.0fs %8.0fs\n", n, c.runs, c.wall.Seconds(), c.cpu.Seconds())
	}
	fmt.Fprintf(w, "%-34s %5d %8.0fs %8.0fs\n", "all", sum.runs, sum.wall.Seconds(), sum.cpu.Seconds())
}
