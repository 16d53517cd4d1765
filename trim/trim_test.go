package trim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// copyStore copies a store (the .claude folder of a corpus or wild
// version) into a temporary folder.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), ".claude")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// stores are the corpus and wild stores the tests run on.
func stores(t *testing.T) []string {
	t.Helper()
	out := wild.AllRoots(t)
	if len(out) < 10 {
		t.Fatalf("found %d stores", len(out))
	}
	return out
}

func mains(t *testing.T, root string) []store.File {
	t.Helper()
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.File
	for _, f := range l.Files {
		if f.Kind == store.KindSession && store.IsUUID(f.Session) {
			out = append(out, f)
		}
	}
	return out
}

func apply(t *testing.T, cs *changeset.ChangeSet) {
	t.Helper()
	if _, err := changeset.Apply(cs, changeset.ApplyOptions{Force: true, JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}

// codes returns the finding codes validate reports for one file.
func codes(t *testing.T, root, path string) map[string]int {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root, Targets: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range rep.Findings {
		if f.Path == path {
			out[string(f.Code)]++
		}
	}
	return out
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(raw, []byte("\n"))
}

// TestTrimInPlace trims every main transcript of the corpus and wild
// stores in place, with every option and the last turn kept, and holds
// the result to what trim promises: lines it does not list are byte for
// byte the same, the dropped entries are the only ones the loaded chain
// loses, and validate finds no code it did not find before.
func TestTrimInPlace(t *testing.T) {
	for _, src := range stores(t) {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			root := copyStore(t, src)
			for _, f := range mains(t, root) {
				before := lines(t, f.Path)
				beforeCodes := codes(t, root, f.Path)
				ld0, err := validate.LoadedChain(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				p, err := Trim(Options{Root: root, Session: f.Path, Thinking: true, ToolOutput: true, Images: true, Progress: true, KeepTurns: 1, InPlace: true})
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				if p.ChangeSet.Empty() {
					continue
				}
				trims := p.ChangeSet.Ops[0].Transform.Trim
				apply(t, p.ChangeSet)
				after := lines(t, f.Path)
				// Lines not listed are the same bytes; dropped ones are gone.
				dropped := map[string]bool{}
				j, ti := 0, 0
				for i, l := range before {
					if len(l) == 0 {
						continue
					}
					if ti < len(trims) && trims[ti].Line == i+1 {
						lt := trims[ti]
						ti++
						if lt.Drop {
							dropped[uuidOf(l)] = true
							continue
						}
						if j >= len(after) || uuidOf(after[j]) != uuidOf(l) {
							t.Fatalf("%s:%d: the trimmed line is not the same entry", f.Path, i+1)
						}
						j++
						continue
					}
					if j >= len(after) || !bytes.Equal(after[j], l) {
						t.Fatalf("%s:%d: a line trim does not list changed", f.Path, i+1)
					}
					j++
				}
				if fig := p.Figures; fig.Entries != len(dropped) {
					t.Errorf("%s: the plan says %d entries go, %d went", f.Path, fig.Entries, len(dropped))
				}
				var gotBytes int64
				for _, l := range before {
					gotBytes += int64(len(l))
				}
				for _, l := range after {
					gotBytes -= int64(len(l))
				}
				if gotBytes != p.Figures.Bytes {
					t.Errorf("%s: the plan says %d bytes go, %d went", f.Path, p.Figures.Bytes, gotBytes)
				}
				ld1, err := validate.LoadedChain(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				want := slices.DeleteFunc(slices.Clone(ld0.UUIDs), func(u string) bool { return dropped[u] })
				if !slices.Equal(want, ld1.UUIDs) {
					t.Errorf("%s: the loaded chain after the trim is not the one before less the dropped entries: %s", f.Path, firstDiff(want, ld1.UUIDs))
				}
				for c, n := range codes(t, root, f.Path) {
					if beforeCodes[c] == 0 && !strings.HasPrefix(c, "index-") {
						t.Errorf("%s: validate finds %d %s after the trim, none before", f.Path, n, c)
					}
				}
			}
		})
	}
}

// uuidOf is the uuid of an entry line ("" for none).
func uuidOf(l []byte) string {
	var e struct {
		UUID string `json:"uuid"`
	}
	json.Unmarshal(l, &e)
	return e.UUID
}

// TestForkTurns forks every main transcript of the corpus stores at each
// turn and holds the fork's loaded chain to the source's, cut after the
// fork's last entry.
func TestForkTurns(t *testing.T) {
	srcs, _ := filepath.Glob("../testdata/corpus/*/.claude")
	for _, src := range srcs {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			root := copyStore(t, src)
			for _, f := range mains(t, root) {
				ld0, err := validate.LoadedChain(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				// Turns numbers the prompts as fork --turn counts them.
				turns, err := Turns(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				for turn := 1; ; turn++ {
					p, err := Fork(ForkOptions{Root: root, Session: f.Path, Turn: turn})
					if err != nil {
						if strings.Contains(err.Error(), "turns") || strings.Contains(err.Error(), "turn ") {
							if turn != len(turns)+1 {
								t.Errorf("%s: fork counts %d turns, Turns %d", f.Path, turn-1, len(turns))
							}
							break
						}
						t.Fatalf("%s: fork --turn %d: %v", f.Path, turn, err)
					}
					apply(t, p.ChangeSet)
					path := filepath.Join(filepath.Dir(f.Path), p.SessionID+".jsonl")
					ld1, err := validate.LoadedChain(path)
					if err != nil {
						t.Fatal(err)
					}
					if turn > len(turns) {
						t.Fatalf("%s: fork --turn %d works, Turns gives %d", f.Path, turn, len(turns))
					}
					// (Turn k itself may be left out: a fork ends where the
					// client resumes, which compactions written out of
					// order can put before it.)
					if tn := turns[turn-1]; tn.N != turn || tn.Words == "" || !slices.Contains(ld0.UUIDs, tn.UUID) {
						t.Errorf("%s: turn %d (%s, %q) is not a prompt of the loaded chain", f.Path, tn.N, tn.UUID, tn.Words)
					}
					if turn < len(turns) && slices.Contains(ld1.UUIDs, turns[turn].UUID) {
						t.Errorf("%s: fork --turn %d holds turn %d", f.Path, turn, turn+1)
					}
					k := slices.Index(ld0.UUIDs, p.Leaf)
					if k < 0 {
						t.Fatalf("%s: the fork's leaf %s is not on the loaded chain", f.Path, p.Leaf)
					}
					if !slices.Equal(ld1.UUIDs, ld0.UUIDs[:k+1]) {
						t.Errorf("%s: fork --turn %d: the fork's loaded chain is not the source's up to %s: %s", f.Path, turn, p.Leaf, firstDiff(ld0.UUIDs[:k+1], ld1.UUIDs))
					}
					for c := range codes(t, root, path) {
						if c != "cwd-mismatch" && !strings.HasPrefix(c, "index-") && c != "chain-forks" {
							t.Errorf("%s: fork --turn %d: validate finds %s", f.Path, turn, c)
						}
					}
				}
			}
		})
	}
}

// firstDiff describes where two uuid lists part.
func firstDiff(want, got []string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	at := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end)"
	}
	return fmt.Sprintf("%d and %d entries, first difference at %d: want %s, got %s", len(want), len(got), i, at(want), at(got))
}

