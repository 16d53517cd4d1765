package changeset

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// confined fails t when an op of cs names a path confine lets no plan
// name: Path and To outside the store (but for the kinds confine allows),
// From outside the store and the folders in owned.
func confined(t *testing.T, cs *ChangeSet, owned ...string) {
	t.Helper()
	if fi, err := os.Stat(filepath.Join(cs.Root, "projects")); err != nil || !fi.IsDir() {
		t.Fatalf("root %s is not a store", cs.Root)
	}
	in := func(p string, dirs ...string) bool {
		if filepath.Clean(p) != p {
			return false
		}
		for _, d := range dirs {
			if p == d || below(d, p) {
				return true
			}
		}
		return false
	}
	for i, op := range cs.Ops {
		outsideOK := strings.HasSuffix(op.Path, ArchiveExt) && (op.Action == Create || op.Action == Delete) ||
			op.Action == Rewrite && op.Path == filepath.Join(filepath.Dir(cs.Root), ".claude.json") && filepath.Base(cs.Root) == ".claude"
		if op.Path == cs.Root || !below(cs.Root, op.Path) && !outsideOK || filepath.Clean(op.Path) != op.Path {
			t.Fatalf("op %d: path %q outside the store %s", i+1, op.Path, cs.Root)
		}
		if op.To != "" && (!below(cs.Root, op.To) || filepath.Clean(op.To) != op.To) {
			t.Fatalf("op %d: to %q outside the store %s", i+1, op.To, cs.Root)
		}
		if op.From != "" && !in(op.From, append(owned, cs.Root)...) {
			t.Fatalf("op %d: from %q outside the store %s and %q", i+1, op.From, cs.Root, owned)
		}
		if op.Mode&^fs.ModePerm != 0 {
			t.Fatalf("op %d: mode %#o", i+1, uint32(op.Mode))
		}
	}
}

// placeholders puts ROOT and JOURNAL for the paths of a store and journal
// in a saved plan or log, and back.
func placeholders(b []byte, root, journal string, back bool) []byte {
	pairs := [][2]string{{root, "ROOT"}, {journal, "JOURNAL"}}
	for _, p := range pairs {
		if p[0] == "" {
			continue
		}
		if back {
			b = bytes.ReplaceAll(b, []byte(p[1]), []byte(p[0]))
		} else {
			b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
		}
	}
	return b
}

