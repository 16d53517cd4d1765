//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOs plants a FIFO (which blocks whoever opens it until someone
// opens its other end) in place of each kind of file cfix reads: a
// transcript named by its path, a subagent's, its metadata, a session's
// tool output and title, a project's index, settings.json, history.jsonl,
// a live session's file, the catalog's cache, the export index, the
// journal's log and the hooks' log. Every command that reads it (listings,
// checks, searches, exports, dry runs of the planners, the hooks, the MCP
// server's tools) ends within its time, and a command that was named the
// FIFO says what it is.
func TestFIFOs(t *testing.T) {
	const (
		alphaDir = "projects/-home-dev-work-alpha"
		alpha    = "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"
	)
	places := []string{
		alphaDir + "/x.jsonl",
		alphaDir + "/" + alpha + "/subagents/agent-a0000000000000000.jsonl",
		alphaDir + "/" + alpha + "/subagents/agent-a0000000000000000.meta.json",
		alphaDir + "/" + alpha + "/tool-results/toolu_0000.txt",
		alphaDir + "/" + alpha + "/custom-title.json",
		alphaDir + "/sessions-index.json",
		"settings.json",
		"history.jsonl",
		"sessions/4242.json",
		"plans/x.md",
		"todos/" + alpha + "-agent-" + alpha + ".json",
		"cache:catalog",
		"cache:export",
		"journal:log.jsonl",
		"state:guard.log",
		"state:guard-state.json",
	}
	for _, place := range places {
		t.Run(strings.ReplaceAll(place, "/", "_"), func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			root := filepath.Join(work, ".claude")
			if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "testdata", "corpus", "2.1.332", ".claude"), root).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			env := append(os.Environ(), "HOME="+work, "CLAUDE_CONFIG_DIR=", "XDG_CACHE_HOME="+filepath.Join(work, "cache"),
				"XDG_STATE_HOME="+filepath.Join(work, "state"), "CFIX_JOURNAL_DIR="+filepath.Join(work, "journal"))
			run := func(stdin string, args ...string) (string, error, bool) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, "cfix", args...)
				cmd.Env, cmd.Dir = env, work
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				cmd.Stdin = strings.NewReader(stdin)
				if args[0] == "mcp" {
					// Its input stays open until every request is answered
					// (or the time is up): it ends with its input.
					// (Its stderr apart: a bytes.Buffer that io.Copy fills
					// with ReadFrom drops what is written to it meanwhile.)
					var errOut bytes.Buffer
					cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, &errOut
					in, _ := cmd.StdinPipe()
					stdout, _ := cmd.StdoutPipe()
					if err := cmd.Start(); err != nil {
						return "", err, false
					}
					io.WriteString(in, stdin)
					sc := bufio.NewScanner(stdout)
					sc.Buffer(nil, 16<<20)
					for n := strings.Count(stdin, `"id":`); n > 0 && sc.Scan(); n-- {
						out.Write(append(sc.Bytes(), '\n'))
					}
					in.Close()
					io.Copy(&out, stdout)
					err := cmd.Wait()
					out.Write(errOut.Bytes())
					return out.String(), err, ctx.Err() != nil
				}
				cmd.WaitDelay = time.Second
				err := cmd.Run()
				return out.String(), err, ctx.Err() != nil
			}
			hook := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":"/home/dev/work/alpha","hook_event_name":"SessionStart","source":"resume"}`,
				alpha, filepath.Join(root, alphaDir, alpha+".jsonl"))
			mcp := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
			for i, tool := range []string{
				`"read_session","arguments":{"session":"` + alpha + `"}`,
				`"session_health","arguments":{"session":"` + alpha + `"}`,
				`"list_sessions","arguments":{"project":"all"}`,
				`"search_sessions","arguments":{"query":"hello","project":"all"}`,
			} {
				mcp += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s}}`+"\n", i+2, tool)
			}
			// What a FIFO in a cache or a log replaces is made first.
			var fifo string
			switch kind, rel, _ := strings.Cut(place, ":"); kind {
			case "cache":
				if rel == "export" {
					// The MCP server keeps an index of a transcript from 4 MB.
					pad := `{"type":"file-history-snapshot","messageId":"pad","snapshot":{"messageId":"pad","trackedFileBackups":{},"timestamp":"2026-01-01T00:00:00Z","pad":"` +
						strings.Repeat("x", 4<<20) + `"},"isSnapshotUpdate":false}` + "\n"
					f, err := os.OpenFile(filepath.Join(root, alphaDir, alpha+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteString(pad)
					f.Close()
					run(mcp, "mcp", "--root", root)
				} else {
					run("", "ls", "--root", root)
				}
				fifo = firstFile(t, filepath.Join(work, "cache", "cfix", rel))
			case "journal":
				run("", "repair", "--only", "index", "--root", root, "--apply", "--yes")
				run("", "clone", alpha, "--to", filepath.Join(work, "z"), "--root", root, "--apply", "--yes")
				fifo = firstFile(t, filepath.Join(work, "journal"), rel)
			case "state":
				fifo = filepath.Join(work, "state", "cfix", rel)
			default:
				fifo = filepath.Join(root, place)
			}
			os.MkdirAll(filepath.Dir(fifo), 0o755)
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"validate"}, {"validate", filepath.Join(root, alphaDir)}, {"ls"}, {"ls", "/home/dev/work/alpha"}, {"du"},
				{"search", "hello"}, {"show", alpha}, {"export", alpha, "-o", filepath.Join(work, "out.md")},
				{"repair"}, {"prune"}, {"archive", alpha}, {"rm", alpha}, {"clone", alpha, "--to", filepath.Join(work, "y")},
				{"trim", alpha, "--thinking"}, {"resume", alpha, "--check-only"}, {"guard", "status"},
				{"hook", "SessionStart"}, {"journal", "list"}, {"undo", "--list"}, {"mcp"},
			} {
				stdin := ""
				switch args[0] {
				case "hook":
					stdin = hook
				case "mcp":
					stdin = mcp
				}
				if args[0] != "journal" && args[0] != "hook" {
					args = append(args, "--root", root)
				}
				out, err, hung := run(stdin, args...)
				if hung {
					t.Errorf("cfix %s hangs on a FIFO at %s\n%s", strings.Join(args, " "), place, out)
				} else if args[0] == "mcp" && strings.Count(out, `"id":`) < 5 {
					t.Errorf("cfix mcp: not every tool answered (%v)\n%s", err, out)
				}
			}
			if place == alphaDir+"/x.jsonl" {
				// The store's check names it: a transcript's name that is
				// no file is a finding, not skipped in silence.
				if out, _, _ := run("", "validate", "--root", root); !strings.Contains(out, "x.jsonl") || !strings.Contains(out, "file-special") {
					t.Errorf("cfix validate of a store with a FIFO named like a transcript: want a file-special finding naming it\n%s", out)
				}
				for _, cmd := range []string{"validate", "show", "export", "search"} {
					args := []string{cmd, fifo, "--root", root}
					if cmd == "search" {
						args = []string{cmd, "hello", "--session", fifo, "--root", root}
					}
					out, _, hung := run("", args...)
					if hung || !strings.Contains(out, "x.jsonl") || !strings.Contains(out, "named pipe") {
						t.Errorf("cfix %s of a FIFO: want a message naming it and what it is (hung %v)\n%s", cmd, hung, out)
					}
				}
			}
		})
	}
}

// firstFile is the first regular file below dir (named name, when given).
func firstFile(t *testing.T, dir string, name ...string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && d.Type().IsRegular() && (len(name) == 0 || d.Name() == name[0]) {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file %v below %s", name, dir)
	}
	return found
}
