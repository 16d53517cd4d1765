package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortIDs: every short id names its session alone to the resolver,
// and is the shortest that does (at least ShortLen characters): two
// sessions sharing their first 8 characters (one only as a subagent
// folder), a session in two folders, an id another name starts with, and
// a name that is no session id.
func TestShortIDs(t *testing.T) {
	root, _, _ := testStore(t)
	t.Chdir(t.TempDir())
	const (
		near    = "aaaaaaaa-0001-4000-8000-000000000004" // shares 13 characters with idA
		onlySub = "b0b0b0b0-9999-4000-8000-000000000005" // a subagent folder, no main transcript
	)
	line := func(id string) string {
		return `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"` + id + `","cwd":"/w","message":{"role":"user","content":"hi"}}` + "\n"
	}
	writeFile(t, filepath.Join(root, "projects", "-w", near+".jsonl"), line(near))
	writeFile(t, filepath.Join(root, "projects", "-x", onlySub, "subagents", "agent-a9.jsonl"), line(onlySub))
	writeFile(t, filepath.Join(root, "projects", "-x", idB+"-copy.jsonl"), line(idB))
	writeFile(t, filepath.Join(root, "projects", "-w", "short.jsonl"), line(idA))
	l, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	ids := ShortIDsOf(l)
	want := map[string]string{
		idA:                   "aaaaaaaa-000",
		near:                  "aaaaaaaa-000",
		idA2:                  "aaaabbbb",
		idB:                   idB, // b0b0b0b0-...-copy starts with it: only the whole id names it
		idB + "-copy":         idB + "-copy",
		onlySub:               "b0b0b0b0-9",
		"short":               "short",
		strings.ToUpper(idA2): "AAAABBBB",
	}
	// idA and near share "aaaaaaaa-000" and differ at the 13th character.
	want[idA], want[near] = idA[:13], near[:13]
	for id, w := range want {
		if got := ids.Of(id); got != w {
			t.Errorf("Of(%s) = %s, want %s", id, got, w)
		}
	}
	for _, id := range []string{idA, near, idA2, idB, onlySub} {
		s := ids.Of(id)
		tg, err := NewResolver(root, l).Resolve(s)
		if err != nil || tg.Session != id {
			t.Errorf("%s (of %s) resolves to %v, %v", s, id, tg, err)
		}
		if len(s) > ShortLen {
			var ae *AmbiguousError
			if _, err := NewResolver(root, l).Resolve(s[:len(s)-1]); !errors.As(err, &ae) {
				t.Errorf("%s is not the shortest: %s resolves (%v)", s, s[:len(s)-1], err)
			}
		}
	}
	if got := ids.Of("cccccccc-0000-4000-8000-000000000009"); got != "cccccccc" {
		t.Errorf("an id of no session: %s", got)
	}
	if w := ids.Width([]string{idA2, near}); w != 13 {
		t.Errorf("Width = %d, want 13", w)
	}
}
