package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/store"
)

// TestDuplicateReadBack: an entry written again is uuid-duplicate when its
// line holds the very bytes of the first one's, NUL bytes aside (the first
// line is read back, not hashed in advance); uuid-replayed when only the
// fields a resume rewrites differ; uuid-conflict when the first one shared
// its line with another record or anything else differs.
func TestDuplicateReadBack(t *testing.T) {
	const v = "2.1.90"
	u1 := rvEntry(rvSessA, "u1", "", "user", "2026-01-01T00:00:01.000Z", v, `"hi"`)
	a1 := rvEntry(rvSessA, "a1", "u1", "assistant", "2026-01-01T00:00:02.000Z", v, `[{"type":"text","text":"ok"}]`)
	u2 := rvEntry(rvSessA, "u2", "a1", "user", "2026-01-01T00:00:03.000Z", v, `"more"`)
	a2 := rvEntry(rvSessA, "a2", "u2", "assistant", "2026-01-01T00:00:04.000Z", v, `[{"type":"text","text":"done"}]`)
	lines := []string{
		u1,              // 1
		a1,              // 2
		u1,              // 3: duplicate of 1
		"\x00\x00" + a1, // 4: duplicate of 2, NUL bytes aside
		u2 + a2,         // 5: two records glued
		u2,              // 6: its first line held two records
		strings.Replace(a1, `"cwd":"/home/x"`, `"cwd":"/home/y"`, 1), // 7: replayed
		strings.Replace(u1, `"hi"`, `"ho"`, 1),                       // 8: conflict
	}
	p := rvWrite(t, t.TempDir(), rvSessA+".jsonl", strings.Join(lines, "\n")+"\n")
	fi, _ := os.Stat(p)
	res := newChecker().check(store.File{Path: p, Project: "-home-x", Kind: store.KindSession, Session: rvSessA, Size: fi.Size(), ModTime: fi.ModTime()})
	got := map[int]Code{}
	for _, f := range res.findings {
		switch f.Code {
		case UUIDDuplicate, UUIDReplayed, UUIDConflict:
			got[f.Line] = f.Code
		}
	}
	want := map[int]Code{3: UUIDDuplicate, 4: UUIDDuplicate, 6: UUIDConflict, 7: UUIDReplayed, 8: UUIDConflict}
	for l, c := range want {
		if got[l] != c {
			t.Errorf("line %d: %q, want %q", l, got[l], c)
		}
	}
	for l, c := range got {
		if _, ok := want[l]; !ok {
			t.Errorf("line %d: %q, want none of these codes", l, c)
		}
	}
}
