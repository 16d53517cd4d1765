package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/e2e/s3server"
)

// Push and pull proven with the real clients, through a real S3 server
// (versitygw on loopback): a session the scenario wrote in HOME A's alpha
// folder is pushed as machine a, pulled into another store, HOME B, where
// A's home maps to B's by default (B/work/alpha, a path A never had), is
// valid there and resumed by the client in that folder: it sends the
// reference history (the session resumed in its own folder at A). B's
// turn, pushed as machine b and pulled at A, is an append, and a resume
// at A sends the reference history then that turn. A pull again is
// nothing to do; A's next push writes that one session's object and the
// index only, and B receives every line A has.
func TestPushPullResume(t *testing.T) {
	if s3server.Binary() == "" && os.Getenv("CFIX_REQUIRE_S3") == "" {
		t.Skip("versitygw is not installed (scripts/test-deps.sh installs it into .cache/bin)")
	}
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		ref := cloneReference(t, sc)
		journal := t.TempDir()
		srv := s3server.Start(t)
		bucket := srv.Bucket(t)
		url := "s3://" + bucket + "/carry"
		objects := func() map[string]s3server.Object {
			m := map[string]s3server.Object{}
			for _, o := range srv.Objects(t, bucket) {
				m[o.Key] = o
			}
			return m
		}
		// written: the keys of after that before lacks or holds otherwise.
		written := func(before, after map[string]s3server.Object) []string {
			var out []string
			for k, o := range after {
				if b, ok := before[k]; !ok || !b.LastModified.Equal(o.LastModified) || b.Size != o.Size {
					out = append(out, k)
				}
			}
			return out
		}
		type pushed struct {
			Sessions []struct{ ID, Why string }
			Pushed   struct{ Written, Removed []string }
		}
		push := func(home, root, machine string, args ...string) pushed {
			t.Helper()
			env := append(srv.Env(), "HOME="+home)
			res := RunCfixEnv(t, journal, env, append([]string{"push", url, "--root", root, "--machine", machine, "--apply", "--json"}, args...)...)
			if res.ExitCode != 0 {
				t.Fatalf("cfix push as %s: %s", machine, res)
			}
			var doc pushed
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
				t.Fatalf("cfix push --json: %v\n%s", err, res.Stdout)
			}
			return doc
		}
		type landed struct{ Session, ID, How, Dir string }
		pull := func(home, root, machine string) ([]landed, int) {
			t.Helper()
			env := append(srv.Env(), "HOME="+home)
			res := RunCfixEnv(t, journal, env, "pull", url, "--root", root, "--machine", machine, "--apply", "--yes", "--json")
			if res.ExitCode != 0 {
				t.Fatalf("cfix pull of %s: %s", machine, res)
			}
			var doc struct {
				Changes []json.RawMessage
				Pull    struct{ Sessions []landed }
			}
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
				t.Fatalf("cfix pull --json: %v\n%s", err, res.Stdout)
			}
			return doc.Pull.Sessions, len(doc.Changes)
		}

		// A: a copy of the scenario's store, its sessions in sc.Home.
		envA := cloneEnv(t, sc)
		alpha := filepath.Join(sc.Home, AlphaDir)
		srcPath := filepath.Join(cloneProjectDir(t, envA.ClaudeDir(), alpha), sc.Main+".jsonl")
		srcFamily := cloneFamilyOf(t, envA.ClaudeDir(), filepath.Dir(srcPath), sc.Main)
		before := objects()
		doc := push(sc.Home, envA.ClaudeDir(), "a", sc.Main)
		w := written(before, objects())
		if len(doc.Sessions) != 1 || len(w) != 2 || len(doc.Pushed.Written) != 2 {
			t.Fatalf("the first push of A: %+v; the server has %d objects written (%v), want the session's and the index", doc, len(w), w)
		}
		t.Logf("first push of A: %d objects written on the server", len(w))

		// B: another HOME, an empty store; A's home maps to B's.
		envB := NewEnv(t, sc.Version, filepath.Join(t.TempDir(), "b"))
		if err := os.MkdirAll(filepath.Join(envB.ClaudeDir(), "projects"), 0o700); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(envB.Home, AlphaDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ls, _ := pull(envB.Home, envB.ClaudeDir(), "a")
		if len(ls) != 1 || ls[0].How != "new" || ls[0].ID != sc.Main || ls[0].Dir != dir {
			t.Fatalf("the pull at B lands %+v, want %s new in %s", ls, sc.Main, dir)
		}
		landedPath := filepath.Join(cloneProjectDir(t, envB.ClaudeDir(), dir), sc.Main+".jsonl")
		cloneRequireFamily(t, "the pulled session", srcFamily, cloneFamilyOf(t, envB.ClaudeDir(), filepath.Dir(landedPath), sc.Main), sc.Main, sc.Main, true)
		cloneRequireEntries(t, envB.ClaudeDir(), filepath.Dir(landedPath), sc.Main, alpha, dir)
		cloneRequireValid(t, envB.ClaudeDir(), map[string]bool{})

		// Resumed at B in the mapped folder: the reference history.
		atB := cloneRun(t, envB, dir, clonePrompt, "-r", sc.Main)
		if !atB.ok() {
			t.Fatalf("-r %s in %s after the pull: %s\n%s", sc.Main, dir, atB.summary(), atB.Res)
		}
		cloneRequireHistory(t, "-r S at B after the pull", ref.Hist, atB.Hist)

		// B's turn goes to the remote as machine b, and comes to A as an
		// append.
		before = objects()
		doc = push(envB.Home, envB.ClaudeDir(), "b", sc.Main)
		w = written(before, objects())
		if len(doc.Sessions) != 1 || len(w) != 2 {
			t.Fatalf("the push of B: %+v; %d objects written (%v)", doc, len(w), w)
		}
		cloneAge(t, sc, envA.ClaudeDir())
		ls, _ = pull(sc.Home, envA.ClaudeDir(), "b")
		if len(ls) != 1 || ls[0].How != "append" || ls[0].Dir != alpha {
			t.Fatalf("the session back at A lands as %+v, want an append in %s", ls, alpha)
		}
		atA := cloneRun(t, envA, alpha, continuePrompt, "-r", sc.Main)
		if !atA.ok() {
			t.Fatalf("-r %s in %s after the pull back: %s\n%s", sc.Main, alpha, atA.summary(), atA.Res)
		}
		cloneRequireContinued(t, "-r S at A after B's turn came back", ref.Hist, atA.Hist, clonePrompt)
		cloneRequireValid(t, envA.ClaudeDir(), map[string]bool{})

		// Pulled again: nothing to do.
		if ls, n := pull(sc.Home, envA.ClaudeDir(), "b"); n != 0 || len(ls) != 1 || (ls[0].How != "same" && ls[0].How != "ahead") {
			t.Fatalf("a pull of b again at A plans %d changes: %+v", n, ls)
		}

		// A's turn: its next push writes that session's object and the
		// index, nothing else; B receives it as an append.
		before = objects()
		doc = push(sc.Home, envA.ClaudeDir(), "a", sc.Main)
		after := objects()
		w = written(before, after)
		if len(doc.Sessions) != 1 || doc.Sessions[0].Why != "changed" || len(w) != 2 || len(doc.Pushed.Removed) != 1 || len(after) != len(before) {
			t.Fatalf("A's push after its turn: %+v; %d objects written (%v), %d on the server, %d before", doc, len(w), w, len(after), len(before))
		}
		t.Logf("A's push after its turn: %d objects written, %d removed", len(w), len(doc.Pushed.Removed))
		cloneAge(t, sc, envB.ClaudeDir())
		ls, _ = pull(envB.Home, envB.ClaudeDir(), "a")
		if len(ls) != 1 || ls[0].How != "append" {
			t.Fatalf("A's turn at B lands as %+v, want an append", ls)
		}
		// Every line of A's is B's, its cwd fields mapped as the session's folder is.
		la, lb := readLines(t, srcPath), readLines(t, landedPath)
		if len(la) != len(lb) {
			t.Fatalf("A's transcript has %d lines, B's %d", len(la), len(lb))
		}
		tr := &changeset.Transform{Kind: changeset.TransformRetarget, OldDir: alpha, NewDir: dir}
		for i := range la {
			want, _ := tr.Line(la[i])
			if !bytes.Equal(want, lb[i]) {
				t.Fatalf("line %d of the session differs between A and B:\n%s\n%s", i+1, la[i], lb[i])
			}
		}
		cloneRequireValid(t, envB.ClaudeDir(), map[string]bool{})
	})
}
