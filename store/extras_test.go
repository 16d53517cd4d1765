package store

import (
	"path/filepath"
	"testing"
)

func TestExtras(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{
		"transcripts/ses_abc.jsonl",
		"transcripts/notes.jsonl", // not an export: no ses_ prefix
		"transcripts/ses_abc.txt",
		"pre-compact-session-histories/2bc4b42d-1111-4222-8333-444455556666.jsonl",
		"projects/-w/aaaaaaaa-0000-4000-8000-000000000001.jsonl",
	} {
		writeFile(t, filepath.Join(root, p), "{}\n")
	}
	got, err := Extras(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind ExtraKind
		name string
	}{
		{ExtraPreCompact, "2bc4b42d-1111-4222-8333-444455556666"},
		{ExtraExport, "ses_abc"},
	}
	if len(got) != len(want) {
		t.Fatalf("Extras: %d, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].Name != w.name || got[i].Size != 3 {
			t.Errorf("Extras[%d] = %+v, want %v %s", i, got[i], w.kind, w.name)
		}
		if e, ok := ExtraAt(root, got[i].Path); !ok || e.Path != got[i].Path {
			t.Errorf("ExtraAt(%s) = %+v, %v", got[i].Path, e, ok)
		}
	}
	if _, ok := ExtraAt(root, filepath.Join(root, "transcripts/notes.jsonl")); ok {
		t.Error("ExtraAt took a file without the ses_ prefix")
	}
	if l, _ := Extras(t.TempDir()); len(l) != 0 {
		t.Errorf("Extras of a store without their folders: %v", l)
	}
}
