package usage

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// independent counts the replies of the transcripts under dir as plainly
// as it can be said: encoding/json on every line, each message id once
// with its largest usage (by output, then by all its tokens), assistant
// entries only, no <synthetic> or API error entry.
func independent(t *testing.T, dirs ...string) (Tokens, int) {
	t.Helper()
	type usageDoc struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		Split         *struct {
			H1 int64 `json:"ephemeral_1h_input_tokens"`
		} `json:"cache_creation"`
		Server *struct {
			Search int64 `json:"web_search_requests"`
			Fetch  int64 `json:"web_fetch_requests"`
		} `json:"server_tool_use"`
	}
	type line struct {
		Type     string `json:"type"`
		APIError bool   `json:"isApiErrorMessage"`
		Message  struct {
			ID    string    `json:"id"`
			Model string    `json:"model"`
			Usage *usageDoc `json:"usage"`
		} `json:"message"`
	}
	best := map[string]Tokens{}
	var noID []Tokens
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || !strings.Contains(filepath.ToSlash(p), "/projects/") {
				return err
			}
			fh, err := os.Open(p)
			if err != nil {
				return err
			}
			defer fh.Close()
			sc := bufio.NewScanner(fh)
			sc.Buffer(make([]byte, 1<<20), 256<<20)
			for sc.Scan() {
				var l line
				if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "assistant" || l.APIError || l.Message.Usage == nil || l.Message.Model == "<synthetic>" {
					continue
				}
				u := l.Message.Usage
				tk := Tokens{Input: u.Input, Output: u.Output, CacheWrite: u.CacheCreation, CacheRead: u.CacheRead}
				if u.Split != nil {
					tk.CacheWrite1h = min(u.Split.H1, u.CacheCreation)
				}
				if u.Server != nil {
					tk.WebSearch, tk.WebFetch = u.Server.Search, u.Server.Fetch
				}
				if l.Message.ID == "" {
					noID = append(noID, tk)
					continue
				}
				old, ok := best[l.Message.ID]
				if !ok || tk.Output > old.Output || tk.Output == old.Output && tk.Total()+tk.WebSearch+tk.WebFetch > old.Total()+old.WebSearch+old.WebFetch {
					best[l.Message.ID] = tk
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var sum Tokens
	for _, tk := range best {
		sum.Add(tk)
	}
	for _, tk := range noID {
		sum.Add(tk)
	}
	return sum, len(best) + len(noID)
}

func sumOf(rs []Record) Tokens {
	var s Tokens
	for _, r := range rs {
		s.Add(r.Tokens)
	}
	return s
}

// stores are the test stores: the corpus stores of every version and the
// wild stores.
func stores(t *testing.T) []string {
	var out []string
	for _, pat := range []string{"../testdata/corpus/*/.claude", "../testdata/wild/*/.claude"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 15 {
		t.Fatalf("found %d test stores", len(out))
	}
	return out
}

// TestCollectIndependent: on every testdata store, Collect's totals are
// those of the independent count, token for token.
func TestCollectIndependent(t *testing.T) {
	for _, root := range stores(t) {
		name := filepath.Base(filepath.Dir(root))
		t.Run(name, func(t *testing.T) {
			set, err := Collect(Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Warnings) > 0 {
				t.Errorf("warnings: %v", set.Warnings)
			}
			want, n := independent(t, root)
			if got := sumOf(set.Records); got != want || len(set.Records) != n {
				t.Errorf("%d replies %+v, want %d %+v", len(set.Records), got, n, want)
			}
			if n == 0 {
				t.Logf("no reply in %s", root)
			}
		})
	}
}
