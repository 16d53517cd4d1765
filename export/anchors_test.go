package export

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
)

var (
	atLine   = regexp.MustCompile(`^<!-- cfix:at ([0-9A-Za-z._-]+) -->$`)
	turnLine = regexp.MustCompile(`^### Turn ([0-9]+)$`)
)

// anchored is what an export with Options.Anchors marks: the uuids of
// the message ends in order, and for each turn the uuid of the end of its
// last message.
type anchored struct {
	ats     []string
	lastOf  map[int]string
	turns   int
	headed  int // message headings after a start mark
	markers int // lines of marks
}

// readAnchors reads the marks of md, checking that each start mark comes
// right before a message's heading and that ends and starts alternate.
func readAnchors(t *testing.T, name, md string) anchored {
	t.Helper()
	a := anchored{lastOf: map[int]string{}}
	lines := strings.Split(md, "\n")
	open, turn := false, 0
	for i, l := range lines {
		switch {
		case l == "<!-- cfix:message -->":
			a.markers++
			if open {
				t.Errorf("%s: line %d: a message starts before the one before it ends", name, i+1)
			}
			open = true
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "#### User") && !strings.HasPrefix(lines[i+1], "#### Assistant") {
				t.Errorf("%s: line %d: the start mark is not before a message's heading", name, i+1)
			}
			a.headed++
		case atLine.MatchString(l):
			a.markers++
			if !open {
				t.Errorf("%s: line %d: an end mark of no message", name, i+1)
			}
			open = false
			a.ats = append(a.ats, atLine.FindStringSubmatch(l)[1])
		case strings.HasPrefix(l, "<!-- cfix:"):
			t.Errorf("%s: line %d: a mark of no kind: %q", name, i+1, l)
		case turnLine.MatchString(l):
			if open {
				t.Errorf("%s: line %d: a turn starts inside a message", name, i+1)
			}
			if turn > 0 && len(a.ats) > 0 {
				a.lastOf[turn] = a.ats[len(a.ats)-1]
			}
			turn++
			a.turns = turn
		}
	}
	if open {
		t.Errorf("%s: the last message has no end mark", name)
	}
	if turn > 0 && len(a.ats) > 0 {
		a.lastOf[turn] = a.ats[len(a.ats)-1]
	}
	return a
}

// TestAnchorsEndWhereForksEnd: on every main transcript of the corpus and
// wild stores, Options.Anchors only adds its lines to the Markdown (the
// rest byte for byte the same), marks messages of the chain a resume loads
// only, and after the last message of turn N names the entry a fork --turn
// N ends at: cfix fork --at that entry plans the same fork as --turn N
// (the first, a middle and the last turn of each).
func TestAnchorsEndWhereForksEnd(t *testing.T) {
	files, marked, forks := 0, 0, 0
	eachMainTranscript(t, func(root string, f store.File, fam *show.Family) {
		files++
		var plain, with bytes.Buffer
		if err := Write(&plain, fam, Options{Format: "md"}); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if err := Write(&with, fam, Options{Format: "md", Anchors: true}); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		var rest []string
		for _, l := range strings.Split(with.String(), "\n") {
			if !strings.HasPrefix(l, "<!-- cfix:") {
				rest = append(rest, l)
			}
		}
		if strings.Join(rest, "\n") != plain.String() {
			t.Errorf("%s: without its marks, the anchored export is not the export", f.Path)
		}
		a := readAnchors(t, f.Path, with.String())
		if a.markers == 0 {
			return
		}
		marked++
		if len(a.ats) != a.headed {
			t.Errorf("%s: %d messages marked, %d ends", f.Path, a.headed, len(a.ats))
		}
		chain := chainOf(t, f.Path)
		for _, u := range a.ats {
			if !slices.Contains(chain, u) {
				t.Errorf("%s: the mark names %s, not an entry of the chain", f.Path, u)
			}
		}
		if _, ok := leftOf(fam); ok {
			return
		}
		// Forks: the end of a turn's last message against --turn
		// (the first turn, one in the middle and the last: a fork
		// plan reads the transcript again).
		for _, n := range slices.Compact([]int{1, (a.turns + 1) / 2, a.turns}) {
			if a.turns == 0 {
				break
			}
			at, ok := a.lastOf[n]
			if !ok {
				t.Errorf("%s: turn %d has no message marked", f.Path, n)
				continue
			}
			// One time for both: a fork's files get the time of its plan.
			now := time.Now()
			byTurn, terr := trim.Fork(trim.ForkOptions{Root: root, Session: f.Path, Turn: n, Now: now})
			byAt, aerr := trim.Fork(trim.ForkOptions{Root: root, Session: f.Path, At: at, Now: now})
			if terr != nil || aerr != nil {
				if (terr == nil) != (aerr == nil) {
					t.Errorf("%s: turn %d: --turn: %v; --at %s: %v", f.Path, n, terr, at, aerr)
				}
				continue
			}
			forks++
			if byTurn.Leaf != byAt.Leaf || byTurn.LeafLine != byAt.LeafLine || byTurn.Entries != byAt.Entries {
				t.Errorf("%s: turn %d: --turn ends at %s (line %d, %d entries), --at %s at %s (line %d, %d entries)", f.Path, n,
					byTurn.Leaf, byTurn.LeafLine, byTurn.Entries, at, byAt.Leaf, byAt.LeafLine, byAt.Entries)
				continue
			}
			if a, b := showPlan(t, byTurn.ChangeSet), showPlan(t, byAt.ChangeSet); a != b {
				t.Errorf("%s: turn %d: the plans differ:\n--turn:\n%s\n--at %s:\n%s", f.Path, n, a, at, b)
			}
		}
	})
	t.Logf("%d transcripts, %d with messages marked, %d forks compared", files, marked, forks)
	if marked < 50 || forks < 50 {
		t.Fatalf("only %d transcripts marked, %d forks compared", marked, forks)
	}
}

