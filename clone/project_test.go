package clone_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

const (
	alpha2       = "/home/dev/work/alpha2"
	alpha2Folder = "-home-dev-work-alpha2"
	subID        = "5ab00000-0000-4000-8000-000000000001"
	alphabetID   = "5ab00000-0000-4000-8000-000000000002"
)

// betaSession returns the path of the main session of beta.dir/sub.
func betaSession(t *testing.T, root string) string {
	t.Helper()
	ps, _ := filepath.Glob(filepath.Join(root, "projects", "-home-dev-work-beta-dir-sub", "*.jsonl"))
	best, size := "", int64(-1)
	for _, p := range ps {
		if fi, _ := os.Stat(p); !strings.HasPrefix(filepath.Base(p), "agent-") && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatal("no beta session")
	}
	return best
}

// fakeProject writes a session of project dir (a copy of beta's session
// with its cwd and id replaced) into dir's project folder.
func fakeProject(t *testing.T, root, folder, dir, id string) string {
	t.Helper()
	src := betaSession(t, root)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	oldID := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	b = bytes.ReplaceAll(b, []byte(`"cwd":"/home/dev/work/beta.dir/sub"`), []byte(`"cwd":"`+dir+`"`))
	b = bytes.ReplaceAll(b, []byte(oldID), []byte(id))
	p := filepath.Join(root, "projects", folder, id+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const historyLines = `{"display":"hello","pastedContents":{},"timestamp":1795257772000,"project":"/home/dev/work/alpha","sessionId":"S"}
{"display":"in alphabet","pastedContents":{},"timestamp":1795257773000,"project":"/home/dev/work/alphabet"}
{"display":"in sub /home/dev/work/alpha","pastedContents":{},"timestamp":1795257774000,"project":"/home/dev/work/alpha/sub"}
{ "project" : "/home/dev/work/alpha", "display":"spaced","timestamp":1795257775000 }
{"display":"elsewhere","pastedContents":{},"timestamp":1795257776000,"project":"/home/dev/work/delta"}
`

const configText = `{
  "numStartups": 3,
  "projects": {
    "/home/dev/work/alphabet": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true
    },
    "/home/dev/work/alpha": {
      "allowedTools": ["Bash"],
      "history": [{"display": "/home/dev/work/alpha"}],
      "hasTrustDialogAccepted": true
    },
    "/home/dev/work/alpha/sub": {
      "allowedTools": []
    },
    "/home/dev/work/delta": {}
  },
  "userID": "x"
}
`

// setupProject prepares a corpus store for move-project: history.jsonl,
// .claude.json next to the store, memory/ and sessions-index.json in
// alpha's folder, a project under alpha, and alphabet (which must not move).
func setupProject(t *testing.T, v string) (root, home string) {
	t.Helper()
	root = damage.CopyStore(t, v)
	home = filepath.Dir(root)
	_, id := mainSession(t, root)
	os.WriteFile(filepath.Join(root, "history.jsonl"), []byte(strings.ReplaceAll(historyLines, `"S"`, `"`+id+`"`)), 0o600)
	cfg := []byte(configText)
	if real, err := os.ReadFile(filepath.Join(damage.Corpus(), v, ".claude.json")); err == nil && bytes.Contains(real, []byte(`"/home/dev/work/alpha"`)) {
		cfg = real // the real file of versions that keep a projects map
	}
	os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600)
	mem := filepath.Join(root, "projects", alphaFolder, "memory")
	os.MkdirAll(mem, 0o700)
	os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("# memory of /home/dev/work/alpha\n"), 0o600)
	fakeProject(t, root, "-home-dev-work-alpha-sub", "/home/dev/work/alpha/sub", subID)
	fakeProject(t, root, "-home-dev-work-alphabet", "/home/dev/work/alphabet", alphabetID)
	damage.Age(t, root)
	main := filepath.Join(root, "projects", alphaFolder, id+".jsonl")
	fi, _ := os.Stat(main)
	idx := map[string]any{"version": 1, "originalPath": alpha, "entries": []any{map[string]any{
		"sessionId": id, "fullPath": main, "fileMtime": fi.ModTime().UnixMilli(), "projectPath": alpha, "isSidechain": false}}}
	b, _ := json.MarshalIndent(idx, "", "  ")
	os.WriteFile(filepath.Join(root, "projects", alphaFolder, "sessions-index.json"), b, 0o600)
	return root, home
}

