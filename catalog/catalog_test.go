package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/store"
)

// twin is the id of a copy of the 2.1.88 store's main session that
// shares its first 8 characters (and 9) with it.
const twin = "3ba86ea1-ffff-4000-8000-000000000000"

// collidingStore is a copy of the 2.1.88 corpus store with twin, a
// session sharing 8 characters with another, and a stub (a summary line,
// no conversation) written after everything else.
func collidingStore(t *testing.T) (root, stub string) {
	t.Helper()
	root = damage.CopyStore(t, damage.V88)
	b, err := os.ReadFile(damage.MainFile(root))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "projects", damage.V88Project)
	if err := os.WriteFile(filepath.Join(dir, twin+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, twin+".jsonl"), old, old)
	stub = filepath.Join(dir, "55555555-5555-4555-8555-555555555555.jsonl")
	damage.WriteLines(t, stub, [][]byte{[]byte(`{"type":"summary","summary":"a stub's title","leafUuid":"00000000-0000-4000-8000-000000000000"}`)}, true)
	return root, stub
}

// TestListShortIDsAndStubs: the catalog gives every session the short id
// that names it alone (two sessions sharing their first 9 characters get
// 10), and lists the stubs after every other session,
// in the list of the store (browse, resume, completion), in the listing
// of a project folder (ls) and for every sort.
func TestListShortIDsAndStubs(t *testing.T) {
	root, stub := collidingStore(t)
	c := OpenIn(root, "")
	list, err := c.List(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Fatalf("%d sessions listed, want 6", len(list))
	}
	if last := list[len(list)-1]; last.Path != stub || !last.MetaOnly {
		t.Errorf("the last of the list is %s, want the stub", last.Path)
	}
	if list[0].MetaOnly {
		t.Errorf("the stub comes first")
	}
	seen := map[string]bool{}
	for _, s := range list {
		want := s.Session[:8]
		if s.Session == twin || s.Session == damage.V88Session {
			want = s.Session[:10]
		}
		if s.Short != want {
			t.Errorf("%s: short id %s, want %s", s.Session, s.Short, want)
		}
		if seen[s.Short] {
			t.Errorf("short id %s printed twice", s.Short)
		}
		seen[s.Short] = true
		tg, err := store.NewResolver(root, nil).Resolve(s.Short)
		if err != nil || tg.Session != s.Session {
			t.Errorf("%s does not name %s: %v", s.Short, s.Session, err)
		}
	}
	l, err := store.ScanProject(root, damage.V88Project)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Project(l, damage.V88Project)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range SessionSorts {
		v, err := p.View(key, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range v.Shown {
			got = append(got, filepath.Base(s.Path))
		}
		if len(got) != 3 || got[2] != filepath.Base(stub) {
			t.Errorf("--sort %s: %s, want the stub last", key, strings.Join(got, " "))
		}
	}
}
