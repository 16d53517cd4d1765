package carry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// TestCompareFile: what a file here is to an incoming one, the incoming
// one's cwd fields mapped first.
func TestCompareFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := `{"type":"user","cwd":"/home/a/proj","n":1}` + "\n"
	b := `{"type":"user","cwd":"/home/a/proj/sub","n":2}` + "\n"
	c := `{"type":"user","cwd":"/elsewhere","n":3}` + "\n"
	mapped := func(s string) string {
		out, _ := (&changeset.Transform{Kind: changeset.TransformRetarget, OldDir: "/home/a/proj", NewDir: "/home/b/work"}).Line([]byte(s[:len(s)-1]))
		return string(out) + "\n"
	}
	incoming := write("in.jsonl", a+b+c)
	tr := retarget("/home/a/proj", "/home/b/work")
	for _, tc := range []struct {
		name, local string
		want        relation
	}{
		{"same", mapped(a) + mapped(b) + c, relSame},
		{"a prefix", mapped(a), relLocalPrefix},
		{"cut in a line", mapped(a) + mapped(b)[:10], relLocalPrefix},
		{"empty", "", relLocalPrefix},
		{"more", mapped(a) + mapped(b) + c + `{"n":4}` + "\n", relAhead},
		{"other", mapped(a) + `{"n":5}` + "\n", relDiverged},
		{"not mapped", a + b + c, relDiverged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := compareFile(write(tc.name+".jsonl", tc.local), incoming, tr)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("compareFile = %d, want %d", got, tc.want)
			}
		})
	}
	// Without a transform: the bytes as they are.
	if got, _ := compareFile(incoming, incoming, nil); got != relSame {
		t.Errorf("a file and itself: %d", got)
	}
}
