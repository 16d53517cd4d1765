package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsProbe is the model a settings file names: a request for it shows
// that the client read the file.
const settingsProbe = "cfix-settings-probe"

// settingsShapes are the settings files TestSettingsShapes gives the
// client (each holds "model": settingsProbe first), and what the client
// does with each, by version: R reads it, X rejects the whole file (its
// model setting is not used), S reads it and skips what is wrong, saying
// so on stderr ("These settings entries were skipped"). The columns are
// ranges from the version measured: up to 2.1.204 (1.0.128, 2.0.77),
// from 2.1.205 (2.1.205), from 2.1.332.
var settingsShapes = []struct {
	name, body string
	want       [3]byte
}{
	{"no hooks", ``, [3]byte{'R', 'R', 'R'}},
	{"hooks {}", `"hooks": {}`, [3]byte{'R', 'R', 'R'}},
	{"hooks null", `"hooks": null`, [3]byte{'X', 'R', 'S'}},
	{"hooks []", `"hooks": []`, [3]byte{'X', 'R', 'S'}},
	{"hooks a string", `"hooks": "x"`, [3]byte{'X', 'R', 'S'}},
	{"event null", `"hooks": {"SessionStart": null}`, [3]byte{'X', 'R', 'S'}},
	{"event {}", `"hooks": {"SessionStart": {}}`, [3]byte{'X', 'R', 'S'}},
	{"event []", `"hooks": {"SessionStart": []}`, [3]byte{'R', 'R', 'R'}},
	{"event [null]", `"hooks": {"SessionStart": [null]}`, [3]byte{'X', 'X', 'S'}},
	{"group {}", `"hooks": {"SessionStart": [{}]}`, [3]byte{'X', 'X', 'S'}},
	{"group hooks null", `"hooks": {"SessionStart": [{"hooks": null}]}`, [3]byte{'X', 'X', 'S'}},
	{"group hooks []", `"hooks": {"SessionStart": [{"hooks": []}]}`, [3]byte{'R', 'R', 'R'}},
	{"hook null", `"hooks": {"SessionStart": [{"hooks": [null]}]}`, [3]byte{'X', 'X', 'S'}},
	{"hook without command", `"hooks": {"SessionStart": [{"hooks": [{"type": "command"}]}]}`, [3]byte{'X', 'X', 'S'}},
	{"hook of an unknown type", `"hooks": {"SessionStart": [{"hooks": [{"type": "nope", "command": "true"}]}]}`, [3]byte{'X', 'X', 'S'}},
	{"matcher a number", `"hooks": {"SessionStart": [{"matcher": 1, "hooks": [{"type": "command", "command": "true"}]}]}`, [3]byte{'X', 'X', 'S'}},
	{"unknown event", `"hooks": {"NoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}]}`, [3]byte{'X', 'R', 'S'}},
	{"group with another key", `"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}], "x": 1}]}`, [3]byte{'R', 'R', 'R'}},
	{"hook with another key", `"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true", "x": 1}]}]}`, [3]byte{'R', 'R', 'R'}},
	// Two members of one name: the client reads the last (JSON.parse).
	{"hooks null, then {}", `"hooks": null, "hooks": {}`, [3]byte{'R', 'R', 'R'}},
	{"hooks {}, then null", `"hooks": {}, "hooks": null`, [3]byte{'X', 'R', 'S'}},
	{"event null, then []", `"hooks": {"SessionStart": null, "SessionStart": []}`, [3]byte{'R', 'R', 'R'}},
	{"event [], then null", `"hooks": {"SessionStart": [], "SessionStart": null}`, [3]byte{'X', 'R', 'S'}},
	{"hooks [null], then {}", `"hooks": {"SessionStart": [null]}, "hooks": {}`, [3]byte{'R', 'R', 'R'}},
	{"hooks {}, then [null]", `"hooks": {}, "hooks": {"SessionStart": [null]}`, [3]byte{'X', 'X', 'S'}},
}

