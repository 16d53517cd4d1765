package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

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
	Root         string         `json:"root"`
	FilesChecked int            `json:"files_checked"`
	Findings     []Finding      `json:"findings"`
	Counts       map[string]int `json:"counts"`
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
	// Targets are session ids, paths of .jsonl files, or project folders
	// (paths, or names under projects/). None means the whole store.
	Targets []string
	// Workers is the number of files checked at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called as files are done.
	Progress func(done, total int)
}

// TargetError reports a target that names nothing in the store.
type TargetError struct{ Target string }

func (e *TargetError) Error() string {
	return fmt.Sprintf("target %s: no such session id, .jsonl file or project folder", e.Target)
}

// Run checks the store (or the targets in it) and returns the findings.
func Run(opts Options) (*Report, error) {
	whole := len(opts.Targets) == 0
	l, err := Files(opts.Root, opts.Targets)
	if err != nil {
		return nil, err
	}
	results := checkFiles(l.Files, opts)
	st := &storeCheck{root: opts.Root, layout: l, results: results, whole: whole}
	st.run()

	rep := &Report{Root: opts.Root, FilesChecked: len(l.Files), Counts: map[string]int{"error": 0, "warning": 0, "notice": 0}}
	for _, r := range results {
		rep.Findings = append(rep.Findings, r.findings...)
	}
	rep.Findings = append(rep.Findings, st.findings...)
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Hint == "" {
			f.Hint = hintFor(f)
		}
		rep.Counts[f.Severity.String()]++
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

// Files returns the files a run checks: the whole store, or the targets.
func Files(root string, targets []string) (*store.Layout, error) {
	if len(targets) == 0 {
		l, err := store.Scan(root)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", root, err)
		}
		return l, nil
	}
	return resolveTargets(root, targets)
}

// checkFiles checks transcripts in parallel, keeping the layout's order.
func checkFiles(files []store.File, opts Options) []*fileResult {
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
			for i := range jobs {
				results[i] = c.check(files[i])
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

// resolveTargets turns targets into the files to check.
func resolveTargets(root string, targets []string) (*store.Layout, error) {
	out := &store.Layout{Root: root}
	seen := map[string]bool{}
	addLayout := func(l *store.Layout) {
		for _, f := range l.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				out.Files = append(out.Files, f)
			}
		}
		out.Metas = append(out.Metas, l.Metas...)
		out.Indexes = append(out.Indexes, l.Indexes...)
		out.SessionDirs = append(out.SessionDirs, l.SessionDirs...)
		out.Projects = append(out.Projects, l.Projects...)
	}
	pdir := store.ProjectsDir(root)
	var all *store.Layout
	for _, t := range targets {
		abs, _ := filepath.Abs(t)
		fi, statErr := os.Stat(abs)
		switch {
		case statErr == nil && fi.IsDir():
			folder := filepath.Base(abs)
			if filepath.Dir(abs) != pdir {
				return nil, fmt.Errorf("target %s: not a project folder of store %s", t, root)
			}
			l, err := store.ScanProject(root, folder)
			if err != nil {
				return nil, fmt.Errorf("target %s: %w", t, err)
			}
			addLayout(l)
		case statErr == nil:
			f, err := fileAt(root, abs)
			if err != nil {
				return nil, fmt.Errorf("target %s: %w", t, err)
			}
			addLayout(&store.Layout{Files: []store.File{f}})
		case !strings.ContainsRune(t, os.PathSeparator) && dirExists(filepath.Join(pdir, t)):
			l, err := store.ScanProject(root, t)
			if err != nil {
				return nil, fmt.Errorf("target %s: %w", t, err)
			}
			addLayout(l)
		case store.IsUUID(t):
			if all == nil {
				var err error
				if all, err = store.Scan(root); err != nil {
					return nil, fmt.Errorf("store %s: %w", root, err)
				}
			}
			fam := store.Family(all, t)
			if len(fam.Files) == 0 {
				return nil, &TargetError{t}
			}
			addLayout(fam)
		default:
			if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
				return nil, fmt.Errorf("target %s: %w", t, statErr)
			}
			return nil, &TargetError{t}
		}
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, nil
}

// fileAt describes the transcript at path, placing it in the store's
// layout when it lies under projects/.
func fileAt(root, path string) (store.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.File{}, err
	}
	f := store.File{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), Kind: store.KindSession}
	name := filepath.Base(path)
	stem := strings.TrimSuffix(name, ".jsonl")
	rel, err := filepath.Rel(store.ProjectsDir(root), path)
	parts := strings.Split(rel, string(os.PathSeparator))
	if err != nil || strings.HasPrefix(rel, "..") {
		parts = []string{filepath.Base(filepath.Dir(path)), name}
	}
	f.Project = parts[0]
	switch {
	case len(parts) >= 4 && parts[2] == "subagents" && strings.HasPrefix(name, "agent-"):
		f.Kind, f.Session, f.Agent = store.KindAgent, parts[1], strings.TrimPrefix(stem, "agent-")
	case strings.HasPrefix(name, "agent-"):
		f.Kind, f.Agent = store.KindAgentFlat, strings.TrimPrefix(stem, "agent-")
	default:
		f.Session = stem
	}
	return f, nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// parseJSONFile decodes a small JSON file into v.
func parseJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