func TestMoveProjectCorpus(t *testing.T) {
	for _, v := range versions(t) {
		t.Run(v, func(t *testing.T) {
			root, home := setupProject(t, v)
			_, id := mainSession(t, root)
			before := snapshot(t, home)
			oldFiles := map[string][]byte{}
			filepath.WalkDir(filepath.Join(root, "projects", alphaFolder), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					rel, _ := filepath.Rel(filepath.Join(root, "projects", alphaFolder), p)
					oldFiles[rel], _ = os.ReadFile(p)
				}
				return nil
			})
			history0, _ := os.ReadFile(filepath.Join(root, "history.jsonl"))
			config0, _ := os.ReadFile(filepath.Join(home, ".claude.json"))

			pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: alpha2})
			if err != nil {
				t.Fatal(err)
			}
			var show bytes.Buffer
			if err := changeset.Show(&show, pp.ChangeSet); err != nil {
				t.Fatalf("show: %v", err)
			}
			if len(pp.Folders) != 2 {
				t.Errorf("folders moved: %+v, want alpha and alpha/sub", pp.Folders)
			}
			j := apply(t, pp.ChangeSet)
			rep := noErrors(t, root)
			for _, f := range rep.Findings {
				if f.Code == validate.CWDMismatch && f.Severity > validate.Notice {
					t.Errorf("%s: %s", f.Path, f.Message)
				}
			}

			oldDir := filepath.Join(root, "projects", alphaFolder)
			if _, err := os.Stat(oldDir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("old folder still there")
			}
			newDir := filepath.Join(root, "projects", alpha2Folder)
			for rel, b := range oldFiles {
				p := filepath.Join(newDir, rel)
				switch {
				case rel == "sessions-index.json":
				case strings.HasSuffix(rel, ".jsonl"):
					tmp := filepath.Join(t.TempDir(), "old.jsonl")
					os.WriteFile(tmp, b, 0o600)
					expectRetarget(t, tmp, p, "-", "-", alpha, alpha2)
				default:
					got, err := os.ReadFile(p)
					if err != nil || !bytes.Equal(got, b) {
						t.Errorf("%s not moved as it was", rel)
					}
				}
			}
			// The project under alpha moved to alpha2/sub.
			sub := filepath.Join(root, "projects", alpha2Folder+"-sub", subID+".jsonl")
			if b, err := os.ReadFile(sub); err != nil || !bytes.Contains(b, []byte(`"cwd":"/home/dev/work/alpha2/sub"`)) {
				t.Errorf("sub project not moved: %v", err)
			}
			// alphabet did not move.
			if _, err := os.Stat(filepath.Join(root, "projects", "-home-dev-work-alphabet", alphabetID+".jsonl")); err != nil {
				t.Error("alphabet moved")
			}

			// The index.
			var idx struct {
				OriginalPath string           `json:"originalPath"`
				Entries      []map[string]any `json:"entries"`
			}
			ib, _ := os.ReadFile(filepath.Join(newDir, "sessions-index.json"))
			if err := json.Unmarshal(ib, &idx); err != nil {
				t.Fatal(err)
			}
			if idx.OriginalPath != alpha2 || len(idx.Entries) != 1 || idx.Entries[0]["fullPath"] != filepath.Join(newDir, id+".jsonl") || idx.Entries[0]["projectPath"] != alpha2 {
				t.Errorf("index: %s", ib)
			}

			// history.jsonl: project fields of alpha and under it, nothing else.
			wantHist := strings.NewReplacer(`"project":"/home/dev/work/alpha"`, `"project":"/home/dev/work/alpha2"`,
				`"project":"/home/dev/work/alpha/sub"`, `"project":"/home/dev/work/alpha2/sub"`,
				`"project" : "/home/dev/work/alpha"`, `"project" : "/home/dev/work/alpha2"`).Replace(string(history0))
			if got, _ := os.ReadFile(filepath.Join(root, "history.jsonl")); string(got) != wantHist {
				t.Errorf("history.jsonl:\n%s\nwant:\n%s", got, wantHist)
			}
			if !strings.Contains(wantHist, "in sub /home/dev/work/alpha\"") || !strings.Contains(wantHist, `"project":"/home/dev/work/alphabet"`) {
				t.Error("test history lost its traps")
			}

			// .claude.json: the keys renamed, every other byte kept.
			wantCfg := strings.NewReplacer(`"/home/dev/work/alpha": {`, `"/home/dev/work/alpha2": {`,
				`"/home/dev/work/alpha/sub": {`, `"/home/dev/work/alpha2/sub": {`).Replace(string(config0))
			if wantCfg == string(config0) {
				t.Fatal("config has no alpha key")
			}
			if got, _ := os.ReadFile(filepath.Join(home, ".claude.json")); string(got) != wantCfg {
				t.Errorf(".claude.json:\n%s\nwant:\n%s", got, wantCfg)
			}

			undo(t, j)
			sameFiles(t, "after undo", before, snapshot(t, home))
		})
	}
}