// shapeColumn is the column of settingsShapes that holds for version.
func shapeColumn(version string) int {
	switch {
	case Since(version, "2.1.332"):
		return 2
	case Since(version, "2.1.205"):
		return 1
	}
	return 0
}

// TestSettingsShapes: which settings.json files Claude Code rejects
// whole, which it reads skipping what is wrong, and which of two members
// of one name it reads. cfix guard install refuses a file whose hooks
// Claude Code ignores or rejects, and edits the member it reads.
func TestSettingsShapes(t *testing.T) {
	for _, v := range versionsSince(t, "1.0.128") {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, v, "")
			settings := filepath.Join(env.ClaudeDir(), "settings.json")
			if err := os.MkdirAll(env.ClaudeDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			// The first start of a HOME reads no settings.json (2.0.77).
			if res := env.Run("w", "-p", "hello"); res.ExitCode != 0 {
				t.Fatalf("%s", res)
			}
			col := shapeColumn(v)
			var got []string
			for _, sh := range settingsShapes {
				body := `{"model": "` + settingsProbe + `"`
				if sh.body != "" {
					body += ", " + sh.body
				}
				body += "}\n"
				if err := os.WriteFile(settings, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				res := env.Run("w", "-p", "hello")
				if len(res.MessageRequests()) == 0 {
					t.Errorf("%s: no request\n%s", sh.name, res)
					continue
				}
				did := byte('X')
				for _, q := range res.MessageRequests() {
					if q.Model == settingsProbe {
						did = 'R'
					}
				}
				if did == 'R' && strings.Contains(res.Stderr, "settings entries were skipped") {
					did = 'S'
				}
				got = append(got, sh.name+": "+string(did))
				if did != sh.want[col] {
					t.Errorf("%s %s: %c, want %c\n%s", v, sh.name, did, sh.want[col], res)
				}
			}
			t.Logf("%s: %s", v, strings.Join(got, "; "))
		})
	}
}

// TestHookSeesItsStore: a Claude Code run with $CLAUDE_CONFIG_DIR (a store
// that is not ~/.claude) gives its hooks that variable and a
// transcript_path in that store: a hook of cfix that names no store (an
// earlier cfix's install) acts on the store of the client that runs it.
func TestHookSeesItsStore(t *testing.T) {
	for _, v := range versionsSince(t, guardSince) {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, v, "")
			cfg := filepath.Join(env.Home, "other-store")
			if err := os.MkdirAll(cfg, 0o755); err != nil {
				t.Fatal(err)
			}
			seen := filepath.Join(env.Home, "seen")
			hook := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "printenv CLAUDE_CONFIG_DIR > ` + seen + `.env; cat > ` + seen + `.json"}]}]}}`
			if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(hook), 0o644); err != nil {
				t.Fatal(err)
			}
			res := env.RunProgram("env", "w", append([]string{"CLAUDE_CONFIG_DIR=" + cfg, env.Exe, "-p", "hello", "--allowedTools"}, strings.Join(AllowedTools, ","))...)
			if res.ExitCode != 0 {
				t.Fatalf("%s", res)
			}
			e, err := os.ReadFile(seen + ".env")
			if err != nil {
				t.Fatalf("the hook did not run: %v\n%s", err, res)
			}
			in, _ := os.ReadFile(seen + ".json")
			var input struct {
				TranscriptPath string `json:"transcript_path"`
			}
			json.Unmarshal(in, &input)
			t.Logf("%s: the hook's CLAUDE_CONFIG_DIR %q, transcript_path %q", v, strings.TrimSpace(string(e)), input.TranscriptPath)
			if strings.TrimSpace(string(e)) != cfg {
				t.Errorf("the hook's CLAUDE_CONFIG_DIR is %q, want %q", strings.TrimSpace(string(e)), cfg)
			}
			if !strings.HasPrefix(input.TranscriptPath, filepath.Join(cfg, "projects")+string(filepath.Separator)) {
				t.Errorf("transcript_path %q is not in %s", input.TranscriptPath, cfg)
			}
		})
	}
}
