package repair_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/validate"
)

var (
	randomRuns = flag.Int("random.runs", 120, "TestRandomDamage: how many damaged sessions")
	randomSeed = flag.Uint64("random.seed", 1, "TestRandomDamage: the seed of the damage")
)

// TestRandomDamage damages main transcripts of the corpus and wild stores
// at random: a cut, a line lost, repeated, swapped or torn, a byte
// flipped, a line of garbage, a blank line, a parentUuid pointed nowhere.
// Each goes alone into a store of its own, and whatever the damage, what
// every repair must hold is checked: validate and repair do not fail; the
// repair keeps every entry (but byte-identical repeats, lines that are not
// JSON, and entries holding only results that answer no tool_use where the
// client sends them, which the API refuses) and the results of every tool
// call that had any, and strips no thinking of a third-party model; a second repair plans nothing; undo
// gives back the damaged bytes, modes and mtimes. A failure names the
// run: go test ./repair -run 'TestRandomDamage/NNN' -random.seed S.
func TestRandomDamage(t *testing.T) {
	sources := randomSources(t)
	rng := rand.New(rand.NewPCG(*randomSeed, 0))
	// Whole stores: "wild/NAME" or "corpus/VERSION".
	var stores []string
	for _, name := range wild.Stores(t) {
		stores = append(stores, "wild/"+name)
	}
	vs, err := os.ReadDir(damage.Corpus())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.IsDir() {
			stores = append(stores, "corpus/"+v.Name())
		}
	}
	for i := 0; i < *randomRuns; i++ {
		// One run in four damages a file of a whole store (subagent files,
		// stubs and links across files included); the others a main
		// transcript alone in a store of its own.
		whole := ""
		var src randomSource
		if rng.IntN(4) == 0 {
			whole = stores[rng.IntN(len(stores))]
		} else {
			src = sources[rng.IntN(len(sources))]
		}
		seed := rng.Uint64()
		t.Run(fmt.Sprintf("%03d", i), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			var root, path string
			if kind, name, _ := strings.Cut(whole, "/"); kind == "wild" {
				root = wild.Copy(t, name)
			} else if kind == "corpus" {
				root = damage.CopyStore(t, name)
			}
			if whole != "" {
				files := transcripts(t, root)
				path = files[rng.IntN(len(files))]
				src.name = filepath.Join(whole, strings.TrimPrefix(path, root))
			} else {
				root = filepath.Join(t.TempDir(), ".claude")
				path = filepath.Join(root, "projects", src.folder, filepath.Base(src.path))
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			from := path
			if whole == "" {
				from = src.path
			}
			data, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			var did []string
			for n := 1 + rng.IntN(3); n > 0; n-- {
				var what string
				data, what = mutate(rng, data)
				did = append(did, what)
			}
			t.Logf("%s, damaged: %s", src.name, strings.Join(did, "; "))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			checkRepairHolds(t, root)
		})
	}
}

// transcripts lists the .jsonl files under root's projects folder.
func transcripts(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(root, "projects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("no transcript under %s", root)
	}
	return out
}