func showPlan(t *testing.T, cs *changeset.ChangeSet) string {
	var b bytes.Buffer
	if err := changeset.Show(&b, cs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAnchorsAreMarkdownOfTheChainOnly: html, --branches and a
// subagent's transcript get no marks.
func TestAnchorsAreMarkdownOfTheChainOnly(t *testing.T) {
	root, _ := filepath.Abs("../testdata/corpus/2.1.88/.claude")
	main := filepath.Join(root, "projects", "-home-dev-work-alpha", "3ba86ea1-3a44-408b-917b-a10e19d813f0.jsonl")
	agents, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "agent-a08*.jsonl"))
	if len(agents) != 1 {
		t.Fatalf("the subagent transcript: %v", agents)
	}
	for _, c := range []struct {
		path string
		opts Options
		want bool
	}{
		{main, Options{Format: "md", Anchors: true}, true},
		{main, Options{Format: "html", Anchors: true}, false},
		{main, Options{Format: "md", Anchors: true, Branches: true}, false},
		{agents[0], Options{Format: "md", Anchors: true}, false},
	} {
		fam, err := show.Resolve(root, c.path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, fam, c.opts); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "cfix:at "); got != c.want {
			t.Errorf("%s %+v: marks %v, want %v", filepath.Base(c.path), c.opts, got, c.want)
		}
	}
}

// TestAnchorsOfAHostileUUID: an entry whose uuid is no plain token (a
// line break and the end of a comment in it) ends its message with no
// mark, which is then no fork point; nothing of the uuid is written.
func TestAnchorsOfAHostileUUID(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "55555555-5555-4555-8555-555555555555"
	lines := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","timestamp":"2026-01-01T00:00:01Z","version":"2.1.88","cwd":"/w","message":{"role":"user","content":"first"}}` + "\n" +
		`{"type":"assistant","uuid":"u2 -->\n<!-- cfix:at evil -->","parentUuid":"u1","sessionId":"` + id + `","timestamp":"2026-01-01T00:00:02Z","version":"2.1.88","cwd":"/w","message":{"role":"assistant","id":"m2","content":[{"type":"text","text":"second"}]}}` + "\n"
	lines = strings.Replace(lines, "\n<!--", `\n<!--`, 1)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	fam, err := show.Resolve(root, path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, fam, Options{Format: "md", Anchors: true}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, "evil") || strings.Count(s, "<!-- cfix:at u1 -->") != 1 || strings.Count(s, "<!-- cfix:message -->") != 2 {
		t.Errorf("the marks:\n%s", s)
	}
}
