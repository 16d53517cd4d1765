// Command gen builds a large, realistic Claude Code store for benchmarks out
// of the real sessions under testdata/corpus:
//
//	go run ./bench/gen -out DIR -size 500MB -big 200MB [-seed 1] [-projects N]
//
// It writes DIR/.claude/projects/<folder>/... and DIR/manifest.json (what
// was generated, and where the big session is).
//
// Every project folder is named after a made-up absolute path
// (/home/u/src/proj-12, ...). Into the folders go copies of the corpus's
// project folders ("units": main sessions with their subagents, flat or
// hierarchical, and .meta.json sidecars): first every unit once as it is,
// then random units, some of whose main sessions are replayed several times
// into one file, until the transcripts reach -size bytes. One session (the
// corpus's largest) is replayed until it reaches -big bytes. A few todos/
// and debug/ files are added.
//
// Every copy gets fresh ids, so the store is valid: each session copy its
// own session id (file name and sessionId), each entry its own uuid, with
// parentUuid, logicalParentUuid, leafUuid and the other references to it
// rewritten to match; tool_use ids and the tool_result tool_use_ids naming
// them, message and request ids likewise; agent ids (file names and
// agentId). Each copy's cwd is the folder's made-up path, and paths under
// the corpus's cwd are rewritten to it. Timestamps move forward per copy and
// per replay, so a replayed file's times keep increasing.
//
// Fresh ids are hashes of (seed, copy, file, replay, old id): the output
// depends only on the flags, never on map order or timing.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/cfix-dev/cfix/store"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

// manifest is what DIR/manifest.json holds.
type manifest struct {
	Seed       uint64 `json:"seed"`
	Size       int64  `json:"size"`       // requested total transcript bytes
	Big        int64  `json:"big"`        // requested size of the big session
	Projects   int    `json:"projects"`   // project folders written
	Files      int    `json:"files"`      // .jsonl files written
	Sessions   int    `json:"sessions"`   // main session files
	Subagents  int    `json:"subagents"`  // subagent files
	Bytes      int64  `json:"bytes"`      // .jsonl bytes written
	BigSession string `json:"bigSession"` // path of the big session, relative to DIR
	BigBytes   int64  `json:"bigBytes"`
}

// gen is one run of the generator.
type gen struct {
	seed    uint64
	rng     *rand.Rand
	units   []*unit
	claude  string // DIR/.claude
	folders []*folder
	copies  int             // unit copies made; numbers the id namespaces
	agents  map[string]bool // "<folder>/<agent id>" already used
	debug   string          // the last debug file written, for debug/latest
	m       manifest
}

// folder is one project folder of the generated store.
type folder struct {
	cwd  string // the made-up absolute path
	dir  string // DIR/.claude/projects/<encoded cwd>
	used bool
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fl.String("out", "", "output `dir`ectory (required): the store goes to DIR/.claude")
	corpus := fl.String("corpus", "", "corpus `dir`ectory (default: testdata/corpus of the module)")
	size := fl.String("size", "500MB", "total size of the transcripts, at least (1MB = 1<<20 bytes)")
	big := fl.String("big", "200MB", "size of the one big session, at least (0: none)")
	seed := fl.Uint64("seed", 1, "random seed: the same flags give the same store")
	projects := fl.Int("projects", 0, "number of project folders (0: one per 2MB of -size, 3 to 250)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" || fl.NArg() > 0 {
		return errors.New("usage: gen -out DIR [-size 500MB] [-big 200MB] [-seed N] [-projects N] [-corpus DIR]")
	}
	total, err := parseSize(*size)
	if err != nil {
		return err
	}
	bigSize, err := parseSize(*big)
	if err != nil {
		return err
	}
	if *corpus == "" {
		if *corpus, err = findCorpus(); err != nil {
			return err
		}
	}
	nproj := *projects
	if nproj <= 0 {
		nproj = int(min(max(total/(2<<20), 3), 250))
	}

	start := time.Now()
	units, err := loadCorpus(*corpus)
	if err != nil {
		return fmt.Errorf("load corpus: %w", err)
	}
	g := &gen{
		seed:   *seed,
		rng:    rand.New(rand.NewPCG(*seed, 0x63666978)),
		units:  units,
		claude: filepath.Join(*out, ".claude"),
		agents: map[string]bool{},
		m:      manifest{Seed: *seed, Size: total, Big: bigSize},
	}
	if _, err := os.Stat(g.claude); err == nil {
		return fmt.Errorf("%s already exists: remove it first", g.claude)
	}
	g.makeFolders(nproj)

	if bigSize > 0 {
		// The big session replays the corpus's largest main session.
		var bu *unit
		var bf *tmplFile
		for _, u := range units {
			for _, f := range u.mains {
				if bf == nil || f.size > bf.size {
					bu, bf = u, f
				}
			}
		}
		if err := g.copyUnit(bu, g.pickFolder(), bf, bigSize, false); err != nil {
			return err
		}
	}
	// Every unit once, as it is, then random units with replays until the
	// store is big enough.
	for _, i := range g.rng.Perm(len(units)) {
		if err := g.copyUnit(units[i], g.pickFolder(), nil, 0, true); err != nil {
			return err
		}
	}
	for g.m.Bytes < total {
		u := units[g.rng.IntN(len(units))]
		if err := g.copyUnit(u, g.pickFolder(), nil, 0, false); err != nil {
			return err
		}
	}
	if g.debug != "" {
		if err := os.Symlink(g.debug, filepath.Join(g.claude, "debug", "latest")); err != nil {
			return err
		}
	}
	for _, f := range g.folders {
		if f.used {
			g.m.Projects++
		}
	}
	data, err := json.MarshalIndent(g.m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "gen: %d files (%d sessions, %d subagents) in %d projects, %.1f MB; big session %s (%.1f MB); %.1fs\n",
		g.m.Files, g.m.Sessions, g.m.Subagents, g.m.Projects, float64(g.m.Bytes)/(1<<20),
		g.m.BigSession, float64(g.m.BigBytes)/(1<<20), time.Since(start).Seconds())
	return nil
}

// parseSize parses a size such as 500MB, 1.5GB, 64KiB or 1000 (bytes).
// K, M and G are binary: 1MB = 1<<20 bytes.
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult, t = 1<<10, t[:n-1]
		case 'M':
			mult, t = 1<<20, t[:n-1]
		case 'G':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(v * float64(mult)), nil
}

