package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// usageEnv is an Env whose fake API bills every reply a usage of its own.
func usageEnv(t *testing.T, version string) *Env {
	t.Helper()
	exe, err := Executable(version)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if home, err = filepath.EvalSymlinks(home); err != nil {
		t.Fatal(err)
	}
	api, err := fakeapi.New(fakeapi.Options{Logf: t.Logf, Bill: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	return &Env{Version: version, Home: home, API: api, Exe: exe, t: t}
}

// usageSum is the usage a test adds up: every field cfix usage reports.
type usageSum struct {
	Input, Output, CacheWrite, CacheWrite1h, CacheRead, WebSearch, WebFetch int64
	Replies                                                                 int
}

func (s *usageSum) add(u fakeapi.Usage) {
	s.Input += int64(u.InputTokens)
	s.Output += int64(u.OutputTokens)
	s.CacheWrite += int64(u.CacheCreationInputTokens)
	s.CacheRead += int64(u.CacheReadInputTokens)
	if u.CacheCreation != nil {
		s.CacheWrite1h += int64(u.CacheCreation.Ephemeral1h)
	}
	if u.ServerToolUse != nil {
		s.WebSearch += int64(u.ServerToolUse.WebSearchRequests)
		s.WebFetch += int64(u.ServerToolUse.WebFetchRequests)
	}
	s.Replies++
}

// writtenIDs is the message ids of the assistant entries of every
// transcript of the store (main transcripts and subagents, both layouts).
func writtenIDs(t *testing.T, claudeDir string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(claudeDir, "projects"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var e struct {
				Type    string `json:"type"`
				Message struct {
					ID string `json:"id"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "assistant" && e.Message.ID != "" {
				ids[e.Message.ID] = true
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestUsageBilled drives each pinned client through streams of several
// blocks, a subagent, a resume, -c, a --fork-session fork, a model switch
// and a compaction, against the fake API billing every reply a usage of
// its own (input, cache writes for 5 minutes and an hour, cache reads,
// output, web searches and fetches on some), and checks that cfix usage
// --json reports exactly what the fake billed for the replies the client
// wrote to its transcripts: per model and in total, every field.
func TestUsageBilled(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs real Claude Code versions")
	}
	versions, err := ScenarioVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := usageEnv(t, v)
			run := func(step string, args ...string) Result {
				t.Helper()
				res := env.Run(AlphaDir, args...)
				if res.ExitCode != 0 || res.TimedOut {
					t.Fatalf("step %s: %s", step, res)
				}
				for _, q := range res.Requests {
					if q.IsMessages() && q.Status != 200 {
						t.Errorf("step %s: the fake API refused request %d: %d %s", step, q.N, q.Status, q.Reply)
					}
				}
				return res
			}
			res := run("fresh", "-p", "THINK: two at once BASH2: echo one ;; echo two", "--output-format", "json")
			out, err := res.Output()
			if err != nil || out.SessionID == "" {
				t.Fatalf("no session id: %v\n%s", err, res)
			}
			main := out.SessionID
			run("subagent", "-r", main, "-p", "AGENT: BASH: echo sub")
			run("continue", "-c", "-p", "continued BASH: echo c")
			run("fork", "-r", main, "--fork-session", "-p", "forked BASH: echo f")
			run("model switch", "-r", main, "--model", "claude-haiku-4-5-20251001", "-p", "on another model BASH: echo m")
			run("compact", "-r", main, "-p", "/compact")
			run("after compact", "-r", main, "-p", "after the compaction")

			written := writtenIDs(t, env.ClaudeDir())
			want := map[string]*usageSum{}
			var total usageSum
			billed := env.API.Bills()
			for _, b := range billed {
				if !written[b.MessageID] {
					continue // a side request no transcript holds (titles, probes)
				}
				if want[b.Model] == nil {
					want[b.Model] = &usageSum{}
				}
				want[b.Model].add(b.Usage)
				total.add(b.Usage)
			}
			if len(want) < 2 || total.WebSearch == 0 || total.WebFetch == 0 || total.CacheWrite1h == 0 {
				t.Fatalf("the run did not cover what it should: models %v, %+v", want, total)
			}
			r := RunCfix(t, t.TempDir(), "usage", "model", "--json", "--no-archived", "--root", env.ClaudeDir())
			if r.ExitCode != 0 {
				t.Fatalf("%s", r)
			}
			var doc struct {
				Rows []struct {
					Key          string `json:"key"`
					Replies      int    `json:"replies"`
					Input        int64  `json:"input_tokens"`
					Output       int64  `json:"output_tokens"`
					CacheWrite   int64  `json:"cache_creation_input_tokens"`
					CacheWrite1h int64  `json:"cache_creation_1h_input_tokens"`
					CacheRead    int64  `json:"cache_read_input_tokens"`
					WebSearch    int64  `json:"web_search_requests"`
					WebFetch     int64  `json:"web_fetch_requests"`
				} `json:"rows"`
				Totals struct {
					Replies      int   `json:"replies"`
					Input        int64 `json:"input_tokens"`
					Output       int64 `json:"output_tokens"`
					CacheWrite   int64 `json:"cache_creation_input_tokens"`
					CacheWrite1h int64 `json:"cache_creation_1h_input_tokens"`
					CacheRead    int64 `json:"cache_read_input_tokens"`
					WebSearch    int64 `json:"web_search_requests"`
					WebFetch     int64 `json:"web_fetch_requests"`
				} `json:"totals"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("%v\n%s", err, r)
			}
			got := map[string]usageSum{}
			for _, row := range doc.Rows {
				got[row.Key] = usageSum{row.Input, row.Output, row.CacheWrite, row.CacheWrite1h, row.CacheRead, row.WebSearch, row.WebFetch, row.Replies}
			}
			var models []string
			for m := range want {
				models = append(models, m)
			}
			sort.Strings(models)
			for _, m := range models {
				if got[m] != *want[m] {
					t.Errorf("%s: cfix usage %+v, the fake billed %+v", m, got[m], *want[m])
				}
			}
			if len(got) != len(want) {
				t.Errorf("cfix usage has %d models, the transcripts %d: %v", len(got), len(want), got)
			}
			tt := doc.Totals
			if g := (usageSum{tt.Input, tt.Output, tt.CacheWrite, tt.CacheWrite1h, tt.CacheRead, tt.WebSearch, tt.WebFetch, tt.Replies}); g != total {
				t.Errorf("total: cfix usage %+v, the fake billed %+v", g, total)
			}
			t.Logf("claude %s: %d replies billed, %d in transcripts, models %v: %+v", v, len(billed), total.Replies, models, total)
		})
	}
}
