package repair_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/repair"
	"github.com/cfix-dev/cfix/validate"
)

// file is a snapshot of one file.
type file struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

// snapshot records every file under root.
func snapshot(t testing.TB, root string) map[string]file {
	t.Helper()
	out := map[string]file{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		out[p] = file{b, fi.Mode().Perm(), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func age(t testing.TB, root string) { damage.Age(t, root) }

func findings(t testing.TB, root string) *validate.Report {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func has(rep *validate.Report, c validate.Code, path string, line int) bool {
	for _, f := range rep.Findings {
		if f.Code == c && f.Path == path && (line <= 0 || f.Line == line) {
			return true
		}
	}
	return false
}

func apply(t testing.TB, cs *changeset.ChangeSet, journals string) *changeset.Result {
	t.Helper()
	res, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

// fixable are the codes a default repair (or --aggressive, for
// parent-missing) must fix.
func fixable(c validate.Code) (ok, aggressive bool) {
	for _, f := range repair.Fixable() {
		if f == c {
			return true, c == validate.ParentMissing
		}
	}
	return false, false
}

// TestRoundTrip: for every fault repair fixes, damage a corpus session,
// see validate report it, repair --apply, see validate report nothing for
// it, see a second repair plan nothing, and undo back to the damaged bytes.
func TestRoundTrip(t *testing.T) {
	covered := map[validate.Code]bool{}
	for _, c := range damage.Cases {
		ok, aggressive := fixable(c.Code)
		if !ok || keeps(c) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			root := damage.CopyStore(t, c.Version)
			journals := t.TempDir()
			path, line := c.Damage(t, root)
			if line < 0 {
				t.Skip("a case of damage that must not be reported")
			}
			age(t, root)
			if !has(findings(t, root), c.Code, path, line) {
				t.Fatalf("validate does not report %s at %s:%d", c.Code, path, line)
			}
			damaged := snapshot(t, root)

			opts := repair.Options{Root: root, Aggressive: aggressive}
			cs, err := repair.Plan(opts)
			if err != nil {
				t.Fatal(err)
			}
			if cs.Empty() {
				t.Fatal("repair plans nothing")
			}
			var show bytes.Buffer
			if err := changeset.Show(&show, cs); err != nil {
				t.Fatal(err)
			}
			res := apply(t, cs, journals)

			after := findings(t, root)
			if has(after, c.Code, path, 0) {
				t.Fatalf("after repair validate still reports %s at %s\nplan:\n%s", c.Code, path, show.String())
			}
			for _, f := range after.Findings {
				if f.Severity == validate.Error {
					t.Errorf("after repair: %s:%d %s %s", f.Path, f.Line, f.Code, f.Message)
				}
			}
			again, err := repair.Plan(opts)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Empty() {
				var b bytes.Buffer
				changeset.Summary(&b, again)
				t.Fatalf("a second repair plans changes:\n%s", b.String())
			}

			undoTo(t, res.Journal, root, damaged)
			covered[c.Code] = true
		})
	}
	for _, c := range repair.Fixable() {
		if c == repair.Progress {
			continue
		}
		if !covered[c] {
			t.Errorf("no round trip covers %s", c)
		}
	}
}

// settled checks that a second repair of the store at root plans nothing
// (first: the first plan, shown with a failure).
func settled(t *testing.T, root, first string) {
	t.Helper()
	again, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatalf("second repair: %v", err)
	}
	for _, op := range again.Ops {
		t.Errorf("a second repair plans %s %s: %s", op.Action, op.Path, op.Reason)
	}
	if !again.Empty() && first != "" {
		t.Logf("first plan:\n%s", first)
	}
}

// undoTo undoes the journal and checks that the store at root holds
// again exactly the files of want, with their bytes, modes and mtimes.
func undoTo(t *testing.T, journal, root string, want map[string]file) {
	t.Helper()
	undo, err := changeset.Undo(journal)
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	apply(t, undo, t.TempDir())
	restored := snapshot(t, root)
	for p, w := range want {
		got, ok := restored[p]
		switch {
		case !ok:
			t.Errorf("undo did not restore %s", p)
		case !bytes.Equal(got.data, w.data):
			t.Errorf("undo: %s differs from the bytes before", p)
		case got.mode != w.mode || !got.mtime.Equal(w.mtime):
			t.Errorf("undo: %s: mode %v mtime %v, want %v %v", p, got.mode, got.mtime, w.mode, w.mtime)
		}
	}
	for p := range restored {
		if _, ok := want[p]; !ok {
			t.Errorf("undo left %s", p)
		}
	}
}

// keeps reports whether repair leaves a case's finding as it is: a
// tool_result that answers no tool_use, in a session whose client drops it
// when it resumes (2.1.x: a warning), is a real result, kept.
func keeps(c damage.Case) bool {
	return c.Code == validate.ToolUseMiss && c.Severity == validate.Warning
}

// TestOrphanResultKept: repair keeps a tool_result that answers no
// tool_use where the client that wrote it drops it itself (2.1.x), and
// says so; it removes one where the client sends it (2.0.x: 400, see
// TestRoundTrip).
func TestOrphanResultKept(t *testing.T) {
	n := 0
	for _, c := range damage.Cases {
		if !keeps(c) {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			root := damage.CopyStore(t, c.Version)
			path, line := c.Damage(t, root)
			age(t, root)
			if !has(findings(t, root), c.Code, path, line) {
				t.Fatalf("validate does not report %s at %s:%d", c.Code, path, line)
			}
			before := contentOf(damage.Lines(t, path)[line-1])
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			noted := false
			for _, n := range cs.Notes {
				if strings.Contains(n, string(validate.ToolUseMiss)) && strings.Contains(n, "keeps the result") {
					noted = true
				}
			}
			if !noted {
				t.Errorf("no note says the result is kept: %q", cs.Notes)
			}
			if !cs.Empty() {
				apply(t, cs, t.TempDir())
			}
			kept := false
			for _, l := range damage.Lines(t, path) {
				if c := contentOf(l); c.UUID == before.UUID && bytes.Equal(c.Message.Content, before.Message.Content) {
					kept = true
				}
			}
			if !kept {
				t.Errorf("repair removed or changed the result of entry %s: %s", before.UUID, before.Message.Content)
			}
			if !has(findings(t, root), c.Code, path, 0) {
				t.Errorf("after repair validate no longer reports %s", c.Code)
			}
		})
	}
	if n == 0 {
		t.Fatal("no damage case of a kept result")
	}
}

// entryContent is an entry's uuid and message content.
type entryContent struct {
	UUID    string `json:"uuid"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// contentOf decodes a line's uuid and content (zero when it is not JSON).
func contentOf(line []byte) entryContent {
	var e entryContent
	json.Unmarshal(line, &e)
	return e
}

// TestMtimeAndMode: a repaired file keeps its mode and mtime.
func TestMtimeAndMode(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	ls := damage.Lines(t, p)
	damage.WriteLines(t, p, append(ls, []byte(`{"type":"user","torn`)), false)
	os.Chmod(p, 0o640)
	mt := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	os.Chtimes(p, mt, mt)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("mode %v mtime %v, want 0640 %v", fi.Mode().Perm(), fi.ModTime(), mt)
	}
	b, _ := os.ReadFile(p)
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Contains(b, []byte("torn")) {
		t.Error("torn line still there")
	}
}

// TestOnly limits the repairs to the codes named.
func TestOnly(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	ls := damage.Lines(t, p)
	ls = append(ls[:3:3], append([][]byte{{}}, ls[3:]...)...)
	damage.WriteLines(t, p, append(ls, []byte(`{"type":"user","torn`)), false)
	cs, err := repair.Plan(repair.Options{Root: root, Only: []string{"line-empty"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Ops) != 1 || len(cs.Ops[0].Edits) != 1 || cs.Ops[0].Edits[0].Line != 4 {
		t.Fatalf("plan: %+v", cs.Ops)
	}
	if _, err := repair.Plan(repair.Options{Root: root, Only: []string{"nonsense"}}); err == nil || !strings.Contains(err.Error(), "--only nonsense") {
		t.Errorf("unknown --only code: %v", err)
	}
}

// TestStubMetadataCarried: removing a stub keeps its title, in the
// transcript its leafUuid points into.
func TestStubMetadataCarried(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	var leaf any
	damage.EditLine(t, main, damage.FindLast(t, main, damage.IsType("assistant")), func(m map[string]any) { leaf = m["uuid"] })
	summary := []byte(`{"type":"summary","summary":"My precious title","leafUuid":"` + leaf.(string) + `"}`)
	for _, id := range []string{"55555555-5555-4555-8555-555555555555", "66666666-6666-4666-8666-666666666666"} {
		damage.WriteLines(t, filepath.Join(root, "projects", damage.V88Project, id+".jsonl"), [][]byte{summary}, true)
	}
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	b, _ := os.ReadFile(main)
	if !bytes.HasSuffix(b, append(summary, '\n')) || bytes.Count(b, summary) != 1 {
		t.Fatalf("the summary was not carried once into the transcript:\n%s", b[len(b)-400:])
	}
	if _, err := os.Stat(filepath.Join(root, "projects", damage.V88Project, "55555555-5555-4555-8555-555555555555.jsonl")); err == nil {
		t.Error("the stub is still there")
	}
	if again, _ := repair.Plan(repair.Options{Root: root}); !again.Empty() {
		t.Error("a second repair plans changes")
	}
	if rep := findings(t, root); rep.Has(validate.Warning) {
		t.Errorf("after repair: %+v", rep.Findings)
	}
}

// TestStubWithLineFault: a stub that also holds a line fault (an empty
// line, a torn last line, a line of garbage, a repeated line, NUL bytes,
// damaged metadata) is removed whole in one repair, its metadata carried as its fixer would
// leave it, and no line fix is planned for it besides: one op per file
// (the removal would find the stub changed under it and the whole repair
// would roll back), and nothing left for a second repair.
func TestStubWithLineFault(t *testing.T) {
	for _, c := range []struct {
		name string
		// damage returns the stub's lines, whether they end with a newline,
		// and the line the transcript must get.
		damage func(meta []byte) ([][]byte, bool, []byte)
	}{
		{"empty line", func(m []byte) ([][]byte, bool, []byte) { return [][]byte{m, nil}, true, m }},
		{"torn last line", func(m []byte) ([][]byte, bool, []byte) { return [][]byte{m, m[:len(m)/2]}, false, m }},
		{"garbage", func(m []byte) ([][]byte, bool, []byte) { return [][]byte{[]byte("\x01\xfe{oops"), m}, true, m }},
		{"repeated", func(m []byte) ([][]byte, bool, []byte) { return [][]byte{m, m}, true, m }},
		{"NUL bytes", func(m []byte) ([][]byte, bool, []byte) { return [][]byte{append([]byte{0, 0}, m...)}, true, m }},
		{"damaged metadata", func(m []byte) ([][]byte, bool, []byte) {
			// Invalid UTF-8, a lone surrogate and a \u0000 escape: carried
			// as the stub's fixer would leave them.
			bad := bytes.Replace(m, []byte(`"summary":"`), []byte("\"summary\":\"bad \xff \\ud800 \\u0000 "), 1)
			fixed := bytes.Replace(m, []byte(`"summary":"`), []byte("\"summary\":\"bad \uFFFD \\ufffd \\ufffd "), 1)
			return [][]byte{bad}, true, fixed
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := damage.CopyStore(t, "2.0.14")
			folder := filepath.Join(root, "projects", "-home-dev-work-alpha")
			stub := filepath.Join(folder, "af2c8555-89f8-494a-9b3b-1b949f782c38.jsonl")
			ls, final, want := c.damage(damage.Lines(t, stub)[0])
			damage.WriteLines(t, stub, ls, final)
			age(t, root)
			if rep := findings(t, root); !has(rep, validate.SessionStub, stub, 0) {
				t.Fatalf("setup: no session-stub on %s: %+v", stub, rep.Findings)
			}
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range cs.Ops {
				if op.Path == stub && op.Action != changeset.Delete {
					t.Errorf("the plan has %s of the stub besides its removal: %s", op.Action, op.Reason)
				}
			}
			apply(t, cs, t.TempDir())
			if _, err := os.Stat(stub); err == nil {
				t.Error("the stub is still there")
			}
			b, _ := os.ReadFile(filepath.Join(folder, "40485fc7-0ba2-4494-baeb-a0a445f7a454.jsonl"))
			if bytes.Count(b, want) != 1 {
				t.Errorf("the stub's metadata %s is in the transcript %d times, want once", want, bytes.Count(b, want))
			}
			settled(t, root, "")
		})
	}
}

// TestRelinkNoCycle: an entry whose parent sat on a line that is not JSON
// is not linked to the entry before it when that one descends from it
// (lines out of order): the link would close a cycle, which only a second
// repair broke. It is left for --aggressive, and one repair settles. The
// damage TestRandomDamage found: in a wild session, the first message's
// line torn, the next two lines swapped, a line of garbage between them.
func TestRelinkNoCycle(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	rel := filepath.Join("projects", "-home-d1--h2-d3", "7700370b-9ba6-4689-b21d-2a408faadd2e.jsonl")
	p := filepath.Join(root, rel)
	ls := damage.Lines(t, filepath.Join(wild.Root("2.1.68-2.1.73"), rel))
	ls[2] = ls[2][:50]
	ls[3], ls[4] = ls[4], ls[3]
	ls = append(ls[:4], append([][]byte{[]byte("\x01garbage")}, ls[4:]...)...)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	damage.WriteLines(t, p, ls, true)
	age(t, root)
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	if rep := findings(t, root); has(rep, validate.ChainCycle, p, 0) || has(rep, validate.ParentSelf, p, 0) {
		t.Errorf("repair closed a cycle: %+v", rep.Findings)
	}
	settled(t, root, "")
}

// TestSalvage: a torn record glued to a complete one keeps the complete
// one, however many objects the torn part holds, and never a fragment of
// the torn part.
func TestSalvage(t *testing.T) {
	var inner bytes.Buffer
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&inner, `{"n":%d},`, i)
	}
	for name, torn := range map[string]string{
		"many objects":     `{"type":"user","toolUseResult":{"items":[` + inner.String(),
		"after an inner }": `{"type":"assistant","message":{"content":[{"type":"text","text":"hello"}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := damage.CopyStore(t, damage.V88)
			main := damage.MainFile(root)
			ls := damage.Lines(t, main)
			n := damage.FindLast(t, main, damage.IsType("user"))
			complete := ls[n-1]
			ls[n-1] = append([]byte(torn), complete...)
			damage.WriteLines(t, main, ls, true)
			age(t, root)
			cs, err := repair.Plan(repair.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, cs, t.TempDir())
			got := damage.Lines(t, main)
			if len(got) != len(ls) || !bytes.Equal(got[n-1], complete) {
				t.Fatalf("line %d after repair: %.200s", n, got[n-1])
			}
			if rep := findings(t, root); rep.Has(validate.Notice) {
				t.Errorf("after repair: %+v", rep.Findings)
			}
		})
	}
}

// TestSymlinkLeftAlone: a transcript that is a symbolic link is checked,
// never rewritten (that would replace the link by a file), and the plan
// says so.
func TestSymlinkLeftAlone(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	link := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl")
	real := filepath.Join(t.TempDir(), "real.jsonl")
	if err := os.Rename(link, real); err != nil {
		t.Fatal(err)
	}
	os.Symlink(real, link)
	f, _ := os.OpenFile(real, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"user","torn`)
	f.Close()
	age(t, root)
	if !has(findings(t, root), validate.LineTorn, link, 0) {
		t.Fatal("validate does not check the linked transcript")
	}
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range cs.Ops {
		if op.Path == link {
			t.Errorf("planned %s of the link", op.Action)
		}
	}
	if len(cs.Notes) == 0 || !strings.Contains(strings.Join(cs.Notes, "\n"), "symbolic link") {
		t.Errorf("notes: %v", cs.Notes)
	}
}

// TestOnlyPlansLineFixes: --only parent-missing (the hint validate gives)
// on a file with a line of NUL bytes and a lost line plans the line fix
// the re-parent depends on: the entry on the NUL line is read, so its
// child keeps it as its parent; a later plain repair has nothing left to
// fix. Before, the child was re-parented to the entry before the NUL line,
// and the plain repair recovered the line but left the wrong parent.
func TestOnlyPlansLineFixes(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p := damage.MainFile(root)
	ls := damage.Lines(t, p)
	type ent struct{ uuid, parent, typ string }
	ents := make([]ent, len(ls))
	for i, l := range ls {
		var m struct {
			UUID   string `json:"uuid"`
			Parent string `json:"parentUuid"`
			Type   string `json:"type"`
		}
		json.Unmarshal(l, &m)
		ents[i] = ent{m.UUID, m.Parent, m.Type}
	}
	child := func(k int) int {
		for j := k + 1; j < len(ents); j++ {
			if ents[j].parent == ents[k].uuid && ents[k].uuid != "" {
				return j
			}
		}
		return -1
	}
	// k: a message with a child c; m: another message with a child, apart
	// from both.
	k, c, m := -1, -1, -1
	for i := range ents {
		if ents[i].typ != "user" && ents[i].typ != "assistant" {
			continue
		}
		if j := child(i); j > i+1 && k < 0 {
			k, c = i, j
		} else if j > 0 && k >= 0 && i > c && j != k {
			m = i
			break
		}
	}
	if k < 0 || m < 0 {
		t.Fatal("no lines to damage")
	}
	want := ents[k].uuid
	nul := append(append(append([]byte{}, ls[k][:1]...), 0, 0, 0), ls[k][1:]...)
	ls[k] = nul
	ls = append(ls[:m:m], ls[m+1:]...) // the lost line
	damage.WriteLines(t, p, ls, true)
	damage.Age(t, root)
	journals := t.TempDir()
	cs, err := repair.Plan(repair.Options{Root: root, Targets: []string{p}, Only: []string{"parent-missing"}, Aggressive: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, journals)
	damage.Age(t, root)
	cs, err = repair.Plan(repair.Options{Root: root, Targets: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Empty() {
		apply(t, cs, journals)
	}
	for _, l := range damage.Lines(t, p) {
		var e struct {
			UUID   string `json:"uuid"`
			Parent string `json:"parentUuid"`
		}
		if json.Unmarshal(l, &e) == nil && e.UUID == ents[c].uuid && e.Parent != want {
			t.Errorf("the child of the line of NUL bytes has parent %s, want %s (its parent on that line)", e.Parent, want)
		}
	}
}

// TestDeepLineKept: a line of valid JSON nested deeper than the parser
// looks is data: repair keeps it byte for byte (it moved it out of the
// file as "not JSON"), and still keeps the entry glued after a torn deep
// record.
func TestDeepLineKept(t *testing.T) {
	n := 20000 // twice session.MaxNesting
	deep := []byte(`{"type":"user","uuid":"deep-1","message":{"role":"user","content":` +
		strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := damage.Lines(t, main)
	k := damage.FindLast(t, main, damage.IsType("user"))
	complete := ls[k-1]
	torn := append([]byte(`{"type":"user","message":`+strings.Repeat(`{"a":`, n)), complete...)
	ls = append(ls[:k-1:k-1], append([][]byte{deep, torn}, ls[k:]...)...)
	damage.WriteLines(t, main, ls, true)
	age(t, root)
	if !has(findings(t, root), validate.LineTooDeep, main, k) {
		t.Errorf("validate: no line-too-deep on line %d", k)
	}
	cs, err := repair.Plan(repair.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, t.TempDir())
	got := damage.Lines(t, main)
	if len(got) != len(ls) || !bytes.Equal(got[k-1], deep) || !bytes.Equal(got[k], complete) {
		t.Fatalf("after repair: %d lines (want %d), line %d: %.100s…, line %d: %.100s", len(got), len(ls), k, got[k-1], k+1, got[k])
	}
}