// TestTrimRefuses: a live session is never trimmed in place (a new
// session may still be made from it), and options that make no sense are
// usage errors.
func TestTrimRefuses(t *testing.T) {
	root := copyStore(t, "../testdata/corpus/2.1.330/.claude")
	const id = "140fbe06-16c3-4bec-9598-7770985558f2"
	if err := os.MkdirAll(filepath.Join(root, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	live := fmt.Sprintf(`{"pid":%d,"sessionId":%q}`, os.Getpid(), id)
	if err := os.WriteFile(filepath.Join(root, "sessions", fmt.Sprint(os.Getpid())+".json"), []byte(live), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Trim(Options{Root: root, Session: id, Thinking: true, InPlace: true, KeepTurns: 1})
	var ce *clone.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "live") {
		t.Errorf("trim --in-place of a live session: %v, want a refusal", err)
	}
	if p, err := Trim(Options{Root: root, Session: id, Thinking: true, ToolOutput: true, KeepTurns: 0}); err != nil || p.ChangeSet.Empty() {
		t.Errorf("trim of a live session into a new one: %v", err)
	}
	var ie *clone.InputError
	for _, o := range []Options{
		{Root: root, Session: id},
		{Root: root, Session: id, Thinking: true, KeepTurns: -1},
		{Root: root, Session: id, Thinking: true, InPlace: true, To: "/tmp"},
		{Root: root, Session: "nope", Thinking: true},
	} {
		if _, err := Trim(o); !errors.As(err, &ie) {
			t.Errorf("trim %+v: %v, want a usage error", o, err)
		}
	}
	for _, o := range []ForkOptions{
		{Root: root, Session: id},
		{Root: root, Session: id, At: "x", Turn: 1},
		{Root: root, Session: id, Turn: 99},
		{Root: root, Session: id, At: "ffffffff"},
	} {
		if _, err := Fork(o); !errors.As(err, &ie) {
			t.Errorf("fork %+v: %v, want a usage error", o, err)
		}
	}
}

// TestForkAtCall: a fork at an entry whose reply made tool calls takes the
// rest of the reply and the results, so no call is left unanswered.
func TestForkAtCall(t *testing.T) {
	for _, src := range []string{"../testdata/corpus/2.1.330/.claude", "../testdata/corpus/2.0.77/.claude", "../testdata/corpus/1.0.128/.claude"} {
		root := copyStore(t, src)
		for _, f := range mains(t, root) {
			for i, l := range lines(t, f.Path) {
				if !bytes.Contains(l, []byte(`"type":"tool_use"`)) || !bytes.Contains(l, []byte(`"type":"assistant"`)) || bytes.Contains(l, []byte(`"isSidechain":true`)) {
					continue
				}
				u := uuidOf(l)
				p, err := Fork(ForkOptions{Root: root, Session: f.Path, At: u})
				if err != nil {
					t.Fatalf("%s:%d: fork --at %s: %v", f.Path, i+1, u, err)
				}
				apply(t, p.ChangeSet)
				path := filepath.Join(filepath.Dir(f.Path), p.SessionID+".jsonl")
				ld, err := validate.LoadedChain(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(ld.DroppedToolUses) > 0 {
					t.Errorf("%s:%d: the fork at %s leaves calls unanswered: %v", f.Path, i+1, u, ld.DroppedToolUses)
				}
				if p.Leaf == u {
					t.Errorf("%s:%d: the fork at a call ends at the call", f.Path, i+1)
				}
				for c := range codes(t, root, path) {
					if c != "cwd-mismatch" && !strings.HasPrefix(c, "index-") && c != "chain-forks" {
						t.Errorf("%s:%d: fork --at %s: validate finds %s", f.Path, i+1, u, c)
					}
				}
			}
		}
	}
}

// TestTrimTokens: the tokens a trim takes out of a request are scaled by
// how the input tokens message.usage records grew with the chain's bytes
// between the first and the last reply with usage; without usage, bytes/4.
func TestTrimTokens(t *testing.T) {
	const id = "5e55a000-0000-4000-8000-000000000001"
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := func(typ, uuid, parent, content, usage string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		u := ""
		if usage != "" {
			u = `,"usage":` + usage
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"message":{"role":%q,"content":%s%s},"uuid":%q,"timestamp":"2026-01-01T00:00:%02dZ","sessionId":%q,"version":"2.1.205","cwd":"/w"}`,
			p, typ, typ, content, u, uuid, len(uuid), id)
	}
	think := `[{"type":"thinking","thinking":"` + strings.Repeat("t", 4000) + `","signature":"s"},{"type":"text","text":"ok"}]`
	lines := []string{
		entry("user", "u1", "", `"first"`, ""),
		entry("assistant", "a1", "u1", think, `{"input_tokens":900,"cache_read_input_tokens":100,"output_tokens":5}`),
		entry("user", "u2", "a1", `"second"`, ""),
		entry("assistant", "a2", "u2", think, `{"input_tokens":1000,"cache_creation_input_tokens":2500,"output_tokens":5}`),
		entry("user", "u3", "a2", `"third"`, ""),
		entry("assistant", "a3", "u3", `[{"type":"text","text":"done"}]`, ""),
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Trim(Options{Root: root, Session: id, Thinking: true, KeepTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := p.Figures
	// The chain's bytes from a1 up to a2: a1, u2. Tokens grew 1000 → 3500.
	between := int64(len(lines[1]) + len(lines[2]))
	if f.TokenEstimate != "usage" || f.Thinking != 2 || f.RequestBytes <= 8000 || f.Tokens != f.RequestBytes*2500/between {
		t.Errorf("figures %+v: want 2 thinking blocks, over 8000 request bytes, tokens %d*2500/%d from usage", f, f.RequestBytes, between)
	}
	// Without usage: bytes/4.
	for i := range lines {
		lines[i] = strings.NewReplacer(`,"usage":{"input_tokens":900,"cache_read_input_tokens":100,"output_tokens":5}`, "",
			`,"usage":{"input_tokens":1000,"cache_creation_input_tokens":2500,"output_tokens":5}`, "").Replace(lines[i])
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = Trim(Options{Root: root, Session: id, Thinking: true, KeepTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Figures; f.TokenEstimate != "bytes/4" || f.Tokens != f.RequestBytes/4 {
		t.Errorf("figures without usage %+v: want bytes/4", f)
	}
	// The note gives sizes as listings do, not a count of bytes.
	note := p.ChangeSet.Notes[len(p.ChangeSet.Notes)-1]
	if !regexp.MustCompile(`^the transcript loses [0-9.]+ KB; a resume's request loses [0-9.]+ KB of message content, about [0-9]+ tokens \(estimated as bytes/4`).MatchString(note) || p.Figures.NoGain() != "" {
		t.Errorf("note %q, no gain %q", note, p.Figures.NoGain())
	}
}

// TestTrimNoGain: a trim whose every cut lies where a resume does not
// send it (here, behind the compaction of the 2.1.88 corpus session) says
// so in its note (it said "loses 0 bytes" of the request), and NoGain says
// why; cfix browse offers no such trim.
func TestTrimNoGain(t *testing.T) {
	root := copyStore(t, filepath.Join("..", "testdata", "corpus", "2.1.88", ".claude"))
	p, err := Trim(Options{Root: root, Session: "3ba86ea1", Thinking: true})
	if err != nil {
		t.Fatal(err)
	}
	f := p.Figures
	if f.Bytes == 0 || f.RequestBytes != 0 || f.Thinking == 0 {
		t.Fatalf("figures %+v: want thinking taken out and none of the request", f)
	}
	why := f.NoGain()
	if !strings.Contains(why, "a resume's request stays as it is") {
		t.Errorf("NoGain: %q", why)
	}
	note := p.ChangeSet.Notes[len(p.ChangeSet.Notes)-1]
	if !strings.HasPrefix(note, "the transcript loses "+changeset.Size(f.Bytes)+", but "+why) || strings.Contains(note, "0 bytes") {
		t.Errorf("note %q", note)
	}
}

// TestDamagedLines: a line with glued records or NUL bytes holds entries
// the loader reads (validate.ChainReader) that a line edit cannot keep
// apart: trim and fork refuse it, naming the line, instead of planning
// on a chain that lacks them (a thinking-only entry dropped under a
// child on a glued line, the last turns counted wrong).
func TestDamagedLines(t *testing.T) {
	const id = "5e55a000-0000-4000-8000-0000000000d2"
	entry := func(typ, uuid, parent, content string) string {
		return fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"type":%q,"message":{"role":%q,"content":%s},"uuid":%q,"timestamp":"2026-01-01T00:00:0%dZ","sessionId":%q,"version":"2.1.30","cwd":"/w"}`,
			parent, typ, typ, content, uuid, len(uuid), id)
	}
	think := `[{"type":"thinking","thinking":"` + strings.Repeat("t", 2000) + `","signature":"s"}]`
	head := []string{
		strings.Replace(entry("user", "u1", "", `"first"`), `"parentUuid":""`, `"parentUuid":null`, 1),
		entry("assistant", "a2", "u1", think),
	}
	for _, c := range []struct{ name, bad, want string }{
		{"glued", entry("assistant", "a3", "a2", `[{"type":"text","text":"ok"}]`) + entry("user", "u4", "a3", `"second"`), "line 3 holds 2 records glued"},
		{"NUL bytes", "\x00\x00" + entry("assistant", "a3", "a2", `[{"type":"text","text":"ok"}]`), "line 3 holds 2 NUL bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			dir := filepath.Join(root, "projects", "-w")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			body := append(slices.Clone(head), c.bad, entry("user", "u5", "a3", `"third"`), entry("assistant", "a6", "u5", `[{"type":"text","text":"end"}]`))
			if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(strings.Join(body, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Trim(Options{Root: root, Session: id, Thinking: true, KeepTurns: 0}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("trim: %v, want an error with %q", err, c.want)
			}
			if _, err := Fork(ForkOptions{Root: root, Session: id, Turn: 1}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("fork: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestTrimKeepsLeaf: the entry a resume starts from never goes, even with
// --keep-turns 0: a progress entry stamped latest (2.1.0-2.1.84 start from
// it) dropped made the loader start from a message on another branch, and
// a session of progress entries only was left with none.
func TestTrimKeepsLeaf(t *testing.T) {
	const id = "5e55a000-0000-4000-8000-0000000000d3"
	entry := func(typ, uuid, parent string, sec int, rest string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,%s,"uuid":%q,"timestamp":"2026-01-01T00:00:0%dZ","sessionId":%q,"version":"2.1.30","cwd":"/w"}`,
			p, typ, rest, uuid, sec, id)
	}
	msg := func(role, content string) string {
		return fmt.Sprintf(`"message":{"role":%q,"content":%s}`, role, content)
	}
	progress := `"data":{"type":"hook_progress","hookEvent":"Stop"},"toolUseID":"x"`
	for _, c := range []struct {
		name  string
		lines []string
	}{
		{"branch", []string{
			entry("user", "u1", "", 1, msg("user", `"first"`)),
			entry("assistant", "a2", "u1", 2, msg("assistant", `[{"type":"text","text":"ok"}]`)),
			entry("user", "u4", "u1", 4, msg("user", `"a prompt edited away"`)),
			entry("progress", "p5", "a2", 5, progress),
		}},
		{"progress only", []string{entry("progress", "p1", "", 1, progress)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".claude")
			dir := filepath.Join(root, "projects", "-w")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, id+".jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ld0, err := validate.LoadedChain(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Trim(Options{Root: root, Session: id, Progress: true, InPlace: true})
			if err != nil {
				t.Fatal(err)
			}
			if !p.ChangeSet.Empty() {
				apply(t, p.ChangeSet)
			}
			ld1, err := validate.LoadedChain(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ld0.UUIDs, ld1.UUIDs) {
				t.Errorf("the loaded chain was %v, is %v after trim --progress --keep-turns 0", ld0.UUIDs, ld1.UUIDs)
			}
		})
	}
}