// findCorpus returns testdata/corpus of the module the working directory
// is in.
func findCorpus() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "corpus"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: give -corpus")
		}
		dir = parent
	}
}

// projectPatterns are the made-up project paths; %d is the folder number,
// which keeps them (and their encodings) distinct. Dots, spaces and
// underscores all encode to '-', as in real stores.
var projectPatterns = []string{
	"/home/u/src/proj-%d",
	"/home/u/src/github.com/acme/service_%d",
	"/home/u/work/client site %d",
	"/home/u/dev/app.v%d/web",
	"/srv/repos/team-%d/api",
}

// makeFolders plans n project folders; they are created when first used.
func (g *gen) makeFolders(n int) {
	seen := map[string]bool{}
	for i := 1; len(g.folders) < n; i++ {
		cwd := fmt.Sprintf(projectPatterns[g.rng.IntN(len(projectPatterns))], i)
		name := store.EncodeProject(cwd)
		if seen[name] {
			continue
		}
		seen[name] = true
		g.folders = append(g.folders, &folder{cwd: cwd, dir: filepath.Join(g.claude, "projects", name)})
	}
}

// pickFolder chooses the folder of the next copy: each folder once in turn,
// then a skewed choice so that some projects are much bigger than others.
func (g *gen) pickFolder() *folder {
	if g.copies < len(g.folders) {
		return g.folders[g.copies]
	}
	u := g.rng.Float64()
	return g.folders[int(u*u*float64(len(g.folders)))]
}

// repeats chooses how many times a main session is replayed into its file:
// mostly once, sometimes a few times, rarely many.
func (g *gen) repeats() int {
	switch u := g.rng.Float64(); {
	case u < 0.70:
		return 1
	case u < 0.90:
		return 2 + g.rng.IntN(4)
	case u < 0.98:
		return 6 + g.rng.IntN(15)
	default:
		return 21 + g.rng.IntN(80)
	}
}

// copyCtx is one copy of a unit into a folder.
type copyCtx struct {
	g      *gen
	u      *unit
	fo     *folder
	ns     string            // id namespace of the copy
	shift  time.Duration     // how far its timestamps move forward
	agents map[string]string // old agent id -> new
	// agentText rewrites agent ids in text ("agentId: a1b2c3d (for resuming...)").
	agentText *strings.Replacer
}

// session returns the new id of the unit's session old.
func (c *copyCtx) session(old string) string { return newID(c.ns+"/session", old) }

// fileNS returns the id namespace of replay r of the unit's file i
// (mains first, then subagents).
func (c *copyCtx) fileNS(i, r int) string { return fmt.Sprintf("%s/%d/%d", c.ns, i, r) }

