package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/store"
)

// TestRelocatedDir: a session Claude Code relocated into a worktree's
// project folder (2.1.219, EnterWorktree) and that stopped there names the
// repository in every entry; its relocated entry names the worktree. cfix
// resume starts the client there, and ls lists the folder under it.
func TestRelocatedDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	const folder, id = "-tmp-fid-wt-repo--claude-worktrees-feat", "2af12a98-b146-4d16-ac2f-3a168545c8fe"
	const worktree = "/tmp/fid/wt/repo/.claude/worktrees/feat"
	b, err := os.ReadFile(filepath.Join("..", "testdata", "facts", "relocated-2.1.219", ".claude", "projects", folder, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		keep = append(keep, l)
		if strings.Contains(l, `"type":"relocated"`) {
			break
		}
	}
	root := t.TempDir()
	path := filepath.Join(root, "projects", folder, id+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(strings.Join(keep, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	tg, err := Find(root, id[:8], "")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Dir != worktree {
		t.Errorf("resume starts the client in %q, want %q (the relocated entry's)", tg.Dir, worktree)
	}
	l, err := store.Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	ps := store.ProjectPathsOf(l, store.SessionsOf(l, nil))
	if len(ps) != 1 || len(ps[0].Paths) != 1 || ps[0].Paths[0] != worktree {
		t.Errorf("listed as %+v, want the folder under %s", ps, worktree)
	}
}