// TestMoveProjectMerge: a target folder that holds sessions is refused,
// unless --merge; then the indexes are merged too.
func TestMoveProjectMerge(t *testing.T) {
	root, home := setupProject(t, damage.V88)
	delta := "/home/dev/work/delta"
	deltaDir := filepath.Join(root, "projects", "-home-dev-work-delta")
	dIdx := filepath.Join(deltaDir, "sessions-index.json")
	damage.Age(t, root)
	own := filepath.Join(deltaDir, "b1182327-ed4f-40fc-b86c-e5b8a1b7374b.jsonl")
	fi, _ := os.Stat(own)
	os.WriteFile(dIdx, []byte("{\n  \"version\": 1,\n  \"entries\": [\n    {\n      \"sessionId\": \"b1182327-ed4f-40fc-b86c-e5b8a1b7374b\",\n      \"fullPath\": \""+own+"\",\n      \"fileMtime\": "+strconv.FormatInt(fi.ModTime().UnixMilli(), 10)+"\n    }\n  ],\n  \"originalPath\": \"/home/dev/work/delta\"\n}\n"), 0o600)
	before := snapshot(t, home)

	_, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: delta})
	var ce *clone.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--merge") {
		t.Fatalf("without --merge: %v, want a ConflictError naming --merge", err)
	}
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: delta, Merge: true})
	if err != nil {
		t.Fatal(err)
	}
	j := apply(t, pp.ChangeSet)
	rep := noErrors(t, root)
	for _, f := range rep.Findings {
		if strings.HasPrefix(string(f.Code), "index-") && strings.Contains(f.Path, "delta") {
			t.Errorf("%s %s: %s", f.Code, f.Path, f.Message)
		}
	}
	_, id := func() (string, string) {
		ps, _ := filepath.Glob(filepath.Join(damage.Corpus(), damage.V88, ".claude", "projects", alphaFolder, "*.jsonl"))
		return ps[0], strings.TrimSuffix(filepath.Base(ps[0]), ".jsonl")
	}()
	b, err := os.ReadFile(filepath.Join(deltaDir, id+".jsonl"))
	if err != nil || bytes.Contains(b, []byte(`"cwd":"/home/dev/work/alpha"`)) {
		t.Errorf("merged session: %v", err)
	}
	ib, _ := os.ReadFile(dIdx)
	if !bytes.Contains(ib, []byte(`"originalPath": "/home/dev/work/delta"`)) || !bytes.Contains(ib, []byte(id)) {
		t.Errorf("merged index:\n%s", ib)
	}
	undo(t, j)
	sameFiles(t, "after undo", before, snapshot(t, home))
}

// TestMoveProjectOnlySub: the old directory has no folder of its own; the
// project under it moves (beta.dir → b2 moves beta.dir/sub to b2/sub).
func TestMoveProjectOnlySub(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	damage.Age(t, root)
	src := betaSession(t, root)
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/home/dev/work/beta.dir", New: "/home/dev/work/b2"})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, pp.ChangeSet)
	noErrors(t, root)
	b, err := os.ReadFile(filepath.Join(root, "projects", "-home-dev-work-b2-sub", filepath.Base(src)))
	if err != nil || !bytes.Contains(b, []byte(`"cwd":"/home/dev/work/b2/sub"`)) {
		t.Errorf("beta.dir/sub not moved to b2/sub: %v", err)
	}
}

// TestMoveProjectSameFolder: a new path that encodes to the same folder
// (beta.dir → beta-dir) rewrites the transcripts in place.
func TestMoveProjectSameFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	damage.Age(t, root)
	src := betaSession(t, root)
	before, _ := os.ReadFile(src)
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/home/dev/work/beta.dir/sub", New: "/home/dev/work/beta-dir/sub"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.ChangeSet.Ops) == 0 || pp.ChangeSet.Ops[0].Action != changeset.Rewrite {
		t.Fatalf("ops: %+v", pp.ChangeSet.Ops)
	}
	var show bytes.Buffer
	if err := changeset.Show(&show, pp.ChangeSet); err != nil {
		t.Fatal(err)
	}
	// (Long lines are shortened for display: the changed cwd may lie past
	// the cut, so the diff is checked for changed lines, not for the text.)
	if !strings.Contains(show.String(), "\n-{") || !strings.Contains(show.String(), "\n+{") {
		t.Errorf("diff does not show the rewritten lines:\n%s", show.String())
	}
	apply(t, pp.ChangeSet)
	noErrors(t, root)
	tmp := filepath.Join(t.TempDir(), "old.jsonl")
	os.WriteFile(tmp, before, 0o600)
	expectRetarget(t, tmp, src, "-", "-", "/home/dev/work/beta.dir/sub", "/home/dev/work/beta-dir/sub")
}

