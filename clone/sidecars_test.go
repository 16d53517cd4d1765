package clone_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/clone"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// addTasks writes the task list 2.1.330 keeps for a session that used
// the Task tools. Measured: `claude -p` with ToolSearch select:TaskCreate,
// TaskCreate {"subject":"write tests",...} and TaskUpdate {"taskId":"1",
// "status":"in_progress"} left tasks/<session-id>/.lock (0 bytes) and
// tasks/<session-id>/1.json ({"id":"1","subject":...,"description":...,
// "activeForm":...,"status":"in_progress","blocks":[],"blockedBy":[]},
// two-space indent); the list is named by the session id, and nothing in
// it names the session or its project.
func addTasks(t *testing.T, root, id string) {
	t.Helper()
	dir := filepath.Join(root, "tasks", id)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "1.json"), []byte("{\n  \"id\": \"1\",\n  \"subject\": \"write tests\",\n  \"description\": \"write the tests\",\n  \"activeForm\": \"Writing tests\",\n  \"status\": \"in_progress\",\n  \"blocks\": [],\n  \"blockedBy\": []\n}"), 0o600)
}

// TestCloneCarriesTasks: a clone gets a copy of the session's task list
// under its new id; the source keeps its own; a move keeps the id, and
// with it the list (tasks/ is not per project); undo gives the store back.
func TestCloneCarriesTasks(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	_, id := mainSession(t, root)
	addTasks(t, root, id)
	damage.Age(t, root)
	before := snapshot(t, root)

	p, err := clone.Clone(clone.Options{Root: root, Session: id, To: zeta, ID: cloneID})
	if err != nil {
		t.Fatal(err)
	}
	j := apply(t, p.ChangeSet)
	for _, f := range []string{".lock", "1.json"} {
		a, errA := os.ReadFile(filepath.Join(root, "tasks", id, f))
		b, errB := os.ReadFile(filepath.Join(root, "tasks", cloneID, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("tasks/%s/%s: not copied as it is (%v, %v)", cloneID, f, errA, errB)
		}
	}
	rep := noErrors(t, root)
	if fs := findings(rep, validate.OrphanTasks); len(fs) > 0 {
		t.Errorf("after clone: %+v", fs)
	}
	undo(t, j)
	sameFiles(t, "after undo", before, snapshot(t, root))

	// An id whose task list exists is in use, even with no transcript.
	addTasks(t, root, damage.Gone)
	if _, err := clone.Clone(clone.Options{Root: root, Session: id, To: zeta, ID: damage.Gone}); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("--id of a task list's session: %v", err)
	}
	os.RemoveAll(filepath.Join(root, "tasks", damage.Gone))

	mp, err := clone.Move(clone.Options{Root: root, Session: id, To: zeta})
	if err != nil {
		t.Fatal(err)
	}
	j = apply(t, mp.ChangeSet)
	if _, err := os.Stat(filepath.Join(root, "tasks", id, "1.json")); err != nil {
		t.Errorf("move lost the task list: %v", err)
	}
	if fs := findings(noErrors(t, root), validate.OrphanTasks); len(fs) > 0 {
		t.Errorf("after move: %+v", fs)
	}
	undo(t, j)
	sameFiles(t, "after undo of the move", before, snapshot(t, root))
}

// TestMoveProjectSessionMeta: move-project rewrites project_path in
// /insights' session summaries as it does history.jsonl's project fields:
// the value's bytes only, for paths under OLD_DIR (whole components).
// Measured: /insights of 2.1.330 (two prompts a minute apart, then
// `claude -p /insights`) wrote usage-data/session-meta/<session-id>.json
// with "session_id", "project_path" (the session's project directory),
// counts, "first_prompt" and "transcript_mtime" (two-space indent), and
// usage-data/facets/<session-id>.json with "session_id" and the model's
// facets, no path.
func TestMoveProjectSessionMeta(t *testing.T) {
	root, home := setupProject(t, damage.V88)
	_, id := mainSession(t, root)
	metas := filepath.Join(root, "usage-data", "session-meta")
	os.MkdirAll(metas, 0o700)
	write := func(sid, project string) string {
		p := filepath.Join(metas, sid+".json")
		os.WriteFile(p, damage.SessionMeta(sid, project), 0o600)
		return p
	}
	mine := write(id, alpha)
	sub := write(subID, alpha+"/sub")
	other := write(alphabetID, "/home/dev/work/alphabet")
	damage.Age(t, root)
	before := snapshot(t, home)
	want := map[string][]byte{
		mine:  bytes.Replace(damage.SessionMeta(id, alpha), []byte(`"project_path": "`+alpha+`"`), []byte(`"project_path": "`+alpha2+`"`), 1),
		sub:   bytes.Replace(damage.SessionMeta(subID, alpha+"/sub"), []byte(`"project_path": "`+alpha+`/sub"`), []byte(`"project_path": "`+alpha2+`/sub"`), 1),
		other: damage.SessionMeta(alphabetID, "/home/dev/work/alphabet"),
	}

	pp, err := clone.MoveProject(clone.ProjectOptions{Root: root, Old: alpha, New: alpha2})
	if err != nil {
		t.Fatal(err)
	}
	j := apply(t, pp.ChangeSet)
	for p, w := range want {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, w) {
			t.Errorf("%s:\n%s\nwant:\n%s", filepath.Base(p), got, w)
		}
	}
	if bytes.Equal(want[mine], damage.SessionMeta(id, alpha)) {
		t.Fatal("the test rewrites nothing")
	}
	if fs := findings(noErrors(t, root), validate.OrphanUsageData); len(fs) > 0 {
		t.Errorf("after move-project: %+v", fs)
	}
	undo(t, j)
	sameFiles(t, "after undo", before, snapshot(t, home))
	if !strings.Contains(string(want[other]), "alphabet") {
		t.Error("test lost its trap")
	}
}
