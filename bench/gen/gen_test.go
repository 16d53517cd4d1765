package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/cfix-dev/cfix/store"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// storeFlag points TestCheckStore at an already generated store, e.g.
//
//	go test ./bench/gen -run TestCheckStore -store $PWD/bench/out/store
var storeFlag = flag.String("store", "", "directory of a generated store (with manifest.json) to check")

const corpusDir = "../../testdata/corpus"

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"-out", dir, "-size", "2MB", "-big", "1MB", "-corpus", corpusDir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := checkStore(t, dir)
	// Every corpus file is copied at least once: both subagent layouts.
	if s.files < 95 || s.projects < 3 || s.flat < 30 || s.nested < 10 {
		t.Errorf("store too uniform: %+v", s)
	}
}

func TestDeterministic(t *testing.T) {
	var sums [3]string
	for i, seed := range []string{"5", "5", "6"} {
		dir := t.TempDir()
		if err := run([]string{"-out", dir, "-size", "1MB", "-big", "200KB", "-seed", seed, "-corpus", corpusDir}, io.Discard); err != nil {
			t.Fatal(err)
		}
		sums[i] = treeSum(t, dir)
	}
	if sums[0] != sums[1] {
		t.Error("same seed, different stores")
	}
	if sums[0] == sums[2] {
		t.Error("different seeds, same store")
	}
}

// TestCheckStore checks the store named by -store; skipped without it.
func TestCheckStore(t *testing.T) {
	if *storeFlag == "" {
		t.Skip("no -store given")
	}
	s := checkStore(t, *storeFlag)
	t.Logf("%+v", s)
}

