package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Pack and unpack proven with the real clients: a session the scenario
// wrote in HOME A's alpha folder is packed (encrypted to an age key),
// unpacked into another store, HOME B, in the folder of B/work/proj (a
// path A never had), and resumed there by the client: it sends the
// reference history (cloneReference: the session resumed in its own
// folder at A). The turn B adds is packed back and unpacked at A, where
// the session is: the unpack appends it, and a resume at A sends the
// reference history then that turn. Without the key the unpack is
// refused and nothing lands.
func TestPackUnpackResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		ref := cloneReference(t, sc)
		journal := t.TempDir()
		key := filepath.Join(t.TempDir(), "key.txt")
		const (
			secret    = "AGE-SECRET-KEY-1WX9ZWRE2JSPXZ9RAN7ZXFMDZ6QLHWZ9XC65CY6GKC6CDHCZAH8WS90A54E"
			recipient = "age1va7gqgy3rk5j6yh7vk92j75sfrrfq6wuz7hpvsrepumxhsypvaqqq2qs4f"
		)
		if err := os.WriteFile(key, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}

		// A: a copy of the scenario's store.
		envA := cloneEnv(t, sc)
		alpha := filepath.Join(sc.Home, AlphaDir)
		srcPath := filepath.Join(cloneProjectDir(t, envA.ClaudeDir(), alpha), sc.Main+".jsonl")
		srcSum := fileSum(t, srcPath)
		srcFamily := cloneFamilyOf(t, envA.ClaudeDir(), filepath.Dir(srcPath), sc.Main)
		packA := filepath.Join(t.TempDir(), "a.cfixpack")
		// No --redact nor --allow-secrets: what the clients wrote holds no
		// secret, and pack finds none (a false alarm would refuse it).
		res := RunCfix(t, journal, "pack", sc.Main, "--root", envA.ClaudeDir(), "-o", packA, "--recipient", recipient)
		if res.ExitCode != 0 {
			t.Fatalf("cfix pack: %s", res)
		}

		// B: another HOME, an empty store.
		envB := NewEnv(t, sc.Version, filepath.Join(t.TempDir(), "b"))
		if err := os.MkdirAll(filepath.Join(envB.ClaudeDir(), "projects"), 0o700); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(envB.Home, "work", "proj")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		res = RunCfix(t, journal, "unpack", packA, "--root", envB.ClaudeDir(), "--to", dir, "--apply", "--yes")
		if res.ExitCode != 1 || !strings.Contains(res.Stderr, "give --identity FILE") {
			t.Fatalf("cfix unpack without the key: want exit 1 and a sentence asking for --identity: %s", res)
		}
		if files, _ := filepath.Glob(filepath.Join(envB.ClaudeDir(), "projects", "*")); len(files) > 0 {
			t.Fatalf("an unpack refused left %v", files)
		}
		res = RunCfix(t, journal, "unpack", packA, "--root", envB.ClaudeDir(), "--to", dir, "--identity", key, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix unpack: %s", res)
		}
		if id := cloneResumeID(t, res, dir); id != sc.Main {
			t.Errorf("cfix unpack printed session %s, want %s", id, sc.Main)
		}
		landed := filepath.Join(cloneProjectDir(t, envB.ClaudeDir(), dir), sc.Main+".jsonl")
		cloneRequireFamily(t, "the unpacked session", srcFamily, cloneFamilyOf(t, envB.ClaudeDir(), filepath.Dir(landed), sc.Main), sc.Main, sc.Main, true)
		cloneRequireEntries(t, envB.ClaudeDir(), filepath.Dir(landed), sc.Main, alpha, dir)
		cloneRequireValid(t, envB.ClaudeDir(), map[string]bool{})

		// Resumed at B: the reference history.
		atB := cloneRun(t, envB, dir, clonePrompt, "-r", sc.Main)
		if !atB.ok() {
			t.Fatalf("-r %s in %s after the unpack: %s\n%s", sc.Main, dir, atB.summary(), atB.Res)
		}
		cloneRequireHistory(t, "-r S at B after the unpack", ref.Hist, atB.Hist)
		if got := fileSum(t, srcPath); got != srcSum {
			t.Errorf("pack changed the source %s", srcPath)
		}

		// Back to A: B's turn is appended to the session there.
		packB := filepath.Join(t.TempDir(), "b.cfixpack")
		if res := RunCfix(t, journal, "pack", sc.Main, "--root", envB.ClaudeDir(), "-o", packB); res.ExitCode != 0 {
			t.Fatalf("cfix pack at B: %s", res)
		}
		cloneAge(t, sc, envA.ClaudeDir())
		res = RunCfix(t, journal, "unpack", packB, "--root", envA.ClaudeDir(), "--apply", "--yes", "--json")
		if res.ExitCode != 0 {
			t.Fatalf("cfix unpack at A: %s", res)
		}
		var doc struct {
			Unpack struct {
				Sessions []struct{ How, Dir string }
			}
		}
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
			t.Fatalf("cfix unpack --json: %v\n%s", err, res.Stdout)
		}
		if len(doc.Unpack.Sessions) != 1 || doc.Unpack.Sessions[0].How != "append" || doc.Unpack.Sessions[0].Dir != alpha {
			t.Fatalf("the session back at A lands as %+v, want an append in %s", doc.Unpack.Sessions, alpha)
		}
		atA := cloneRun(t, envA, alpha, continuePrompt, "-r", sc.Main)
		if !atA.ok() {
			t.Fatalf("-r %s in %s after the unpack back: %s\n%s", sc.Main, alpha, atA.summary(), atA.Res)
		}
		cloneRequireContinued(t, "-r S at A after B's turn came back", ref.Hist, atA.Hist, clonePrompt)
		cloneRequireValid(t, envA.ClaudeDir(), map[string]bool{})
	})
}