// FuzzLoadPlan: Load never panics on any bytes, says which file it
// refuses, and a plan it loads names no path outside its store.
func FuzzLoadPlan(f *testing.F) {
	// Seeds (besides testdata/fuzz): each action, and the hostile shapes.
	for _, s := range []string{
		`{"version":1,"root":"ROOT","command":"repair","ops":[{"action":"rewrite","path":"ROOT/projects/-w/s.jsonl","expect":{"exists":true,"size":8,"sha256":"00"},"edits":[{"line":1,"offset":0,"length":8,"count":1,"new":"e30K"}]}]}`,
		`{"version":1,"root":"ROOT","command":"clone","ops":[{"action":"create","path":"ROOT/projects/-x/n.jsonl","from":"ROOT/projects/-w/s.jsonl","mode":420,"transform":{"kind":"retarget","old_dir":"/a","new_dir":"/b"}}]}`,
		`{"version":1,"root":"ROOT","command":"move","ops":[{"action":"rename","path":"ROOT/projects/-w/s.jsonl","to":"ROOT/projects/-x/s.jsonl"},{"action":"delete-dir","path":"ROOT/projects/-w/S"},{"action":"remove-empty-dir","path":"ROOT/projects/-w"}]}`,
		`{"version":1,"root":"ROOT","command":"x","ops":[{"action":"create-dir","path":"ROOT/projects/-x/S","from":"ROOT/projects/-w/S","merge":true}]}`,
		`{"version":1,"root":"ROOT","command":"x","ops":[{"action":"create","path":"ROOT/../evil","data":"eA==","has_data":true,"mode":2541}]}`,
		`{"version":1,"root":"ROOT","command":"x","ops":[{"action":"create","path":"/tmp/x.tar.zst","from":"/etc/passwd","adopt":true}]}`,
		`{"version":1,"root":"/","command":"x","ops":[{"action":"delete","path":"/etc/passwd"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := storeDir(t)
		p := filepath.Join(t.TempDir(), "plan.json")
		if err := os.WriteFile(p, placeholders(b, root, "", true), 0o600); err != nil {
			t.Fatal(err)
		}
		cs, err := Load(p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "plan "+p+": ") {
				t.Fatalf("error names no plan: %v", err)
			}
			return
		}
		confined(t, cs)
	})
}

// journalSeed applies a plan of each action to a small store and returns
// its journal's plan.json and log.jsonl (with placeholders), and the store
// and backups as they are after it, by path relative to root and journal.
func journalSeed(tb testing.TB) (plan, log []byte, store, backups map[string]string) {
	root := filepath.Join(tb.TempDir(), "claude")
	p := func(rel string) string { return filepath.Join(root, "projects", "-w", rel) }
	old := time.Now().Add(-time.Hour)
	for rel, s := range map[string]string{"s.jsonl": "{\"a\":1}\n{\"b\":2}\n{\"c\":", "t.jsonl": "{\"t\":1}\n", "u.jsonl": "{\"u\":1}\n", "S/subagents/agent-a.jsonl": "{\"x\":1}\n"} {
		os.MkdirAll(filepath.Dir(p(rel)), 0o700)
		os.WriteFile(p(rel), []byte(s), 0o600)
		os.Chtimes(p(rel), old, old)
	}
	fpOf := func(path string) Fingerprint {
		f, err := FingerprintOf(path)
		if err != nil {
			tb.Fatal(err)
		}
		return f
	}
	cs := New(root, "test")
	sf := fpOf(p("S"))
	sub := sf
	cs.Add(Op{Action: Rewrite, Path: p("s.jsonl"), Expect: fpOf(p("s.jsonl")), Edits: []Edit{{Line: 3, Offset: 16, Length: 5, Count: 1}}})
	cs.Add(Op{Action: Rewrite, Path: p("u.jsonl"), Expect: fpOf(p("u.jsonl")), Data: []byte("{\"u\":2}\n"), HasData: true})
	cs.Add(Op{Action: Delete, Path: p("t.jsonl"), Expect: fpOf(p("t.jsonl"))})
	cs.Add(Op{Action: CreateDir, Path: p("N/deep"), From: p("S"), FromExpect: &sub})
	cs.Add(Op{Action: Create, Path: p("n.jsonl"), Data: []byte("{}\n"), HasData: true})
	cs.Add(Op{Action: DeleteDir, Path: p("S"), Expect: sf})
	res, err := Apply(cs, ApplyOptions{JournalDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	read := func(dir string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, path)
				b, _ := os.ReadFile(path)
				m[rel] = string(b)
			}
			return nil
		})
		return m
	}
	plan, _ = os.ReadFile(filepath.Join(res.Journal, "plan.json"))
	log, _ = os.ReadFile(filepath.Join(res.Journal, "log.jsonl"))
	return placeholders(plan, root, res.Journal, false), placeholders(log, root, res.Journal, false), read(root), read(filepath.Join(res.Journal, "backup"))
}

// FuzzReadJournal: undo of a journal of any plan.json and log.jsonl, in a
// journal folder beside a store, never panics, and the undo it plans
// names no path outside the store (nor reads one outside the store and
// the journal).
func FuzzReadJournal(f *testing.F) {
	plan, log, store, backups := journalSeed(f)
	f.Add(plan, log)
	f.Add(plan, []byte{})
	f.Add([]byte(`{"version":1,"root":"ROOT","ops":[{"action":"delete","path":"ROOT/../x"}]}`), []byte(`{"op":0,"event":"backup","backup":"../../x"}`+"\n"))
	f.Add([]byte(`{"version":1,"root":"ROOT","ops":[{"action":"create-dir","path":"ROOT/projects/-w/N","from":"/x"}]}`), []byte(`{"op":0,"event":"creating","made":["../../../x","a/"],"listed":true}`+"\n"+`{"op":-1,"event":"mkdir","path":"/tmp"}`+"\n"))
	f.Fuzz(func(t *testing.T, plan, log []byte) {
		tmp := t.TempDir()
		root, journal := filepath.Join(tmp, "claude"), filepath.Join(tmp, "journals", "j")
		for rel, s := range store {
			os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o700)
			os.WriteFile(filepath.Join(root, rel), []byte(s), 0o600)
		}
		os.MkdirAll(filepath.Join(root, "projects"), 0o700)
		for rel, s := range backups {
			os.MkdirAll(filepath.Dir(filepath.Join(journal, "backup", rel)), 0o700)
			os.WriteFile(filepath.Join(journal, "backup", rel), []byte(s), 0o600)
		}
		os.MkdirAll(filepath.Join(journal, "backup"), 0o700)
		os.WriteFile(filepath.Join(journal, "plan.json"), placeholders(plan, root, journal, true), 0o600)
		os.WriteFile(filepath.Join(journal, "log.jsonl"), placeholders(log, root, journal, true), 0o600)
		ListJournals(filepath.Dir(journal), "")
		u, err := Undo(journal)
		if err != nil {
			return
		}
		confined(t, u, journal)
	})
}