// copyUnit writes a copy of u into fo. If big is not nil, that main file is
// replayed until it has bigSize bytes. If plain, no file is replayed.
func (g *gen) copyUnit(u *unit, fo *folder, big *tmplFile, bigSize int64, plain bool) error {
	c := &copyCtx{
		g:      g,
		u:      u,
		fo:     fo,
		ns:     fmt.Sprintf("%d/%d", g.seed, g.copies),
		shift:  time.Duration(g.rng.Int64N(int64(300 * 24 * time.Hour))),
		agents: map[string]string{},
	}
	g.copies++
	if err := os.MkdirAll(fo.dir, 0o755); err != nil {
		return err
	}
	fo.used = true
	var pairs []string
	for _, a := range u.agents {
		n := newAgentID(c.ns, a)
		for k := 1; g.agents[fo.dir+"/"+n]; k++ {
			n = newAgentID(fmt.Sprintf("%s/%d", c.ns, k), a)
		}
		g.agents[fo.dir+"/"+n] = true
		c.agents[a] = n
		pairs = append(pairs, a, n)
	}
	if len(pairs) > 0 {
		c.agentText = strings.NewReplacer(pairs...)
	}

	for i, f := range u.mains {
		repeats, minBytes := 1, int64(0)
		switch {
		case f == big:
			minBytes = bigSize
		case !plain:
			repeats = g.repeats()
		}
		sid := c.session(f.session)
		path := filepath.Join(fo.dir, sid+".jsonl")
		n, err := c.writeTranscript(path, f, i, repeats, minBytes)
		if err != nil {
			return err
		}
		g.m.Sessions++
		if f == big {
			g.m.BigSession, _ = filepath.Rel(filepath.Dir(g.claude), path)
			g.m.BigBytes = n
			continue
		}
		if err := c.writeExtras(f, sid); err != nil {
			return err
		}
	}
	for j, f := range u.subs {
		parent := c.session(f.session)
		dir := filepath.Join(fo.dir, parent, "subagents")
		if f.flat {
			dir = fo.dir
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		base := filepath.Join(dir, "agent-"+c.agents[f.agent])
		if _, err := c.writeTranscript(base+".jsonl", f, len(u.mains)+j, 1, 0); err != nil {
			return err
		}
		g.m.Subagents++
		if f.hasMeta {
			if err := c.writeMeta(base+".meta.json", f, len(u.mains)+j); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTranscript writes the copy of f (the unit's file number i) to path:
// f's entries replayed repeats times, and more until the file has at least
// minBytes. Each replay has fresh ids and later timestamps, and its first
// root entry continues the previous replay's chain. It returns the size
// written.
func (c *copyCtx) writeTranscript(path string, f *tmplFile, i, repeats int, minBytes int64) (int64, error) {
	out, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	cw := &countWriter{w: bufio.NewWriterSize(out, 256<<10)}
	enc := json.NewEncoder(cw)
	enc.SetEscapeHTML(false)
	shift := c.shift
	last := "" // uuid of the last entry written
	for r := 0; len(f.lines) > 0; r++ {
		w := &rewriter{c: c, f: f, ns: c.fileNS(i, r), shift: shift, memo: map[string]string{}}
		link := r > 0
		for n, line := range f.lines {
			d := json.NewDecoder(bytes.NewReader(line))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				return 0, fmt.Errorf("%s/%s:%d: %v", c.u.name, f.rel, n+1, err)
			}
			w.entry(m)
			if link && isRoot(m) && last != "" {
				m["parentUuid"] = last
				link = false
			}
			if id, ok := m["uuid"].(string); ok && id != "" {
				last = id
			}
			if err := enc.Encode(m); err != nil {
				return 0, err
			}
		}
		if r+1 >= repeats && cw.n >= minBytes {
			break
		}
		// The next replay starts a while after this one ended.
		shift += f.span + time.Minute + time.Duration(c.g.rng.Int64N(int64(time.Hour)))
	}
	if err := cw.w.Flush(); err != nil {
		return 0, err
	}
	if err := out.Close(); err != nil {
		return 0, err
	}
	c.g.m.Files++
	c.g.m.Bytes += cw.n
	return cw.n, nil
}

// isRoot reports whether m is a chain entry that starts a chain (null
// parentUuid) and is not a compact boundary, whose null parent is by design.
func isRoot(m map[string]any) bool {
	p, ok := m["parentUuid"]
	return ok && p == nil && m["uuid"] != nil && m["subtype"] != "compact_boundary"
}

// writeMeta writes the copy of a subagent's .meta.json; its toolUseId
// names the Agent tool call in the parent session.
func (c *copyCtx) writeMeta(path string, f *tmplFile, i int) error {
	if len(bytes.TrimSpace(f.meta)) == 0 {
		return os.WriteFile(path, f.meta, 0o644)
	}
	d := json.NewDecoder(bytes.NewReader(f.meta))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return fmt.Errorf("%s/%s meta: %v", c.u.name, f.rel, err)
	}
	w := &rewriter{c: c, f: f, ns: c.fileNS(i, 0), shift: c.shift, memo: map[string]string{}}
	w.value("", m)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return os.WriteFile(path, bytes.TrimSuffix(buf.Bytes(), []byte("\n")), 0o644)
}

// writeExtras gives a few session copies the todos/ and debug/ files their
// corpus session had.
func (c *copyCtx) writeExtras(f *tmplFile, sid string) error {
	fix := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), f.session, sid)
		if c.u.oldCwd != "" {
			s = replacePath(s, c.u.oldCwd, c.fo.cwd)
		}
		return []byte(s)
	}
	if len(f.todo) > 0 && c.g.rng.Float64() < 0.05 {
		dir := filepath.Join(c.g.claude, "todos")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, sid+"-agent-"+sid+".json"), fix(f.todo), 0o644); err != nil {
			return err
		}
	}
	if len(f.debug) > 0 && c.g.rng.Float64() < 0.05 {
		dir := filepath.Join(c.g.claude, "debug")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, sid+".txt"), fix(f.debug), 0o644); err != nil {
			return err
		}
		c.g.debug = sid + ".txt"
	}
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w *bufio.Writer
	n int64
}

func (cw *countWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}