// TestForkAtSidechain: a fork at an entry of a subagent's conversation
// kept in the main transcript (1.0.x, 2.0.x) is refused: the fork held
// the subagent's conversation alone, which 2.0.x resumes as no history
// and 1.0.x as the session's.
func TestForkAtSidechain(t *testing.T) {
	n := 0
	for _, src := range []string{"../testdata/corpus/1.0.51/.claude", "../testdata/wild/1.0.98-2.0.28/.claude"} {
		root := copyStore(t, src)
		for _, f := range mains(t, root) {
			for i, l := range lines(t, f.Path) {
				if !bytes.Contains(l, []byte(`"isSidechain":true`)) || uuidOf(l) == "" {
					continue
				}
				n++
				_, err := Fork(ForkOptions{Root: root, Session: f.Path, At: uuidOf(l)})
				var ie *clone.InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), "subagent") {
					t.Errorf("%s:%d: fork --at a sidechain entry: %v, want a usage error", f.Path, i+1, err)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no sidechain entry in the main transcripts")
	}
}

// TestForkAtParallelCall: a fork at a call on the history a resume loads
// follows that history to the results of all the reply's calls. In two
// sessions of the wild 2.1.12-2.1.29 store: 0c048c6d hangs a parallel
// call's result under the reply's first entry, beside the second call
// (following the children led to the second call's result and left the
// first unanswered, its result written later); in ac315b9f, a fork at the
// reply's second call did not wait for the first call's result, stopped
// at the progress entry before it and ended at the call, both unanswered.
// In 8791b9e8 of the wild 2.1.119-2.1.136 store, a reply makes a second
// call after the first call's result: a fork at its first entry ended at
// that result, and the second call, put back beside it, went unanswered.
// In 8ddff70e, a fork at a reply's second call, put back beside the
// walk, ended at that call's result, without the first call's, written
// after it under the first call. In 61dcf75d of the wild 2.1.81-2.1.111 store, the loaded history puts
// parallel results back after their calls: it is followed by the walk's
// children, not in the order it is sent.
func TestForkAtParallelCall(t *testing.T) {
	forks := 0
	for src, ids := range map[string][]string{
		"../testdata/wild/2.1.12-2.1.29/.claude":   {"0c048c6d-5fe1-4234-9a03-ed4712f745ae", "ac315b9f-dc64-464b-843d-f4c4eef51306"},
		"../testdata/wild/2.1.119-2.1.136/.claude": {"8791b9e8-2348-4339-91b5-3ecaba59d825", "8ddff70e-6b6b-4699-8c05-a238dc4b2079"},
		"../testdata/wild/2.1.81-2.1.111/.claude":  {"61dcf75d-56df-459d-b351-729550898806"},
	} {
		root := copyStore(t, src)
		for _, f := range mains(t, root) {
			if !slices.Contains(ids, f.Session) {
				continue
			}
			lines, prefix := [2]int{1, 1 << 30}, true
			if strings.HasPrefix(f.Session, "8ddff70e") {
				lines = [2]int{40, 110}
			}
			if strings.HasPrefix(f.Session, "61dcf75d") {
				// A long session: one stretch of it. Its replies' calls
				// branch (a call's result and the next call under one
				// entry): at an entry the loader puts back beside the
				// walk, the fork's history is not a prefix of the
				// source's.
				lines, prefix = [2]int{900, 1000}, false
			}
			forks += forkAtCalls(t, root, f, lines, prefix)
		}
	}
	if forks < 10 {
		t.Fatalf("%d forks", forks)
	}
}

// forkAtCalls forks f at each entry on the history a resume loads that
// makes a tool call or starts a reply, and holds each fork to leaving no
// call unanswered that the source answers, and (where the source answers
// all, and prefix is set) to loading the source's history up to the
// fork's end, in lines [from, to] of f.
func forkAtCalls(t *testing.T, root string, f store.File, span [2]int, prefix bool) int {
	t.Helper()
	forks := 0
	{
		ld0, err := validate.LoadedChain(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		known := map[string]bool{}
		for _, id := range ld0.DroppedToolUses {
			known[id] = true
		}
		loaded := map[string]bool{}
		for _, u := range ld0.UUIDs {
			loaded[u] = true
		}
		for i, l := range lines(t, f.Path) {
			u := uuidOf(l)
			if i+1 < span[0] || i+1 > span[1] || !loaded[u] || !bytes.Contains(l, []byte(`"type":"assistant"`)) {
				continue
			}
			p, err := Fork(ForkOptions{Root: root, Session: f.Path, At: u})
			if err != nil {
				t.Fatalf("%s:%d: fork --at %s: %v", f.Path, i+1, u, err)
			}
			forks++
			apply(t, p.ChangeSet)
			path := filepath.Join(p.Folder, p.SessionID+".jsonl")
			ld, err := validate.LoadedChain(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ld.DroppedToolUses {
				if !known[id] {
					t.Errorf("%s:%d: the fork at %s leaves call %s unanswered", f.Path, i+1, u, id)
				}
			}
			// The fork loads the source's history up to its end (and the
			// results of its last calls, written before them, that the
			// loader puts back after them). Where the source's own
			// history drops calls, the fork answers them: its history is
			// not the source's.
			// (Parallel entries put back beside the walk may come in
			// another order: the same entries are sent.)
			k := slices.Index(ld0.UUIDs, p.Leaf)
			n := min(len(ld.UUIDs), len(ld0.UUIDs))
			got, want := slices.Sorted(slices.Values(ld.UUIDs)), slices.Sorted(slices.Values(ld0.UUIDs[:n]))
			if prefix && len(known) == 0 && (k < 0 || len(ld.UUIDs) < k+1 || !slices.Equal(got, want)) {
				t.Errorf("%s:%d: the fork at %s does not load the source's history up to its end %s: %s", f.Path, i+1, u, p.Leaf, firstDiff(ld0.UUIDs[:n], ld.UUIDs))
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	return forks
}

// TestForkEndNote: when the fork ends at another entry than the one its
// walk reached, the note gives the writing version's reason: 2.1.101 and
// later resume from the message written last (a call's result written
// before the call), not from the one stamped latest, which the note said
// of an entry stamped later.
func TestForkEndNote(t *testing.T) {
	root := copyStore(t, "../testdata/wild/2.1.119-2.1.136/.claude")
	p, err := Fork(ForkOptions{Root: root, Session: "8791b9e8-2348-4339-91b5-3ecaba59d825", At: "eacde7fb-f111-40d9-bed3-3ecb50b4309c"})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(p.ChangeSet.Notes, "\n")
	if want := "entry 51f90261-1564-4678-897e-a234a4707e0e (line 104) is written before entry eacde7fb-f111-40d9-bed3-3ecb50b4309c (line 111); claude 2.1.119 resumes from the message written last"; !strings.Contains(notes, want) {
		t.Errorf("notes:\n%s\nwant %q", notes, want)
	}
}
