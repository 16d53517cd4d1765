package clone_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

const (
	alpha       = "/home/dev/work/alpha"
	alphaFolder = "-home-dev-work-alpha"
	zeta        = "/home/dev/work/zeta"
	zetaFolder  = "-home-dev-work-zeta"
	cloneID     = "0c10e000-1111-4222-8333-444455556666"
	cloneID2    = "0c10e000-1111-4222-8333-777788889999"
)

// versions lists the corpus stores, oldest first.
func versions(t *testing.T) []string { return damage.CorpusVersions(t) }

// mainSession returns the main session of alpha: the largest transcript
// there (the one with the subagent and the most history).
func mainSession(t *testing.T, root string) (string, string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "projects", alphaFolder, "*.jsonl"))
	best, size := "", int64(-1)
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "agent-") {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatal("no session in alpha")
	}
	return best, strings.TrimSuffix(filepath.Base(best), ".jsonl")
}

// snapshot hashes every regular file under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		rel, _ := filepath.Rel(root, p)
		out[rel] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles reports the differences between two snapshots.
func sameFiles(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for p, h := range want {
		if g, ok := got[p]; !ok {
			diffs = append(diffs, "missing "+p)
		} else if g != h {
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "extra "+p)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: %s", what, strings.Join(diffs, "; "))
	}
}