// treeSum hashes the names, link targets and contents of every file under dir.
func treeSum(t *testing.T, dir string) string {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(h, "%s\x00", rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			fmt.Fprintf(h, "-> %s\x00", target)
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// storeStats is what checkStore counted.
type storeStats struct {
	projects, files, flat, nested, lines int
	bytes                                int64
}

// checkStore checks that the store under dir is valid in the ways the
// generator promises, and that its big session is as big as manifest.json
// asked.
func checkStore(t *testing.T, dir string) storeStats {
	t.Helper()
	var man manifest
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	errs := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if errs++; errs <= 20 {
			t.Errorf(format, args...)
		}
	}

	var s storeStats
	uuidFile := map[string]string{} // uuid -> file defining it
	toolFile := map[string]string{} // tool_use id -> file
	type pending struct{ file, parent, main string }
	var dangling []pending // acompact parents to look up in the main session
	var metas []string     // subagent .meta.json files
	projects := filepath.Join(dir, ".claude", "projects")
	folders, err := os.ReadDir(projects)
	if err != nil {
		t.Fatal(err)
	}
	for _, fo := range folders {
		s.projects++
		root := filepath.Join(projects, fo.Name())
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(path, ".meta.json") {
				metas = append(metas, path)
				return nil
			}
			if !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			parts := strings.Split(filepath.ToSlash(rel), "/")
			name := strings.TrimSuffix(parts[len(parts)-1], ".jsonl")
			var session, agent string // expected sessionId (flat: any main session) and agentId
			switch {
			case len(parts) == 1 && isUUID(name):
				session = name
			case len(parts) == 1 && strings.HasPrefix(name, "agent-"):
				agent = strings.TrimPrefix(name, "agent-")
				s.flat++
			case len(parts) == 3 && parts[1] == "subagents" && strings.HasPrefix(name, "agent-"):
				session, agent = parts[0], strings.TrimPrefix(name, "agent-")
				s.nested++
			default:
				fail("%s: unexpected file", path)
				return nil
			}
			if agent != "" {
				// The parent session must exist (flat: checked per entry below).
				if session != "" {
					if _, err := os.Stat(filepath.Join(root, session+".jsonl")); err != nil {
						fail("%s: no parent session file", path)
					}
				}
			}
			s.files++
			own := map[string]bool{}
			var parents [][2]string // {uuid, parentUuid}
			var uses, results []string
			var maxTS time.Time
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for n := 1; sc.Scan(); n++ {
				s.lines++
				s.bytes += int64(len(sc.Bytes()) + 1)
				var e map[string]any
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					fail("%s:%d: %v", path, n, err)
					continue
				}
				if id, ok := e["uuid"].(string); ok {
					if prev, dup := uuidFile[id]; dup {
						fail("%s:%d: uuid %s also in %s", path, n, id, prev)
					}
					uuidFile[id] = path
					own[id] = true
					if p, ok := e["parentUuid"].(string); ok {
						parents = append(parents, [2]string{id, p})
					}
				}
				if sid, ok := e["sessionId"].(string); ok {
					switch {
					case session != "" && sid != session:
						fail("%s:%d: sessionId %s", path, n, sid)
					case session == "":
						// A flat subagent: its first sessionId names the
						// parent, which must exist; the others must agree.
						if _, err := os.Stat(filepath.Join(root, sid+".jsonl")); err != nil {
							fail("%s:%d: sessionId %s names no session of the folder", path, n, sid)
						}
						session = sid
					}
				}
				if a, ok := e["agentId"].(string); ok && agent != "" && a != agent {
					fail("%s:%d: agentId %s", path, n, a)
				}
				if cwd, ok := e["cwd"].(string); ok && store.EncodeProject(cwd) != fo.Name() {
					fail("%s:%d: cwd %s is not the folder's", path, n, cwd)
				}
				if ts, ok := e["timestamp"].(string); ok {
					tm, err := time.Parse(time.RFC3339Nano, ts)
					switch {
					case err != nil:
						fail("%s:%d: %v", path, n, err)
					case tm.Before(maxTS.Add(-5 * time.Second)): // the corpus jitters by up to 2.5s
						fail("%s:%d: timestamp %s goes back from %s", path, n, ts, maxTS)
					case tm.After(maxTS):
						maxTS = tm
					}
				}
				for _, id := range toolUseIDs(e) {
					if prev, dup := toolFile[id]; dup {
						fail("%s:%d: tool_use id %s also in %s", path, n, id, prev)
					}
					toolFile[id] = path
					uses = append(uses, id)
				}
				msg, _ := e["message"].(map[string]any)
				blocks, _ := msg["content"].([]any)
				for _, b := range blocks {
					if b, ok := b.(map[string]any); ok && b["type"] == "tool_result" {
						id, _ := b["tool_use_id"].(string)
						results = append(results, id)
					}
				}
			}
			if err := sc.Err(); err != nil {
				fail("%s: %v", path, err)
			}
			for _, p := range parents {
				if own[p[1]] {
					continue
				}
				if strings.HasPrefix(agent, "acompact") {
					// Compaction agents point into the main session.
					dangling = append(dangling, pending{path, p[1], filepath.Join(root, session+".jsonl")})
					continue
				}
				fail("%s: parentUuid %s of %s is not in the file", path, p[1], p[0])
			}
			useSet := map[string]bool{}
			for _, id := range uses {
				useSet[id] = true
			}
			for _, id := range results {
				if !useSet[id] {
					fail("%s: tool_result for %s without its tool_use", path, id)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dangling {
		if uuidFile[d.parent] != d.main {
			fail("%s: parentUuid %s is neither in the file nor in its main session", d.file, d.parent)
		}
	}
	// A sidecar's toolUseId names the Agent call in the parent session.
	for _, path := range metas {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			ToolUseID string `json:"toolUseId"`
		}
		if len(data) > 0 {
			if err := json.Unmarshal(data, &meta); err != nil {
				fail("%s: %v", path, err)
			}
		}
		session := filepath.Dir(filepath.Dir(path)) + ".jsonl"
		if meta.ToolUseID != "" && toolFile[meta.ToolUseID] != session {
			fail("%s: toolUseId %s is not a tool call of %s", path, meta.ToolUseID, session)
		}
	}
	if man.Big > 0 {
		st, err := os.Stat(filepath.Join(dir, man.BigSession))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() < man.Big {
			fail("big session: %d bytes, want at least %d", st.Size(), man.Big)
		}
	}
	if s.bytes < man.Size {
		fail("store: %d bytes of transcripts, want at least %d", s.bytes, man.Size)
	}
	if errs > 20 {
		t.Errorf("... %d errors in all", errs)
	}
	return s
}