// checkRepairHolds repairs the store at root and checks what every repair
// must hold (see TestRandomDamage).
func checkRepairHolds(t *testing.T, root string) {
	t.Helper()
	age(t, root)
	before := readFacts(t, root)
	damaged := snapshot(t, root)
	findings(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if cs.Empty() {
		return
	}
	var plan bytes.Buffer
	if err := changeset.Show(&plan, cs); err != nil {
		t.Fatalf("showing the plan: %v", err)
	}
	res := apply(t, cs, t.TempDir())
	after := readFacts(t, root)
	for k := range before.entries {
		if !after.entries[k] && !before.orphanOnly[k] {
			t.Errorf("entry %s is gone", k)
		}
	}
	for k, n := range before.results {
		if after.results[k] != n && !(before.orphans[k] && after.results[k] == 0) {
			t.Errorf("tool_use %s had %d results, now %d", k, n, after.results[k])
		}
	}
	for k, n := range before.foreign {
		if after.foreign[k] != n {
			t.Errorf("%s: %d thinking blocks of third-party models before, %d after", k, n, after.foreign[k])
		}
	}
	if t.Failed() { // the plan once, however many checks failed
		t.Logf("plan:\n%s", plan.String())
	}
	findings(t, root)
	age(t, root)
	settled(t, root, plan.String())

	undoTo(t, res.Journal, root, damaged)
}

// randomSource is a main transcript to damage.
type randomSource struct {
	name, path, folder string
}

var sessionFile = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$`)

// randomSources lists the main transcripts of the corpus and wild stores
// (up to 2 MB each, so a run stays short), sorted, so a seed names the
// same damage on every machine.
func randomSources(t *testing.T) []randomSource {
	t.Helper()
	roots := wild.AllRoots(t)
	var out []randomSource
	for _, root := range roots {
		paths, err := filepath.Glob(filepath.Join(root, "projects", "*", "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if !sessionFile.MatchString(filepath.Base(p)) || fi.Size() == 0 || fi.Size() > 2<<20 {
				continue
			}
			name, _ := filepath.Rel(filepath.Dir(filepath.Dir(root)), p)
			out = append(out, randomSource{name: name, path: p, folder: filepath.Base(filepath.Dir(p))})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d transcripts to damage", len(out))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// mutate damages data in one random way and says how.
func mutate(rng *rand.Rand, data []byte) ([]byte, string) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return data, "nothing (empty)"
	}
	i := rng.IntN(len(lines))
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	switch rng.IntN(9) {
	case 0:
		k := rng.IntN(len(data))
		return data[:k], fmt.Sprintf("cut at byte %d of %d", k, len(data))
	case 1:
		l := lines[i]
		k := rng.IntN(len(l))
		lines[i] = append(append([]byte(nil), l[:k]...), '\n')
		return join(lines), fmt.Sprintf("line %d torn at byte %d", i+1, k)
	case 2:
		lines = append(lines[:i:i], lines[i+1:]...)
		return join(lines), fmt.Sprintf("line %d lost", i+1)
	case 3:
		l := withNewline(lines[i])
		lines = append(lines[:i+1:i+1], append([][]byte{l}, lines[i+1:]...)...)
		return join(lines), fmt.Sprintf("line %d repeated", i+1)
	case 4:
		if i+1 >= len(lines) {
			return data, "nothing (swap at the end)"
		}
		a, b := withNewline(lines[i]), withNewline(lines[i+1])
		lines[i], lines[i+1] = b, a
		return join(lines), fmt.Sprintf("lines %d and %d swapped", i+1, i+2)
	case 5:
		k := rng.IntN(len(data))
		out := bytes.Clone(data)
		const set = `{}[]":,x0\ `
		out[k] = set[rng.IntN(len(set))]
		return out, fmt.Sprintf("byte %d set to %q", k, out[k])
	case 6:
		g := make([]byte, 1+rng.IntN(40))
		for j := range g {
			g[j] = byte(rng.IntN(256))
			if g[j] == '\n' {
				g[j] = 0
			}
		}
		lines = append(lines[:i:i], append([][]byte{append(g, '\n')}, lines[i:]...)...)
		return join(lines), fmt.Sprintf("garbage line before line %d", i+1)
	case 7:
		lines = append(lines[:i:i], append([][]byte{[]byte("\n")}, lines[i:]...)...)
		return join(lines), fmt.Sprintf("blank line before line %d", i+1)
	default:
		re := regexp.MustCompile(`"parentUuid":"[^"]*"`)
		if !re.Match(lines[i]) {
			return data, fmt.Sprintf("nothing (line %d has no parentUuid)", i+1)
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&(1<<48-1))
		lines[i] = re.ReplaceAll(lines[i], []byte(`"parentUuid":"`+id+`"`))
		return join(lines), fmt.Sprintf("line %d's parentUuid set to %s", i+1, id)
	}
}

func withNewline(l []byte) []byte {
	if bytes.HasSuffix(l, []byte("\n")) {
		return l
	}
	return append(bytes.Clone(l), '\n')
}