// TestMoveProjectOtherSessions: in 2.1.330 the alpha session holds entries
// that ran in gamma (resumed from there): moving gamma rewrites those cwds
// in place, in a Rewrite op with a Transform, and leaves the rest.
func TestMoveProjectOtherSessions(t *testing.T) {
	root := damage.CopyStore(t, "2.1.330")
	damage.Age(t, root)
	src, _ := mainSession(t, root)
	before, _ := os.ReadFile(src)
	gamma := "/home/dev/work/gamma with space"
	if !bytes.Contains(before, []byte(`"cwd":"`+gamma+`"`)) {
		t.Fatal("corpus changed: the alpha session has no gamma entries")
	}
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: gamma, New: "/home/dev/work/gamma2"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, op := range pp.ChangeSet.Ops {
		if op.Path == src && op.Action == changeset.Rewrite && op.Transform != nil {
			found = true
		}
	}
	if !found {
		t.Fatal("no in-place rewrite of the alpha session")
	}
	var show bytes.Buffer
	if err := changeset.Show(&show, pp.ChangeSet); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show.String(), "--- "+src+"\n+++ "+src+"\n@@ ") || !strings.Contains(show.String(), "\n+{") {
		t.Errorf("diff does not show the rewrite of %s:\n%s", src, show.String())
	}
	apply(t, pp.ChangeSet)
	noErrors(t, root)
	tmp := filepath.Join(t.TempDir(), "old.jsonl")
	os.WriteFile(tmp, before, 0o600)
	expectRetarget(t, tmp, src, "-", "-", gamma, "/home/dev/work/gamma2")
	if _, err := os.Stat(filepath.Join(root, "projects", "-home-dev-work-gamma2")); err != nil {
		t.Error("gamma's folder not moved")
	}
}

// TestMoveProjectLossyFolder: a folder holding sessions of /x/a-b and of
// /x/a.b (one folder name) is refused.
func TestMoveProjectLossyFolder(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	fakeProject(t, root, "-home-dev-work-a-b", "/home/dev/work/a-b", subID)
	fakeProject(t, root, "-home-dev-work-a-b", "/home/dev/work/a.b", alphabetID)
	_, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/home/dev/work/a-b", New: "/home/dev/work/c"})
	var ce *clone.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "lossy") {
		t.Errorf("error %v, want a ConflictError about the lossy folder name", err)
	}
	// /home/dev/work/a.b alone would be refused the same way; a path with
	// no sessions moves nothing.
	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: "/home/dev/work/nothing", New: "/home/dev/work/c"})
	if err != nil || !pp.ChangeSet.Empty() {
		t.Errorf("move of a project without sessions: %v, %d ops", err, len(pp.ChangeSet.Ops))
	}
}

func TestMoveProjectErrors(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	for _, c := range [][2]string{{alpha, alpha}, {alpha, alpha + "/x"}, {alpha + "/x", alpha}, {"/", "/x"}, {"", "/x"}} {
		_, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: c[0], New: c[1]})
		var ie *clone.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%q → %q: %v, want an InputError", c[0], c[1], err)
		}
	}
}

func TestConfigPath(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".claude")
	os.MkdirAll(root, 0o700)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if got := clone.ConfigPath(root); got != filepath.Join(home, ".claude.json") {
		t.Errorf("~/.claude: %s", got)
	}
	other := filepath.Join(home, "cfg")
	if got := clone.ConfigPath(other); got != filepath.Join(other, ".claude.json") {
		t.Errorf("other store: %s", got)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", root)
	if got := clone.ConfigPath(root); got != filepath.Join(root, ".claude.json") {
		t.Errorf("CLAUDE_CONFIG_DIR: %s", got)
	}
	os.WriteFile(filepath.Join(root, ".config.json"), []byte("{}"), 0o600)
	if got := clone.ConfigPath(root); got != filepath.Join(root, ".config.json") {
		t.Errorf("legacy .config.json: %s", got)
	}
}