func apply(t *testing.T, cs *changeset.ChangeSet) string {
	t.Helper()
	// The plan survives a save and a load: what apply writes is what a
	// saved plan replays.
	pf := filepath.Join(t.TempDir(), "plan.json")
	if err := cs.Save(pf); err != nil {
		t.Fatal(err)
	}
	loaded, err := changeset.Load(pf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := changeset.Apply(loaded, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res.Journal
}

func undo(t *testing.T, journal string) {
	t.Helper()
	u, err := changeset.Undo(journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(u, changeset.ApplyOptions{JournalDir: t.TempDir(), Force: true}); err != nil {
		t.Fatalf("undo: %v", err)
	}
}

// noErrors validates the store and fails on any finding of severity error.
func noErrors(t *testing.T, root string) *validate.Report {
	t.Helper()
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity >= validate.Error {
			t.Errorf("validate: %s:%d: %s %s", f.Path, f.Line, f.Code, f.Message)
		}
	}
	return rep
}

func findings(rep *validate.Report, code validate.Code) []validate.Finding {
	var out []validate.Finding
	for _, f := range rep.Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// expectRetarget checks dst line by line against src: the same lines
// with sessionId old→new and cwd oldDir→newDir, every other byte the same,
// so uuids and unknown fields are untouched.
func expectRetarget(t *testing.T, src, dst, oldID, newID, oldDir, newDir string) {
	t.Helper()
	a, b := lines(t, src), lines(t, dst)
	if len(a) != len(b) {
		t.Fatalf("%s: %d lines, source has %d", dst, len(b), len(a))
	}
	for i := range a {
		want := bytes.ReplaceAll(a[i], []byte(`"sessionId":"`+oldID+`"`), []byte(`"sessionId":"`+newID+`"`))
		want = bytes.ReplaceAll(want, []byte(`"cwd":"`+oldDir+`"`), []byte(`"cwd":"`+newDir+`"`))
		want = bytes.ReplaceAll(want, []byte(`"cwd":"`+oldDir+`/`), []byte(`"cwd":"`+newDir+`/`))
		if !bytes.Equal(want, b[i]) {
			t.Fatalf("%s line %d:\n got %.300s\nwant %.300s", dst, i+1, b[i], want)
		}
		var m map[string]any
		if json.Unmarshal(b[i], &m) == nil {
			if s, ok := m["sessionId"].(string); ok && s == oldID && oldID != newID {
				t.Errorf("%s line %d: sessionId still %s", dst, i+1, s)
			}
			if c, ok := m["cwd"].(string); ok && (c == oldDir || strings.HasPrefix(c, oldDir+"/")) && oldDir != newDir {
				t.Errorf("%s line %d: cwd still %s", dst, i+1, c)
			}
		}
	}
}

// addFileHistory makes a file-history/<id>/ folder (the corpus has none).
func addFileHistory(t *testing.T, root, id string) {
	t.Helper()
	d := filepath.Join(root, "file-history", id)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"0123456789abcdef@v1", "0123456789abcdef@v2"} {
		if err := os.WriteFile(filepath.Join(d, n), []byte("backup "+n+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// family lists the subagent transcripts of session id in folder: flat
// ones (by their sessionId) and nested ones.
func family(t *testing.T, root, folder, id string) (flat, nested []string) {
	t.Helper()
	l, err := store.ScanProject(root, folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Files {
		switch {
		case f.Kind == store.KindAgentFlat && store.FlatAgentSession(f.Path) == id:
			flat = append(flat, filepath.Base(f.Path))
		case f.Kind == store.KindAgent && f.Session == id:
			rel, _ := filepath.Rel(filepath.Join(root, "projects", folder, id), f.Path)
			nested = append(nested, rel)
		}
	}
	return flat, nested
}

// TestCloneCorpus clones the main session of alpha of every corpus version
// to another directory, then clones the clone, then undoes both.
func TestCloneCorpus(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			root := damage.CopyStore(t, v)
			src, id := mainSession(t, root)
			addFileHistory(t, root, id)
			damage.Age(t, root)
			before := snapshot(t, root)
			flat0, nested0 := family(t, root, alphaFolder, id)

			p, err := clone.Clone(clone.Options{Root: root, Session: id, To: zeta, ID: cloneID})
			if err != nil {
				t.Fatal(err)
			}
			if p.SessionID != cloneID || p.Folder != filepath.Join(root, "projects", zetaFolder) {
				t.Fatalf("plan: id %s folder %s", p.SessionID, p.Folder)
			}
			if got := p.ResumeCommand(); got != "cd /home/dev/work/zeta && claude --resume "+cloneID {
				t.Errorf("resume command %q", got)
			}
			j1 := apply(t, p.ChangeSet)
			noErrors(t, root)

			// The source is untouched.
			after := snapshot(t, root)
			for rel, h := range before {
				if after[rel] != h {
					t.Errorf("source file %s changed", rel)
				}
			}
			dst := filepath.Join(root, "projects", zetaFolder, cloneID+".jsonl")
			expectRetarget(t, src, dst, id, cloneID, alpha, zeta)
			fi, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			// A new session: the time of the clone, not its source's.
			if age := time.Since(fi.ModTime()); age < 0 || age > time.Minute {
				t.Errorf("the clone's mtime %s is not the time of the clone", fi.ModTime())
			}

			// Subagents of both layouts came along, retargeted.
			flat1, nested1 := family(t, root, zetaFolder, cloneID)
			if strings.Join(flat0, ",") != strings.Join(flat1, ",") || strings.Join(nested0, ",") != strings.Join(nested1, ",") {
				t.Errorf("subagents: flat %v nested %v, want %v %v", flat1, nested1, flat0, nested0)
			}
			for _, f := range flat0 {
				expectRetarget(t, filepath.Join(root, "projects", alphaFolder, f), filepath.Join(root, "projects", zetaFolder, f), id, cloneID, alpha, zeta)
			}
			for _, n := range nested0 {
				expectRetarget(t, filepath.Join(root, "projects", alphaFolder, id, n), filepath.Join(root, "projects", zetaFolder, cloneID, n), id, cloneID, alpha, zeta)
			}
			// Subagent layouts: flat agent-<hex>.jsonl in 2.0.x, from 2.0.77
			// on (2.0.14's agents ran inline); <id>/subagents/ from 2.1.30 on.
			switch {
			case !session.VersionLess(v, "2.1.30"):
				if len(nested0) == 0 {
					t.Errorf("%s: no nested subagent cloned", v)
				}
			case !session.VersionLess(v, "2.0.77"):
				if len(flat0) == 0 {
					t.Errorf("%s: no flat subagent cloned", v)
				}
			}
			metas, _ := filepath.Glob(filepath.Join(root, "projects", alphaFolder, id, "subagents", "*.meta.json"))
			for _, m := range metas {
				if !sameBytes(t, m, filepath.Join(root, "projects", zetaFolder, cloneID, "subagents", filepath.Base(m))) {
					t.Errorf("%s not copied", m)
				}
			}
			if !session.VersionLess(v, "2.1.88") && len(metas) == 0 {
				t.Errorf("%s: no .meta.json (written from 2.1.88 on)", v)
			}

			// Todos and file-history, renamed to the new id.
			todos, _ := filepath.Glob(filepath.Join(root, "todos", id+"-agent-*.json"))
			for _, td := range todos {
				name := strings.ReplaceAll(filepath.Base(td), id, cloneID)
				if !sameBytes(t, td, filepath.Join(root, "todos", name)) {
					t.Errorf("todo %s not copied as %s", td, name)
				}
			}
			for _, n := range []string{"0123456789abcdef@v1", "0123456789abcdef@v2"} {
				if !sameBytes(t, filepath.Join(root, "file-history", id, n), filepath.Join(root, "file-history", cloneID, n)) {
					t.Errorf("file-history %s not copied", n)
				}
			}

			// A clone of the clone.
			damage.Age(t, root)
			mid := snapshot(t, root)
			p2, err := clone.Clone(clone.Options{Root: root, Session: dst, To: "/home/dev/work/eta", ID: cloneID2})
			if err != nil {
				t.Fatal(err)
			}
			j2 := apply(t, p2.ChangeSet)
			noErrors(t, root)
			expectRetarget(t, dst, filepath.Join(root, "projects", "-home-dev-work-eta", cloneID2+".jsonl"), cloneID, cloneID2, zeta, "/home/dev/work/eta")
			if _, err := os.Stat(filepath.Join(root, "file-history", cloneID2, "0123456789abcdef@v1")); err != nil {
				t.Error("clone of clone: file-history not carried")
			}

			// Undo both: the store is as it was.
			undo(t, j2)
			sameFiles(t, "after undo of the second clone", mid, snapshot(t, root))
			undo(t, j1)
			sameFiles(t, "after undo of the first clone", before, snapshot(t, root))
			noErrors(t, root)
		})
	}
}

func sameBytes(t *testing.T, a, b string) bool {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// TestCloneSameFolder forks a 2.0.77 session into its own folder: the flat
// subagents' names are taken there, so they get new agent ids.
func TestCloneSameFolder(t *testing.T) {
	root := damage.CopyStore(t, "2.0.77")
	_, id := mainSession(t, root)
	damage.Age(t, root)
	before := snapshot(t, root)
	flat0, _ := family(t, root, alphaFolder, id)
	p, err := clone.Clone(clone.Options{Root: root, Session: id, To: alpha})
	if err != nil {
		t.Fatal(err)
	}
	if !store.IsUUID(p.SessionID) || p.SessionID == id {
		t.Fatalf("new id %q", p.SessionID)
	}
	apply(t, p.ChangeSet)
	rep := noErrors(t, root)
	if f := findings(rep, validate.AgentIDMismatch); len(f) > 0 {
		t.Errorf("agent id mismatch: %v", f)
	}
	flat1, _ := family(t, root, alphaFolder, p.SessionID)
	if len(flat1) != len(flat0) || len(flat0) == 0 {
		t.Fatalf("flat subagents of the clone: %v, of the source: %v", flat1, flat0)
	}
	for _, f := range flat1 {
		for _, o := range flat0 {
			if f == o {
				t.Errorf("clone's flat subagent %s has the source's name", f)
			}
		}
		aid := strings.TrimSuffix(strings.TrimPrefix(f, "agent-"), ".jsonl")
		for i, l := range lines(t, filepath.Join(root, "projects", alphaFolder, f)) {
			var m map[string]any
			json.Unmarshal(l, &m)
			if a, ok := m["agentId"].(string); ok && a != aid {
				t.Errorf("%s line %d: agentId %s", f, i+1, a)
			}
		}
	}
	// The main transcript's toolUseResult.agentId follows the rename.
	b, _ := os.ReadFile(filepath.Join(root, "projects", alphaFolder, p.SessionID+".jsonl"))
	if bytes.Contains(b, []byte(`"agentId":"a310640"`)) {
		t.Error("the clone still names agent a310640 in toolUseResult")
	}
	after := snapshot(t, root)
	for rel, h := range before {
		if after[rel] != h {
			t.Errorf("source file %s changed", rel)
		}
	}
}

// TestCloneIndex: a target folder with sessions-index.json gets the clone
// listed, the rest of the index kept byte for byte.
func TestCloneIndex(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	dst := filepath.Join(root, "projects", zetaFolder)
	os.MkdirAll(dst, 0o700)
	idx := filepath.Join(dst, "sessions-index.json")
	orig := "{\n  \"version\": 1,\n  \"entries\": [],\n  \"originalPath\": \"/home/dev/work/zeta\",\n  \"future\": {\"x\": 1}\n}"
	os.WriteFile(idx, []byte(orig), 0o600)
	// The source folder's index has an entry with fields cfix does not know.
	damage.Age(t, root)
	srcIdx := filepath.Join(root, "projects", alphaFolder, "sessions-index.json")
	main := damage.MainFile(root)
	fi, _ := os.Stat(main)
	srcEntry := `{"sessionId":"` + damage.V88Session + `","fullPath":"` + main + `","fileMtime":` + strconv.FormatInt(fi.ModTime().UnixMilli(), 10) +
		`,"firstPrompt":"hello, first session","customTitle":"my title","messageCount":0,"projectPath":"/home/dev/work/alpha","isSidechain":false}`
	os.WriteFile(srcIdx, []byte(`{"version":1,"entries":[`+srcEntry+`],"originalPath":"/home/dev/work/alpha"}`), 0o600)

	p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, ID: cloneID})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet)
	rep := noErrors(t, root)
	for _, c := range []validate.Code{validate.IndexUnindexed, validate.IndexPath, validate.IndexMissingFile, validate.IndexInvalid} {
		for _, f := range findings(rep, c) {
			if strings.Contains(f.Path, zetaFolder) {
				t.Errorf("%s: %s", f.Code, f.Message)
			}
		}
	}
	b, _ := os.ReadFile(idx)
	var doc struct {
		Entries []map[string]any `json:"entries"`
		Future  map[string]any   `json:"future"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("index: %v\n%s", err, b)
	}
	if len(doc.Entries) != 1 || doc.Future == nil {
		t.Fatalf("index: %s", b)
	}
	e := doc.Entries[0]
	want := map[string]any{"sessionId": cloneID, "fullPath": filepath.Join(dst, cloneID+".jsonl"), "customTitle": "my title", "projectPath": zeta}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("index entry %s = %v, want %v", k, e[k], v)
		}
	}
	if !strings.HasPrefix(string(b), "{\n  \"version\": 1,\n  \"entries\": [\n    {") || !strings.HasSuffix(string(b), "\n  ],\n  \"originalPath\": \"/home/dev/work/zeta\",\n  \"future\": {\"x\": 1}\n}") {
		t.Errorf("index bytes around the new entry changed:\n%s", b)
	}
}

// TestCloneRewritePaths: with --rewrite-paths, tool inputs and message
// text follow the directory; thinking blocks and other directories stay.
func TestCloneRewritePaths(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	n := damage.FindLine(t, main, damage.IsType("user"))
	damage.EditLine(t, main, n, func(m map[string]any) {
		m["message"].(map[string]any)["content"] = "compare /home/dev/work/alpha/notes.txt with /home/dev/work/alphabet/notes.txt"
	})
	// cwd: whole path components only.
	a := damage.FindLine(t, main, damage.IsType("assistant"))
	damage.EditLine(t, main, a, func(m map[string]any) { m["cwd"] = "/home/dev/work/alphabet" })
	a2 := damage.FindLast(t, main, damage.IsType("assistant"))
	damage.EditLine(t, main, a2, func(m map[string]any) { m["cwd"] = "/home/dev/work/alpha/sub" })
	damage.Age(t, root)
	p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, RewritePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet)
	noErrors(t, root)
	clonePath := filepath.Join(root, "projects", zetaFolder, p.SessionID+".jsonl")
	cl := lines(t, clonePath)
	for ln, want := range map[int]string{a: "/home/dev/work/alphabet", a2: "/home/dev/work/zeta/sub"} {
		var m map[string]any
		json.Unmarshal(cl[ln-1], &m)
		if m["cwd"] != want {
			t.Errorf("line %d: cwd %v, want %s", ln, m["cwd"], want)
		}
	}
	b, _ := os.ReadFile(clonePath)
	for _, want := range []string{
		"compare /home/dev/work/zeta/notes.txt with /home/dev/work/alphabet/notes.txt",
		`"file_path":"/home/dev/work/zeta/notes.txt"`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("clone lacks %s", want)
		}
	}
	// Thinking blocks are signed: never touched.
	src, _ := os.ReadFile(main)
	for _, l := range bytes.Split(src, []byte("\n")) {
		if bytes.Contains(l, []byte(`"type":"thinking"`)) {
			i := bytes.Index(l, []byte(`{"type":"thinking"`))
			j := bytes.Index(l[i:], []byte("}"))
			if !bytes.Contains(b, l[i:i+j+1]) {
				t.Errorf("thinking block changed: %s", l[i:i+j+1])
			}
		}
	}
	// Without --rewrite-paths, content stays.
	root2 := damage.CopyStore(t, damage.V88)
	damage.Age(t, root2)
	p2, err := clone.Clone(clone.Options{Root: root2, Session: damage.V88Session, To: zeta})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p2.ChangeSet)
	b2, _ := os.ReadFile(filepath.Join(root2, "projects", zetaFolder, p2.SessionID+".jsonl"))
	if !bytes.Contains(b2, []byte(`"file_path":"/home/dev/work/alpha/notes.txt"`)) {
		t.Error("without --rewrite-paths the tool input changed")
	}
}

func TestCloneErrors(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	sub := filepath.Join(root, "projects", alphaFolder, damage.V88Session, "subagents", "agent-a0822258224265608.jsonl")
	cases := []struct {
		name string
		o    clone.Options
		msg  string
	}{
		{"unknown session", clone.Options{Session: "00000000-0000-4000-8000-000000000000", To: zeta}, "no session"},
		{"bad id", clone.Options{Session: damage.V88Session, To: zeta, ID: "nope"}, "not a UUID"},
		{"used id", clone.Options{Session: damage.V88Session, To: zeta, ID: "b1182327-ed4f-40fc-b86c-e5b8a1b7374b"}, "already used"},
		{"dir is a file", clone.Options{Session: damage.V88Session, To: file}, "not a directory"},
		{"no dir", clone.Options{Session: damage.V88Session}, "no directory"},
		{"subagent path", clone.Options{Session: sub, To: zeta}, "subagent transcript"},
		{"file outside", clone.Options{Session: file + ".jsonl", To: zeta}, "no such file"},
	}
	for _, c := range cases {
		c.o.Root = root
		_, err := clone.Clone(c.o)
		var ie *clone.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want an InputError with %q", c.name, err, c.msg)
		}
	}
	if _, err := clone.Move(clone.Options{Root: root, Session: damage.V88Session, To: zeta, ID: cloneID}); err == nil {
		t.Error("move with --id: no error")
	}
	// By path works.
	if _, err := clone.Clone(clone.Options{Root: root, Session: damage.MainFile(root), To: zeta}); err != nil {
		t.Errorf("clone by path: %v", err)
	}
}

// TestCloneLongPath: a directory whose folder name passes 200 characters
// goes to the existing folder with the same prefix.
func TestCloneLongPath(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	long := "/home/dev/" + strings.Repeat("verylongname/", 20) + "end"
	enc := store.EncodeProject(long)
	existing := enc[:store.MaxFolderLen] + "-zzzz"
	os.MkdirAll(filepath.Join(root, "projects", existing), 0o700)
	damage.Age(t, root)
	p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: long})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p.Folder) != existing {
		t.Errorf("folder %s, want the existing %s", filepath.Base(p.Folder), existing)
	}
}

// TestMoveCorpus moves the main session of alpha of every version: the
// source is gone, the target complete, and undo restores every byte.
func TestMoveCorpus(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			root := damage.CopyStore(t, v)
			src, id := mainSession(t, root)
			addFileHistory(t, root, id)
			damage.Age(t, root)
			before := snapshot(t, root)
			flat0, nested0 := family(t, root, alphaFolder, id)
			srcDir := filepath.Join(root, "projects", alphaFolder)
			dirBefore, err := os.Stat(srcDir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := clone.Move(clone.Options{Root: root, Session: id, To: zeta})
			if err != nil {
				t.Fatal(err)
			}
			// The old folder goes when the session was all it held (and
			// only then), and comes back with undo as it was.
			emptied := false
			for _, op := range p.ChangeSet.Ops {
				emptied = emptied || op.Action == changeset.DeleteEmptyDir && op.Path == srcDir
			}
			if left := p.ChangeSet; emptied != (len(mustLeft(t, left, srcDir)) == 0) {
				t.Errorf("the plan removes %s: %v; what it leaves there: %v", srcDir, emptied, mustLeft(t, left, srcDir))
			}
			if p.SessionID != id {
				t.Fatalf("move changed the id to %s", p.SessionID)
			}
			j := apply(t, p.ChangeSet)
			noErrors(t, root)
			if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("source %s still there", src)
			}
			if _, err := os.Stat(filepath.Join(root, "projects", alphaFolder, id)); !errors.Is(err, fs.ErrNotExist) {
				t.Error("source session folder still there")
			}
			dst := filepath.Join(root, "projects", zetaFolder, id+".jsonl")
			moved := snapshot(t, root)
			// The moved transcript is the source retargeted (compare against the backup copy).
			tmp := filepath.Join(t.TempDir(), "src.jsonl")
			copyFile(t, filepath.Join(damage.Corpus(), v, ".claude", "projects", alphaFolder, id+".jsonl"), tmp)
			expectRetarget(t, tmp, dst, id, id, alpha, zeta)
			flat1, nested1 := family(t, root, zetaFolder, id)
			if strings.Join(flat0, ",") != strings.Join(flat1, ",") || strings.Join(nested0, ",") != strings.Join(nested1, ",") {
				t.Errorf("subagents: flat %v nested %v, want %v %v", flat1, nested1, flat0, nested0)
			}
			for _, f := range flat0 {
				if _, err := os.Stat(filepath.Join(root, "projects", alphaFolder, f)); err == nil {
					t.Errorf("flat subagent %s left behind", f)
				}
			}
			if _, ok := moved[filepath.Join("file-history", id, "0123456789abcdef@v1")]; !ok {
				t.Error("file-history of the session gone")
			}
			if _, err := os.Lstat(srcDir); emptied != errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s after the move: %v (the plan removes it: %v)", srcDir, err, emptied)
			}
			undo(t, j)
			sameFiles(t, "after undo", before, snapshot(t, root))
			if emptied {
				if fi, err := os.Stat(srcDir); err != nil || fi.Mode() != dirBefore.Mode() || !fi.ModTime().Equal(dirBefore.ModTime()) {
					t.Errorf("%s after undo: %v %v, want %v %v", srcDir, fi, err, dirBefore.Mode(), dirBefore.ModTime())
				}
			}
		})
	}
}

// mustLeft is what cs leaves in dir.
func mustLeft(t *testing.T, cs *changeset.ChangeSet, dir string) []string {
	t.Helper()
	left, err := cs.LeftIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func copyFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, x, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMoveSameFolder: a move to the directory the session is in does
// nothing.
func TestMoveSameFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	p, err := clone.Move(clone.Options{Root: root, Session: damage.V88Session, To: alpha})
	if err != nil {
		t.Fatal(err)
	}
	if !p.ChangeSet.Empty() {
		t.Errorf("plan has %d ops", len(p.ChangeSet.Ops))
	}
}

// TestMoveLive: a move of a live session is refused at apply.
func TestMoveLive(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	damage.Age(t, root)
	p, err := clone.Move(clone.Options{Root: root, Session: damage.V88Session, To: zeta})
	if err != nil {
		t.Fatal(err)
	}
	_, err = changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir(), LiveSessions: map[string]bool{damage.V88Session: true}})
	var re *changeset.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("apply of a live session: %v", err)
	}
	if _, err := os.Stat(damage.MainFile(root)); err != nil {
		t.Error("source gone after a refused apply")
	}
}

// TestCloneStreams clones a transcript far larger than the memory the
// plan and the apply may use: the transform streams it line by line.
func TestCloneStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 48 MB transcript")
	}
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	ls := lines(t, main)
	f, err := os.OpenFile(main, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 4000)
	n := 0
	for size := 0; size < 48<<20; n++ {
		l := bytes.Replace(ls[len(ls)-1], []byte(`"uuid":"`), []byte(`"pad":"`+pad+`","n":`+strconv.Itoa(n)+`,"uuid":"`), 1)
		l = append(l, '\n')
		f.Write(l)
		size += len(l)
	}
	f.Close()
	damage.Age(t, root)

	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
				}
			}
		}
	}()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, RewritePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	grown := int64(peak) - int64(base.HeapInuse)
	t.Logf("heap grew by %.1f MB", float64(grown)/(1<<20))
	if grown > 24<<20 {
		t.Errorf("heap grew by %d MB while cloning a 48 MB transcript: it is not streamed", grown>>20)
	}
	got := lines(t, filepath.Join(root, "projects", zetaFolder, p.SessionID+".jsonl"))
	if len(got) != len(ls)+n {
		t.Errorf("clone has %d lines, want %d", len(got), len(ls)+n)
	}
}

// TestCloneRenamedFile: a transcript renamed by hand (its name is not its
// session id) clones under a UUID, with the entries' sessionId rewritten.
func TestCloneRenamedFile(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	dir := filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub")
	renamed := filepath.Join(dir, "my session.jsonl")
	if err := os.Rename(filepath.Join(dir, "faa4037a-9834-4495-ada4-b0c35ab615ba.jsonl"), renamed); err != nil {
		t.Fatal(err)
	}
	damage.Age(t, root)
	p, err := clone.Clone(clone.Options{Root: root, Session: renamed, To: "/home/dev/work/beta.dir/sub"})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet)
	b, err := os.ReadFile(filepath.Join(dir, p.SessionID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("faa4037a-9834-4495-ada4-b0c35ab615ba")) || !bytes.Contains(b, []byte(`"sessionId":"`+p.SessionID+`"`)) {
		t.Error("the entries' sessionId was not rewritten")
	}
	for _, f := range noErrors(t, root).Findings {
		if f.Code == validate.SessionIDWrong {
			t.Errorf("after the clone: %s %s", f.Code, f.Path)
		}
	}
}

// TestCloneWindowsSession: a session run on Windows (a wild store's
// C:\... cwd) cloned to a POSIX directory gets its cwd fields under the old
// cwd mapped, the part under it with slashes (a cwd elsewhere is kept, as
// for POSIX paths), and validates with no error and no cwd-mismatch the
// source did not have; --rewrite-paths says in a note that text keeps its
// Windows paths instead of failing.
func TestCloneWindowsSession(t *testing.T) {
	const to = "/home/u/winproj"
	n := 0
	for _, name := range wild.Stores(t) {
		paths, _ := filepath.Glob(filepath.Join(wild.Root(name), "projects", "*", "*-*-*-*-*.jsonl"))
		var wins []string
		for _, src := range paths {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if changeset.WindowsDir(firstCWD(b)) {
				wins = append(wins, src)
			}
		}
		if len(wins) == 0 {
			continue
		}
		n += len(wins)
		for _, rewrite := range []bool{false, true} {
			// One copy of the store for every session of it: each is
			// cloned under an id of its own, so the clones do not meet.
			root := wild.Copy(t, name)
			damage.Age(t, root)
			for i, src := range wins {
				id := strings.TrimSuffix(filepath.Base(src), ".jsonl")
				newID := fmt.Sprintf("0c10e000-1111-4222-8333-%012d", i)
				t.Run(fmt.Sprintf("%s/%s/rewrite=%v", name, id[:8], rewrite), func(t *testing.T) {
					b, err := os.ReadFile(src)
					if err != nil {
						t.Fatal(err)
					}
					old := firstCWD(b)
					p, err := clone.Clone(clone.Options{Root: root, Session: id, To: to, ID: newID, RewritePaths: rewrite})
					if err != nil {
						t.Fatal(err)
					}
					noted := false
					for _, note := range p.ChangeSet.Notes {
						noted = noted || strings.Contains(note, "Windows folder")
					}
					if noted != rewrite {
						t.Errorf("note on the Windows folder: %v, want %v (%q)", noted, rewrite, p.ChangeSet.Notes)
					}
					apply(t, p.ChangeSet)
					dst := filepath.Join(p.Folder, newID+".jsonl")
					cb, err := os.ReadFile(dst)
					if err != nil {
						t.Fatal(err)
					}
					// Line for line: a cwd under the old one is mapped, any
					// other (the session went on in another folder) kept.
					srcLines, dstLines := bytes.Split(b, []byte("\n")), bytes.Split(cb, []byte("\n"))
					if len(srcLines) != len(dstLines) {
						t.Fatalf("the clone has %d lines, the source %d", len(dstLines), len(srcLines))
					}
					for i := range srcLines {
						was, now := lineCWD(srcLines[i]), lineCWD(dstLines[i])
						want, _ := changeset.MapPath(old, to, was)
						if was == old && now != to {
							t.Errorf("line %d: the session's own cwd %q became %q, want %q", i+1, was, now, to)
						}
						if now != want {
							t.Errorf("line %d: cwd %q became %q, want %q", i+1, was, now, want)
						}
					}
					before, err := validate.Run(validate.Options{Root: wild.Root(name), Targets: []string{src}})
					if err != nil {
						t.Fatal(err)
					}
					had := map[validate.Code]bool{}
					for _, f := range before.Findings {
						had[f.Code] = true
					}
					rep, err := validate.Run(validate.Options{Root: root, Targets: []string{dst}})
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range rep.Findings {
						if f.Severity == validate.Error || f.Code == validate.CWDMismatch && !had[f.Code] {
							t.Errorf("clone: %s:%d %s %s", f.Path, f.Line, f.Code, f.Message)
						}
					}
				})
			}
		}
	}
	if n == 0 {
		t.Fatal("no wild session ran on Windows")
	}
}

// firstCWD returns the first cwd field of a transcript's bytes.
func firstCWD(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if cwd := lineCWD(line); cwd != "" {
			return cwd
		}
	}
	return ""
}

// lineCWD returns the cwd field of a line ("" when it has none).
func lineCWD(line []byte) string {
	var e struct {
		CWD string `json:"cwd"`
	}
	json.Unmarshal(line, &e)
	return e.CWD
}

// TestCloneRootCWD: a session whose cwd is a root (/, C:\, a share's
// root) or not an absolute path at all is cloned with its cwd fields left
// as they are and a note saying so; the apply goes through.
func TestCloneRootCWD(t *testing.T) {
	for _, cwd := range []string{"/", `C:\`, `\\srv\share`, "relative/dir"} {
		t.Run(cwd, func(t *testing.T) {
			root := damage.CopyStore(t, damage.V88)
			src := damage.MainFile(root)
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := json.Marshal(cwd)
			b = bytes.ReplaceAll(b, []byte(`"cwd":"`+alpha+`"`), []byte(`"cwd":`+string(q)))
			if err := os.WriteFile(src, b, 0o644); err != nil {
				t.Fatal(err)
			}
			damage.Age(t, root)
			p, err := clone.Clone(clone.Options{Root: root, Session: damage.V88Session, To: zeta, ID: cloneID})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("session %s ran in %s: cwd fields are left as they are", damage.V88Session, cwd)
			if !slices.Contains(p.ChangeSet.Notes, want) {
				t.Errorf("notes %q, want %q", p.ChangeSet.Notes, want)
			}
			apply(t, p.ChangeSet)
			cb, err := os.ReadFile(filepath.Join(p.Folder, cloneID+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if n, m := bytes.Count(b, []byte(`"cwd":`+string(q))), bytes.Count(cb, []byte(`"cwd":`+string(q))); n == 0 || n != m {
				t.Errorf("%d cwd fields %s in the clone, %d in the source", m, q, n)
			}
		})
	}
}
