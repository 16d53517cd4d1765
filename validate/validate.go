package validate

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
)

// Finding is one thing found wrong or worth knowing.
type Finding struct {
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	Path     string   `json:"path"` // absolute path of the file the finding is about
	Line     int      `json:"line"` // 1-based; 0 when no line applies
	Message  string   `json:"message"`
	Hint     string   `json:"hint"` // the cfix command that fixes it, or ""
	// Writer is the verdict of the client version that wrote the file,
	// when it differs from the resuming client's (Report.Client): the
	// severity that client gives the finding ("none" for none).
	Writer *WriterVerdict `json:"writer,omitempty"`
	// More, when not 0, says that this finding stands for More findings
	// of its code and severity in its file that are not listed (past the
	// first MaxPerCode), from line Line on: the counts hold them all.
	More int `json:"more,omitempty"`
	last int // the line of the last of them
	// unfixed is set by a check that knows the planner of its code
	// leaves this finding as it is: it gets no hint.
	unfixed bool
}

// WriterVerdict is what the client version that wrote a file makes of a
// finding that the resuming client judges otherwise.
type WriterVerdict struct {
	Version  string `json:"version"`
	Severity string `json:"severity"` // error, warning, notice or none
}

// Client is the client version a run judges the chain checks by.
type Client struct {
	Version string `json:"version"`
	// From says how it was chosen: "--client", "the installed claude",
	// "the newest version that wrote to the store".
	From string `json:"from"`
}

// MarshalText renders a severity as its name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	case "notice":
		*s = Notice
	default:
		return fmt.Errorf("severity %q: unknown", b)
	}
	return nil
}

// Report is the result of a validation run.
type Report struct {
	Root         string `json:"root"`
	FilesChecked int    `json:"files_checked"`
	// Client is the client version whose resume the chain checks model:
	// the one that will resume the sessions, whatever version wrote them.
	Client   Client    `json:"client"`
	Findings []Finding `json:"findings"`
	// WriterFindings are the findings the version that wrote a file would
	// give and the resuming client does not (its loader keeps what an older
	// one lost, or drops what it sent): kept for the record, neither
	// printed nor counted.
	WriterFindings []Finding `json:"writer_findings,omitempty"`
	// Counts holds the number of findings of each severity ("error",
	// "warning", "notice", always present) and of each code found.
	Counts map[string]int `json:"counts"`
}

// Has reports whether the report holds a finding of severity s or worse.
func (r *Report) Has(s Severity) bool {
	for _, f := range r.Findings {
		if f.Severity >= s {
			return true
		}
	}
	return false
}

// Options configure a validation run.
type Options struct {
	// Root is the store directory (see store.Resolve).
	Root string
	// Targets are what the user named: session ids or id prefixes, paths
	// of .jsonl files, project folders, working directories (see
	// store.Resolver). None means the whole store.
	Targets []string
	// Workers is the number of files checked at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called as files are done.
	Progress func(done, total int)
	// Resolver, when set, resolves Targets: one the caller has resolved
	// them with already, whose scan of the store is not made again.
	Resolver *store.Resolver
	// Client is the version of the Claude Code client that will resume
	// the sessions, whose loader and request the chain checks model; ""
	// means the newest version that wrote to the store
	// (store.NewestVersion). ClientFrom says where a given one comes from.
	Client, ClientFrom string
	// DesktopDir is the folder of Claude Desktop's index of its sessions
	// (claude-code-sessions, see desktop.Dir); "" checks none.
	DesktopDir string
}

// Run checks the store (or the targets in it) and returns the findings.
func Run(opts Options) (*Report, error) {
	whole := len(opts.Targets) == 0
	r := opts.Resolver
	if r == nil {
		r = store.NewResolver(opts.Root, nil)
	}
	l, err := r.Targets(opts.Targets)
	if err != nil {
		return nil, err
	}
	client := Client{Version: opts.Client, From: opts.ClientFrom}
	if client.Version == "" {
		all := l
		if !whole {
			if all, err = r.Layout(); err != nil {
				return nil, err
			}
		}
		client = Client{Version: store.NewestVersion(all.Files), From: "the newest version that wrote to the store"}
	}
	opts.Client = client.Version
	dx, err := desktop.Read(opts.DesktopDir)
	if err != nil {
		return nil, err
	}
	results := checkFiles(l.Files, opts, whole && hasPlans(opts.Root))
	st := &storeCheck{root: opts.Root, layout: l, results: results, whole: whole, desktop: dx}
	st.run()

	rep := &Report{Root: opts.Root, FilesChecked: len(l.Files), Client: client, Counts: map[string]int{"error": 0, "warning": 0, "notice": 0}}
	for _, r := range results {
		rep.Findings = append(rep.Findings, r.findings...)
		rep.WriterFindings = append(rep.WriterFindings, r.writerOnly...)
	}
	rep.Findings = append(rep.Findings, st.findings...)
	rep.Findings = append(rep.Findings, st.cap.finish()...)
	rep.Findings = append(rep.Findings, linkFindings(l)...)
	behind := outsideLinks(l)
	for i := range rep.Findings {
		f := &rep.Findings[i]
		// No planner writes outside the store: a file outside it gets no hint.
		if f.Hint == "" && !behind(f.Path) && store.Within(opts.Root, f.Path) {
			f.Hint = hintFor(f)
		}
		rep.Counts[f.Severity.String()] += f.Count()
		rep.Counts[string(f.Code)] += f.Count()
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Code < b.Code
	})
	return rep, nil
}

// hasPlans reports whether the store keeps plans (plans/<slug>.md): only
// then are the slugs transcripts name read, to find the plans none names.
func hasPlans(root string) bool {
	ps, err := store.Plans(root)
	return err == nil && len(ps) > 0
}

// checkFiles checks transcripts in parallel, keeping the layout's order;
// slugs: read the plan slugs of user entries.
func checkFiles(files []store.File, opts Options, slugs bool) []*fileResult {
	n := opts.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	results := make([]*fileResult, len(files))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newChecker()
			c.slugs = slugs
			c.client = opts.Client
			for i := range jobs {
				results[i] = c.check(files[i]).done()
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(files))
					mu.Unlock()
				}
			}
		}()
	}
	// Big files first, so one huge session does not finish last alone.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]].Size > files[order[b]].Size })
	for _, i := range order {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

// parseJSONFile decodes a small JSON file into v.
func parseJSONFile(path string, v any) error {
	b, err := rfile.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