// facts is what a repair must keep of a store's transcripts.
type facts struct {
	entries map[string]bool // path|uuid of every JSON line holding a uuid
	results map[string]int  // path|tool_use_id → distinct lines holding a result for it
	foreign map[string]int  // path → thinking blocks of third-party models
	// orphans are the results a repair may remove: those that answer no
	// tool_use of their file, in a file whose client sends them (1.0.x,
	// 2.0.x: the API answers 400); orphanOnly the entries holding nothing
	// else (path|uuid).
	orphans, orphanOnly map[string]bool
}

func readFacts(t *testing.T, root string) facts {
	t.Helper()
	f := facts{map[string]bool{}, map[string]int{}, map[string]int{}, map[string]bool{}, map[string]bool{}}
	for _, p := range transcripts(t, root) {
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ff := factsOfFile(b)
		for _, u := range ff.entries {
			f.entries[rel+"|"+u] = true
		}
		for id, n := range ff.results {
			f.results[rel+"|"+id] += n
		}
		if ff.foreign > 0 {
			f.foreign[rel] += ff.foreign
		}
		for _, id := range ff.orphans {
			f.orphans[rel+"|"+id] = true
		}
		for _, u := range ff.orphanOnly {
			f.orphanOnly[rel+"|"+u] = true
		}
	}
	return f
}

// fileFacts are the facts of one transcript, its paths left out.
type fileFacts struct {
	entries             []string       // uuids
	results             map[string]int // tool_use_id → lines
	foreign             int
	orphans, orphanOnly []string // tool_use_ids, uuids
}

// factsMemo keeps the facts of each transcript content read: most files
// of a whole store are the same in every run that copies it, and before
// and after a repair.
var factsMemo = struct {
	sync.Mutex
	m map[[32]byte]*fileFacts
}{m: map[[32]byte]*fileFacts{}}

// factsOfFile reads the facts of the transcript b.
func factsOfFile(b []byte) *fileFacts {
	sum := sha256.Sum256(b)
	factsMemo.Lock()
	ff, ok := factsMemo.m[sum]
	factsMemo.Unlock()
	if ok {
		return ff
	}
	ff = &fileFacts{results: map[string]int{}}
	type block struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	seen := map[string]bool{}
	uses := map[string]bool{}
	resultsOf := map[string][]string{} // uuid → tool_use_ids of its results, when it holds only results
	version := ""
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || seen[string(line)] {
			continue
		}
		seen[string(line)] = true
		var e struct {
			UUID    string `json:"uuid"`
			Type    string `json:"type"`
			Version string `json:"version"`
			Message struct {
				Model   string          `json:"model"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.Version != "" && (e.Type == "user" || e.Type == "assistant") {
			version = e.Version // of the last chain entry, as repair reads it
		}
		if e.UUID != "" {
			ff.entries = append(ff.entries, e.UUID)
		}
		var blocks []block
		json.Unmarshal(e.Message.Content, &blocks)
		var ids []string
		for _, bl := range blocks {
			switch bl.Type {
			case "tool_use":
				uses[bl.ID] = true
			case "tool_result":
				ff.results[bl.ToolUseID]++
				ids = append(ids, bl.ToolUseID)
			}
		}
		if e.UUID != "" && len(ids) > 0 && len(ids) == len(blocks) {
			resultsOf[e.UUID] = ids
		}
		if validate.ThirdPartyModel(e.Message.Model) {
			for _, bl := range blocks {
				if bl.Type == "thinking" {
					ff.foreign++
				}
			}
		}
	}
	if !session.LoaderFor(version).DropsOrphanResults {
		for id := range ff.results {
			if !uses[id] {
				ff.orphans = append(ff.orphans, id)
			}
		}
		for u, ids := range resultsOf {
			only := true
			for _, id := range ids {
				only = only && !uses[id]
			}
			if only {
				ff.orphanOnly = append(ff.orphanOnly, u)
			}
		}
	}
	factsMemo.Lock()
	factsMemo.m[sum] = ff
	factsMemo.Unlock()
	return ff
}
